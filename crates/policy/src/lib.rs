//! smpsched-policy: the pure decisions of the papers' schedulers, with no threads and no clock.
//!
//! Mach's lesson (Black 1990, section 2) is the separation of policy from mechanism. Every
//! decision here is a small pure function over plain numbers, so that the simulator (`sim`) and
//! the real ready queues (`queues`) make the same choice from the same state.

#![forbid(unsafe_code)]

pub mod affinity;
pub mod allocation;
pub mod ddq;
pub mod dibella;
pub mod mach;
pub mod migration;
pub mod mix;
pub mod priority;
pub mod run_queue;
