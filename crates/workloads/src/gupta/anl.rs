//! The barrier of the Argonne National Laboratory macro package (Gupta, Tucker and Urushibara
//! 1991, section 3: the applications "use the synchronization and sharing primitives provided
//! by the Argonne National Laboratory parallel macro package \[14\]").
//!
//! The macro builds a barrier from two locks and a counter, all in one record. An arriving
//! process takes the entry lock and counts itself; all but the last release the entry lock and
//! wait on the exit lock, which starts taken. The last keeps the entry lock and opens the exit
//! lock; each process that gets through counts itself out and opens the exit lock for the next,
//! and the last one out releases the entry lock. So no process enters the next episode before
//! every process has left this one, and under multiprogramming each of them must run once more
//! to leave. The two locks are semaphores of one unit (the one who opens is not the one who
//! took), spinning or spinning then blocking as the application's locks do.
//!
//! Invariant: the counter changes only under the entry lock (arrivals) or the exit lock (the
//! way out), never both open at once, so the count a step reads is what the record holds.

use std::cell::Cell;
use std::rc::Rc;

use smpsched_sim::memory::{AccessKind, Placement};
use smpsched_sim::{Op, Simulation, SyncId, SyncKind, WaitPolicy};

use super::Plan;

/// Bytes of the barrier's record (entry lock, counter, exit lock: one line).
const RECORD: u64 = 16;

/// One barrier of the ANL macros, shared by its processes.
#[derive(Clone, Debug)]
pub struct AnlBarrier {
    entry: SyncId,
    exit: SyncId,
    record: u64,
    parties: u32,
    count: Rc<Cell<u32>>,
}

/// Where a process is in one pass through an [`AnlBarrier`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// About to take the entry lock.
    Enter,
    /// Holds the entry lock: count itself in.
    Entered,
    /// Let out (holds the exit lock, or arrived last): count itself out.
    Leaving,
    /// Through.
    Done,
}

impl AnlBarrier {
    /// Creates the barrier for `parties` processes, its locks waiting as `policy` says.
    pub fn install(sim: &mut Simulation, parties: u32, policy: WaitPolicy) -> Self {
        let record = sim.memory().alloc(RECORD, Placement::Uma, None).base;
        let entry = sim.create_sync_at(SyncKind::Semaphore { count: 1 }, policy, Some(record));
        let exit = sim.create_sync_at(SyncKind::Semaphore { count: 0 }, policy, Some(record));
        AnlBarrier {
            entry,
            exit,
            record,
            parties,
            count: Rc::new(Cell::new(0)),
        }
    }

    /// Plans the operations of `pass`'s step and returns the next step.
    pub fn step(&self, pass: Pass, plan: &mut Plan) -> Pass {
        match pass {
            Pass::Enter => {
                plan.push(Op::Wait(self.entry));
                Pass::Entered
            }
            Pass::Entered => {
                self.touch_count(plan);
                let n = self.count.get();
                if n + 1 < self.parties {
                    self.count.set(n + 1);
                    plan.push(Op::Signal(self.entry));
                    plan.push(Op::Wait(self.exit));
                }
                Pass::Leaving
            }
            Pass::Leaving => {
                self.touch_count(plan);
                let n = self.count.get();
                if n == 0 {
                    plan.push(Op::Signal(self.entry));
                } else {
                    self.count.set(n - 1);
                    plan.push(Op::Signal(self.exit));
                }
                Pass::Done
            }
            Pass::Done => Pass::Done,
        }
    }

    /// Plans a read and a write of the counter.
    fn touch_count(&self, plan: &mut Plan) {
        plan.sweep_by(self.record + 4, 4, 4, AccessKind::ReadModifyWrite, 1);
    }
}
