//! Batch: applications run one after another, each with the whole machine (Gupta et al. 1991,
//! section 4, the "batch" baseline of Figure 2).
//!
//! Threads of the earliest unfinished task are served first-come first-served and run until they
//! block or exit; no other task's thread runs while that task has live threads.

use std::collections::VecDeque;

use serde::Deserialize;

use super::{Enqueue, Hooks, PolicyInfo, QuantumEnd, SchedCtx, Scheduler, Target};
use crate::ids::{Cycles, ProcId, ThreadId};

/// Parameters of `batch` (none).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {}

/// One FIFO queue per task; only the earliest unfinished task is served.
#[derive(Debug, Default)]
pub struct Batch {
    queues: Vec<VecDeque<ThreadId>>,
    /// Whether any thread with an affinity mask was ever queued.
    masked: bool,
}

impl Batch {
    /// The task now owning the machine: the first task with live threads.
    fn current(&self, cx: &SchedCtx) -> Option<usize> {
        cx.tasks.iter().position(|t| t.live > 0)
    }
}

impl Scheduler for Batch {
    fn enqueue(&mut self, t: ThreadId, _why: Enqueue, cx: &SchedCtx) -> Target {
        let task = cx.thread(t).task.index();
        if self.queues.len() <= task {
            self.queues.resize_with(task + 1, VecDeque::new);
        }
        self.queues[task].push_back(t);
        self.masked |= cx.any_masked();
        Target::Any
    }

    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        let task = self.current(cx)?;
        let queue = self.queues.get_mut(task)?;
        let i = queue.iter().position(|&t| cx.allowed(t, p))?;
        queue.remove(i)
    }

    fn quantum(&self, _t: ThreadId, _p: ProcId, _cx: &SchedCtx) -> Option<Cycles> {
        None
    }

    fn quantum_expired(&mut self, _t: ThreadId, _p: ProcId, _cx: &SchedCtx) -> QuantumEnd {
        QuantumEnd::Renew
    }

    fn single_queue(&self) -> bool {
        // With affinity masks, a thread one processor may not take another may.
        !self.masked
    }

    fn hooks(&self) -> Hooks {
        Hooks::NONE
    }
}

/// Registry entry of `batch`.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "batch",
    summary: "applications one after another, each with the whole machine",
    description: "The applications of a multiprogrammed mix run one at a time, in the order \
                  they are listed, each with every processor. Threads of the running \
                  application are not preempted. This is the ideal against which Gupta et al. \
                  measure multiprogramming (Figure 2).",
    paper: "Gupta et al. 1991 section 4 (batch)",
    params: &[],
    processor_sets: false,
    build: |t| {
        super::params::<Params>(t)?;
        Ok(Box::new(Batch::default()))
    },
};
