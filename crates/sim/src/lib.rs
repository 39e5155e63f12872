//! smpsched-sim: a deterministic discrete-event simulator of a multiprogrammed shared-memory
//! multiprocessor.

#![forbid(unsafe_code)]

pub mod ids;
pub mod memory;

pub use ids::{Cycles, ProcId, TaskId, ThreadId};
pub mod config;
pub mod engine;
pub mod event_queue;
pub mod hist;
pub mod jobs;
pub mod limits;
pub mod mask;
pub mod metrics;
pub mod outcome;
pub mod pause;
pub mod per_thread;
mod procset;
pub mod program;
pub mod readyq;
pub mod recorded;
pub mod rng;
pub mod sched;
pub mod sync;
pub mod thread;
pub mod trace;
pub mod word_hash;

pub use config::MachineConfig;
pub use engine::{SimError, Simulation};
pub use jobs::{JobStats, JobTimes};
pub use limits::{Bound, Limits, Progress};
pub use metrics::{AppReport, Category, RunQueueLock, RunReport, Split, TimeSplit, UserKernel};
pub use outcome::{Notice, Outcome, ProcessorSetCall, Reply, Request, WordOp};
pub use per_thread::ThreadReport;
pub use program::{Hint, Op, Program, Repeat, Script, Spawner, ThreadCtx};
pub use sync::{SyncId, SyncKind, WaitPolicy};
pub use thread::{CpuMask, ThreadAttrs};
