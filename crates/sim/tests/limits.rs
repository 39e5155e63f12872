//! Bounds on a run: simulated time never wraps, a run stops at its time or event bound with what
//! it measured so far (conservation still holds), and an observer sees the run's progress.

use smpsched_sim::sched::{policy, Scheduler};
use smpsched_sim::{
    Bound, Limits, MachineConfig, Op, Program, Repeat, Script, SimError, Simulation, ThreadCtx,
};

fn machine(p: u32) -> MachineConfig {
    let mut m = MachineConfig::tango_12();
    m.processors = p;
    m
}

fn sched(name: &str) -> Box<dyn Scheduler> {
    policy(name).unwrap().make(&toml::Table::new()).unwrap()
}

fn stopped(
    r: Result<smpsched_sim::RunReport, SimError>,
) -> (Bound, u64, Box<smpsched_sim::RunReport>) {
    match r {
        Err(SimError::Limit {
            bound,
            events,
            partial,
            ..
        }) => (bound, events, partial),
        other => panic!("expected a stop at a limit, got {other:?}"),
    }
}

#[test]
fn a_time_limit_stops_a_long_run_with_its_partial_measures() {
    let mut sim = Simulation::new(machine(2), sched("round-robin"), 1).unwrap();
    sim.set_time_limit(1_000_000);
    let t = sim.add_task("long");
    for _ in 0..3 {
        sim.spawn(t, Box::new(Script::new([Op::Compute(100_000_000)])))
            .unwrap();
    }
    let (bound, _, partial) = stopped(sim.run());
    assert_eq!(bound, Bound::Cycles(1_000_000));
    assert_eq!(partial.elapsed_cycles, 1_000_000);
    partial.check_conservation().unwrap();
    // Both processors worked the whole time, but for the dispatches' kernel and switch time.
    let t = partial.total;
    assert_eq!(t.useful + t.kernel + t.switch, 2_000_000);
    assert_eq!(t.idle, 0);
}

#[test]
fn an_event_limit_stops_a_run_that_would_never_end() {
    // A thread that computes one cycle at a time forever.
    let mut sim = Simulation::new(machine(1), sched("batch"), 1).unwrap();
    sim.set_limits(Limits {
        cycles: Cycles::MAX,
        events: 10_000,
        ..Limits::NONE
    });
    let t = sim.add_task("forever");
    sim.spawn(t, Box::new(Repeat::new(vec![Op::Compute(1)], u64::MAX)))
        .unwrap();
    let (bound, events, partial) = stopped(sim.run());
    assert_eq!(bound, Bound::Events(10_000));
    assert_eq!(events, 10_000);
    assert_eq!(partial.events, 10_000);
    partial.check_conservation().unwrap();
}

use smpsched_sim::Cycles;

/// Computes a little, then asks for times near `u64::MAX`.
struct Huge(u32);

impl Program for Huge {
    fn next(&mut self, _: &mut ThreadCtx) -> Op {
        self.0 += 1;
        match self.0 {
            1 => Op::Compute(100),
            2 => Op::Sleep(u64::MAX - 50),
            3 => Op::Compute(u64::MAX),
            _ => Op::Exit,
        }
    }
}

#[test]
fn times_near_u64_max_saturate_and_stop_the_run_instead_of_wrapping() {
    // Unbounded: the saturated wake-up lies past every bound.
    let mut sim = Simulation::new(machine(2), sched("batch"), 1).unwrap();
    let t = sim.add_task("huge");
    sim.spawn(t, Box::new(Huge(0))).unwrap();
    sim.spawn(t, Box::new(Script::new([Op::Compute(u64::MAX - 7)])))
        .unwrap();
    let (bound, _, partial) = stopped(sim.run());
    assert_eq!(bound, Bound::Cycles(Cycles::MAX));
    assert_eq!(partial.elapsed_cycles, 1 << 63);
    partial.check_conservation().unwrap();

    // Bounded: the run stops exactly at the bound.
    let mut sim = Simulation::new(machine(1), sched("batch"), 1).unwrap();
    sim.set_time_limit(1 << 50);
    let t = sim.add_task("huge");
    sim.spawn(t, Box::new(Huge(0))).unwrap();
    let (_, _, partial) = stopped(sim.run());
    assert_eq!(partial.elapsed_cycles, 1 << 50);
    partial.check_conservation().unwrap();
}

#[test]
fn a_machine_cost_that_could_overflow_time_is_refused() {
    let mut m = machine(1);
    m.kernel.handoff = u64::MAX;
    let err = Simulation::new(m, sched("batch"), 1).err().unwrap();
    assert!(err.to_string().contains("kernel.handoff"), "{err}");
}

#[test]
fn the_observer_sees_progress_every_so_many_events() {
    let mut sim = Simulation::new(machine(2), sched("round-robin"), 1).unwrap();
    let t = sim.add_task("work");
    for _ in 0..4 {
        sim.spawn(
            t,
            Box::new(Repeat::new(vec![Op::Compute(10_000), Op::Yield], 1_000)),
        )
        .unwrap();
    }
    let mut seen = Vec::new();
    let r = sim
        .run_observed(500, &mut |p| seen.push((p.events, p.now)))
        .unwrap();
    assert!(!seen.is_empty());
    assert!(seen.iter().all(|(e, _)| e % 500 == 0), "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0].1 <= w[1].1));
    assert_eq!(seen.len() as u64, (r.events - 1) / 500);
}

#[test]
fn a_reference_limit_stops_a_memory_heavy_run_that_the_event_limit_would_let_go_on() {
    // A thread sweeping 64 KB thousands of times: few events (each chunk of a bulk access is
    // one), many references. The reference bound stops it a check period past the limit.
    use smpsched_sim::memory::{AccessKind, BulkAccess, MemoryConfig, Placement};
    let run = |memory: MemoryConfig, references: u64| {
        let mut m = machine(1);
        m.memory = memory;
        let mut sim = Simulation::new(m, sched("batch"), 1).unwrap();
        sim.set_limits(Limits {
            references,
            ..Limits::NONE
        });
        let r = sim.memory().alloc(64 * 1024, Placement::Uma, None);
        let t = sim.add_task("sweeps");
        let sweep = Op::Mem(BulkAccess::over(r, 4, AccessKind::Read, 100_000));
        sim.spawn(t, Box::new(Script::new([sweep]))).unwrap();
        sim.run()
    };
    let (bound, events, partial) = stopped(run(MemoryConfig::tango(), 20_000_000));
    assert_eq!(bound, Bound::References(20_000_000));
    let refs = partial.apps[0].refs;
    assert!(refs >= 20_000_000, "{refs} references");
    // Checked every 256 events: no more past the bound than that many chunks make.
    let per_event = refs / events;
    assert!(
        refs - 20_000_000 <= Limits::REFERENCE_CHECK_EVENTS * per_event,
        "{refs} references in {events} events"
    );
    partial.check_conservation().unwrap();
    // With the memory model off, references are not walked (a sweep is one charge), so the
    // bound does not apply: the same run finishes.
    let done = run(MemoryConfig::none(), 20_000_000).unwrap();
    assert_eq!(done.apps[0].refs, 100_000 * 16 * 1024);
}
