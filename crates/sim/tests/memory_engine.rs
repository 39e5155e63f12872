//! The memory model inside the engine: exact miss counts for sweeps that fit the cache or not,
//! sharing misses between processors, affinity (reload after an intervening thread), chunked
//! accesses under preemption, determinism and conservation with the model on.

use smpsched_sim::memory::{AccessKind, AtomicKind, BulkAccess, MemoryConfig, Placement, Region};
use smpsched_sim::sched::{policy, Scheduler};
use smpsched_sim::{
    MachineConfig, Op, RunReport, Script, SimError, Simulation, SyncKind, WaitPolicy,
};

const LINE: u64 = 16;
/// Stall of one miss beyond the hit (Tango: miss 20, hit 1).
const MISS_STALL: u64 = 19;

fn machine(p: u32, memory: MemoryConfig) -> MachineConfig {
    let mut m = MachineConfig::tango_12();
    m.processors = p;
    m.context_switch_cycles = 0;
    m.sched_op_cycles = 0;
    m.memory = memory;
    m
}

/// A Tango cache of `lines` 16-byte lines, fully associative LRU.
fn cache_of(lines: u64) -> MemoryConfig {
    MemoryConfig {
        cache_bytes: lines * LINE,
        ..MemoryConfig::tango()
    }
}

fn sched(name: &str, params: &str) -> Box<dyn Scheduler> {
    policy(name)
        .unwrap()
        .make(&toml::from_str(params).unwrap())
        .unwrap()
}

fn sweep(r: Region, stride: u64, kind: AccessKind, passes: u32) -> Op {
    Op::Mem(BulkAccess::over(r, stride, kind, passes))
}

fn finish(sim: Simulation) -> RunReport {
    let r = sim.run().unwrap();
    r.check_conservation().unwrap();
    for a in &r.apps {
        assert_eq!(
            a.stall, a.time.stall,
            "{}: stall charged = stall timed",
            a.name
        );
    }
    let refs: u64 = r.apps.iter().map(|a| a.refs).sum();
    assert_eq!(refs, r.memory.refs);
    r
}

#[test]
fn a_region_smaller_than_the_cache_misses_only_on_the_first_pass() {
    let mut sim =
        Simulation::new(machine(1, MemoryConfig::tango()), sched("batch", ""), 1).unwrap();
    let r = sim.memory().alloc(4096, Placement::Uma, None);
    let task = sim.add_task("fit");
    sim.spawn(
        task,
        Box::new(Script::new([sweep(r, 4, AccessKind::Read, 5)])),
    )
    .unwrap();
    let rep = finish(sim);
    let a = &rep.apps[0];
    let lines = 4096 / LINE;
    assert_eq!(a.refs, 5 * 4096 / 4);
    assert_eq!(a.misses, lines);
    assert_eq!(a.stall, lines * MISS_STALL);
    assert_eq!(a.time.useful, a.refs);
    assert_eq!(rep.elapsed_cycles, a.refs + lines * MISS_STALL);
    assert!(a.miss_rate > 0.0 && a.miss_rate < 0.1);
}

#[test]
fn a_region_larger_than_a_fully_associative_lru_cache_misses_every_line_every_pass() {
    let mut sim = Simulation::new(machine(1, cache_of(64)), sched("batch", ""), 1).unwrap();
    let r = sim.memory().alloc(128 * LINE, Placement::Uma, None);
    let task = sim.add_task("thrash");
    sim.spawn(
        task,
        Box::new(Script::new([
            // One reference per line: every access misses.
            sweep(r, LINE, AccessKind::Read, 3),
        ])),
    )
    .unwrap();
    let rep = finish(sim);
    let a = &rep.apps[0];
    assert_eq!(a.refs, 3 * 128);
    assert_eq!(a.misses, 3 * 128);
    assert_eq!(a.miss_rate, 1.0);
}

#[test]
fn two_processors_alternately_writing_one_line_miss_on_every_write() {
    const ROUNDS: u32 = 20;
    let mut sim =
        Simulation::new(machine(2, MemoryConfig::tango()), sched("batch", ""), 1).unwrap();
    let line = sim.memory().alloc(LINE, Placement::Uma, None);
    // An idealized barrier (no memory traffic of its own), so only the data line is counted.
    let barrier = sim.create_sync_at(
        SyncKind::Barrier {
            parties: 2,
            arrived: 0,
            generation: 0,
        },
        WaitPolicy::SPIN,
        None,
    );
    let task = sim.add_task("pingpong");
    for me in 0..2 {
        let mut ops = Vec::new();
        for round in 0..ROUNDS {
            if round % 2 == me {
                if round % 4 < 2 {
                    ops.push(sweep(line, 4, AccessKind::Write, 1));
                } else {
                    ops.push(Op::Atomic {
                        addr: line.base,
                        kind: AtomicKind::FetchAdd,
                    });
                }
            }
            ops.push(Op::Wait(barrier));
        }
        sim.spawn(task, Box::new(Script::new(ops))).unwrap();
    }
    let rep = finish(sim);
    let a = &rep.apps[0];
    // Each write pass touches the line 4 times (one miss), each atomic once (one miss).
    assert_eq!(a.misses, u64::from(ROUNDS));
    assert_eq!(a.invalidations, u64::from(ROUNDS) - 1);
    assert_eq!(rep.memory.atomics, u64::from(ROUNDS) / 2);
    assert_eq!(a.migrations, 0);
}

#[test]
fn a_rescheduled_thread_reloads_only_what_the_intervening_thread_evicted() {
    // One processor, a 64-line LRU cache. A fills it, yields; B sweeps 32 lines (half the cache),
    // evicting A's 32 least recently used lines; A comes back and sweeps its resident half first
    // (all hits, which makes them most recent), then the evicted half (32 misses, evicting B's).
    let mut sim = Simulation::new(machine(1, cache_of(64)), sched("round-robin", ""), 1).unwrap();
    let ra = sim.memory().alloc(64 * LINE, Placement::Uma, None);
    let rb = sim.memory().alloc(32 * LINE, Placement::Uma, None);
    let half = 32 * LINE;
    let ta = sim.add_task("a");
    let tb = sim.add_task("b");
    sim.spawn(
        ta,
        Box::new(Script::new([
            sweep(ra, 4, AccessKind::Read, 1),
            Op::Yield,
            sweep(ra.slice(half, half), 4, AccessKind::Read, 1),
            sweep(ra.slice(0, half), 4, AccessKind::Read, 1),
        ])),
    )
    .unwrap();
    sim.spawn(
        tb,
        Box::new(Script::new([sweep(rb, 4, AccessKind::Read, 1)])),
    )
    .unwrap();
    let rep = finish(sim);
    let (a, b) = (&rep.apps[0], &rep.apps[1]);
    assert_eq!(b.misses, 32);
    assert_eq!(a.misses, 64 + 32, "cold fill plus exactly the evicted half");
    assert_eq!(a.refs, 2 * 64 * 4);
    assert_eq!(a.same_processor_rate, 1.0);
    assert_eq!(rep.total.stall, (64 + 32 + 32) * MISS_STALL);
}

/// Several sweeping threads on two processors with a short quantum and short chunks: accesses
/// are preempted between chunks and resumed, possibly elsewhere.
fn mixed(seed: u64) -> RunReport {
    let mut mem = cache_of(128);
    mem.chunk_cycles = 500;
    let mut sim = Simulation::new(
        machine(2, mem),
        sched("round-robin", "quantum = 3000"),
        seed,
    )
    .unwrap();
    let shared = sim.memory().alloc(1024, Placement::Uma, None);
    let task = sim.add_task("shared");
    for _ in 0..3 {
        sim.spawn(
            task,
            Box::new(Script::new([
                sweep(shared, 8, AccessKind::ReadModifyWrite, 6),
                Op::Compute(700),
                sweep(shared, 16, AccessKind::Read, 2),
            ])),
        )
        .unwrap();
    }
    let private = sim.add_task("private");
    for _ in 0..2 {
        let r = sim.memory().alloc(3000, Placement::Uma, None);
        sim.spawn(
            private,
            Box::new(Script::new([sweep(r, 4, AccessKind::Read, 4)])),
        )
        .unwrap();
    }
    finish(sim)
}

#[test]
fn chunked_accesses_are_deterministic_and_conserve_time() {
    let a = mixed(7);
    let b = mixed(7);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    // Every reference was made, however the accesses were cut.
    assert_eq!(a.apps[0].refs, 3 * (6 * 2 * 1024 / 8 + 2 * 1024 / 16));
    assert_eq!(a.apps[1].refs, 2 * 4 * 3000 / 4);
    assert!(a.apps[0].invalidations > 0);
    assert!(a.total.stall > 0);
    assert!(a.apps.iter().all(|x| x.context_switches > 3));
}

#[test]
fn with_the_model_off_references_cost_one_hit_each() {
    let mut sim = Simulation::new(machine(1, MemoryConfig::none()), sched("batch", ""), 1).unwrap();
    let r = sim.memory().alloc(1 << 20, Placement::Uma, None);
    let task = sim.add_task("off");
    sim.spawn(
        task,
        Box::new(Script::new([
            sweep(r, 16, AccessKind::ReadModifyWrite, 2),
            Op::Atomic {
                addr: r.base,
                kind: AtomicKind::Swap,
            },
        ])),
    )
    .unwrap();
    let rep = finish(sim);
    let refs = 2 * 2 * (1 << 20) / 16 + 1;
    assert_eq!(rep.apps[0].refs, refs);
    assert_eq!(rep.total.stall, 0);
    assert_eq!(rep.elapsed_cycles, refs);
}

#[test]
fn an_unallocated_address_is_an_error_not_a_panic() {
    let mut sim =
        Simulation::new(machine(1, MemoryConfig::tango()), sched("batch", ""), 1).unwrap();
    let task = sim.add_task("bad");
    sim.spawn(
        task,
        Box::new(Script::new([Op::Atomic {
            addr: 12,
            kind: AtomicKind::TestAndSet,
        }])),
    )
    .unwrap();
    assert!(matches!(
        sim.run(),
        Err(SimError::BadAddress { addr: 12, .. })
    ));
}

#[test]
fn a_bad_memory_config_names_its_field() {
    let mut m = machine(1, MemoryConfig::tango());
    m.memory.cache_bytes = 100;
    let e = Simulation::new(m, sched("batch", ""), 1).err().unwrap();
    assert_eq!(
        e.to_string().split(':').next(),
        Some("machine.memory.cache_bytes")
    );
}
