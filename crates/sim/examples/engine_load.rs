//! The engine benchmark's load (10,000 threads on 64 processors under round-robin, computes of
//! 40,000 cycles, `random` for uniform ones), run five times outside criterion, so that an
//! instruction-level profiler gives deterministic counts on a noisy shared machine:
//!
//! ```sh
//! cargo build --release --example engine_load -p smpsched-sim
//! valgrind --tool=cachegrind --cache-sim=yes target/release/examples/engine_load random
//! ```
//!
//! Compare `I refs` and `D1 misses` between two commits; wall-clock figures come from
//! `cargo bench -p smpsched-sim --bench engine`, or from `benches/ab`, which runs this example
//! of two commits alternately and compares the time it prints: the least of the five runs'
//! nanoseconds per event, each run timed alone (building the simulation left out).

#[path = "../benches/common/least.rs"]
mod least;
#[path = "../benches/common/load.rs"]
mod load;
#[path = "../benches/common/warm.rs"]
mod warm;

use std::time::Instant;

use load::build;

fn main() {
    let random = std::env::args().nth(1).as_deref() == Some("random");
    warm::warm_up();
    least::print_least_of_five(|| {
        let sim = build(random);
        let start = Instant::now();
        let r = sim.run().unwrap();
        (start.elapsed(), r.events)
    });
}
