//! Ready-queue structures in simulation: Mach's priority run queue as data for the policies of
//! `sched` to hold (Black 1990, section 3); and the structures of DiBella et al. 1992 that live
//! in simulated memory and are operated by the threads' own programs, one protocol step at a
//! time — the multi-access mailboxes (section 2.1) and the Global / Distributed FCFS baselines
//! (section 2.2), built on a test-and-test-and-set spin lock. George's Distributed Dual Queues
//! are to follow (design.md, "Ready-queue structures in simulation").

pub mod fcfs;
pub mod mach;
pub mod multi_access;
pub mod spin;

pub use fcfs::{FcfsLayout, FcfsPost, FcfsTake};
pub use mach::RunQueue;
pub use multi_access::{CollectReply, Layout, Poll, Post, PutReply, TakeRequest};
pub use spin::{Acquire, Pause, Spin, Step, TestMemory};
