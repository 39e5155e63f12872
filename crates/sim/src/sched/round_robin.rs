//! Round-robin: one global FIFO run queue with time slices, the baseline of every paper
//! (DiBella's Global queue, Weibel's global run queue).

use serde::Deserialize;

use super::queues::Fifo;
use super::{
    Depression, Enqueue, Handoff, ParamInfo, PolicyInfo, QuantumEnd, SchedCtx, Scheduler, Shape,
    Target,
};
use crate::config::MachineConfig;
use crate::ids::{Cycles, ProcId, ThreadId};

/// Parameters of `round-robin`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Time slice in milliseconds; the machine's slice when absent.
    #[serde(deserialize_with = "super::params::de_slice_ms", default)]
    pub slice_ms: Option<f64>,
    /// Deprecated: the time slice in cycles (write `slice_ms`).
    #[serde(deserialize_with = "super::params::de_quantum", default)]
    pub quantum: Option<Cycles>,
}

/// One FIFO run queue shared by every processor.
#[derive(Debug, Default)]
pub struct RoundRobin {
    queue: Fifo,
    params: Params,
}

impl RoundRobin {
    /// A round-robin scheduler with these (checked) parameters.
    pub fn new(params: Params) -> Self {
        RoundRobin {
            queue: Fifo::default(),
            params,
        }
    }
}

impl super::PolicyParams for Params {
    fn check(&self) -> Result<(), super::ParamError> {
        super::params::one_slice(self.slice_ms, self.quantum.map(|_| "quantum"))
    }
}

impl super::Settings for Params {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(RoundRobin::new(self.clone()))
    }
}

impl Scheduler for RoundRobin {
    fn shape(&self, machine: &MachineConfig) -> Shape {
        Shape::new(machine)
            .slice(super::params::slice_cycles(
                self.params.slice_ms,
                self.params.quantum,
                machine,
            ))
            .shared_queue()
            .depression(Depression::Parked)
    }

    fn enqueue(&mut self, t: ThreadId, _why: Enqueue, _cx: &SchedCtx) -> Target {
        self.queue.push(t);
        Target::Any
    }

    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        self.queue.pop_for(p, cx)
    }

    fn next_picks(&self, _p: ProcId, _cx: &SchedCtx) -> [Option<ThreadId>; 2] {
        self.queue.heads()
    }

    fn dequeue(&mut self, t: ThreadId, _cx: &SchedCtx) -> Handoff {
        Handoff::taken_if(self.queue.remove(t))
    }

    fn quantum_expired(&mut self, _t: ThreadId, _p: ProcId, _cx: &SchedCtx) -> QuantumEnd {
        QuantumEnd::preempt_if(!self.queue.is_empty())
    }
}

/// Registry entry of `round-robin`.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "round-robin",
    summary: "one global FIFO run queue with time slices",
    description: "Every ready thread waits in one first-come first-served queue shared by all \
                  processors. A running thread keeps its processor until it blocks, exits or \
                  its quantum expires while another thread is waiting; then it goes to the tail.",
    paper: "Gupta et al. 1991 section 4 (the single run queue); DiBella et al. 1992 section 2 \
            (Global queue); Weibel (global run queue)",
    params: &[ParamInfo {
        name: "slice_ms",
        default: "the machine's slice",
        doc: "time slice in milliseconds",
    }],
    processor_sets: false,
    parse: super::settings::<Params>,
};
