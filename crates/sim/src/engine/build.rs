//! Building a run: tasks (applications), threads created now or arriving later (open
//! workloads), and synchronization objects. Every thread is counted as live from the moment it
//! is reserved, so a run does not end before a job arrives; its policy hears of it (enqueue)
//! when it is created.

use rand_chacha::ChaCha8Rng;

use super::{AppAcc, EventKind, SimError, Simulation};
use crate::ids::{Cycles, ProcId, TaskId, ThreadId};
use crate::memory::Placement;
use crate::program::Program;
use crate::rng::{stream_rng, Stream, ThreadRng};
use crate::sched::{Enqueue, TaskInfo, ThreadInfo, ThreadState};
use crate::sync::{SyncId, SyncKind, SyncObject, SyncStats, WaitPolicy};
use crate::thread::{ThreadAttrs, ThreadCold, ThreadExec, ThreadSlot};

impl Simulation {
    /// Reserves `n` processors for a processor set that a workload's thread will create (Black
    /// 1990, section 6): the first of `n` consecutive processors no other workload of this run
    /// reserved, from processor 1 up (processor 0 stays in the default set, as do any left
    /// over). Only bookkeeping at build time, so that two applications asking for sets of their
    /// own get disjoint processors; the kernel's processor-set calls move them.
    pub fn reserve_processors(&mut self, n: u32) -> Result<ProcId, SimError> {
        let first = self.reserved_processors + 1;
        let end = u64::from(first) + u64::from(n);
        if end > u64::from(self.cx.machine.processors) {
            return Err(SimError::Workload(format!(
                "processor sets of {} processors in all, beside the default set's processor 0,                  need {end} processors; the machine has {} (machine.processors)",
                u64::from(self.reserved_processors) + u64::from(n),
                self.cx.machine.processors
            )));
        }
        self.reserved_processors += n;
        Ok(ProcId(first))
    }

    /// Creates a synchronization object; with the memory model on, its variable gets a line of
    /// its own.
    pub fn create_sync(&mut self, kind: SyncKind, policy: WaitPolicy) -> SyncId {
        let mut obj = SyncObject::new(kind, policy);
        if self.cx.machine.memory.enabled {
            let bytes = self.memory.line_bytes();
            obj.line = Some(self.memory.alloc(bytes, Placement::Uma, None).base);
        }
        self.sync.push(obj);
        SyncId(self.sync.len() as u32 - 1)
    }

    /// Creates a synchronization object whose variable lives at `addr` (e.g. beside the data it
    /// protects, to study false sharing), or, with `None`, one that costs a fixed
    /// `kernel.sync_op` and causes no memory traffic (an idealized primitive).
    pub fn create_sync_at(
        &mut self,
        kind: SyncKind,
        policy: WaitPolicy,
        addr: Option<u64>,
    ) -> SyncId {
        let mut obj = SyncObject::new(kind, policy);
        obj.line = addr.filter(|_| self.cx.machine.memory.enabled);
        self.sync.push(obj);
        SyncId(self.sync.len() as u32 - 1)
    }

    /// Names `owner` as the thread expected to signal `id` (an event's owner), the thread a
    /// waiter with [`AfterSpin::HandoffToHolder`](crate::sync::AfterSpin::HandoffToHolder)
    /// hands its processor to; a lock's holder needs no naming. Programs may rename it as
    /// ownership moves.
    pub fn set_sync_owner(&mut self, id: SyncId, owner: Option<ThreadId>) {
        if let Some(o) = self.sync.get_mut(id.0 as usize) {
            o.owner = owner;
        }
    }

    /// The counters of a synchronization object so far.
    pub fn sync_stats(&self, id: SyncId) -> SyncStats {
        self.sync[id.0 as usize].stats
    }

    /// Adds an application; its threads are added with [`Simulation::spawn`].
    pub fn add_task(&mut self, name: impl Into<String>) -> TaskId {
        self.cx.tasks.push(TaskInfo {
            name: name.into(),
            threads: 0,
            live: 0,
        });
        self.apps.push(AppAcc::default());
        self.notices.push((0, None));
        TaskId(self.cx.tasks.len() as u32 - 1)
    }

    /// Creates a thread of `task` running `program`; it is ready at time 0 (or now, if running).
    pub fn spawn(&mut self, task: TaskId, program: Box<dyn Program>) -> Result<ThreadId, SimError> {
        self.spawn_with(task, program, ThreadAttrs::default())
    }

    /// Creates a thread like [`Simulation::spawn`] with attributes: an affinity mask (the
    /// processors it may run on) and a base priority.
    pub fn spawn_with(
        &mut self,
        task: TaskId,
        program: Box<dyn Program>,
        attrs: ThreadAttrs,
    ) -> Result<ThreadId, SimError> {
        if let Some(m) = &attrs.mask {
            if !(0..self.cx.machine.processors).any(|p| m.allows(ProcId(p))) {
                return Err(SimError::EmptyMask);
            }
        }
        self.reserve_thread(task)?;
        Ok(self.create_thread(task, program, attrs))
    }

    /// Creates a thread of `task` running `program` at cycle `at` (a job of an open workload
    /// arriving; [`SchedCtx::arrived`](crate::sched::SchedCtx::arrived) is `at`). Until then the job counts as live, so the
    /// run does not end before it arrives.
    pub fn spawn_at(
        &mut self,
        at: Cycles,
        task: TaskId,
        program: Box<dyn Program>,
    ) -> Result<(), SimError> {
        self.reserve_thread(task)?;
        let i = self.arrivals.len() as u32;
        self.arrivals.push(Some((task, program)));
        self.push(at.max(self.cx.now), EventKind::Arrive { i });
        Ok(())
    }

    /// A random stream of `task`'s workload for its setup (arrival times, sizes), derived from
    /// the run's seed and independent of every other stream.
    pub fn workload_rng(&self, task: TaskId) -> ChaCha8Rng {
        stream_rng(self.seed, Stream::Workload, u64::from(task.0))
    }

    /// Counts a thread of `task` that will be created, within the run's bound
    /// ([`Simulation::set_thread_limit`], at most [`MAX_THREADS`](crate::config::MAX_THREADS)).
    pub(super) fn reserve_thread(&mut self, task: TaskId) -> Result<(), SimError> {
        if (self.cx.threads.len() + self.arrivals.len()) as u64 >= self.max_threads {
            return Err(SimError::TooManyThreads(self.max_threads));
        }
        self.cx.tasks[task.index()].live += 1;
        self.live += 1;
        Ok(())
    }

    /// Creates a reserved thread of `task` now and offers it to the policy.
    pub(super) fn create_thread(
        &mut self,
        task: TaskId,
        program: Box<dyn Program>,
        attrs: ThreadAttrs,
    ) -> ThreadId {
        let t = ThreadId(self.cx.threads.len() as u32);
        self.cx.any_masked |= attrs.mask.is_some();
        let info = &mut self.cx.tasks[task.index()];
        let rank = info.threads;
        info.threads += 1;
        self.cx.threads.push(ThreadSlot {
            info: ThreadInfo {
                task,
                rank,
                state: ThreadState::Ready,
                last_proc: None,
                cpu_cycles: 0,
                last_dispatch: 0,
                masked: attrs.mask.is_some(),
                waiting: false,
                walking: false,
                has_outcome: false,
            },
            exec: ThreadExec {
                program,
                remaining: 0,
                epoch: 0,
                polling: false,
            },
        });
        self.rngs.push(ThreadRng::new(self.seed, t.0 as u64));
        self.cx.cold.push(ThreadCold {
            arrived: self.cx.now,
            first_run: Cycles::MAX,
            exited: Cycles::MAX,
            base_priority: attrs.base_priority,
            mask: attrs.mask,
            outcome: None,
            notices_seen: 0,
            mem: None,
            wait: None,
            ledger: self.apps[task.index()]
                .per_thread
                .then(Box::<crate::per_thread::ThreadLedger>::default),
        });
        let target = self.sched.enqueue(t, Enqueue::New, &self.cx);
        self.place(target);
        self.preempt_for_ready(t);
        t
    }
}
