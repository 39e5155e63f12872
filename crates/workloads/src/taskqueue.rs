//! A task-queue application (Gupta, Tucker and Urushibara 1991, section 7.2; Tucker and Gupta
//! 1989): `workers` server processes take tasks from one shared queue guarded by a lock
//! (spin 500 cycles, then block) and run them. The application obeys process control: when the
//! kernel says it has N processors (a [`Notice::Processors`](smpsched_sim::Notice::Processors)), a worker of rank N or more
//! suspends itself at its next task boundary (it blocks on an event of its own), and when N
//! grows an active worker resumes the suspended ones below N, so that runnable workers match
//! processors. Under a policy that sends no notices every worker stays active.
//!
//! Each suspension is recorded as `suspended`.

use std::cell::RefCell;
use std::rc::Rc;

use serde::Deserialize;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{
    Op, Program, SimError, Simulation, SyncId, SyncKind, TaskId, ThreadCtx, WaitPolicy,
};

use crate::control::Control;

use crate::dist::Dist;
use crate::{Workload, WorkloadInfo};

/// Parameters of `taskqueue`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskQueue {
    /// Worker (server) processes.
    pub workers: u32,
    /// Tasks in the queue.
    pub tasks: u64,
    /// Cycles of work per task.
    pub task: Dist,
}

/// What the workers share.
#[derive(Debug)]
struct Shared {
    left: u64,
    /// Suspension and resumption of workers under process control.
    control: Control,
    lock: SyncId,
}

impl Workload for TaskQueue {
    fn threads(&self) -> u64 {
        u64::from(self.workers)
    }

    fn threads_field(&self) -> Option<&'static str> {
        Some("workers")
    }

    fn operations(&self) -> Option<u64> {
        Some(self.tasks)
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        let lock = sim.create_sync(
            SyncKind::Lock { holder: None },
            WaitPolicy::spin_then_block(500),
        );
        let shared = Rc::new(RefCell::new(Shared {
            left: self.tasks,
            control: Control::new(sim, self.workers),
            lock,
        }));
        for rank in 0..self.workers {
            sim.spawn(
                task,
                Box::new(Worker {
                    rank,
                    shared: shared.clone(),
                    task: self.task,
                    plan: Vec::new(),
                }),
            )?;
        }
        Ok(())
    }
}

struct Worker {
    rank: u32,
    shared: Rc<RefCell<Shared>>,
    task: Dist,
    /// Operations decided and not yet issued, as a stack (the next on top).
    plan: Vec<Op>,
}

impl Program for Worker {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        self.shared.borrow_mut().control.notice(cx.notice);
        if let Some(op) = self.plan.pop() {
            return op;
        }
        let mut s = self.shared.borrow_mut();
        let me = self.rank as usize;
        // A task boundary: first obey process control (the plan is a stack: pushed in reverse).
        let left = s.left > 0;
        if s.control.should_suspend(me, left) {
            let [record, wait, clear] = s.control.suspend(me);
            self.plan.extend([clear, wait]);
            return record;
        }
        // Resume a suspended worker the application has a processor for (or, once the queue is
        // empty, so that it can finish).
        if let Some(signal) = s.control.resume_one(left) {
            return signal;
        }
        if s.left == 0 {
            return Op::Exit;
        }
        s.left -= 1;
        let lock = s.lock;
        let work = self.task.sample(cx.rng).max(1);
        // Take the task under the queue lock, then run it.
        self.plan
            .extend([Op::Compute(work), Op::Signal(lock), Op::Compute(50)]);
        Op::Wait(lock)
    }
}

/// Registry entry of `taskqueue`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "taskqueue",
    summary: "worker processes taking tasks from a locked queue, obeying process control",
    description: "`workers` processes take `tasks` tasks (each `task` cycles of work) from one \
                  queue guarded by a spin-then-block lock. Told by the kernel that the \
                  application has N processors (process-control), workers of rank N and above \
                  suspend at their next task boundary and are resumed when N grows. Suspended \
                  workers resume when N grows or the queue empties; each suspension is \
                  recorded as `suspended`.",
    paper: "Gupta et al. 1991 section 7.2; Tucker and Gupta 1989 (task-queue applications)",
    params: &[
        ParamInfo {
            name: "workers",
            default: "(required)",
            doc: "worker processes",
        },
        ParamInfo {
            name: "tasks",
            default: "(required)",
            doc: "tasks in the queue",
        },
        ParamInfo {
            name: "task",
            default: "(required)",
            doc: "cycles per task (a distribution)",
        },
    ],
    build: |t| {
        let w: TaskQueue = toml::Value::Table(t).try_into()?;
        if w.workers == 0 || w.workers > 100_000 {
            return Err(serde::de::Error::custom(format!(
                "workers: must be between 1 and 100000, got {}",
                w.workers
            )));
        }
        if w.tasks == 0 || w.tasks > 1_000_000_000 {
            return Err(serde::de::Error::custom(format!(
                "tasks: must be between 1 and 1e9, got {}",
                w.tasks
            )));
        }
        w.task
            .validate()
            .map_err(|e| serde::de::Error::custom(format!("task: {e}")))?;
        Ok(Box::new(w))
    },
};
