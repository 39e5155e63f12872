//! Engine throughput: events per second for 10,000 threads on 64 processors under round-robin
//! (issue 2's target: at least 20 million events per second on one core).

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use smpsched_sim::sched::policy;
use smpsched_sim::{MachineConfig, Op, Program, Simulation, ThreadCtx};

/// Computes in chunks of 40,000 cycles with a short sleep between some of them.
struct Chunky {
    left: u32,
}

impl Program for Chunky {
    fn next(&mut self, _cx: &mut ThreadCtx<'_>) -> Op {
        if self.left == 0 {
            return Op::Exit;
        }
        self.left -= 1;
        if self.left % 4 == 0 {
            Op::Sleep(20_000)
        } else {
            Op::Compute(40_000)
        }
    }
}

fn build() -> Simulation {
    let mut m = MachineConfig::tango_12();
    m.processors = 64;
    m.slice_cycles = 100_000;
    let sched = (policy("round-robin").unwrap().build)(toml::Table::new()).unwrap();
    let mut sim = Simulation::new(m, sched, 1).unwrap();
    let task = sim.add_task("bench");
    for _ in 0..10_000 {
        sim.spawn(task, Box::new(Chunky { left: 40 })).unwrap();
    }
    sim
}

fn engine(c: &mut Criterion) {
    let events = build().run().unwrap().events;
    let mut g = c.benchmark_group("engine");
    g.sample_size(10);
    g.throughput(Throughput::Elements(events));
    g.bench_function("round_robin_10k_threads_64_procs", |b| {
        b.iter_batched(
            build,
            |sim| sim.run().unwrap(),
            criterion::BatchSize::LargeInput,
        )
    });
    g.finish();
}

criterion_group!(benches, engine);
criterion_main!(benches);
