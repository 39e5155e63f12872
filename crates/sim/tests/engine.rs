//! Integration tests of the engine: processor sharing, conservation, determinism, policies.

use rand::Rng;
use smpsched_sim::sched::{policy, Scheduler};
use smpsched_sim::{
    MachineConfig, Op, Program, RunReport, Script, SimError, Simulation, ThreadCtx,
};

fn machine(p: u32, switch: u64) -> MachineConfig {
    let mut m = MachineConfig::tango_12();
    m.processors = p;
    m.context_switch_cycles = switch;
    m
}

fn sched(name: &str) -> Box<dyn Scheduler> {
    policy(name).unwrap().make(&toml::Table::new()).unwrap()
}

/// Runs `k` CPU-bound threads of `w` cycles each on `p` processors.
fn cpu_bound(name: &str, k: u32, w: u64, p: u32, switch: u64) -> RunReport {
    let mut sim = Simulation::new(machine(p, switch), sched(name), 1).unwrap();
    let task = sim.add_task("cpu");
    for _ in 0..k {
        sim.spawn(task, Box::new(Script::new([Op::Compute(w)])))
            .unwrap();
    }
    let r = sim.run().unwrap();
    r.check_conservation().unwrap();
    r
}

#[test]
fn k_at_most_p_finishes_at_exactly_w() {
    for (k, p) in [(1, 1), (3, 4), (12, 12), (5, 64)] {
        let r = cpu_bound("round-robin", k, 1_234_567, p, 0);
        assert_eq!(r.elapsed_cycles, 1_234_567, "k={k} p={p}");
        assert_eq!(r.total.useful, k as u64 * 1_234_567);
    }
}

#[test]
fn k_above_p_finishes_within_one_slice_of_fair_share() {
    let slice = MachineConfig::tango_12().slice_cycles;
    for (k, p, w) in [
        (48, 12, 3_000_000u64),
        (13, 12, 1_000_000),
        (100, 7, 777_777),
    ] {
        let r = cpu_bound("round-robin", k, w, p, 0);
        let fair = k as u64 * w / p as u64;
        assert!(
            r.elapsed_cycles >= fair && r.elapsed_cycles <= fair + slice,
            "k={k} p={p}: {} vs fair {fair}",
            r.elapsed_cycles
        );
    }
}

#[test]
fn context_switches_are_charged_and_conserved() {
    let r = cpu_bound("round-robin", 24, 1_000_000, 12, 500);
    assert!(r.total.switch >= 24 * 500);
    assert_eq!(r.apps[0].time.switch, r.total.switch);
    assert_eq!(r.total.useful, 24 * 1_000_000);
}

/// A thread that computes and sleeps in random amounts.
struct Bursty {
    bursts: u32,
    sleeping: bool,
}

impl Program for Bursty {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        if self.bursts == 0 {
            return Op::Exit;
        }
        self.sleeping = !self.sleeping;
        if self.sleeping {
            Op::Sleep(cx.rng.random_range(1_000..200_000))
        } else {
            self.bursts -= 1;
            Op::Compute(cx.rng.random_range(1_000..400_000))
        }
    }
}

fn bursty(name: &str, seed: u64) -> RunReport {
    let mut sim = Simulation::new(machine(4, 500), sched(name), seed).unwrap();
    for a in 0..3 {
        let task = sim.add_task(format!("app{a}"));
        for _ in 0..6 {
            sim.spawn(
                task,
                Box::new(Bursty {
                    bursts: 20,
                    sleeping: true,
                }),
            )
            .unwrap();
        }
    }
    let r = sim.run().unwrap();
    r.check_conservation().unwrap();
    r
}

#[test]
fn every_policy_conserves_time_and_is_deterministic() {
    for name in ["batch", "round-robin", "priority"] {
        let a = bursty(name, 7);
        let b = bursty(name, 7);
        assert_eq!(
            format!("{a:?}"),
            format!("{b:?}"),
            "{name} is not deterministic"
        );
        let c = bursty(name, 8);
        assert_ne!(a.elapsed_cycles, c.elapsed_cycles, "{name}: seed ignored");
        let held: u64 = a.apps.iter().map(|x| x.time.held()).sum();
        assert_eq!(held, a.total.held(), "{name}: app time != processor time");
    }
}

#[test]
fn batch_runs_applications_one_after_another() {
    let mut sim = Simulation::new(machine(4, 0), sched("batch"), 1).unwrap();
    for a in 0..3 {
        let task = sim.add_task(format!("app{a}"));
        for _ in 0..4 {
            sim.spawn(task, Box::new(Script::new([Op::Compute(1_000_000)])))
                .unwrap();
        }
    }
    let r = sim.run().unwrap();
    let done: Vec<u64> = r.apps.iter().map(|a| a.completion_cycles).collect();
    assert_eq!(done, vec![1_000_000, 2_000_000, 3_000_000]);
    assert_eq!(r.apps[0].context_switches, 4);
}

#[test]
fn priority_favours_the_thread_with_less_recent_usage() {
    // One processor: a thread that has run a long time and a newcomer that arrives later.
    let mut m = machine(1, 0);
    m.slice_cycles = 100_000;
    let mut sim = Simulation::new(m, sched("priority"), 1).unwrap();
    let t = sim.add_task("hog");
    sim.spawn(t, Box::new(Script::new([Op::Compute(5_000_000)])))
        .unwrap();
    let n = sim.add_task("newcomer");
    sim.spawn(
        n,
        Box::new(Script::new([Op::Sleep(1_000_000), Op::Compute(500_000)])),
    )
    .unwrap();
    let r = sim.run().unwrap();
    // The newcomer has no usage, so it runs every quantum after waking until it catches up.
    assert!(
        r.apps[1].completion_cycles <= 1_000_000 + 500_000 + 100_000,
        "newcomer finished at {}",
        r.apps[1].completion_cycles
    );
    assert_eq!(r.elapsed_cycles, 5_500_000);
}

struct Forever;
impl Program for Forever {
    fn next(&mut self, _cx: &mut ThreadCtx<'_>) -> Op {
        Op::Yield
    }
}

#[test]
fn a_livelocked_program_is_an_error_not_a_hang() {
    let mut m = machine(1, 0);
    m.sched_op_cycles = 0;
    m.kernel.yield_call = 0;
    let mut sim = Simulation::new(m, sched("round-robin"), 1).unwrap();
    let t = sim.add_task("spin");
    sim.spawn(t, Box::new(Forever)).unwrap();
    assert!(matches!(sim.run(), Err(SimError::NoProgress(_))));
}

#[test]
fn invalid_machine_is_rejected() {
    let mut m = machine(1, 0);
    m.processors = 70_000;
    let err = Simulation::new(m, sched("batch"), 1).err().unwrap();
    assert!(err.to_string().contains("processors"), "{err}");
}

#[test]
fn a_thousand_processors_and_a_hundred_thousand_threads_run() {
    // The design's scale target: 1,024 processors and 100,000 threads.
    let mut m = machine(1024, 500);
    m.slice_cycles = 10_000;
    let mut sim = Simulation::new(m, sched("round-robin"), 3).unwrap();
    let t = sim.add_task("many");
    for _ in 0..100_000 {
        sim.spawn(
            t,
            Box::new(Script::new([
                Op::Compute(30_000),
                Op::Sleep(5_000),
                Op::Compute(10_000),
            ])),
        )
        .unwrap();
    }
    let r = sim.run().unwrap();
    r.check_conservation().unwrap();
    assert_eq!(r.total.useful, 100_000 * 40_000);
}

#[test]
fn sampled_priority_charges_whole_ticks_to_the_running_thread() {
    // Two threads on one processor; with tick sampling the usage that orders them moves only at
    // ticks, so the run still completes and conserves time, and differs from exact accounting.
    let run = |sampled: bool| {
        let mut t = toml::Table::new();
        t.insert("sampled".into(), toml::Value::Boolean(sampled));
        let s = policy("priority").unwrap().make(&t).unwrap();
        let mut m = machine(1, 0);
        m.tick_cycles = 100_000;
        m.slice_cycles = 30_000;
        let mut sim = Simulation::new(m, s, 1).unwrap();
        let a = sim.add_task("a");
        sim.spawn(a, Box::new(Script::new([Op::Compute(1_000_000)])))
            .unwrap();
        let b = sim.add_task("b");
        sim.spawn(
            b,
            Box::new(Script::new([Op::Sleep(250_000), Op::Compute(400_000)])),
        )
        .unwrap();
        let r = sim.run().unwrap();
        r.check_conservation().unwrap();
        r
    };
    let exact = run(false);
    let sampled = run(true);
    assert_eq!(exact.elapsed_cycles, sampled.elapsed_cycles);
    assert_ne!(
        exact.apps[1].completion_cycles, sampled.apps[1].completion_cycles,
        "sampling must change who runs when"
    );
}

#[test]
fn the_kernels_idle_handoff_skips_the_run_queue_for_a_waking_thread() {
    // Black 1990, section 3.1: with `kernel.idle_handoff`, a thread that wakes while a processor
    // is idle is dispatched there without a run-queue operation, so each wake-up saves the
    // machine's `sched_op_cycles` of kernel time; the useful work is the same.
    let run = |handoff: bool| {
        let mut m = machine(4, 200);
        m.sched_op_cycles = 500;
        m.kernel.idle_handoff = handoff;
        let mut sim = Simulation::new(m, sched("round-robin"), 1).unwrap();
        let task = sim.add_task("sleepers");
        for _ in 0..2 {
            let ops = (0..10).flat_map(|_| [Op::Compute(5_000), Op::Sleep(20_000)]);
            sim.spawn(task, Box::new(Script::new(ops.collect::<Vec<_>>())))
                .unwrap();
        }
        let r = sim.run().unwrap();
        r.check_conservation().unwrap();
        r
    };
    let (on, off) = (run(true), run(false));
    assert_eq!(on.total.useful, off.total.useful);
    assert!(
        on.total.kernel < off.total.kernel,
        "kernel time with the handoff {} is not below {} without",
        on.total.kernel,
        off.total.kernel
    );
}
