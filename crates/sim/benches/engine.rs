//! Engine throughput: events per second for 10,000 threads on 64 processors under round-robin
//! (issue 2's target: at least 20 million events per second on one core), and how it holds up
//! from 16 to 1,024 processors (`engine_scaling`).
//!
//! Two loads of the same shape (40 operations per thread: computes with a sleep every fourth):
//!
//! * `identical`: every compute is 40,000 cycles, so processors run in lock step and many
//!   events share a cycle, as with the papers' identical worker threads;
//! * `random`: computes uniform on [1, 80,000) cycles (the same mean), so processors drift
//!   apart and events rarely tie. The draws come from a SplitMix64 step kept in the program,
//!   not the thread's ChaCha stream, so the figure is the engine's and not the generator's.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
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

fn engine(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine");
    g.sample_size(10);
    for (name, random) in [("identical", false), ("random", true)] {
        let events = build(random).run().unwrap().events;
        g.throughput(Throughput::Elements(events));
        g.bench_function(format!("round_robin_10k_threads_64_procs/{name}"), |b| {
            b.iter_batched(
                || build(random),
                |sim| sim.run().unwrap(),
                criterion::BatchSize::LargeInput,
            )
        });
    }
    g.finish();
}

/// Cost grows linearly with the machine (the design's target): 100 threads per processor, random
/// demands, from 16 to 1,024 processors; events per second should stay about flat.
fn scaling(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine_scaling");
    g.sample_size(10);
    for processors in [16u32, 64, 256, 1024] {
        let threads = u64::from(processors) * 100;
        let events = build_sized(true, processors, threads).run().unwrap().events;
        g.throughput(Throughput::Elements(events));
        g.bench_function(
            format!("random/{processors}_procs_{threads}_threads"),
            |b| {
                b.iter_batched(
                    || build_sized(true, processors, threads),
                    |sim| sim.run().unwrap(),
                    criterion::BatchSize::LargeInput,
                )
            },
        );
    }
    g.finish();
}

criterion_group!(benches, engine, scaling);
criterion_main!(benches);
