//! The memory benchmark's all-miss case outside criterion (docs/performance.md): twelve Tango processors
//! sweep private 128 KB regions (twice a 64 KB cache) with stride 4, interleaved
//! lowest-virtual-time-first in 10,000-cycle chunks, so every line a processor touches misses.
//! Prints references, wall time and references per second; under cachegrind the instructions
//! per reference are deterministic, so two commits compare exactly on a noisy machine:
//!
//! ```sh
//! cargo build --release --example memory_sweep -p smpsched-sim
//! valgrind --tool=cachegrind target/release/examples/memory_sweep 2
//! ```
//!
//! The argument is the passes over each region (default 20, the benchmark's).

use smpsched_sim::memory::{AccessKind, BulkAccess, MemoryConfig, MemorySystem, Placement};
use smpsched_sim::ProcId;
use std::time::Instant;

#[path = "../benches/common/warm.rs"]
mod warm;

const PROCESSORS: u32 = 12;
const BUDGET: u64 = 10_000;

fn main() {
    let passes: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(20);
    let mut m = MemorySystem::new(&MemoryConfig::tango(), PROCESSORS).expect("the Tango machine");
    let mut accs: Vec<BulkAccess> = (0..PROCESSORS)
        .map(|p| {
            let r = m.alloc(128 << 10, Placement::Local, Some(ProcId(p)));
            BulkAccess::over(r, 4, AccessKind::Read, passes)
        })
        .collect();
    let mut clocks = vec![0u64; accs.len()];
    let (mut refs, mut misses) = (0u64, 0u64);
    warm::warm_up();
    let start = Instant::now();
    while let Some(p) = (0..accs.len())
        .filter(|&p| !accs[p].is_done())
        .min_by_key(|&p| (clocks[p], p))
    {
        let ch = m.run(ProcId(p as u32), clocks[p], &mut accs[p], BUDGET);
        clocks[p] += ch.total();
        refs += ch.refs;
        misses += ch.misses;
    }
    let wall = start.elapsed();
    println!(
        "{refs} references ({misses} misses) in {:.3} s: {:.1} M references per second",
        wall.as_secs_f64(),
        refs as f64 / wall.as_secs_f64() / 1e6
    );
}
