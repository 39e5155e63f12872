//! Ready-queue structures as data, for the policies of `sched` to hold: Mach's priority run
//! queue today (Black 1990, section 3); the multi-access mailboxes of DiBella et al. 1992 and
//! George's Distributed Dual Queues are to follow (design.md, "Ready-queue structures in
//! simulation").

pub mod mach;

pub use mach::RunQueue;
