//! Process control (Gupta, Tucker and Urushibara 1991, section 7.2; Tucker and Gupta 1989): the
//! partitioned scheduler of `partition`, plus a policy module that tells each application how
//! many processors it has whenever that changes ([`Notice::Processors`]), so that an
//! application written in task-queue style suspends or resumes worker processes until its
//! runnable workers match its processors. The application does the suspending; the kernel
//! only divides and tells.

use super::partition::{Params, Partition};
use super::{
    Actions, Enqueue, Handoff, Hooks, ParamInfo, PolicyInfo, QuantumEnd, SchedCtx, Scheduler, Stop,
    Target,
};
use crate::config::MachineConfig;
use crate::ids::{Cycles, ProcId, TaskId, ThreadId};
use crate::outcome::Notice;

/// Partitioning that tells applications their processor counts.
#[derive(Debug)]
pub struct ProcessControl {
    inner: Partition,
    /// The count each application was last told.
    told: Vec<Option<u32>>,
}

impl ProcessControl {
    /// A process-control scheduler with these parameters.
    pub fn new(params: Params) -> Result<Self, String> {
        Ok(ProcessControl {
            inner: Partition::new(params)?,
            told: Vec::new(),
        })
    }

    /// Tells every live application whose count changed.
    fn tell(&mut self, cx: &SchedCtx, out: &mut Actions) {
        self.told.resize(cx.tasks.len(), None);
        for (k, task) in cx.tasks.iter().enumerate() {
            if task.live == 0 {
                continue;
            }
            let n = self.inner.share_of(k);
            if self.told[k] != Some(n) {
                self.told[k] = Some(n);
                out.notify.push((TaskId(k as u32), Notice::Processors(n)));
            }
        }
    }
}

impl Scheduler for ProcessControl {
    fn enqueue(&mut self, t: ThreadId, why: Enqueue, cx: &SchedCtx) -> Target {
        self.inner.enqueue(t, why, cx)
    }

    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        self.inner.pick_next(p, cx)
    }

    fn hooks(&self) -> Hooks {
        self.inner.hooks()
    }

    fn quantum_expired(&mut self, t: ThreadId, p: ProcId, cx: &SchedCtx) -> QuantumEnd {
        self.inner.quantum_expired(t, p, cx)
    }

    fn charge(&mut self, t: ThreadId, cycles: Cycles) {
        self.inner.charge(t, cycles);
    }

    fn stopped(&mut self, t: ThreadId, why: Stop, cx: &SchedCtx) {
        self.inner.stopped(t, why, cx);
    }

    fn tick_interval(&self, machine: &MachineConfig) -> Option<Cycles> {
        self.inner.tick_interval(machine)
    }

    fn tick(&mut self, cx: &SchedCtx, out: &mut Actions) {
        self.inner.boundary(cx, out);
        self.tell(cx, out);
    }

    fn remove(&mut self, t: ThreadId, cx: &SchedCtx) -> Handoff {
        self.inner.remove(t, cx)
    }
}

/// Registry entry of `process-control`.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "process-control",
    summary: "partitioning that tells each application its processor count",
    description: "The processors are divided equally among the applications as in `partition`, \
                  and at every slice boundary each application whose share changed is told its \
                  processor count (a notice every thread sees at its next operation). \
                  Applications in task-queue style (the `taskqueue` workload) then suspend or \
                  resume workers so that their runnable workers match their processors.",
    paper: "Gupta et al. 1991 section 7.2 (two-level scheduling with process control, Figure 10); \
            Tucker and Gupta 1989",
    params: &[ParamInfo {
        name: "c",
        default: "0",
        doc: "affinity weight within a partition (0: plain priority)",
    }],
    processor_sets: false,
    build: |t| {
        let p = super::params::<Params>(t)?;
        ProcessControl::new(p)
            .map(|s| Box::new(s) as Box<dyn Scheduler>)
            .map_err(serde::de::Error::custom)
    },
};
