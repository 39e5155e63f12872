//! Priority with usage decay: Gupta, Tucker and Urushibara 1991, section 4.
//!
//! One run queue holds every runnable thread, ordered by recent processor usage (lowest usage
//! first: priority is inverse to usage). Usage grows by the cycles a thread holds a processor and
//! is decayed to `decay` (0.66) of its value every `decay_interval` (6.25 million) cycles of wall
//! clock. At the end of a quantum the runner yields to a waiting thread of equal or higher
//! priority. The arithmetic lives in `smpsched_policy::priority`.

use std::collections::BTreeSet;

use serde::Deserialize;
use smpsched_policy::priority::{
    decay_usage, should_preempt_at_quantum, DEFAULT_DECAY, DEFAULT_DECAY_INTERVAL,
};

use super::{
    Actions, Depression, Enqueue, Handoff, ParamInfo, PolicyInfo, QuantumEnd, SchedCtx, Scheduler,
    Shape, Target,
};
use crate::config::MachineConfig;
use crate::ids::{Cycles, ProcId, ThreadId};

/// Parameters of `priority`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Factor applied to recent usage at each decay (0 to 1).
    pub decay: f64,
    /// Cycles between two decays.
    pub decay_interval: Cycles,
    /// Time slice in milliseconds; the machine's slice when absent.
    #[serde(deserialize_with = "super::params::de_slice_ms", default)]
    pub slice_ms: Option<f64>,
    /// Deprecated: the time slice in cycles (write `slice_ms`).
    #[serde(deserialize_with = "super::params::de_quantum", default)]
    pub quantum: Option<Cycles>,
    /// Count usage by clock-tick sampling, as Unix and Mach do: at each machine tick the thread
    /// running on each processor is charged a whole tick. `false` counts exact cycles.
    pub sampled: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            decay: DEFAULT_DECAY,
            decay_interval: DEFAULT_DECAY_INTERVAL,
            slice_ms: None,
            quantum: None,
            sampled: false,
        }
    }
}

impl super::PolicyParams for Params {
    fn check(&self) -> Result<(), super::ParamError> {
        check_decay(self.decay, self.decay_interval)?;
        super::params::one_slice(self.slice_ms, self.quantum.map(|_| "quantum"))
    }
}

impl super::Settings for Params {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(Priority::new(self.clone()))
    }
}

/// Checks a usage decay's parameters (shared with the policies that decay usage the same way):
/// a factor between 0 and 1 and an interval of at least one cycle.
pub(crate) fn check_decay(decay: f64, interval: Cycles) -> Result<(), super::ParamError> {
    if !(0.0..=1.0).contains(&decay) {
        return Err(super::ParamError::new(
            "decay",
            format!("must be between 0 and 1, got {decay}"),
        ));
    }
    if interval == 0 || interval > crate::config::MAX_COST_CYCLES {
        return Err(super::ParamError::new(
            "decay_interval",
            format!(
                "must be between 1 and {} cycles, got {interval}",
                crate::config::MAX_COST_CYCLES
            ),
        ));
    }
    Ok(())
}

/// The single priority-ordered run queue.
#[derive(Debug)]
pub struct Priority {
    params: Params,
    /// Recent usage per thread, indexed by thread id.
    usage: Vec<u64>,
    /// Ready threads ordered by (usage when enqueued, arrival order).
    queue: BTreeSet<(u64, u64, ThreadId)>,
    /// The key each queued thread was inserted under, to remove or re-key it.
    key: Vec<Option<(u64, u64)>>,
    seq: u64,
    /// Next time usage decays (sampled mode ticks more often than it decays).
    next_decay: Cycles,
}

impl Priority {
    /// A priority scheduler with these parameters.
    pub fn new(params: Params) -> Self {
        Priority {
            params,
            usage: Vec::new(),
            queue: BTreeSet::new(),
            key: Vec::new(),
            seq: 0,
            next_decay: 0,
        }
    }

    fn slot(&mut self, t: ThreadId) {
        if self.usage.len() <= t.index() {
            self.usage.resize(t.index() + 1, 0);
            self.key.resize(t.index() + 1, None);
        }
    }

    fn insert(&mut self, t: ThreadId) {
        self.slot(t);
        self.seq += 1;
        let key = (self.usage[t.index()], self.seq);
        self.key[t.index()] = Some(key);
        self.queue.insert((key.0, key.1, t));
    }

    /// Recent usage of thread `t`.
    pub fn usage(&self, t: ThreadId) -> u64 {
        self.usage.get(t.index()).copied().unwrap_or(0)
    }
}

impl Scheduler for Priority {
    fn shape(&self, machine: &MachineConfig) -> Shape {
        let tick = if self.params.sampled {
            machine.tick_cycles.min(self.params.decay_interval)
        } else {
            self.params.decay_interval
        };
        Shape::new(machine)
            .slice(super::params::slice_cycles(
                self.params.slice_ms,
                self.params.quantum,
                machine,
            ))
            .tick(Some(tick))
            .charging()
            .shared_queue()
            .depression(Depression::Parked)
    }

    fn enqueue(&mut self, t: ThreadId, _why: Enqueue, _cx: &SchedCtx) -> Target {
        self.insert(t);
        Target::Any
    }

    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        let first = if cx.any_masked() {
            self.queue.iter().find(|e| cx.allowed(e.2, p)).copied()
        } else {
            self.queue.first().copied()
        }?;
        self.queue.remove(&first);
        self.key[first.2.index()] = None;
        Some(first.2)
    }

    fn next_picks(&self, _p: ProcId, _cx: &SchedCtx) -> [Option<ThreadId>; 2] {
        let mut heads = self.queue.iter().map(|e| e.2);
        [heads.next(), heads.next()]
    }

    fn dequeue(&mut self, t: ThreadId, _cx: &SchedCtx) -> Handoff {
        Handoff::taken_if(match self.key.get_mut(t.index()).and_then(Option::take) {
            Some((u, seq)) => self.queue.remove(&(u, seq, t)),
            None => false,
        })
    }

    fn quantum_expired(&mut self, t: ThreadId, _p: ProcId, _cx: &SchedCtx) -> QuantumEnd {
        QuantumEnd::preempt_if(match self.queue.first() {
            Some(&(waiting, _, _)) => should_preempt_at_quantum(waiting, self.usage(t)),
            None => false,
        })
    }

    fn charge(&mut self, t: ThreadId, cycles: Cycles) {
        if !self.params.sampled {
            self.slot(t);
            self.usage[t.index()] += cycles;
        }
    }

    fn tick(&mut self, cx: &SchedCtx, _out: &mut Actions) {
        if self.params.sampled {
            for t in cx.running.iter().flatten() {
                self.slot(*t);
                self.usage[t.index()] += cx.machine.tick_cycles;
            }
            if self.next_decay == 0 {
                self.next_decay = self.params.decay_interval;
            }
            if cx.now < self.next_decay {
                return;
            }
            self.next_decay += self.params.decay_interval;
        }
        let f = self.params.decay;
        for u in &mut self.usage {
            *u = decay_usage(*u, f);
        }
        // Decay is monotone, so the order is kept; re-key so later arrivals compare fairly.
        let old = std::mem::take(&mut self.queue);
        for (_, seq, t) in old {
            let u = self.usage[t.index()];
            self.key[t.index()] = Some((u, seq));
            self.queue.insert((u, seq, t));
        }
    }
}

/// Registry entry of `priority`.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "priority",
    summary: "one run queue ordered by recent CPU usage, decayed periodically",
    description: "A single run queue holds every runnable thread, ordered by priority inverse to \
                  recent processor usage. Usage is decayed to `decay` of its value every \
                  `decay_interval` cycles. At the end of its quantum a thread yields to a waiting \
                  thread of equal or higher priority; threads are not preempted otherwise.",
    paper: "Gupta et al. 1991 section 4 (regular priority scheduling)",
    params: &[
        ParamInfo {
            name: "decay",
            default: "0.66",
            doc: "factor applied to recent usage at every decay",
        },
        ParamInfo {
            name: "decay_interval",
            default: "6250000",
            doc: "cycles between two decays (250 ms at 25 MHz)",
        },
        ParamInfo {
            name: "slice_ms",
            default: "the machine's slice",
            doc: "time slice in milliseconds",
        },
        ParamInfo {
            name: "sampled",
            default: "false",
            doc: "charge usage by sampling the running thread at each clock tick (Unix, Mach)",
        },
    ],
    processor_sets: false,
    parse: super::settings::<Params>,
};
