//! Batch: applications run one after another, each with the whole machine (Gupta et al. 1991,
//! section 4, the "batch" baseline of Figure 2).
//!
//! Threads of the earliest unfinished task are served first-come first-served and run until they
//! block or exit; no other task's thread runs while that task has live threads.

use super::queues::PerCpu;
use super::{Enqueue, Handoff, PolicyInfo, SchedCtx, Scheduler, Shape, Target};
use crate::config::MachineConfig;
use crate::ids::{ProcId, ThreadId};

/// One FIFO queue per task; only the earliest unfinished task is served.
#[derive(Debug, Default)]
pub struct Batch {
    /// Ready threads by task.
    queues: PerCpu,
}

impl Scheduler for Batch {
    fn shape(&self, machine: &MachineConfig) -> Shape {
        Shape::new(machine)
            .unsliced(machine.slice_cycles)
            .shared_queue()
    }

    fn enqueue(&mut self, t: ThreadId, _why: Enqueue, cx: &SchedCtx) -> Target {
        self.queues.at(cx.thread(t).task.index()).push(t);
        Target::Any
    }

    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        // The task now owning the machine: the first task with live threads.
        let task = cx.tasks.iter().position(|t| t.live > 0)?;
        self.queues.at(task).pop_for(p, cx)
    }

    fn dequeue(&mut self, _t: ThreadId, _cx: &SchedCtx) -> Handoff {
        // A handoff could start a thread of a task that does not own the machine.
        Handoff::Refused
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
    parse: super::no_params::<Batch>,
};
