//! Threads and tasks as records: what a policy may read of a thread ([`ThreadInfo`]) and of a
//! task ([`TaskInfo`]), and the engine's own state of a thread, kept in one slot per thread so
//! that a dispatch touches one place. This module sits below both the engine and the scheduling
//! policies (`sched` re-exports the policy-visible types), so neither imports the other for it.
//!
//! Invariant: a thread's slot is at index `ThreadId` of the engine's table for the whole run;
//! `info.state` is the one truth about where the thread is (ready, running, blocked, exited).

use crate::ids::{Cycles, ProcId, TaskId};
pub use crate::mask::CpuMask;
use crate::memory::BulkAccess;
use crate::program::Program;
use crate::sync::SyncId;

/// The state of a simulated thread, as the scheduler sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadState {
    /// On a ready queue (or about to be).
    Ready,
    /// Running on this processor.
    Running(ProcId),
    /// Waiting for a wake-up.
    Blocked,
    /// Finished.
    Exited,
}

/// What the engine knows about a thread that a policy may read.
#[derive(Clone, Debug)]
pub struct ThreadInfo {
    /// The task the thread belongs to.
    pub task: TaskId,
    /// Index of the thread within its task.
    pub rank: u32,
    /// Current state.
    pub state: ThreadState,
    /// The processor the thread last ran on, if any.
    pub last_proc: Option<ProcId>,
    /// Total cycles the thread has held a processor (all categories but idle).
    pub cpu_cycles: Cycles,
    /// The dispatch count of its last processor when it was last dispatched there (for the
    /// intervening-dispatch measure).
    pub(crate) last_dispatch: u32,
    /// Whether the thread has an affinity mask ([`SchedCtx::mask`](crate::sched::SchedCtx::mask)
    /// gives it; the engine refuses a dispatch outside it,
    /// [`SimError::MaskViolated`](crate::SimError::MaskViolated)).
    pub masked: bool,
    /// Whether the thread has a wait in progress (its cold record's `wait`; the flag is read
    /// first, so that a thread that is not waiting touches only its slot).
    pub(crate) waiting: bool,
    /// Whether the thread has a bulk memory access in progress (its cold record's `mem`).
    pub(crate) walking: bool,
    /// Whether its cold record holds an outcome for the program's next call.
    pub(crate) has_outcome: bool,
}

/// What the engine keeps of a thread off the dispatch path (its arrival, first run and exit,
/// its base priority, the outcome waiting for its program), apart from the hot [`ThreadSlot`]
/// so that dispatching touches as little memory as it can.
#[derive(Clone, Debug)]
pub(crate) struct ThreadCold {
    /// When the thread was created: 0 for a closed workload, its arrival for an open one.
    pub(crate) arrived: Cycles,
    /// When it was first dispatched (`Cycles::MAX` until then).
    pub(crate) first_run: Cycles,
    /// When it exited (`Cycles::MAX` until then).
    pub(crate) exited: Cycles,
    /// Its base priority (larger is more important).
    pub(crate) base_priority: i32,
    /// The processors it may run on (`None`: all).
    pub(crate) mask: Option<CpuMask>,
    /// What its last operation gave back, for the program's next call (flagged in the slot).
    pub(crate) outcome: Option<crate::outcome::Outcome>,
    /// The generation of its application's notices it has seen.
    pub(crate) notices_seen: u32,
    /// The bulk memory access in progress, if any (run in chunks), flagged by
    /// [`ThreadInfo::walking`].
    pub(crate) mem: Option<Box<BulkAccess>>,
    /// The synchronization wait in progress, if any, flagged by [`ThreadInfo::waiting`].
    pub(crate) wait: Option<Waiting>,
    /// Its per-thread measures, when its task asked for them.
    pub(crate) ledger: Option<Box<crate::per_thread::ThreadLedger>>,
}

/// Attributes a thread is created with (see [`Simulation::spawn_with`](crate::Simulation::spawn_with)).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadAttrs {
    /// The processors it may run on (`None`: all).
    pub mask: Option<CpuMask>,
    /// Its base priority.
    pub base_priority: i32,
}

/// What the engine knows about a task (application).
#[derive(Clone, Debug)]
pub struct TaskInfo {
    /// The task's name in the experiment.
    pub name: String,
    /// Threads created in the task.
    pub threads: u32,
    /// Threads of the task that have not exited.
    pub live: u32,
}

/// The state of a thread waiting on a synchronization object.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Waiting {
    pub(crate) obj: SyncId,
    /// Barrier generation the thread arrived in.
    pub(crate) arrived: Option<u64>,
    /// When the current spell of spinning began (None before the first failed attempt, and after
    /// a wake-up: a woken waiter spins afresh).
    pub(crate) since: Option<Cycles>,
    /// Whether the thread has already failed one attempt of this wait.
    pub(crate) contended: bool,
}

/// Everything about one thread a dispatch or an operation touches, in one record: what the
/// policies see ([`ThreadInfo`]) and the engine's own state. Small (72 bytes, checked below)
/// so that the slots of many threads stay in a processor's second-level cache: at 10,000
/// threads the engine load ran 2-4% faster than with a 128-byte slot holding the wait and the
/// memory walk, which now live in the cold record behind flags in [`ThreadInfo`].
pub(crate) struct ThreadSlot {
    pub(crate) info: ThreadInfo,
    pub(crate) exec: ThreadExec,
}

// A field added to the slot is a cost on every event: put what is not read on every
// operation in the cold record.
const _: () = assert!(std::mem::size_of::<ThreadSlot>() <= 72);

/// The engine's state of a thread: its program and the compute under way.
pub(crate) struct ThreadExec {
    pub(crate) program: Box<dyn Program>,
    /// Cycles left of the current compute operation.
    pub(crate) remaining: Cycles,
    /// Bumped when a pending wake-up of the thread is cancelled (stale events are dropped).
    pub(crate) epoch: u32,
    /// Whether the thread polls a word ([`Op::Poll`](crate::Op::Poll); the poll itself is the
    /// engine's, by thread). Here rather than in [`ThreadInfo`], where it would grow the slot.
    pub(crate) polling: bool,
}

impl ThreadSlot {
    /// Whether the thread has work under way: compute left, a memory walk or a wait.
    #[inline]
    pub(crate) fn under_way(&self) -> bool {
        self.exec.remaining > 0 || self.info.walking || self.info.waiting
    }
}
