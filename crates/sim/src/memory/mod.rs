//! The memory model of the simulated machine (design.md, "Memory"): one cache per processor at
//! line granularity with LRU replacement, an optional second level shared by all processors
//! (Weibel's Cortex-A53), invalidation-based coherence through an exact
//! directory, optional NUMA home nodes with local / remote latencies, and contention for hot lines
//! (an atomic, and optionally a miss, holds its line until it ends; an optional bus serializes
//! all misses). It follows the Tango architecture simulator of Gupta, Tucker & Urushibara 1991
//! (section 3) and, for NUMA, the BBN GP1000 of George 1990 (section 1.2).
//!
//! Cache effects — affinity, flushes between gang slices, the locality of process control — are
//! not programmed here per policy: they emerge from which processor touches which addresses when.
//! Workloads describe their references in bulk ([`BulkAccess`]) and [`MemorySystem::run`] walks
//! them line by line under a cycle budget. Everything is deterministic: no randomness, and no
//! hash-table iteration order reaches a result.
//!
//! Files: [`config`] (parameters, presets, validation), `config::l2` (the shared second level's
//! configuration), `cache` (one processor's cache, the second level's structure too, with its
//! line-to-slot hash chains), `directory` (coherence state per line), `numa`
//! (placement and node latencies), `region` (address space), `bulk` (bulk walking), `system`
//! (the memory system and single references / atomics), `stats` (charges and statistics),
//! `watch` (a parked poller's line, and word of its invalidation).

#![warn(missing_docs)]

mod bulk;
mod cache;
pub mod config;
mod directory;
mod error;
mod numa;
mod region;
mod stats;
mod system;
mod watch;

#[cfg(test)]
mod bus_tests;
#[cfg(test)]
mod l2_tests;
#[cfg(test)]
mod prop_tests;
#[cfg(test)]
mod tests;

pub use bulk::BulkAccess;
pub use cache::LineState;
pub use config::{BusConfig, L2Config, MemoryConfig, NodeMapping, NumaConfig, PAGE_BYTES};
pub use error::MemoryError;
pub use numa::Placement;
pub use region::{Region, BASE_ADDRESS};
pub use stats::{Charge, MemoryStats};
pub use system::{footprint_bytes, AccessKind, AtomicKind, MemorySystem};
