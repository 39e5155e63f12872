//! Scenario tests of the whole memory model with exact expected counts: capacity and conflict
//! misses under LRU, coherence (invalidation, downgrade), atomics and miss serialization, NUMA
//! latencies, bulk-walk chunking, and a 1,024-processor machine.

use super::*;
use crate::ids::{Cycles, ProcId};

pub(super) const P0: ProcId = ProcId(0);
pub(super) const P1: ProcId = ProcId(1);

fn system(cfg: MemoryConfig, processors: u32) -> MemorySystem {
    MemorySystem::new(&cfg, processors).unwrap()
}

/// A cache of `lines` 16-byte lines with the given associativity.
pub(super) fn small(lines: u64, associativity: u32) -> MemoryConfig {
    MemoryConfig {
        cache_bytes: lines * 16,
        associativity,
        ..MemoryConfig::tango()
    }
}

/// Runs a sweep of `region` to completion and returns its charge.
fn sweep(
    m: &mut MemorySystem,
    p: ProcId,
    region: Region,
    stride: u64,
    kind: AccessKind,
    passes: u32,
) -> Charge {
    let mut acc = BulkAccess::over(region, stride, kind, passes);
    let ch = m.run(p, 0, &mut acc, Cycles::MAX);
    assert!(ch.done && acc.is_done());
    assert_eq!(ch.refs, acc.total_refs());
    ch
}

#[test]
fn region_smaller_than_cache_misses_only_on_first_pass() {
    let mut m = system(MemoryConfig::tango(), 12);
    let r = m.alloc(32 * 1024, Placement::Uma, None);
    let ch = sweep(&mut m, P0, r, 4, AccessKind::Read, 3);
    assert_eq!(ch.refs, 3 * 8192);
    assert_eq!(ch.misses, 2048);
    assert_eq!(ch.useful, 3 * 8192);
    assert_eq!(ch.stall, 2048 * 19);
    assert_eq!(m.lines_resident(P0, r), 2048);
    let s = m.stats(P0);
    assert_eq!(
        (s.refs, s.misses, s.stall_cycles),
        (3 * 8192, 2048, 2048 * 19)
    );
    assert_eq!(m.total_stats(), s);
}

#[test]
fn region_larger_than_cache_misses_on_every_line_every_pass() {
    let mut m = system(MemoryConfig::tango(), 12);
    let r = m.alloc(128 * 1024, Placement::Uma, None);
    let ch = sweep(&mut m, P0, r, 4, AccessKind::Read, 3);
    assert_eq!(ch.refs, 3 * 32768);
    assert_eq!(ch.misses, 3 * 8192);
    let ch = sweep(&mut m, P0, r, 16, AccessKind::Read, 2);
    assert_eq!((ch.refs, ch.misses), (2 * 8192, 2 * 8192));
    assert_eq!(m.lines_resident(P0, r), 4096);
}

#[test]
fn alternating_writers_miss_on_every_write() {
    let mut m = system(MemoryConfig::tango(), 2);
    let r = m.alloc(64, Placement::Uma, None);
    let mut now = 0;
    for i in 0..10 {
        let p = ProcId(i % 2);
        let ch = m.access(p, now, r.base + 4, AccessKind::Write);
        assert_eq!(ch.misses, 1, "write {i}");
        assert_eq!(ch.invalidations, u64::from(i > 0), "write {i}");
        assert_eq!(ch.total(), 20);
        assert_eq!(m.line_state(p, r.base), Some(LineState::Modified));
        assert_eq!(m.line_state(ProcId(1 - p.0), r.base), None);
        now += 100;
    }
    let (s0, s1) = (m.stats(P0), m.stats(P1));
    assert_eq!((s0.misses, s0.invalidations, s0.invalidated), (5, 4, 5));
    assert_eq!((s1.misses, s1.invalidations, s1.invalidated), (5, 5, 4));
}

#[test]
fn lru_reload_misses_exactly_on_evicted_lines() {
    for assoc in [0, 4] {
        // 64-line cache; A = 48 lines (3/4), B = 32 lines (1/2): B evicts A's 16 oldest lines.
        let mut m = system(small(64, assoc), 1);
        let a = m.alloc(48 * 16, Placement::Uma, None);
        let b = m.alloc(32 * 16, Placement::Uma, None);
        assert_eq!(sweep(&mut m, P0, a, 4, AccessKind::Read, 1).misses, 48);
        assert_eq!(sweep(&mut m, P0, b, 4, AccessKind::Read, 1).misses, 32);
        assert_eq!(m.lines_resident(P0, a), 32, "assoc {assoc}");
        assert_eq!(m.lines_resident(P0, a.slice(0, 16 * 16)), 0);
        // Re-sweep A starting with its surviving part: only the 16 evicted lines miss, and each
        // of those misses evicts a line of B.
        let survivors = sweep(
            &mut m,
            P0,
            a.slice(16 * 16, 32 * 16),
            4,
            AccessKind::Read,
            1,
        );
        let evicted = sweep(&mut m, P0, a.slice(0, 16 * 16), 4, AccessKind::Read, 1);
        assert_eq!((survivors.misses, evicted.misses), (0, 16), "assoc {assoc}");
        assert_eq!(m.lines_resident(P0, a), 48);
        assert_eq!(m.lines_resident(P0, b), 16);
    }
}

#[test]
fn lru_in_order_reload_cascades() {
    // The classic LRU pathology: re-sweeping A in order evicts A's own survivors first.
    let mut m = system(small(64, 0), 1);
    let a = m.alloc(48 * 16, Placement::Uma, None);
    let b = m.alloc(32 * 16, Placement::Uma, None);
    sweep(&mut m, P0, a, 16, AccessKind::Read, 1);
    sweep(&mut m, P0, b, 16, AccessKind::Read, 1);
    assert_eq!(sweep(&mut m, P0, a, 16, AccessKind::Read, 1).misses, 48);
}

#[test]
fn direct_mapped_reload_misses_on_conflicting_sets() {
    // 64 sets of one line. A covers sets 0..48 (regions are page-aligned, and a page is a multiple
    // of the cache size). B starts 40 lines into its region: sets 40..64 and 0..8.
    let mut m = system(small(64, 1), 1);
    let a = m.alloc(48 * 16, Placement::Uma, None);
    let b = m.alloc(4096, Placement::Uma, None).slice(40 * 16, 32 * 16);
    let sets_a: Vec<u64> = (0..48).collect();
    let sets_b: Vec<u64> = (40..72).map(|l| l % 64).collect();
    let expected = sets_a.iter().filter(|s| sets_b.contains(s)).count() as u64;
    assert_eq!(expected, 16);
    assert_eq!(sweep(&mut m, P0, a, 4, AccessKind::Read, 1).misses, 48);
    assert_eq!(sweep(&mut m, P0, b, 4, AccessKind::Read, 1).misses, 32);
    assert_eq!(m.lines_resident(P0, a), 48 - expected);
    assert_eq!(
        sweep(&mut m, P0, a, 4, AccessKind::Read, 1).misses,
        expected
    );
    assert_eq!(m.lines_resident(P0, b), 32 - expected);
}

#[test]
fn read_of_modified_line_misses_and_downgrades() {
    let mut m = system(MemoryConfig::tango(), 3);
    let r = m.alloc(64, Placement::Uma, None);
    assert_eq!(m.access(P0, 0, r.base, AccessKind::Write).misses, 1);
    let ch = m.access(P1, 100, r.base + 8, AccessKind::Read);
    assert_eq!((ch.misses, ch.invalidations, ch.stall), (1, 0, 19));
    assert_eq!(m.line_state(P0, r.base), Some(LineState::Shared));
    assert_eq!(m.line_state(P1, r.base), Some(LineState::Shared));
    assert_eq!(m.access(P0, 200, r.base, AccessKind::Read).misses, 0);
    // Writing a Shared copy needs ownership: a miss that invalidates the other copy.
    let ch = m.access(P0, 300, r.base, AccessKind::Write);
    assert_eq!((ch.misses, ch.invalidations), (1, 1));
    assert_eq!(m.line_state(P1, r.base), None);
    assert_eq!(m.line_state(P0, r.base), Some(LineState::Modified));
    // A lone reader gets the line Exclusive and may then write it without a miss.
    let q = r.base + 32;
    assert_eq!(m.access(ProcId(2), 400, q, AccessKind::Read).misses, 1);
    assert_eq!(m.line_state(ProcId(2), q), Some(LineState::Exclusive));
    assert_eq!(m.access(ProcId(2), 500, q, AccessKind::Write).misses, 0);
    assert_eq!(m.line_state(ProcId(2), q), Some(LineState::Modified));
    // A reader of an Exclusive line downgrades it too.
    let e = r.base + 48;
    m.access(P0, 600, e, AccessKind::Read);
    m.access(P1, 700, e, AccessKind::Read);
    assert_eq!(m.line_state(P0, e), Some(LineState::Shared));
}

#[test]
fn one_write_invalidates_all_readers() {
    let n = 10;
    let mut m = system(MemoryConfig::tango(), n);
    let r = m.alloc(16, Placement::Uma, None);
    for p in 0..n {
        assert_eq!(
            m.access(ProcId(p), 1000, r.base, AccessKind::Read).misses,
            1
        );
    }
    let ch = m.access(ProcId(3), 5000, r.base, AccessKind::Write);
    assert_eq!((ch.misses, ch.invalidations), (1, u64::from(n - 1)));
    for p in 0..n {
        let want = if p == 3 {
            Some(LineState::Modified)
        } else {
            None
        };
        assert_eq!(m.line_state(ProcId(p), r.base), want);
        assert_eq!(m.stats(ProcId(p)).invalidated, u64::from(p != 3));
    }
    assert_eq!(m.total_stats().invalidations, u64::from(n - 1));
}

#[test]
fn atomics_on_one_line_serialize() {
    let n = 8u64;
    let mut m = system(MemoryConfig::tango(), n as u32);
    let r = m.alloc(4096, Placement::Uma, None);
    let cost = 20 + 20; // miss + atomic_cycles
    for k in 1..=n {
        let ch = m.atomic(ProcId(k as u32 - 1), 1000, r.base, AtomicKind::FetchAdd);
        assert_eq!(ch.total(), k * cost, "atomic {k}");
        assert_eq!((ch.useful, ch.refs, ch.misses), (1, 1, 1));
        assert_eq!(ch.invalidations, u64::from(k > 1));
    }
    assert_eq!(m.busy_until(r.base), 1000 + n * cost);
    let s = m.total_stats();
    assert_eq!(s.atomics, n);
    assert_eq!(s.atomic_wait_cycles, cost * n * (n - 1) / 2);
    // The last processor owns the line: a later atomic costs a hit plus atomic_cycles.
    let ch = m.atomic(ProcId(n as u32 - 1), 10_000, r.base, AtomicKind::TestAndSet);
    assert_eq!((ch.total(), ch.misses), (21, 0));
    // Atomics on different lines do not wait for each other.
    for p in 0..n {
        let ch = m.atomic(
            ProcId(p as u32),
            20_000,
            r.base + 64 + 16 * p,
            AtomicKind::CompareSwap,
        );
        assert_eq!(ch.total(), cost);
    }
}

#[test]
fn simultaneous_misses_to_one_line_serialize() {
    let mut m = system(MemoryConfig::tango(), 4);
    let r = m.alloc(16, Placement::Uma, None);
    for k in 1..=4u64 {
        let ch = m.access(ProcId(k as u32 - 1), 50, r.base, AccessKind::Read);
        assert_eq!(ch.total(), 20 * k);
    }
    let mut m = system(
        MemoryConfig {
            serialize_misses: false,
            ..MemoryConfig::tango()
        },
        4,
    );
    let r = m.alloc(16, Placement::Uma, None);
    for p in 0..4 {
        assert_eq!(
            m.access(ProcId(p), 50, r.base, AccessKind::Read).total(),
            20
        );
    }
    // An atomic still waits for an earlier atomic on its line.
    m.atomic(P0, 100, r.base, AtomicKind::Swap);
    assert_eq!(m.atomic(P1, 100, r.base, AtomicKind::Swap).total(), 80);
}

#[test]
fn bus_serializes_misses_to_different_lines() {
    let cfg = MemoryConfig {
        bus: Some(BusConfig::default()),
        ..MemoryConfig::tango()
    };
    let mut m = system(cfg, 3);
    let r = m.alloc(4096, Placement::Uma, None);
    for k in 0..3u64 {
        let ch = m.access(ProcId(k as u32), 10, r.base + 16 * k, AccessKind::Read);
        assert_eq!(ch.total(), 20 + 4 * k);
    }
    // Hits do not use the bus.
    assert_eq!(m.access(P0, 10, r.base, AccessKind::Read).total(), 1);
}

#[test]
fn numa_local_and_remote_misses() {
    let mut m = system(MemoryConfig::bbn_gp1000(4), 4);
    assert_eq!(m.node_of(ProcId(2)), Some(2));
    let on2 = m.alloc(4096, Placement::Node(2), None);
    assert_eq!(m.home_node(on2.base), Some(2));
    let ch = m.access(ProcId(2), 0, on2.base, AccessKind::Read);
    assert_eq!((ch.total(), ch.remote), (4, 0));
    let ch = m.access(P0, 0, on2.base + 16, AccessKind::Read);
    assert_eq!((ch.total(), ch.stall, ch.remote), (20, 19, 1));
    let mine = m.alloc(100, Placement::Local, Some(ProcId(3)));
    assert_eq!(m.home_node(mine.base), Some(3));
    assert_eq!(
        m.access(ProcId(3), 0, mine.base, AccessKind::Write).total(),
        4
    );
    let uma = m.alloc(16, Placement::Uma, None);
    assert_eq!(m.home_node(uma.base), None);
    assert_eq!(m.access(P1, 0, uma.base, AccessKind::Read).total(), 20);
    // Interleaved by page: one line in each of 4 pages, swept by processor 1.
    let spread = m.alloc(4 * 4096, Placement::Interleaved, None);
    let ch = sweep(&mut m, P1, spread, 4096, AccessKind::Read, 1);
    assert_eq!((ch.misses, ch.remote), (4, 3));
    assert_eq!(ch.total(), 4 + 3 * 20);
    assert_eq!(m.stats(P1).remote, 3);
    assert_eq!(m.total_stats().remote, 4);
    // Without NUMA, placement is ignored.
    let mut u = system(MemoryConfig::tango(), 2);
    let r = u.alloc(16, Placement::Node(1), None);
    assert_eq!((u.node_of(P0), u.home_node(r.base)), (None, None));
}

#[test]
fn round_robin_node_mapping() {
    let mut cfg = MemoryConfig::bbn_gp1000(2);
    cfg.numa.as_mut().unwrap().mapping = NodeMapping::RoundRobin;
    let mut m = system(cfg, 4);
    assert_eq!(m.node_of(ProcId(3)), Some(1));
    let r = m.alloc(16, Placement::Node(1), None);
    assert_eq!(m.access(ProcId(3), 0, r.base, AccessKind::Read).total(), 4);
}

#[test]
fn bulk_writes_and_read_modify_writes() {
    let mut m = system(MemoryConfig::tango(), 2);
    let r = m.alloc(1024, Placement::Uma, None);
    sweep(&mut m, P0, r, 16, AccessKind::Read, 1);
    let ch = sweep(&mut m, P1, r, 4, AccessKind::Write, 1);
    assert_eq!((ch.refs, ch.misses, ch.invalidations), (256, 64, 64));
    assert_eq!(m.lines_resident(P0, r), 0);
    let ch = sweep(&mut m, P0, r, 4, AccessKind::ReadModifyWrite, 2);
    assert_eq!(
        (ch.refs, ch.misses, ch.invalidations),
        (2 * 2 * 256, 64, 64)
    );
    assert_eq!(ch.useful, 1024);
    assert_eq!(m.line_state(P0, r.base), Some(LineState::Modified));
    assert_eq!(m.access(P1, 0, r.base, AccessKind::ReadModifyWrite).refs, 2);
}

#[test]
fn unaligned_odd_strides_count_every_reference() {
    let mut m = system(MemoryConfig::tango(), 1);
    let r = m.alloc(4096, Placement::Uma, None).slice(5, 1000);
    let ch = sweep(&mut m, P0, r, 7, AccessKind::Read, 2);
    assert_eq!(ch.refs, 2 * 1000u64.div_ceil(7));
    assert_eq!(ch.misses, r.lines(16));
    let ch = sweep(&mut m, P0, r, 100_000, AccessKind::Read, 3);
    assert_eq!((ch.refs, ch.misses), (3, 0));
}

#[test]
fn budget_stops_and_resumes() {
    let mut m = system(MemoryConfig::tango(), 1);
    let r = m.alloc(4096, Placement::Uma, None);
    let mut acc = BulkAccess::over(r, 4, AccessKind::Read, 1);
    // First line: a miss (20 cycles) then hits of 1; a budget of 22 takes the miss and two hits.
    let ch = m.run(P0, 0, &mut acc, 22);
    assert_eq!((ch.refs, ch.misses, ch.total(), ch.done), (3, 1, 22, false));
    let ch = m.run(P0, 22, &mut acc, 1);
    assert_eq!((ch.refs, ch.misses, ch.total()), (1, 0, 1));
    // A miss overshoots a budget of one cycle by at most the one reference.
    let ch = m.run(P0, 23, &mut acc, 1);
    assert_eq!((ch.refs, ch.misses, ch.total()), (1, 1, 20));
    // A zero budget still makes progress.
    assert_eq!(m.run(P0, 43, &mut acc, 0).refs, 1);
    assert_eq!(acc.completed_refs(), 6);
    let ch = m.run(P0, 44, &mut acc, Cycles::MAX);
    assert!(ch.done);
    assert_eq!(acc.completed_refs(), 1024);
    assert_eq!(
        m.run(P0, 0, &mut acc, 10),
        Charge {
            done: true,
            ..Charge::default()
        }
    );
    acc.reset();
    assert!(!acc.is_done());
    assert!(BulkAccess::new(r.base, 0, 4, AccessKind::Read, 3).is_done());
    assert!(BulkAccess::new(r.base, 16, 4, AccessKind::Read, 0).is_done());
}

#[test]
fn flush_empties_the_cache_and_the_directory_entries() {
    let mut m = system(MemoryConfig::tango(), 2);
    let r = m.alloc(8192, Placement::Uma, None);
    sweep(&mut m, P0, r, 16, AccessKind::Read, 1);
    assert_eq!(m.lines_resident(P0, r), 512);
    m.flush(P0);
    assert_eq!(m.lines_resident(P0, r), 0);
    // Nothing left to invalidate, and a re-sweep misses on everything again.
    assert_eq!(
        sweep(&mut m, P1, r, 16, AccessKind::Write, 1).invalidations,
        0
    );
    assert_eq!(sweep(&mut m, P0, r, 16, AccessKind::Read, 1).misses, 512);
    m.reset_stats();
    assert_eq!(m.total_stats(), MemoryStats::default());
}

#[test]
fn disabled_model_charges_hits_only() {
    let mut m = system(MemoryConfig::none(), 2);
    let r = m.alloc(1 << 20, Placement::Uma, None);
    assert_eq!(m.access(P0, 0, r.base, AccessKind::Write).total(), 1);
    assert_eq!(m.atomic(P1, 0, r.base, AtomicKind::FetchAdd).total(), 1);
    assert_eq!(m.atomic(P0, 0, r.base, AtomicKind::FetchAdd).total(), 1);
    let mut acc = BulkAccess::over(r, 4, AccessKind::ReadModifyWrite, 2);
    let ch = m.run(P0, 0, &mut acc, 999);
    assert_eq!(
        (ch.refs, ch.total(), ch.misses, ch.done),
        (1000, 1000, 0, false)
    );
    let ch = m.run(P0, 0, &mut acc, Cycles::MAX);
    assert_eq!((ch.refs, ch.done), (acc.total_refs() - 1000, true));
    assert_eq!(m.lines_resident(P0, r), 0);
    assert_eq!(m.line_state(P0, r.base), None);
    m.flush(P0);
    assert_eq!(m.stats(P0).atomics, 1);
}

#[test]
fn thousand_processors_construct_and_run() {
    let n = 1024;
    let mut m = system(MemoryConfig::tango(), n);
    let shared = m.alloc(16, Placement::Uma, None);
    for p in 0..n {
        let mine = m.alloc(1024, Placement::Local, Some(ProcId(p)));
        let ch = sweep(&mut m, ProcId(p), mine, 4, AccessKind::Write, 2);
        assert_eq!((ch.refs, ch.misses), (512, 64));
        assert_eq!(
            m.access(ProcId(p), 0, shared.base, AccessKind::Read).misses,
            1
        );
    }
    let ch = m.access(ProcId(517), 1000, shared.base, AccessKind::Write);
    assert_eq!(ch.invalidations, u64::from(n - 1));
    let ch = m.atomic(ProcId(3), 2000, shared.base, AtomicKind::FetchAdd);
    assert_eq!(ch.invalidations, 1);
    let s = m.total_stats();
    assert_eq!(s.refs, u64::from(n) * 513 + 2);
    assert_eq!(s.misses, u64::from(n) * 65 + 2);
}

#[test]
fn same_inputs_same_results() {
    let run = || {
        let mut m = system(small(64, 0), 4);
        let r = m.alloc(4096, Placement::Uma, None);
        let mut accs: Vec<BulkAccess> = (0..4)
            .map(|p| BulkAccess::over(r.slice(p * 512, 2048), 4 + p, AccessKind::Write, 3))
            .collect();
        let mut clocks = [0u64; 4];
        while accs.iter().any(|a| !a.is_done()) {
            // Lowest virtual time first, ties by processor number (Tango's rule).
            let p = (0..4)
                .filter(|&p| !accs[p].is_done())
                .min_by_key(|&p| (clocks[p], p))
                .unwrap();
            let ch = m.run(ProcId(p as u32), clocks[p], &mut accs[p], 50);
            clocks[p] += ch.total();
        }
        (
            clocks,
            (0..4).map(|p| m.stats(ProcId(p))).collect::<Vec<_>>(),
        )
    };
    let (a, b) = (run(), run());
    assert_eq!(a, b);
    assert!(a.1.iter().all(|s| s.invalidations > 0));
}

#[test]
#[should_panic(expected = "outside every region")]
fn unallocated_address_panics() {
    let mut m = system(MemoryConfig::tango(), 1);
    m.access(P0, 0, 8, AccessKind::Read);
}

#[test]
#[should_panic(expected = "does not exist")]
fn unknown_processor_panics() {
    let mut m = system(MemoryConfig::tango(), 1);
    let r = m.alloc(16, Placement::Uma, None);
    m.access(P1, 0, r.base, AccessKind::Read);
}

#[test]
fn bad_config_is_rejected_by_new() {
    let cfg = MemoryConfig {
        line_bytes: 12,
        ..MemoryConfig::tango()
    };
    let err = MemorySystem::new(&cfg, 4).unwrap_err();
    assert!(err.to_string().starts_with("memory.line_bytes:"), "{err}");
    assert!(MemorySystem::new(&MemoryConfig::tango(), 0).is_err());
}
