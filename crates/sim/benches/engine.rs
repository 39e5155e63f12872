//! Engine throughput: events per second for 10,000 threads on 64 processors under round-robin
//! (docs/performance.md states the targets), and how it holds up from 64 to 4,096 processors
//! (`engine_scaling`).
//!
//! Two loads of the same shape (40 operations per thread: computes with a sleep every fourth):
//!
//! * `identical`: every compute is 40,000 cycles, so processors run in lock step and many
//!   events share a cycle, as with the papers' identical worker threads;
//! * `random`: computes uniform on [1, 80,000) cycles (the same mean), so processors drift
//!   apart and events rarely tie. The draws come from a SplitMix64 step kept in the program,
//!   not the thread's ChaCha stream, so the figure is the engine's and not the generator's.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};

#[path = "common/load.rs"]
mod load;

use load::{build, build_shaped};

/// Operations per thread in the scaling group.
const OPS: u32 = 10;

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

/// Cost grows linearly with the machine (the design's target; docs/performance.md: the cost
/// per event at 4,096 processors at most 1.3 times that at 64): 100 threads per processor,
/// random demands, 10 operations per thread (so that 4,096 processors' 409,600 threads take
/// seconds, not minutes, per sample), at 64, 1,024 and 4,096 processors; events per second
/// should stay about flat. `examples/engine_scaling.rs` runs one size once, for profilers.
fn scaling(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine_scaling");
    g.sample_size(10);
    for processors in [64u32, 1024, 4096] {
        let threads = u64::from(processors) * 100;
        let events = build_shaped(true, processors, threads, OPS)
            .run()
            .unwrap()
            .events;
        g.throughput(Throughput::Elements(events));
        g.bench_function(
            format!("random/{processors}_procs_{threads}_threads"),
            |b| {
                b.iter_batched(
                    || build_shaped(true, processors, threads, OPS),
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
