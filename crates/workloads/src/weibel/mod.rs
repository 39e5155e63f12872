//! Weibel's test programs ("Theoretical and Experimental Approach to SMP Scheduling", section
//! 4): processes that scalar-multiply their own part of a data set sized against the 16 KB L1,
//! created by a main process that spawns them and joins them, so that thread creation and exit
//! are real kernel load. `scalar` is Tables 1-4 (one process or several, each on its part of
//! the data, optionally pinned), `mix` Tables 5-9 (short, medium and long tasks, Figure 3's
//! early exits), `pool` Tables 10-11 (one thread per work item against a pool of workers).
//!
//! The scalar multiply of one element is a read-modify-write of a 32-bit word (two references)
//! and `alu` cycles of register work; a pass multiplies every element of the process's data.

use std::cell::RefCell;

use serde::Deserialize;
use std::collections::VecDeque;
use std::rc::Rc;

use smpsched_sim::memory::{AccessKind, BulkAccess, Placement, Region};
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{
    CpuMask, Op, ProcId, Program, Request, SimError, Simulation, Spawner, SyncId, SyncKind, TaskId,
    ThreadCtx, WaitPolicy,
};

pub mod mix;
pub mod pool;
pub mod scalar;

#[cfg(test)]
mod tests;

/// Bytes of one element of the data (a 32-bit word).
pub const ELEMENT_BYTES: u64 = 4;

/// Most bytes of data one workload may allocate (64 MiB).
pub const MAX_DATA_BYTES: u64 = 64 << 20;

/// The `alu` parameter every Weibel workload takes (see [`Multiply`]).
pub(crate) const ALU_PARAM: ParamInfo = ParamInfo {
    name: "alu",
    default: "0",
    doc: "cycles of register work per element and pass",
};

/// The `join` parameter every Weibel workload takes (see [`Join`]).
pub(crate) const JOIN_PARAM: ParamInfo = ParamInfo {
    name: "join",
    default: "block",
    doc: "how the main process joins: \"block\" on a semaphore or \"spin\" (busy-wait)",
};

/// Passes over a region: the scalar multiply of every element, `passes` times, each pass a
/// read-modify-write sweep followed by its register work.
#[derive(Clone, Debug)]
pub(crate) struct Multiply {
    pub(crate) region: Region,
    pub(crate) passes: u64,
    /// Cycles of register work per element.
    pub(crate) alu: f64,
}

impl Multiply {
    /// The operations of the next pass (a sweep, then the register work unless `alu` is 0), or
    /// `None` when every pass is done; `done` counts the passes made.
    pub(crate) fn pass(&self, done: &mut u64) -> Option<(Op, Option<Op>)> {
        if *done >= self.passes {
            return None;
        }
        *done += 1;
        let sweep = BulkAccess::over(self.region, ELEMENT_BYTES, AccessKind::ReadModifyWrite, 1);
        let elements = self.region.len / ELEMENT_BYTES;
        let alu = (elements as f64 * self.alu).round() as u64;
        Some((Op::Mem(sweep), (alu > 0).then_some(Op::Compute(alu))))
    }
}

/// A process: optionally pins itself to one processor (an affinity set of one), runs its
/// multiplies in order, tells the main process it is done, and exits.
pub(crate) struct Process {
    pin: Option<ProcId>,
    work: Vec<Multiply>,
    item: usize,
    passes: u64,
    plan: Vec<Op>,
    done: Join,
    finished: bool,
}

/// How children tell the main process they are done: a semaphore each signals, which the main
/// process blocks or spins on.
#[derive(Clone, Debug)]
pub(crate) struct Join {
    /// Signalled once by each child.
    pub(crate) sem: SyncId,
}

impl Join {
    /// A fresh join point in `sim`, waited on `by` blocking or spinning (a busy-wait on the
    /// semaphore's word: its cycles are the spin time of the machine's split, and the last
    /// child's signal is noticed as a spinner notices a changed line).
    pub(crate) fn new(sim: &mut Simulation, by: JoinBy) -> Self {
        let policy = match by {
            JoinBy::Block => WaitPolicy::BLOCK,
            JoinBy::Spin => WaitPolicy::SPIN,
        };
        Join {
            sem: sim.create_sync(SyncKind::Semaphore { count: 0 }, policy),
        }
    }

    /// A child's last operation before it exits.
    pub(crate) fn arrive(&self) -> Op {
        Op::Signal(self.sem)
    }
}

impl Process {
    /// A process running `work` and joining `done` at the end, pinned to `pin` if given.
    pub(crate) fn new(work: Vec<Multiply>, done: Join, pin: Option<ProcId>) -> Self {
        Process {
            pin,
            work,
            item: 0,
            passes: 0,
            plan: Vec::new(),
            done,
            finished: false,
        }
    }
}

impl Program for Process {
    fn next(&mut self, _cx: &mut ThreadCtx<'_>) -> Op {
        if let Some(p) = self.pin.take() {
            return Op::Kernel(Request::SetMask(CpuMask::of([p])));
        }
        if let Some(op) = self.plan.pop() {
            return op;
        }
        while let Some(m) = self.work.get(self.item) {
            if let Some((sweep, alu)) = m.pass(&mut self.passes) {
                self.plan.extend(alu);
                return sweep;
            }
            self.item += 1;
            self.passes = 0;
        }
        if !self.finished {
            self.finished = true;
            return self.done.arrive();
        }
        Op::Exit
    }
}

/// How the main process waits for its children.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum JoinBy {
    /// It blocks on a semaphore each child signals (a blocking join).
    #[default]
    Block,
    /// It busy-waits on the semaphore each child signals, holding its processor (a spinning
    /// join, `while (!done) ;`): spin time, preemptible like any computation.
    Spin,
}

/// The main process: spawns every program of its queue, one after the other (each spawn costs
/// the kernel's thread creation), then joins them through the join's semaphore (blocking or
/// spinning, as the join was made), and exits.
pub(crate) struct Main {
    children: Rc<RefCell<VecDeque<Box<dyn Program>>>>,
    spawner: Spawner,
    to_spawn: usize,
    to_join: usize,
    done: Join,
}

impl Main {
    /// A main process that spawns `children` in order and joins them through `done`.
    pub(crate) fn new(children: Vec<Box<dyn Program>>, done: Join) -> Self {
        let n = children.len();
        let queue = Rc::new(RefCell::new(VecDeque::from(children)));
        let q = queue.clone();
        let spawner = Spawner::new(move || {
            q.borrow_mut()
                .pop_front()
                .expect("the main process spawns each child once")
        });
        Main {
            children: queue,
            spawner,
            to_spawn: n,
            to_join: n,
            done,
        }
    }
}

impl Program for Main {
    fn next(&mut self, _cx: &mut ThreadCtx<'_>) -> Op {
        if self.to_spawn > 0 {
            self.to_spawn -= 1;
            debug_assert!(!self.children.borrow().is_empty());
            return Op::Spawn(self.spawner.clone());
        }
        if self.to_join > 0 {
            self.to_join -= 1;
            return Op::Wait(self.done.sem);
        }
        Op::Exit
    }
}

/// Spawns the main process of `task`: it spawns `children` one by one and joins them through
/// `done` (blocking or spinning, as `done` was made).
pub(crate) fn spawn_main(
    sim: &mut Simulation,
    task: TaskId,
    children: Vec<Box<dyn Program>>,
    done: Join,
) -> Result<(), SimError> {
    sim.spawn(task, Box::new(Main::new(children, done)))?;
    Ok(())
}

/// Checks that `count` items of `each` bytes (field `name`) stay within [`MAX_DATA_BYTES`].
pub(crate) fn check_total<E: serde::de::Error>(
    name: &str,
    each: u64,
    count: u64,
    what: &str,
) -> Result<(), E> {
    if each.saturating_mul(count) > MAX_DATA_BYTES {
        return Err(E::custom(format!(
            "{name}: {each} bytes for each of {count} {what} is more than {MAX_DATA_BYTES} \
             bytes in all"
        )));
    }
    Ok(())
}

/// Allocates `bytes` of data in the simulated memory.
pub(crate) fn data(sim: &mut Simulation, bytes: u64) -> Region {
    sim.memory().alloc(bytes, Placement::Uma, None)
}

/// Checks that `value` of field `name` lies in `min..=max`.
pub(crate) fn check_range<E: serde::de::Error>(
    name: &str,
    value: u64,
    min: u64,
    max: u64,
) -> Result<(), E> {
    if value < min || value > max {
        return Err(E::custom(format!(
            "{name}: must be between {min} and {max}, got {value}"
        )));
    }
    Ok(())
}

/// Checks a data size in bytes: at least one line's worth of elements (64 bytes), whole
/// elements, at most [`MAX_DATA_BYTES`] in all.
pub(crate) fn check_bytes<E: serde::de::Error>(name: &str, bytes: u64) -> Result<(), E> {
    check_range(name, bytes, 64, MAX_DATA_BYTES)?;
    if bytes % ELEMENT_BYTES != 0 {
        return Err(E::custom(format!(
            "{name}: {bytes} bytes is not a whole number of {ELEMENT_BYTES}-byte elements"
        )));
    }
    Ok(())
}

/// Checks the register work per element.
pub(crate) fn check_alu<E: serde::de::Error>(alu: f64) -> Result<(), E> {
    if !(alu.is_finite() && (0.0..=1000.0).contains(&alu)) {
        return Err(E::custom(format!(
            "alu: must be between 0 and 1000 cycles per element, got {alu}"
        )));
    }
    Ok(())
}
