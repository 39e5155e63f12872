//! The engine's cost per event as the machine grows (docs/performance.md): the benchmark's random load
//! (round-robin, computes uniform on [1, 80,000) cycles, a sleep every fourth operation) with
//! 100 threads per processor, run once on `PROCS` processors, printing events, wall time and
//! nanoseconds per event. Under cachegrind the counts per event are deterministic, so two
//! machine sizes (or two commits) compare exactly on a noisy machine:
//!
//! ```sh
//! cargo build --release --example engine_scaling -p smpsched-sim
//! target/release/examples/engine_scaling 64 && target/release/examples/engine_scaling 4096
//! valgrind --tool=cachegrind --cache-sim=yes target/release/examples/engine_scaling 1024 10
//! ```
//!
//! The second argument is the operations per thread (default 40; fewer keeps cachegrind runs
//! short at 4,096 processors without changing the working set: threads times records).

#[path = "../benches/common/load.rs"]
mod load;
#[path = "../benches/common/warm.rs"]
mod warm;

use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let procs: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(64);
    let ops: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(40);
    let threads = u64::from(procs) * 100;
    let sim = load::build_shaped(true, procs, threads, ops);
    warm::warm_up();
    let start = Instant::now();
    let r = sim.run().expect("the load runs");
    let wall = start.elapsed();
    println!(
        "{procs} processors, {threads} threads, {ops} ops each: {} events in {:.3} s, {:.1} ns per event",
        r.events,
        wall.as_secs_f64(),
        wall.as_nanos() as f64 / r.events as f64
    );
}
