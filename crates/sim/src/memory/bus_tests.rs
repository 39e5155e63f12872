//! The shared bus against a closed form and the Symmetry's locked atomics (DiBella et al. 1992,
//! section 2.1's locks on a Sequent Symmetry): misses from several processors at Poisson times
//! queue for one bus of fixed transfer time D, an M/D/1 queue whose mean wait is
//! rho * D / (2 * (1 - rho)); with `locked_atomics` every test-and-set takes a bus slot, even on
//! a line its processor owns.

use smpsched_policy::mix::splitmix;

use super::*;
use crate::ids::{Cycles, ProcId};

/// Mean bus wait of `n` misses (each to a fresh line, so each is one bus transaction) from
/// `procs` processors, arriving as a Poisson stream of mean gap `gap` cycles on a bus of `d`.
fn mean_bus_wait(procs: u32, n: u64, gap: f64, d: Cycles) -> f64 {
    let cfg = MemoryConfig {
        bus: Some(BusConfig {
            transfer_cycles: d,
            locked_atomics: false,
        }),
        serialize_misses: false,
        ..MemoryConfig::tango()
    };
    let mut m = MemorySystem::new(&cfg, procs).unwrap();
    let r = m.alloc(16 * n, Placement::Uma, None);
    let (mut t, mut waited) = (0.0f64, 0u64);
    for k in 0..n {
        let u = (splitmix(k ^ 0x5eed) >> 11) as f64 / (1u64 << 53) as f64;
        t += -(1.0 - u).ln() * gap;
        let p = ProcId((splitmix(k) % u64::from(procs)) as u32);
        let ch = m.access(p, t.round() as Cycles, r.base + 16 * k, AccessKind::Read);
        waited += ch.total() - cfg.miss_cycles;
    }
    waited as f64 / n as f64
}

#[test]
fn bus_wait_matches_m_d_1() {
    let d = 100;
    for (gap, tol) in [(250.0, 0.05), (143.0, 0.06)] {
        let rho = d as f64 / gap;
        let want = rho * d as f64 / (2.0 * (1.0 - rho));
        let got = mean_bus_wait(6, 200_000, gap, d);
        assert!(
            (got / want - 1.0).abs() < tol,
            "rho {rho:.2}: mean bus wait {got:.1} cycles, M/D/1 {want:.1}"
        );
    }
}

#[test]
fn locked_atomics_take_the_bus_even_on_an_owned_line() {
    for locked in [false, true] {
        let cfg = MemoryConfig {
            bus: Some(BusConfig {
                transfer_cycles: 4,
                locked_atomics: locked,
            }),
            ..MemoryConfig::sequent_symmetry()
        };
        let mut m = MemorySystem::new(&cfg, 2).unwrap();
        let r = m.alloc(64, Placement::Uma, None);
        let own = ProcId(0);
        m.atomic(own, 0, r.base, AtomicKind::TestAndSet); // now Modified in processor 0
                                                          // Processor 1 misses on another line at 100 and holds the bus until 104.
        m.access(ProcId(1), 100, r.base + 32, AccessKind::Read);
        let ch = m.atomic(own, 100, r.base, AtomicKind::TestAndSet);
        let base = cfg.hit_cycles + cfg.atomic_cycles;
        assert_eq!(ch.total(), if locked { base + 4 } else { base });
    }
}

#[test]
fn spinning_test_and_sets_delay_another_processors_misses() {
    // Four processors test-and-set a held lock back to back; a fifth's miss waits behind them.
    let cfg = MemoryConfig::sequent_symmetry();
    let d = cfg.bus.as_ref().unwrap().transfer_cycles;
    let mut m = MemorySystem::new(&cfg, 5).unwrap();
    let r = m.alloc(64, Placement::Uma, None);
    for p in 0..4 {
        m.atomic(ProcId(p), 1000, r.base, AtomicKind::TestAndSet);
    }
    let ch = m.access(ProcId(4), 1000, r.base + 32, AccessKind::Read);
    assert!(ch.total() >= cfg.miss_cycles + 4 * d, "{}", ch.total());
}
