//! Affinity scheduling (Gupta, Tucker and Urushibara 1991, section 5.2): priority scheduling
//! with usage decay, where a processor prefers the thread that ran on it most recently.
//!
//! A processor choosing among ready threads takes the one of least cost
//! `T + c * l / ldfactor` (priority is its inverse): T the thread's recent usage (decayed to
//! `decay` every `decay_interval` cycles, as in `priority`), l the time since the thread last
//! ran on this processor (capped at 20 slices), ldfactor the runnable threads per processor.
//! At a quantum's end the runner (l = 0 on its own processor) yields to a cheaper waiting
//! thread. The formula is `smpsched_policy::affinity`; the ready threads are kept so that the
//! cheapest is found without costing each (`affinity_queue`).

use serde::Deserialize;
use smpsched_policy::affinity::{cost, load_factor, CAP_SLICES};
use smpsched_policy::priority::{decay_usage, DEFAULT_DECAY, DEFAULT_DECAY_INTERVAL};

use super::affinity_queue::{AffinityQueue, Costs};
use super::{
    Actions, Enqueue, Handoff, ParamInfo, PolicyInfo, QuantumEnd, SchedCtx, Scheduler, Shape,
    Target,
};
use crate::config::MachineConfig;
use crate::ids::{Cycles, ProcId, ThreadId};

/// Parameters of `affinity`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// The weight c of the time away from a processor (0.1 and 0.5 in the paper).
    pub c: f64,
    /// Factor applied to recent usage at each decay (0 to 1).
    pub decay: f64,
    /// Cycles between two decays.
    pub decay_interval: Cycles,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            c: 0.5,
            decay: DEFAULT_DECAY,
            decay_interval: DEFAULT_DECAY_INTERVAL,
        }
    }
}

/// Priority scheduling that weighs where a thread ran last.
#[derive(Debug)]
pub struct Affinity {
    params: Params,
    /// Ready threads, by usage and in the order they became ready (ties go to the earliest).
    ready: AffinityQueue,
    /// Recent usage per thread.
    usage: Vec<u64>,
    /// When each thread last left each processor it ran on, as (processor, cycle) in the order
    /// first left (none: never ran there). Kept per thread, not as a threads-by-processors
    /// table: a thread runs on few of a large machine's processors, and 5,000 threads on
    /// 65,536 processors would make a table of 2.6 GB.
    left: Vec<Vec<(u32, Cycles)>>,
    /// The thread each processor runs and since when.
    on: Vec<Option<ThreadId>>,
    /// The processor each thread runs on, by thread (`NOWHERE`: none), the inverse of `on`:
    /// found by a scan of `on`, every enqueue and exit cost a pass over the processors.
    at: Vec<u32>,
}

/// A thread on no processor, in [`Affinity::at`].
const NOWHERE: u32 = u32::MAX;

impl Affinity {
    /// An affinity scheduler with these parameters.
    pub fn new(params: Params) -> Self {
        Affinity {
            params,
            ready: AffinityQueue::default(),
            usage: Vec::new(),
            left: Vec::new(),
            on: Vec::new(),
            at: Vec::new(),
        }
    }

    fn grow(&mut self, t: ThreadId, cx: &SchedCtx) {
        let n = cx.machine.processors as usize;
        if self.usage.len() <= t.index() {
            self.usage.resize(t.index() + 1, 0);
            self.left.resize(t.index() + 1, Vec::new());
            self.at.resize(t.index() + 1, NOWHERE);
        }
        if self.on.len() < n {
            self.on.resize(n, None);
        }
    }

    /// The cost of running `t` on `p` now.
    fn cost_on(&self, t: ThreadId, p: usize, load: f64, cx: &SchedCtx) -> f64 {
        let since = if self.on[p] == Some(t) {
            Some(0)
        } else {
            self.left_at(t, p).map(|left| cx.now.saturating_sub(left))
        };
        let slice = cx.machine.slice_cycles;
        cost(self.usage[t.index()], since, slice, self.params.c, load)
    }

    /// When `t` last left processor `p`.
    fn left_at(&self, t: ThreadId, p: usize) -> Option<Cycles> {
        self.left[t.index()]
            .iter()
            .find(|&&(q, _)| q as usize == p)
            .map(|&(_, left)| left)
    }

    fn load(&self, cx: &SchedCtx) -> f64 {
        let running = cx.busy();
        load_factor(self.ready.len() + running, cx.machine.processors as usize)
    }

    /// The cheapest ready thread allowed on `p`, with its cost.
    fn cheapest(&mut self, p: usize, cx: &SchedCtx) -> Option<(ThreadId, f64)> {
        if self.ready.is_empty() {
            return None;
        }
        let load = self.load(cx);
        let (slice, c) = (cx.machine.slice_cycles, self.params.c);
        let mut ready = std::mem::take(&mut self.ready);
        let costs = Costs {
            cost: &|usage, since| cost(usage, since, slice, c, load),
            allowed: &|t| cx.allowed(t, ProcId(p as u32)),
            left: &|t| self.left_at(t, p),
            now: cx.now,
            cap: CAP_SLICES.saturating_mul(slice),
        };
        let best = ready.cheapest(p as u32, &costs);
        // Checked against the definition while the scan is cheap (the queue's proptest covers
        // the rest).
        debug_assert!(
            ready.len() > 256 || best == ready.cheapest_by_scan(&costs),
            "processor {p}: {best:?} against {:?}",
            ready.cheapest_by_scan(&costs)
        );
        self.ready = ready;
        best
    }

    /// The processor `t` runs on, if any.
    fn running_on(&self, t: ThreadId) -> Option<usize> {
        let p = *self.at.get(t.index())?;
        (p != NOWHERE && self.on.get(p as usize) == Some(&Some(t))).then_some(p as usize)
    }

    /// Notes that the thread on `p`, if any, left it now.
    fn vacate(&mut self, p: usize, cx: &SchedCtx) {
        if let Some(t) = self.on[p].take() {
            self.at[t.index()] = NOWHERE;
            let left = &mut self.left[t.index()];
            match left.iter_mut().find(|(q, _)| *q as usize == p) {
                Some(entry) => entry.1 = cx.now,
                None => left.push((p as u32, cx.now)),
            }
            self.ready.left(p as u32, t, cx.now);
        }
    }
}

impl Scheduler for Affinity {
    fn shape(&self, machine: &MachineConfig) -> Shape {
        // Every processor draws on the one set of ready threads: an idle one finding none
        // means all would (the engine stops offering there).
        Shape::new(machine)
            .tick(Some(self.params.decay_interval))
            .charging()
            .shared_queue()
    }

    fn enqueue(&mut self, t: ThreadId, _why: Enqueue, cx: &SchedCtx) -> Target {
        self.grow(t, cx);
        if let Some(p) = self.running_on(t) {
            self.vacate(p, cx);
        }
        self.ready.push(t, self.usage[t.index()]);
        Target::Any
    }

    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        let pi = p.index();
        if self.on.len() <= pi {
            self.on.resize(pi + 1, None);
        }
        self.vacate(pi, cx);
        let (t, _) = self.cheapest(pi, cx)?;
        self.ready.remove(t);
        self.on[pi] = Some(t);
        self.at[t.index()] = pi as u32;
        Some(t)
    }

    fn quantum_expired(&mut self, t: ThreadId, p: ProcId, cx: &SchedCtx) -> QuantumEnd {
        let pi = p.index();
        let load = self.load(cx);
        let mine = self.cost_on(t, pi, load, cx);
        QuantumEnd::preempt_if(self.cheapest(pi, cx).is_some_and(|(_, c)| c <= mine))
    }

    fn charge(&mut self, t: ThreadId, cycles: Cycles) {
        if let Some(u) = self.usage.get_mut(t.index()) {
            *u = u.saturating_add(cycles);
            self.ready.set_usage(t, *u);
        }
    }

    fn stopped(&mut self, t: ThreadId, _why: super::Stop, cx: &SchedCtx) {
        if let Some(p) = self.running_on(t) {
            self.vacate(p, cx);
        }
    }

    fn tick(&mut self, _cx: &SchedCtx, _out: &mut Actions) {
        let f = self.params.decay;
        for u in &mut self.usage {
            *u = decay_usage(*u, f);
        }
        self.ready.set_all_usage(&self.usage);
    }

    fn dequeue(&mut self, t: ThreadId, _cx: &SchedCtx) -> Handoff {
        Handoff::taken_if(self.ready.remove(t))
    }
}

impl super::PolicyParams for Params {
    fn check(&self) -> Result<(), super::ParamError> {
        // Gupta et al. try 0.1 to 0.5; past 1,000 the time away from a processor is all that
        // counts, as it is already at a few units.
        super::params::check_range("c", self.c, 0.0, 1000.0, "(a weight)")?;
        super::priority::check_decay(self.decay, self.decay_interval)?;
        Ok(())
    }
}

impl super::Settings for Params {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(Affinity::new(self.clone()))
    }
}

/// Registry entry of `affinity`.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "affinity",
    summary: "priority by usage, favouring the processor a thread ran on last",
    description: "A processor takes the ready thread of least T + c * l / ldfactor: T its recent \
                  usage (decayed like `priority`), l the time since it last ran on this \
                  processor (at most 20 slices), ldfactor the runnable threads per processor. \
                  Larger c keeps threads on their processors (warm caches) at some cost in \
                  fairness; c = 0 is plain priority scheduling.",
    paper: "Gupta et al. 1991 section 5.2 (affinity scheduling)",
    params: &[
        ParamInfo {
            name: "c",
            default: "0.5",
            doc: "weight of the time away from a processor",
        },
        ParamInfo {
            name: "decay",
            default: "0.66",
            doc: "factor applied to recent usage at every decay",
        },
        ParamInfo {
            name: "decay_interval",
            default: "6250000",
            doc: "cycles between two decays",
        },
    ],
    processor_sets: false,
    parse: super::settings::<Params>,
};
