//! What a program may ask of the machine and get back (design.md, "Workloads"): word
//! operations whose outcome the program sees at the simulated time they complete (so
//! optimistic algorithms — test-and-set then re-check, compare-and-swap loops, the fetch-and-add
//! counters of George's dual-queue tree — really race), typed requests to the kernel (how many
//! processors, set my mask, my priority), and notices the kernel sends an application
//! (process control: "you now have N processors", Tucker & Gupta).
//!
//! The outcome of an operation is handed to the program through [`ThreadCtx::take_outcome`] when it is
//! next asked for an operation, that is when the operation has completed.
//!
//! [`ThreadCtx::take_outcome`]: crate::ThreadCtx::take_outcome

use crate::mask::CpuMask;

/// An operation on the 64-bit word at an address, with its outcome returned to the program.
/// Words start at 0. Loads and stores are ordinary references; the others are atomic
/// read-modify-writes that serialize on the word's line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WordOp {
    /// Read the word.
    Load,
    /// Write `v`.
    Store(u64),
    /// Set the word to 1; succeeds if it was 0.
    TestAndSet,
    /// Add `n` (wrapping).
    FetchAdd(u64),
    /// Write `v`.
    Swap(u64),
    /// Write `new` if the word equals `expected`.
    CompareAndSwap {
        /// The value the word must hold.
        expected: u64,
        /// The value written if it does.
        new: u64,
    },
}

impl WordOp {
    /// The word after the operation on `old`, and whether it succeeded (a test-and-set that
    /// found 0, a compare-and-swap that matched; always for the others).
    pub fn apply(self, old: u64) -> (u64, bool) {
        match self {
            WordOp::Load => (old, true),
            WordOp::Store(v) | WordOp::Swap(v) => (v, true),
            WordOp::TestAndSet => (1, old == 0),
            WordOp::FetchAdd(n) => (old.wrapping_add(n), true),
            WordOp::CompareAndSwap { expected, new } => {
                if old == expected {
                    (new, true)
                } else {
                    (old, false)
                }
            }
        }
    }
}

/// A request from a program to the kernel (a system call), answered by the scheduling policy
/// ([`Scheduler::request`](crate::sched::Scheduler::request)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Request {
    /// How many processors may this application use?
    Processors,
    /// Restrict this thread to these processors (it moves at once if its processor is not one
    /// of them).
    SetMask(CpuMask),
    /// Set this thread's base priority.
    SetBasePriority(i32),
    /// One of Mach's processor-set calls (Black 1990, section 6), served by a policy that has
    /// processor sets and refused by the others.
    ProcessorSet(ProcessorSetCall),
}

/// Mach's processor-set calls (Black 1990, section 6): `processor_set_create`,
/// `processor_assign`, `thread_assign` and `task_assign`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProcessorSetCall {
    /// Create a processor set (Black 1990, section 6); the reply names it.
    Create,
    /// Move a processor to a processor set (its thread, if of another set, is preempted).
    AssignProcessor {
        /// The set.
        set: u32,
        /// The processor.
        processor: crate::ids::ProcId,
    },
    /// Move a thread (`None`: the caller) to a processor set; it runs only on its processors.
    AssignThread {
        /// The set.
        set: u32,
        /// The thread, or the caller.
        thread: Option<crate::ids::ThreadId>,
    },
    /// Move the caller's task to a processor set: its threads now, and those it creates later.
    AssignTask {
        /// The set.
        set: u32,
    },
}

/// The kernel's answer to a [`Request`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reply {
    /// A number of processors.
    Processors(u32),
    /// The processor set a request created.
    ProcessorSet(u32),
    /// Done.
    Done,
    /// Refused, and why.
    Refused(&'static str),
}

/// What a completed operation gives back to its program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A word operation: the word's value before it, and whether it succeeded.
    Word {
        /// The value before the operation.
        old: u64,
        /// Whether a test-and-set or compare-and-swap succeeded (always true for the others).
        success: bool,
    },
    /// An [`Op::Poll`](crate::Op::Poll) ended: the last value read (0 from the engine; a
    /// test memory may stop at the first poll) and the pauses made in all.
    Polled {
        /// The value the last load read.
        old: u64,
        /// Pauses made in the acquisition so far.
        pauses: u32,
    },
    /// The kernel's reply to a request.
    Kernel(Reply),
    /// The thread an [`Op::Spawn`](crate::Op::Spawn) created.
    Spawned(crate::ids::ThreadId),
}

/// A notice from the kernel to every thread of an application, seen once by each thread at its
/// next operation ([`ThreadCtx::notice`](crate::ThreadCtx::notice)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notice {
    /// The application now has this many processors (process control).
    Processors(u32),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_operations_have_their_semantics() {
        assert_eq!(WordOp::TestAndSet.apply(0), (1, true));
        assert_eq!(WordOp::TestAndSet.apply(1), (1, false));
        assert_eq!(WordOp::FetchAdd(3).apply(u64::MAX), (2, true));
        let cas = WordOp::CompareAndSwap {
            expected: 5,
            new: 9,
        };
        assert_eq!(cas.apply(5), (9, true));
        assert_eq!(cas.apply(6), (6, false));
        assert_eq!(WordOp::Load.apply(7), (7, true));
        assert_eq!(WordOp::Store(4).apply(7), (4, true));
    }
}
