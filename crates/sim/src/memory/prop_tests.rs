//! Property tests of the memory model: a walk run in chunks of random budgets charges what one
//! run charges, and random operation sequences keep the directory and the caches consistent.

use proptest::prelude::*;

use super::tests::{small, P0, P1};
use super::*;
use crate::ids::{Cycles, ProcId};

fn kind_of(k: u8) -> AccessKind {
    match k {
        0 => AccessKind::Read,
        1 => AccessKind::Write,
        _ => AccessKind::ReadModifyWrite,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Running an access in chunks of random budgets, each starting when the previous one ended,
    /// charges exactly what one uninterrupted run charges, and leaves the same cache contents.
    #[test]
    fn chunked_runs_equal_one_run(
        len in 1u64..6000,
        offset in 0u64..40,
        stride in 1u64..80,
        kind in 0u8..3,
        passes in 1u32..4,
        budgets in proptest::collection::vec(1u64..300, 1..20),
        assoc in proptest::sample::select(vec![0u32, 1, 2, 16]),
        numa in any::<bool>(),
        bus in any::<bool>(),
    ) {
        let mut cfg = if numa { MemoryConfig::bbn_gp1000(2) } else { MemoryConfig::tango() };
        cfg.cache_bytes = 64 * 16;
        cfg.associativity = assoc;
        if bus {
            cfg.bus = Some(BusConfig::default());
        }
        let build = || {
            let mut m = MemorySystem::new(&cfg, 2).unwrap();
            let r = m.alloc(len + offset, Placement::Interleaved, None).slice(offset, len);
            // Processor 1 holds part of the range, so writes invalidate.
            let mut pre = BulkAccess::over(r, 32, AccessKind::Read, 1);
            m.run(P1, 0, &mut pre, Cycles::MAX);
            (m, r)
        };
        let start = 1_000_000;
        let (mut whole, r) = build();
        let mut acc = BulkAccess::over(r, stride, kind_of(kind), passes);
        let one = whole.run(P0, start, &mut acc, Cycles::MAX);
        prop_assert!(one.done);
        prop_assert_eq!(one.refs, acc.total_refs());

        let (mut chunked, r) = build();
        let mut acc = BulkAccess::over(r, stride, kind_of(kind), passes);
        let elem = kind_of(kind).refs() * cfg.hit_cycles;
        let mut now = start;
        let mut sum = Charge::default();
        for i in 0.. {
            let budget = budgets[i % budgets.len()];
            let ch = chunked.run(P0, now, &mut acc, budget);
            prop_assert!(ch.done || ch.total() >= budget);
            // Overshoot by less than one element (the worst element is a remote miss).
            prop_assert!(ch.total() < budget + elem + 20);
            prop_assert_eq!(ch.done, acc.is_done());
            now += ch.total();
            sum += ch;
            if ch.done {
                break;
            }
        }
        prop_assert_eq!(sum, one);
        prop_assert_eq!(chunked.stats(P0), whole.stats(P0));
        prop_assert_eq!(chunked.total_stats(), whole.total_stats());
        for p in [P0, P1] {
            prop_assert_eq!(chunked.lines_resident(p, r), whole.lines_resident(p, r));
        }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Access(u32, u64, u8),
    Atomic(u32, u64),
    Sweep(u32, u64, u64, u8, u64),
    Flush(u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u32..5, 0u64..2048, 0u8..3).prop_map(|(p, a, k)| Op::Access(p, a, k)),
        2 => (0u32..5, 0u64..2048).prop_map(|(p, a)| Op::Atomic(p, a)),
        2 => (0u32..5, 0u64..2048, 1u64..1024, 0u8..3, 1u64..200)
            .prop_map(|(p, a, l, k, b)| Op::Sweep(p, a, l, k, b)),
        1 => (0u32..5).prop_map(Op::Flush),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// After any mix of reads, writes, atomics, partial sweeps and flushes by five processors, the
    /// directory agrees exactly with the caches (single writer or many readers).
    #[test]
    fn directory_stays_coherent(
        ops in proptest::collection::vec(op(), 1..60),
        assoc in proptest::sample::select(vec![0u32, 1, 2, 16]),
    ) {
        // 32-line caches over a 3 KB range: plenty of evictions and sharing.
        let mut m = MemorySystem::new(&small(32, assoc), 5).unwrap();
        let r = m.alloc(3072, Placement::Uma, None);
        let mut now = 0;
        for op in ops {
            now += 7;
            match op {
                Op::Access(p, a, k) => {
                    let addr = r.base + a;
                    let others: Vec<u32> = (0..5)
                        .filter(|&q| q != p && m.line_state(ProcId(q), addr).is_some())
                        .collect();
                    let held = m.line_state(ProcId(p), addr).is_some();
                    let ch = m.access(ProcId(p), now, addr, kind_of(k));
                    // The directory's decisions are exact although evictions are silent: a
                    // write invalidates exactly the other caches holding the line, a read miss
                    // takes it Exclusive exactly when no other cache holds it.
                    let state = m.line_state(ProcId(p), addr);
                    if kind_of(k).writes() {
                        prop_assert_eq!(ch.invalidations, others.len() as u64);
                        prop_assert_eq!(state, Some(LineState::Modified));
                    } else if !held {
                        prop_assert_eq!(ch.invalidations, 0);
                        let want = if others.is_empty() { LineState::Exclusive } else { LineState::Shared };
                        prop_assert_eq!(state, Some(want));
                        for &q in &others {
                            prop_assert_eq!(m.line_state(ProcId(q), addr), Some(LineState::Shared));
                        }
                    }
                }
                Op::Atomic(p, a) => {
                    m.atomic(ProcId(p), now, r.base + a, AtomicKind::FetchAdd);
                }
                Op::Sweep(p, a, l, k, b) => {
                    let mut acc = BulkAccess::new(r.base + a, l, 4, kind_of(k), 1);
                    m.run(ProcId(p), now, &mut acc, b);
                }
                Op::Flush(p) => m.flush(ProcId(p)),
            }
            m.check_coherence();
        }
    }
}
