//! The engine benchmark's load, shared by `benches/engine.rs` and `examples/engine_load.rs`:
//! threads computing in chunks (40,000 cycles, or uniform on [1, 80,000)) with a short sleep
//! between some of them, under round-robin.

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

/// The benchmark's simulation: 10,000 threads on 64 processors.
#[allow(dead_code)] // each bench or example that includes this file uses some of it
pub fn build(random: bool) -> Simulation {
    build_sized(random, 64, 10_000)
}

/// The load with `threads` threads on `processors` processors.
#[allow(dead_code)] // each bench or example that includes this file uses some of it
pub fn build_sized(random: bool, processors: u32, threads: u64) -> Simulation {
    build_shaped(random, processors, threads, 40)
}

/// The load with `threads` threads of `ops` operations each on `processors` processors.
pub fn build_shaped(random: bool, processors: u32, threads: u64, ops: u32) -> Simulation {
    let mut m = MachineConfig::tango_12();
    m.processors = processors;
    m.slice_cycles = 100_000;
    let sched = policy("round-robin")
        .unwrap()
        .make(&toml::Table::new())
        .unwrap();
    let mut sim = Simulation::new(m, sched, 1).unwrap();
    let task = sim.add_task("bench");
    for i in 0..threads {
        let random = random.then_some(i);
        sim.spawn(task, Box::new(Chunky { left: ops, random }))
            .unwrap();
    }
    sim
}
