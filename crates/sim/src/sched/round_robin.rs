//! Round-robin: one global FIFO run queue with time slices, the baseline of every paper
//! (DiBella's Global queue, Weibel's global run queue).

use std::collections::VecDeque;

use serde::Deserialize;

use super::depress::Depressed;
use super::{
    Enqueue, Handoff, Hooks, ParamInfo, PolicyInfo, QuantumEnd, SchedCtx, Scheduler, Target,
};
use crate::config::MachineConfig;
use crate::ids::{Cycles, ProcId, ThreadId};

/// Parameters of `round-robin`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Quantum in cycles; the machine's `slice_cycles` when absent.
    #[serde(deserialize_with = "super::de_quantum", default)]
    pub quantum: Option<Cycles>,
}

/// One FIFO run queue shared by every processor.
#[derive(Debug, Default)]
pub struct RoundRobin {
    queue: VecDeque<ThreadId>,
    quantum: Option<Cycles>,
    depressed: Depressed,
    /// Whether any thread with an affinity mask was ever queued.
    masked: bool,
}

impl RoundRobin {
    /// A round-robin scheduler with the given quantum (machine slice when `None`).
    pub fn new(quantum: Option<Cycles>) -> Self {
        RoundRobin {
            queue: VecDeque::new(),
            quantum,
            depressed: Depressed::default(),
            masked: false,
        }
    }
}

impl Scheduler for RoundRobin {
    fn enqueue(&mut self, t: ThreadId, _why: Enqueue, cx: &SchedCtx) -> Target {
        self.masked |= cx.any_masked();
        if self.depressed.is_depressed(t, cx.now) {
            self.depressed.park(t);
        } else {
            self.queue.push_back(t);
        }
        Target::Any
    }

    fn single_queue(&self) -> bool {
        // With affinity masks, a thread one processor may not take another may.
        !self.masked
    }

    fn hooks(&self) -> Hooks {
        Hooks::NONE
    }

    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        if !self.depressed.is_empty() {
            self.queue.extend(self.depressed.expire(cx.now));
        }
        if !self.masked {
            return self.queue.pop_front().or_else(|| self.depressed.pop());
        }
        match self.queue.iter().position(|&t| cx.allowed(t, p)) {
            Some(i) => self.queue.remove(i),
            None => self.depressed.pop_where(|t| cx.allowed(t, p)),
        }
    }

    fn remove(&mut self, t: ThreadId, _cx: &SchedCtx) -> Handoff {
        Handoff::taken_if(match self.queue.iter().position(|&x| x == t) {
            Some(i) => self.queue.remove(i).is_some(),
            None => self.depressed.remove(t),
        })
    }

    fn depress(&mut self, t: ThreadId, until: Cycles, _cx: &SchedCtx) {
        self.depressed.set(t, until);
    }

    fn undepress(&mut self, t: ThreadId, _cx: &SchedCtx) {
        if self.depressed.cancel(t) {
            self.queue.push_back(t);
        }
    }

    fn quantum(&self, _t: ThreadId, _p: ProcId, cx: &SchedCtx) -> Option<Cycles> {
        Some(self.quantum.unwrap_or(cx.machine.slice_cycles))
    }

    fn slice_cycles(&self, machine: &MachineConfig) -> Cycles {
        self.quantum.unwrap_or(machine.slice_cycles)
    }

    fn quantum_expired(&mut self, t: ThreadId, _p: ProcId, cx: &SchedCtx) -> QuantumEnd {
        if !self.depressed.is_empty() {
            self.queue.extend(self.depressed.expire(cx.now));
        }
        QuantumEnd::preempt_if(
            !self.queue.is_empty()
                || (!self.depressed.is_empty() && self.depressed.is_depressed(t, cx.now)),
        )
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
        name: "quantum",
        default: "machine slice_cycles",
        doc: "time slice in cycles",
    }],
    processor_sets: false,
    build: |t| {
        Ok(Box::new(RoundRobin::new(
            super::params::<Params>(t)?.quantum,
        )))
    },
};
