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
//! `cargo bench -p smpsched-sim --bench engine`.

use smpsched_sim::sched::policy;
use smpsched_sim::{MachineConfig, Op, Program, Simulation, ThreadCtx};
const MEAN: u64 = 40_000;

/// Computes in chunks with a short sleep between some of them.
struct Chunky {
    left: u32,
    /// SplitMix64 state, when the computes are random.
    random: Option<u64>,
}

/// One SplitMix64 step (Steele, Lea and Flood 2014).
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Program for Chunky {
    fn next(&mut self, _cx: &mut ThreadCtx<'_>) -> Op {
        if self.left == 0 {
            return Op::Exit;
        }
        self.left -= 1;
        if self.left % 4 == 0 {
            Op::Sleep(20_000)
        } else if let Some(state) = &mut self.random {
            Op::Compute(1 + splitmix64(state) % (2 * MEAN - 1))
        } else {
            Op::Compute(MEAN)
        }
    }
}

fn build(random: bool) -> Simulation {
    build_sized(random, 64, 10_000)
}

fn build_sized(random: bool, processors: u32, threads: u64) -> Simulation {
    let mut m = MachineConfig::tango_12();
    m.processors = processors;
    m.slice_cycles = 100_000;
    let sched = (policy("round-robin").unwrap().build)(toml::Table::new()).unwrap();
    let mut sim = Simulation::new(m, sched, 1).unwrap();
    let task = sim.add_task("bench");
    for i in 0..threads {
        let random = random.then_some(i);
        sim.spawn(task, Box::new(Chunky { left: 40, random }))
            .unwrap();
    }
    sim
}

fn main() {
    let random = std::env::args().nth(1).as_deref() == Some("random");
    let mut total = 0;
    for _ in 0..5 {
        let r = build(random).run().unwrap();
        total += r.events;
    }
    println!("events {total}");
}
