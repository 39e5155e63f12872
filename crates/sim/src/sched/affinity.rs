//! Affinity scheduling (Gupta, Tucker and Urushibara 1991, section 5.2): priority scheduling
//! with usage decay, where a processor prefers the thread that ran on it most recently.
//!
//! A processor choosing among ready threads takes the one of least cost
//! `T + c * l / ldfactor` (priority is its inverse): T the thread's recent usage (decayed to
//! `decay` every `decay_interval` cycles, as in `priority`), l the time since the thread last
//! ran on this processor (capped at 20 slices), ldfactor the runnable threads per processor.
//! At a quantum's end the runner (l = 0 on its own processor) yields to a cheaper waiting
//! thread. The formula is `smpsched_policy::affinity`.

use serde::Deserialize;
use smpsched_policy::affinity::{cost, load_factor};
use smpsched_policy::priority::{decay_usage, DEFAULT_DECAY, DEFAULT_DECAY_INTERVAL};

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
    /// Ready threads, in the order they became ready (ties go to the earliest).
    ready: Vec<ThreadId>,
    /// Recent usage per thread.
    usage: Vec<u64>,
    /// When each thread last left each processor it ran on, as (processor, cycle) in the order
    /// first left (none: never ran there). Kept per thread, not as a threads-by-processors
    /// table: a thread runs on few of a large machine's processors, and 5,000 threads on
    /// 65,536 processors would make a table of 2.6 GB.
    left: Vec<Vec<(u32, Cycles)>>,
    /// The thread each processor runs and since when.
    on: Vec<Option<ThreadId>>,
}

impl Affinity {
    /// An affinity scheduler with these parameters.
    pub fn new(params: Params) -> Self {
        Affinity {
            params,
            ready: Vec::new(),
            usage: Vec::new(),
            left: Vec::new(),
            on: Vec::new(),
        }
    }

    fn grow(&mut self, t: ThreadId, cx: &SchedCtx) {
        let n = cx.machine.processors as usize;
        if self.usage.len() <= t.index() {
            self.usage.resize(t.index() + 1, 0);
            self.left.resize(t.index() + 1, Vec::new());
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
            self.left[t.index()]
                .iter()
                .find(|&&(q, _)| q as usize == p)
                .map(|&(_, left)| cx.now.saturating_sub(left))
        };
        let slice = cx.machine.slice_cycles;
        cost(self.usage[t.index()], since, slice, self.params.c, load)
    }

    fn load(&self, cx: &SchedCtx) -> f64 {
        let running = cx.busy();
        load_factor(self.ready.len() + running, cx.machine.processors as usize)
    }

    /// The index in `ready` of the cheapest thread allowed on `p`.
    fn cheapest(&self, p: usize, cx: &SchedCtx) -> Option<(usize, f64)> {
        let load = self.load(cx);
        let mut best: Option<(usize, f64)> = None;
        for (i, &t) in self.ready.iter().enumerate() {
            if !cx.allowed(t, ProcId(p as u32)) {
                continue;
            }
            let c = self.cost_on(t, p, load, cx);
            if best.is_none_or(|(_, b)| c < b) {
                best = Some((i, c));
            }
        }
        best
    }

    /// Notes that the thread on `p`, if any, left it now.
    fn vacate(&mut self, p: usize, cx: &SchedCtx) {
        if let Some(t) = self.on[p].take() {
            let left = &mut self.left[t.index()];
            match left.iter_mut().find(|(q, _)| *q as usize == p) {
                Some(entry) => entry.1 = cx.now,
                None => left.push((p as u32, cx.now)),
            }
        }
    }
}

impl Scheduler for Affinity {
    fn shape(&self, machine: &MachineConfig) -> Shape {
        Shape::new(machine)
            .tick(Some(self.params.decay_interval))
            .charging()
    }

    fn enqueue(&mut self, t: ThreadId, _why: Enqueue, cx: &SchedCtx) -> Target {
        self.grow(t, cx);
        if let Some(p) = self.on.iter().position(|&r| r == Some(t)) {
            self.vacate(p, cx);
        }
        self.ready.push(t);
        Target::Any
    }

    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        let pi = p.index();
        if self.on.len() <= pi {
            self.on.resize(pi + 1, None);
        }
        self.vacate(pi, cx);
        let (i, _) = self.cheapest(pi, cx)?;
        let t = self.ready.remove(i);
        self.on[pi] = Some(t);
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
        }
    }

    fn stopped(&mut self, t: ThreadId, _why: super::Stop, cx: &SchedCtx) {
        if let Some(p) = self.on.iter().position(|&r| r == Some(t)) {
            self.vacate(p, cx);
        }
    }

    fn tick(&mut self, _cx: &SchedCtx, _out: &mut Actions) {
        let f = self.params.decay;
        for u in &mut self.usage {
            *u = decay_usage(*u, f);
        }
    }

    fn dequeue(&mut self, t: ThreadId, _cx: &SchedCtx) -> Handoff {
        match self.ready.iter().position(|&x| x == t) {
            Some(i) => {
                self.ready.remove(i);
                Handoff::Taken
            }
            None => Handoff::Refused,
        }
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
