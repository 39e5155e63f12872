//! The shared second level against exact LRU miss counts (Weibel's Cortex-A53, section 2):
//! cyclic sweeps of 1x, 4x, 8x and 9x the first level, on the `cortex_a53` geometry (four-way
//! L1, sixteen-way L2: contiguous sweeps spread evenly over the sets, so LRU is exact per set).

use super::*;
use crate::ids::{Cycles, ProcId};

const P0: ProcId = ProcId(0);
const P1: ProcId = ProcId(1);
const PASSES: u32 = 5;

/// Sweeps `times` the first level's size `PASSES` times (one read per line) on a fresh A53 and
/// returns the charge.
fn cyclic(times: u64) -> (Charge, MemoryConfig) {
    let cfg = MemoryConfig::cortex_a53();
    let mut m = MemorySystem::new(&cfg, 4).unwrap();
    let r = m.alloc(times * cfg.cache_bytes, Placement::Uma, None);
    let mut acc = BulkAccess::over(r, u64::from(cfg.line_bytes), AccessKind::Read, PASSES);
    let ch = m.run(P0, 0, &mut acc, Cycles::MAX);
    assert!(ch.done);
    assert_eq!(m.stats(P0).l2_misses, ch.l2_misses);
    (ch, cfg)
}

/// Expected (first-level misses, second-level misses) of a cyclic LRU sweep of `lines` lines,
/// `PASSES` times, through caches of `l1` and `l2` lines: a level the sweep fits misses only
/// on the first pass, one it does not fit misses every line every pass.
fn lru(lines: u64, l1: u64, l2: u64) -> (u64, u64) {
    let passes = u64::from(PASSES);
    let l1_misses = if lines <= l1 { lines } else { lines * passes };
    let l2_misses = if lines <= l2 { lines } else { lines * passes };
    (l1_misses, l2_misses)
}

#[test]
fn cyclic_sweeps_miss_exactly_as_lru_says_at_both_levels() {
    for times in [1, 4, 8, 9, 12] {
        let (ch, cfg) = cyclic(times);
        let l2 = cfg.l2.clone().unwrap();
        let lines = times * cfg.lines();
        let (l1m, l2m) = lru(lines, cfg.lines(), l2.cache_bytes / 64);
        assert_eq!((ch.misses, ch.l2_misses), (l1m, l2m), "{times}x the L1");
        assert_eq!(ch.refs, lines * u64::from(PASSES));
        // Stall: each first-level miss waits for the L2, each L2 miss for memory instead.
        let stall = (l1m - l2m) * (l2.hit_cycles - 1) + l2m * (cfg.miss_cycles - 1);
        assert_eq!(ch.stall, stall, "{times}x the L1");
    }
}

#[test]
fn the_second_level_is_shared_by_every_processor() {
    let cfg = MemoryConfig::cortex_a53();
    let mut m = MemorySystem::new(&cfg, 4).unwrap();
    let r = m.alloc(4 * cfg.cache_bytes, Placement::Uma, None);
    let mut a = BulkAccess::over(r, 64, AccessKind::Read, 1);
    let first = m.run(P0, 0, &mut a, Cycles::MAX);
    assert_eq!((first.misses, first.l2_misses), (1024, 1024));
    // Another processor misses in its own L1 but finds every line in the shared L2.
    let mut b = BulkAccess::over(r, 64, AccessKind::Read, 1);
    let second = m.run(P1, 1_000_000, &mut b, Cycles::MAX);
    assert_eq!((second.misses, second.l2_misses), (1024, 0));
    assert_eq!(second.stall, 1024 * 14);
    m.check_coherence();
}

#[test]
fn without_a_second_level_nothing_changes() {
    let cfg = MemoryConfig {
        l2: None,
        ..MemoryConfig::cortex_a53()
    };
    let mut m = MemorySystem::new(&cfg, 1).unwrap();
    let r = m.alloc(2 * cfg.cache_bytes, Placement::Uma, None);
    let mut acc = BulkAccess::over(r, 64, AccessKind::Read, 3);
    let ch = m.run(P0, 0, &mut acc, Cycles::MAX);
    assert_eq!((ch.misses, ch.l2_misses), (3 * 512, 0));
    assert_eq!(ch.stall, 3 * 512 * 119);
}

#[test]
fn a_bad_second_level_names_its_field() {
    let base = MemoryConfig::cortex_a53();
    let with = |l2: L2Config| MemoryConfig {
        l2: Some(l2),
        ..base.clone()
    };
    let cases = [
        (
            with(L2Config {
                cache_bytes: 100,
                ..L2Config::default()
            }),
            "l2.cache_bytes",
        ),
        (
            with(L2Config {
                associativity: 3,
                ..L2Config::default()
            }),
            "l2.associativity",
        ),
        (
            with(L2Config {
                hit_cycles: 0,
                ..L2Config::default()
            }),
            "l2.hit_cycles",
        ),
        (
            with(L2Config {
                hit_cycles: 500,
                ..L2Config::default()
            }),
            "l2.hit_cycles",
        ),
    ];
    for (cfg, field) in cases {
        let err = cfg.validate(4).unwrap_err().to_string();
        assert!(err.starts_with(&format!("memory.{field}:")), "{err}");
    }
    let cfg: MemoryConfig = toml::from_str("[l2]\nhit_cycles = 20\n").unwrap();
    assert_eq!(cfg.l2.unwrap().cache_bytes, 128 * 1024);
    assert!(toml::from_str::<MemoryConfig>("[l2]\nsize = 4\n").is_err());
}
