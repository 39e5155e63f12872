//! Why a simulation could not complete: bad configuration, a bound reached, a deadlock, a
//! livelock, threads stranded without a processor, or a program misusing the simulator.

use thiserror::Error;

use super::MAX_ZERO_TIME_STEPS;
use crate::config::ConfigError;
use crate::ids::{Cycles, ProcId, ThreadId};
use crate::limits::Bound;
use crate::metrics::RunReport;

/// Why a simulation could not complete.
#[derive(Debug, Error)]
pub enum SimError {
    /// The machine configuration is invalid.
    #[error("machine.{0}")]
    Config(#[from] ConfigError),
    /// Too many threads for one simulation: the run's bound, at most
    /// [`MAX_THREADS`](crate::config::MAX_THREADS).
    #[error("too many threads: at most {0} may be created in this run")]
    TooManyThreads(u64),
    /// Live threads remain but nothing can ever wake them.
    #[error(
        "deadlock at cycle {at}: {blocked} thread(s) blocked forever (e.g. thread {example} of \
         `{app}`)"
    )]
    Deadlock {
        /// Cycle at which it was detected.
        at: Cycles,
        /// Threads still blocked.
        blocked: usize,
        /// One of them.
        example: ThreadId,
        /// Its application.
        app: String,
        /// What was measured up to then (its `elapsed_cycles` is that cycle), once the run
        /// has ended.
        partial: Option<Box<RunReport>>,
    },
    /// Live threads remain, none blocked, but those running spin on something no thread will
    /// ever change (a busy-wait with no one left to release it).
    #[error(
        "livelock at cycle {at}: {spinning} thread(s) spin forever, waiting for what no thread \
         will ever do (e.g. thread {example} of `{app}`)"
    )]
    Livelock {
        /// Cycle at which it was detected.
        at: Cycles,
        /// Threads spinning.
        spinning: usize,
        /// One of them.
        example: ThreadId,
        /// Its application.
        app: String,
        /// What was measured up to then (its `elapsed_cycles` is that cycle), once the run
        /// has ended.
        partial: Option<Box<RunReport>>,
    },
    /// Ready threads remain that no processor ever takes: their processor set or affinity mask
    /// leaves them no processor the policy will give them.
    #[error(
        "stranded at cycle {at}: {ready} ready thread(s) that no processor runs (e.g. thread \
         {example} of `{app}`); is its processor set or affinity mask left without processors?"
    )]
    Stranded {
        /// Cycle at which it was detected.
        at: Cycles,
        /// Ready threads never run.
        ready: usize,
        /// One of them.
        example: ThreadId,
        /// Its application.
        app: String,
        /// What was measured up to then (its `elapsed_cycles` is that cycle), once the run
        /// has ended.
        partial: Option<Box<RunReport>>,
    },
    /// The run reached one of its [`Limits`](crate::Limits) before every thread exited. What was measured up
    /// to the stop is in `partial` (its `elapsed_cycles` is the stop time).
    #[error("stopped at {bound} (cycle {at}, {events} events) with {live} thread(s) still live")]
    Limit {
        /// The bound reached.
        bound: Bound,
        /// Simulated time at the stop.
        at: Cycles,
        /// Events handled.
        events: u64,
        /// Threads not yet exited.
        live: u64,
        /// The measures up to the stop.
        partial: Box<RunReport>,
    },
    /// A policy dispatched a thread on a processor outside its affinity mask.
    #[error("the policy dispatched thread {thread} on processor {processor}, outside its mask")]
    MaskViolated {
        /// The thread.
        thread: ThreadId,
        /// The processor.
        processor: ProcId,
    },
    /// A thread's affinity mask holds no processor of the machine.
    #[error("an affinity mask holds no processor of this machine")]
    EmptyMask,
    /// A workload's parameters do not fit the machine it is installed on (e.g. more pinned
    /// processes than processors); the message names the parameters.
    #[error("{0}")]
    Workload(String),
    /// A thread performed too many zero-time operations in a row.
    #[error("thread {0} made no progress: {MAX_ZERO_TIME_STEPS} operations at one instant")]
    NoProgress(ThreadId),
    /// A program referenced memory outside every allocated region.
    #[error("thread {thread} referenced address {addr:#x}, which lies in no allocated region")]
    BadAddress {
        /// The thread.
        thread: ThreadId,
        /// The first address at fault.
        addr: u64,
    },
    /// A program used a synchronization object wrongly.
    #[error("thread {thread} misused synchronization object {object}: {what}")]
    Misuse {
        /// The thread.
        thread: ThreadId,
        /// The object.
        object: u32,
        /// What it did.
        what: String,
    },
}
