//! Memory-model throughput in simulated references per second (design.md target: at least 100
//! million on one core). Twelve processors of the Tango machine sweep 64 KB regions with stride 4,
//! interleaved lowest-virtual-time-first in 10,000-cycle chunks as the engine would run them.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use smpsched_sim::memory::{AccessKind, BulkAccess, MemoryConfig, MemorySystem, Placement, Region};
use smpsched_sim::ProcId;

const PROCESSORS: u32 = 12;
const PASSES: u32 = 20;
const BUDGET: u64 = 10_000;

/// Builds the machine and one region per processor (`shared`: all processors use one region).
fn setup(cfg: &MemoryConfig, bytes: u64, shared: bool) -> (MemorySystem, Vec<Region>) {
    let mut m = MemorySystem::new(cfg, PROCESSORS).unwrap();
    let common = m.alloc(bytes, Placement::Uma, None);
    let regions = (0..PROCESSORS)
        .map(|p| {
            if shared {
                common
            } else {
                m.alloc(bytes, Placement::Local, Some(ProcId(p)))
            }
        })
        .collect();
    (m, regions)
}

/// Runs every processor's sweep to completion; returns the references made.
fn sweep_all(m: &mut MemorySystem, regions: &[Region], kind: AccessKind) -> u64 {
    let mut accs: Vec<BulkAccess> = regions
        .iter()
        .map(|&r| BulkAccess::over(r, 4, kind, PASSES))
        .collect();
    let mut clocks = vec![0u64; accs.len()];
    let mut refs = 0;
    while let Some(p) = (0..accs.len())
        .filter(|&p| !accs[p].is_done())
        .min_by_key(|&p| (clocks[p], p))
    {
        let ch = m.run(ProcId(p as u32), clocks[p], &mut accs[p], BUDGET);
        clocks[p] += ch.total();
        refs += ch.refs;
    }
    refs
}

fn memory(c: &mut Criterion) {
    let cases: [(&str, MemoryConfig, u64, bool, AccessKind); 5] = [
        (
            "private-64k-read-fully-assoc",
            MemoryConfig::tango(),
            64 << 10,
            false,
            AccessKind::Read,
        ),
        (
            "private-64k-read-direct-mapped",
            MemoryConfig {
                associativity: 1,
                ..MemoryConfig::tango()
            },
            64 << 10,
            false,
            AccessKind::Read,
        ),
        (
            "private-128k-read-all-miss",
            MemoryConfig::tango(),
            128 << 10,
            false,
            AccessKind::Read,
        ),
        (
            "shared-64k-read",
            MemoryConfig::tango(),
            64 << 10,
            true,
            AccessKind::Read,
        ),
        (
            "shared-4k-write",
            MemoryConfig::tango(),
            4 << 10,
            true,
            AccessKind::Write,
        ),
    ];
    let mut group = c.benchmark_group("memory-sweep-stride4-12p");
    for (name, cfg, bytes, shared, kind) in cases {
        let (mut m, regions) = setup(&cfg, bytes, shared);
        let refs = sweep_all(&mut m, &regions, kind);
        group.throughput(Throughput::Elements(refs));
        group.bench_with_input(BenchmarkId::from_parameter(name), &(), |b, _| {
            b.iter(|| sweep_all(&mut m, &regions, kind))
        });
    }
    group.finish();
}

criterion_group!(benches, memory);
criterion_main!(benches);
