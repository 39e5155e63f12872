//! What a simulated thread runs: the [`Program`] trait and the operations it yields.
//!
//! A thread's work between two shared events is one operation, charged in one step (design.md,
//! "Engine"): a program never describes single instructions. Compute and sleep stand for private
//! work and I/O; memory, synchronization and scheduling-hint operations reach the memory model,
//! `sync` and the scheduler.

use crate::rng::ThreadRng;

use crate::ids::{Cycles, ProcId, TaskId, ThreadId};
use crate::memory::{AtomicKind, BulkAccess};
use crate::outcome::{Notice, Outcome, Request, WordOp};
use crate::sync::SyncId;

/// One operation of a simulated thread.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Private computation for this many cycles (charged as useful time; preemptible).
    Compute(Cycles),
    /// Leave the processor and wait this many cycles (an I/O stand-in), then become ready.
    Sleep(Cycles),
    /// Give up the processor; the scheduler may pick this thread again at once (the same as
    /// [`Hint::Mild`]).
    Yield,
    /// Wait on a synchronization object: acquire a lock, take a semaphore unit, wait for an
    /// event, arrive at a barrier, receive a message (see [`crate::sync`]).
    Wait(SyncId),
    /// Signal a synchronization object: release a lock, add a semaphore unit, set an event,
    /// send a message.
    Signal(SyncId),
    /// Reset an event.
    Clear(SyncId),
    /// A scheduling hint (Mach's `thread_switch`, Black 1990 section 5).
    Hint(Hint),
    /// Walk a bulk memory access (a strided sweep) through the memory model. The engine runs it
    /// in chunks of at most `memory.chunk_cycles`, charging hits as useful time and misses as
    /// stall; the thread can be preempted between chunks. Its addresses must lie in regions
    /// allocated with [`Simulation::memory`](crate::Simulation::memory).
    Mem(BulkAccess),
    /// An operation on the word at `addr` whose outcome (the old value, success) the program
    /// sees through [`ThreadCtx::take_outcome`] at its next operation.
    Word {
        /// The address, in an allocated region.
        addr: u64,
        /// What to do.
        op: WordOp,
    },
    /// Poll the word at `addr` until it reads 0, as a test-and-test-and-set waiter does: pause
    /// (`pause.nth(pauses)` cycles of computation, then the next), load the word, and again
    /// while it reads non-zero. The outcome is [`Outcome::Polled`].
    /// Each load goes through the memory model as an [`Op::Word`] load would; while the line
    /// stays in the poller's cache every load is a hit of fixed cost, so the engine waits for
    /// the line's invalidation without an event per poll and resumes at the first poll after
    /// it: the same cycles, the same charges.
    Poll {
        /// The address, in an allocated region.
        addr: u64,
        /// How the waiter paces its loads.
        pause: crate::pause::Pause,
        /// Pauses already made in this acquisition (the index of the next).
        pauses: u32,
    },
    /// A request to the kernel; the reply is [`ThreadCtx::take_outcome`]'s at the next operation.
    Kernel(Request),
    /// One atomic read-modify-write at `addr` (serializes with other atomics on its line).
    Atomic {
        /// The address, in an allocated region.
        addr: u64,
        /// Which atomic instruction (all cost the same).
        kind: AtomicKind,
    },
    /// Create a thread of this thread's application running a program made by the
    /// [`Spawner`] (a thread pool growing, a task queue, one thread per request); it inherits
    /// the creator's mask and priority, costs `kernel.spawn`, and its id is the outcome.
    Spawn(Spawner),
    /// Record a value of a measure of the application named `name` (a request's delay, items
    /// moved, backoffs): counted and summed with its minimum and maximum, reported per
    /// application in the results and usable in claims (`recorded_mean:APP:NAME`). Takes no
    /// time.
    Record {
        /// The measure's name.
        name: &'static str,
        /// The value.
        value: f64,
    },
    /// The thread is finished.
    Exit,
}

/// Makes the program of a thread spawned by [`Op::Spawn`]; called once per spawn.
#[derive(Clone)]
pub struct Spawner(pub std::rc::Rc<dyn Fn() -> Box<dyn Program>>);

impl Spawner {
    /// A spawner calling `make` for each thread.
    pub fn new(make: impl Fn() -> Box<dyn Program> + 'static) -> Self {
        Spawner(std::rc::Rc::new(make))
    }
}

impl std::fmt::Debug for Spawner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Spawner(..)")
    }
}

impl PartialEq for Spawner {
    fn eq(&self, other: &Self) -> bool {
        std::rc::Rc::ptr_eq(&self.0, &other.0)
    }
}

/// Mach's scheduling hints (Black 1990, section 5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hint {
    /// Mild discouragement: give up the processor to any other thread if possible.
    Mild,
    /// Strong discouragement: give up the processor and depress this thread's priority until
    /// cancelled or until `timeout` cycles have passed.
    Strong {
        /// How long the depression lasts unless cancelled.
        timeout: Cycles,
    },
    /// Cancel this thread's priority depression.
    Cancel,
    /// Absolute discouragement: block for this many cycles.
    Absolute(Cycles),
    /// Handoff: run the named thread on this processor now, for the rest of this slice; falls
    /// back to mild discouragement if that thread is not ready to run.
    Handoff(ThreadId),
}

/// Everything a program may know about the thread it is running for, and its own random stream.
pub struct ThreadCtx<'a> {
    /// This thread.
    pub thread: ThreadId,
    /// The task (application) the thread belongs to.
    pub task: TaskId,
    /// The thread's index within its task, from 0.
    pub rank: u32,
    /// The processor the thread is running on.
    pub processor: ProcId,
    /// Current simulated time.
    pub now: Cycles,
    /// The thread's own deterministic random stream, derived from the experiment seed (made at
    /// its first draw).
    pub rng: &'a mut ThreadRng,
    /// What the thread's previous operation gave back, if it gives anything back (a word
    /// operation's old value, the kernel's reply): [`ThreadCtx::take_outcome`].
    pub(crate) outcome: &'a mut Option<Outcome>,
    /// A notice from the kernel to the thread's application not yet seen by this thread.
    pub notice: Option<Notice>,
}

impl ThreadCtx<'_> {
    /// What the thread's previous operation gave back, if it gives anything back (a word
    /// operation's old value, the kernel's reply), taken: a second call gives `None`.
    #[inline]
    pub fn take_outcome(&mut self) -> Option<Outcome> {
        self.outcome.take()
    }
}

/// The behaviour of one simulated thread: a state machine asked for its next operation each time
/// the previous one has completed.
pub trait Program {
    /// The next operation. Called when the thread is running and its previous operation is done.
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op;
}

/// A program that runs a fixed list of operations, then exits. Handy in tests and examples.
#[derive(Clone, Debug, Default)]
pub struct Script {
    ops: std::collections::VecDeque<Op>,
}

impl Script {
    /// A script of these operations; an `Exit` is implied at the end.
    pub fn new(ops: impl IntoIterator<Item = Op>) -> Self {
        Script {
            ops: ops.into_iter().collect(),
        }
    }
}

impl Program for Script {
    fn next(&mut self, _cx: &mut ThreadCtx<'_>) -> Op {
        self.ops.pop_front().unwrap_or(Op::Exit)
    }
}

/// A program that runs the same operations `times` times, then exits (a client's request loop,
/// a server's receive loop).
#[derive(Clone, Debug)]
pub struct Repeat {
    body: Vec<Op>,
    times: u64,
    next: usize,
}

impl Repeat {
    /// Runs `body` `times` times.
    pub fn new(body: Vec<Op>, times: u64) -> Self {
        Repeat {
            times: if body.is_empty() { 0 } else { times },
            body,
            next: 0,
        }
    }
}

impl Program for Repeat {
    fn next(&mut self, _cx: &mut ThreadCtx<'_>) -> Op {
        if self.times == 0 {
            return Op::Exit;
        }
        let op = self.body[self.next].clone();
        self.next += 1;
        if self.next == self.body.len() {
            self.next = 0;
            self.times -= 1;
        }
        op
    }
}
