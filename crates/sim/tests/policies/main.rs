//! Each registered kernel policy's defining property, tested through the engine: Mach's local
//! run queue precedence, its usage aging sharing a processor fairly, and its preemption at the
//! next tick (or at once with interprocessor interrupts); affinity's same-processor rescheduling
//! rising with c; gang's co-scheduling on fixed processors; per-core pull migration, masks and
//! run-queue lock costs.

use smpsched_sim::sched::policy;
use smpsched_sim::{
    CpuMask, MachineConfig, Op, ProcId, RunReport, Script, Simulation, ThreadAttrs,
};

mod processor_sets;

fn machine(p: u32) -> MachineConfig {
    let mut m = MachineConfig::tango_12();
    m.processors = p;
    m.memory = smpsched_sim::memory::MemoryConfig::none();
    m
}

fn build(name: &str, params: &str, m: MachineConfig) -> Simulation {
    let table: toml::Table = toml::from_str(params).unwrap();
    let sched = policy(name).unwrap().make(&table).unwrap();
    Simulation::new(m, sched, 1).unwrap()
}

fn attrs(mask: Option<&[u32]>, base_priority: i32) -> ThreadAttrs {
    ThreadAttrs {
        mask: mask.map(|m| CpuMask::of(m.iter().map(|&p| ProcId(p)))),
        base_priority,
    }
}

fn run(sim: Simulation) -> RunReport {
    let r = sim.run().unwrap();
    r.check_conservation().unwrap();
    r
}

#[test]
fn mach_serves_a_processors_local_queue_before_the_global_one() {
    // One processor: an unimportant thread bound to it (its local queue) and an important
    // unbound one (the global queue). Mach gives bound threads absolute preference.
    let mut sim = build("mach", "", machine(1));
    let bound = sim.add_task("bound");
    let global = sim.add_task("global");
    let work = 3_000_000;
    sim.spawn_with(
        global,
        Box::new(Script::new([Op::Compute(work)])),
        attrs(None, 10),
    )
    .unwrap();
    sim.spawn_with(
        bound,
        Box::new(Script::new([Op::Compute(work)])),
        attrs(Some(&[0]), -10),
    )
    .unwrap();
    let r = run(sim);
    let (b, g) = (&r.apps[0], &r.apps[1]);
    assert!(b.completion_cycles < g.completion_cycles);
    assert!(
        g.jobs.mean_wait >= work as f64,
        "the global thread waited for the bound one"
    );
    assert_eq!(b.jobs.mean_wait, 0.0);
}

#[test]
fn mach_usage_aging_shares_a_processor_among_equal_threads() {
    // Three CPU-bound threads on one processor for several seconds: usage-based levels and
    // 5/8 aging keep them within a few quanta of one another.
    let mut m = machine(1);
    m.tick_cycles = m.ms(10.0);
    let mut sim = build("mach", "", m.clone());
    let task = sim.add_task("cpu");
    let work = m.ms(3_000.0);
    for _ in 0..3 {
        sim.spawn(task, Box::new(Script::new([Op::Compute(work)])))
            .unwrap();
    }
    let r = run(sim);
    let app = &r.apps[0];
    // Fair sharing: every job ends near the end (none finished early while others starved).
    let spread = app.jobs.max_response as f64 - app.jobs.p50_response as f64;
    assert!(
        spread < 0.05 * app.jobs.max_response as f64,
        "{:?}",
        app.jobs
    );
    assert!(app.context_switches > 100, "quanta of one tick are shared");
}

#[test]
fn mach_notices_a_more_important_thread_at_the_next_tick_or_at_once_with_ipis() {
    let first_run_of_important = |ipi: bool| {
        let mut m = machine(1);
        m.tick_cycles = 1_000_000;
        let params = format!("ipi = {ipi}\nquantum_ticks = 10");
        let mut sim = build("mach", &params, m);
        let bg = sim.add_task("background");
        let urgent = sim.add_task("urgent");
        sim.spawn(bg, Box::new(Script::new([Op::Compute(50_000_000)])))
            .unwrap();
        // Made ready at 2,500,000 cycles: between two ticks.
        sim.spawn_with(
            urgent,
            Box::new(Script::new([Op::Sleep(2_500_000), Op::Compute(100_000)])),
            attrs(None, 5),
        )
        .unwrap();
        let r = run(sim);
        r.apps[1].completion_cycles
    };
    let at_tick = first_run_of_important(false);
    let at_once = first_run_of_important(true);
    assert!(at_once < at_tick, "{at_once} vs {at_tick}");
    // Without interrupts it waits for the tick at 3,000,000 cycles.
    assert!(at_tick >= 3_000_000 + 100_000, "{at_tick}");
    assert!(at_once < 3_000_000, "{at_once}");
}

#[test]
fn mach_with_ipis_preempts_at_once_for_an_arriving_job_too() {
    // The same as a woken thread, for a job of an open workload arriving between two ticks
    // behind a long CPU-bound thread (with no usage yet it is the more important): at once with
    // interrupts, at the next tick without (they waited alike, a new-user probe found).
    let done = |ipi: bool| {
        let mut m = machine(1);
        m.tick_cycles = 1_000_000;
        let mut sim = build("mach", &format!("ipi = {ipi}\nquantum_ticks = 10"), m);
        let bg = sim.add_task("background");
        let job = sim.add_task("job");
        sim.spawn(bg, Box::new(Script::new([Op::Compute(1_000_000_000)])))
            .unwrap();
        // After the background has run long enough to fall below a fresh thread's priority.
        sim.spawn_at(
            300_500_000,
            job,
            Box::new(Script::new([Op::Compute(100_000)])),
        )
        .unwrap();
        run(sim).apps[1].completion_cycles
    };
    let (at_tick, at_once) = (done(false), done(true));
    assert!(at_tick >= 301_000_000 + 100_000, "{at_tick}");
    assert!(at_once < 301_000_000, "{at_once} (at the tick: {at_tick})");
}

/// Threads that compute and block in turn, more of them than processors: where each is
/// rescheduled is the policy's choice.
fn blocking_mix(sim: &mut Simulation, threads: u32) {
    let task = sim.add_task("mix");
    for i in 0..threads {
        let mut ops = Vec::new();
        for k in 0..40u64 {
            ops.push(Op::Compute(
                150_000 + 7_919 * ((u64::from(i) * 13 + k) % 17),
            ));
            ops.push(Op::Sleep(60_000 + 3_001 * ((u64::from(i) + k) % 11)));
        }
        sim.spawn(task, Box::new(Script::new(ops))).unwrap();
    }
}

#[test]
fn affinity_reschedules_threads_on_their_own_processor_more_as_c_grows() {
    let rate = |c: f64| {
        let mut sim = build("affinity", &format!("c = {c}"), machine(4));
        blocking_mix(&mut sim, 10);
        run(sim).apps[0].same_processor_rate
    };
    let rates: Vec<f64> = [0.0, 0.1, 0.5, 2.0].into_iter().map(rate).collect();
    assert!(rates.windows(2).all(|w| w[1] >= w[0] - 0.02), "{rates:?}");
    assert!(rates[3] > rates[0] + 0.1, "{rates:?}");
}

#[test]
fn gang_runs_an_application_together_each_thread_always_on_its_processor() {
    let p = 4u32;
    let m = machine(p);
    let slice = m.ms(10.0);
    let mut sim = build("gang", "slice_ms = 10", m);
    let work = 3 * slice - 10_000;
    for name in ["a", "b"] {
        let task = sim.add_task(name);
        for _ in 0..p {
            sim.spawn(task, Box::new(Script::new([Op::Compute(work)])))
                .unwrap();
        }
    }
    let r = run(sim);
    for app in &r.apps {
        assert_eq!(app.migrations, 0, "{}", app.name);
        assert_eq!(app.same_processor_rate, 1.0, "{}", app.name);
        // Co-scheduled: every thread of the application ends at the same instant.
        assert_eq!(app.jobs.p50_response, app.jobs.max_response, "{}", app.name);
    }
    // Slices alternate a, b, a, b, a, b: a ends in its third slice (the fifth), b in the sixth.
    let (a, b) = (r.apps[0].completion_cycles, r.apps[1].completion_cycles);
    assert!(a > 4 * slice && a < 5 * slice, "a ends at {a}");
    assert!(b > 5 * slice && b < 6 * slice, "b ends at {b}");
}

#[test]
fn gang_fill_uses_processors_the_current_gang_leaves_idle() {
    // Two processors, 10 ms slices: `small` has one thread of 30 ms (on processor 0), `wide`
    // two threads of 10 and 25 ms (on processors 0 and 1). Without filling, processor 1 idles
    // in `small`'s slices: small ends at 50 ms, then wide's second thread at 55. With it, that
    // thread runs in small's slices too and ends at 25 ms, and small, alone, at 40.
    let elapsed = |fill: bool| {
        let m = machine(2);
        let mut sim = build("gang", &format!("fill = {fill}"), m.clone());
        let small = sim.add_task("small");
        sim.spawn(small, Box::new(Script::new([Op::Compute(m.ms(30.0))])))
            .unwrap();
        let wide = sim.add_task("wide");
        for ms in [10.0, 25.0] {
            sim.spawn(wide, Box::new(Script::new([Op::Compute(m.ms(ms))])))
                .unwrap();
        }
        (run(sim).elapsed_cycles as f64 / m.ms(1.0) as f64).round()
    };
    assert_eq!((elapsed(true), elapsed(false)), (40.0, 55.0));
}

#[test]
fn per_core_pull_migration_moves_waiting_threads_to_idle_processors() {
    // Eight threads placed two per processor; the two on processor 0 are long, the rest short.
    // Without pull, processor 0 runs its two alone at the end; with pull, an idle processor
    // takes the waiting one.
    let run_with = |pull: bool| {
        let mut sim = build("per-core", &format!("pull = {pull}"), machine(4));
        let task = sim.add_task("uneven");
        for i in 0..8u64 {
            let work = if i % 4 == 0 { 4_000_000 } else { 1_000_000 };
            sim.spawn(task, Box::new(Script::new([Op::Compute(work)])))
                .unwrap();
        }
        run(sim)
    };
    let (without, with) = (run_with(false), run_with(true));
    assert_eq!(without.apps[0].migrations, 0);
    assert!(with.apps[0].migrations > 0);
    assert!(with.elapsed_cycles < without.elapsed_cycles);
}

#[test]
fn per_core_migration_never_breaks_a_mask() {
    // Half the threads may run only on processors 0 and 1; pull, push and periodic balancing
    // all move threads, and the engine refuses any dispatch outside a mask (the run would fail).
    let mut sim = build(
        "per-core",
        "pull = true\npush = true\npush_threshold = 1\nbalance_ms = 1\nquantum = 100000",
        machine(4),
    );
    let task = sim.add_task("masked");
    for i in 0..12u32 {
        let mask = (i % 2 == 0).then_some(&[0u32, 1][..]);
        let mut ops = Vec::new();
        for k in 0..10u64 {
            ops.push(Op::Compute(200_000 + 10_000 * ((u64::from(i) + k) % 7)));
            ops.push(Op::Sleep(30_000));
        }
        sim.spawn_with(task, Box::new(Script::new(ops)), attrs(mask, 0))
            .unwrap();
    }
    let r = run(sim);
    assert!(r.apps[0].migrations > 0, "threads did move");
}

#[test]
fn pulling_locks_the_busiest_queue_too_and_costs_kernel_time() {
    // Without migration every processor locks only its own queue; with pull, idle processors
    // also lock the busiest one. The memory model charges the contended lock lines.
    let kernel = |pull: bool| {
        let mut m = machine(8);
        m.memory = smpsched_sim::memory::MemoryConfig::tango();
        m.sched_op_cycles = 0;
        let mut sim = build("per-core", &format!("pull = {pull}"), m);
        let task = sim.add_task("short");
        for i in 0..64u64 {
            let work = 20_000 + 5_000 * (i % 9);
            sim.spawn(task, Box::new(Script::new([Op::Compute(work)])))
                .unwrap();
        }
        run(sim).total.kernel
    };
    assert!(kernel(false) > 0);
    assert!(kernel(true) > kernel(false));
}

#[test]
fn gang_gives_the_machine_to_the_next_application_when_the_current_one_exits() {
    // A 1,000 ms slice; the first application's work is done after 0.1 ms: the second starts
    // then, not at the end of the slice.
    let m = machine(2);
    let slice = m.ms(1000.0);
    let mut sim = build("gang", "slice_ms = 1000", m);
    let short = sim.add_task("short");
    let other = sim.add_task("other");
    for task in [short, other] {
        for _ in 0..2 {
            sim.spawn(task, Box::new(Script::new([Op::Compute(2_500)])))
                .unwrap();
        }
    }
    let r = run(sim);
    assert!(
        r.elapsed_cycles < slice / 100,
        "elapsed {} cycles with a slice of {slice}",
        r.elapsed_cycles
    );
}

#[test]
fn a_trace_shows_gangs_in_rows_and_agrees_with_the_measures() {
    let p = 4u32;
    let m = machine(p);
    let slice = m.ms(10.0);
    let mut sim = build("gang", "slice_ms = 10", m);
    sim.set_trace(smpsched_sim::trace::TraceConfig::default());
    for name in ["a", "b", "c"] {
        let task = sim.add_task(name);
        for _ in 0..p {
            let ops = (0..6).flat_map(|_| [Op::Compute(slice / 3), Op::Sleep(1_000)]);
            sim.spawn(task, Box::new(Script::new(ops.collect::<Vec<_>>())))
                .unwrap();
        }
    }
    let r = run(sim);
    let trace = r.trace.as_ref().expect("traced");
    assert!(trace.truncated_at.is_none());
    // Stretches on one processor never overlap, and lie within the run.
    for q in 0..p {
        let mut on: Vec<_> = trace
            .stretches
            .iter()
            .filter(|s| s.processor.0 == q)
            .collect();
        on.sort_by_key(|s| s.start);
        assert!(on.windows(2).all(|w| w[0].end <= w[1].start));
        assert!(on
            .iter()
            .all(|s| s.start < s.end && s.end <= r.elapsed_cycles));
    }
    // Gang: stretches of different applications (on different processors) hardly overlap.
    let mut mixed = 0;
    for x in &trace.stretches {
        for y in &trace.stretches {
            if x.task != y.task {
                mixed += x.end.min(y.end).saturating_sub(x.start.max(y.start));
            }
        }
    }
    assert!(
        mixed * 100 < r.elapsed_cycles,
        "applications overlapped {mixed} cycles"
    );
    // Each application's stretches hold its useful time, within what it held in all.
    for (k, app) in r.apps.iter().enumerate() {
        let held: u64 = trace
            .stretches
            .iter()
            .filter(|s| s.task.index() == k)
            .map(|s| s.end - s.start)
            .sum();
        assert!(
            held >= app.time.useful + app.time.stall + app.time.spin,
            "{}",
            app.name
        );
        assert!(held <= app.time.held(), "{}", app.name);
    }
    // Gang never migrates; blocking shows as marks.
    use smpsched_sim::trace::Mark;
    assert!(!trace
        .moments
        .iter()
        .any(|m| matches!(m.mark, Mark::Migrated { .. })));
    assert!(trace.moments.iter().any(|m| m.mark == Mark::Blocked));
}

#[test]
fn a_trace_keeps_to_its_event_budget_and_window() {
    let run_with = |config: smpsched_sim::trace::TraceConfig| {
        let mut sim = build("per-core", "", machine(4));
        blocking_mix(&mut sim, 10);
        sim.set_trace(config);
        run(sim).trace.unwrap()
    };
    let small = run_with(smpsched_sim::trace::TraceConfig {
        max_events: 25,
        ..Default::default()
    });
    // The budget, and the stretches under way at the stop kept cut there (one per processor
    // at most): none past the stop, and the last ones ending at it.
    let stop = small.truncated_at.expect("the budget ran out");
    let kept = small.stretches.len() + small.moments.len();
    assert!((25..=25 + 4).contains(&kept), "{kept}");
    assert!(small.stretches.iter().all(|s| s.end <= stop));
    assert!(small.stretches.iter().any(|s| s.end == stop));
    assert!(small.moments.iter().all(|m| m.at <= stop));
    let window = run_with(smpsched_sim::trace::TraceConfig {
        max_events: 1_000_000,
        from: 1_000_000,
        until: 2_000_000,
    });
    assert!(window.truncated_at.is_none());
    assert!(!window.stretches.is_empty());
    assert!(window
        .stretches
        .iter()
        .all(|s| s.start >= 1_000_000 && s.end <= 2_000_000));
    assert!(window
        .moments
        .iter()
        .all(|m| (1_000_000..2_000_000).contains(&m.at)));
}

#[test]
fn affinity_shortens_the_intervening_dispatches_and_locks_are_measured() {
    // More affinity: threads come back to their processor after fewer others ran there.
    let intervening = |c: f64| {
        let mut sim = build("affinity", &format!("c = {c}"), machine(4));
        blocking_mix(&mut sim, 10);
        run(sim).apps[0]
            .median_intervening
            .expect("threads ran twice on a processor")
    };
    assert!(
        intervening(2.0) <= intervening(0.0),
        "{} vs {}",
        intervening(2.0),
        intervening(0.0)
    );
    // A policy without structures in memory takes no run-queue lock; per-core does, and
    // holding its lock costs something.
    let mut sim = build("round-robin", "", machine(4));
    blocking_mix(&mut sim, 6);
    assert_eq!(run(sim).runq_lock.acquires, 0);
    let mut m = machine(8);
    m.memory = smpsched_sim::memory::MemoryConfig::tango();
    let mut sim = build("per-core", "", m);
    blocking_mix(&mut sim, 16);
    let lock = run(sim).runq_lock;
    assert!(lock.acquires > 0 && lock.hold_cycles > 0, "{lock:?}");
}

#[test]
fn mach_usage_gained_in_a_first_quantum_causes_no_switch() {
    // Two equal threads, a quantum of 3 ticks, and usage so heavily weighted that one tick of
    // it drops a thread a level below the waiting one: the runner still keeps its processor for
    // its whole first quantum (Black 3), then yields.
    let mut m = machine(1);
    m.tick_cycles = 100_000;
    let mut sim = build("mach", "quantum_ticks = 3\nusage_per_level_ms = 0.5", m);
    sim.set_trace(smpsched_sim::trace::TraceConfig::default());
    let task = sim.add_task("cpu");
    for _ in 0..2 {
        sim.spawn(task, Box::new(Script::new([Op::Compute(2_000_000)])))
            .unwrap();
    }
    let r = run(sim);
    let first = r.trace.as_ref().unwrap().stretches[0];
    assert!(first.end - first.start >= 300_000 - 1_000, "{first:?}");
    assert!(
        first.end - first.start < 400_000,
        "it yields at its quantum's end: {first:?}"
    );
}

#[test]
fn per_core_pull_interval_delays_the_pull_to_the_next_pass_and_its_scans_cost_the_kernel() {
    // Two processors: two long threads placed on processor 0, a short one on processor 1,
    // which runs dry at once. It pulls the waiting long thread at once, or at the next pass
    // (every 1 ms = 25,000 cycles, or every 30 ms = 750,000 cycles); until then processor 0
    // shares itself between the two.
    let run_with = |params: &str| {
        let mut m = machine(2);
        m.memory = smpsched_sim::memory::MemoryConfig::tango();
        let mut sim = build("per-core", params, m);
        let task = sim.add_task("uneven");
        for work in [4_000_000, 10_000, 4_000_000] {
            sim.spawn(task, Box::new(Script::new([Op::Compute(work)])))
                .unwrap();
        }
        run(sim)
    };
    let at_once = run_with("pull = true");
    let every_ms = run_with("pull = true\npull_ms = 1.0");
    let every_30ms = run_with("pull = true\npull_ms = 30.0");
    let never = run_with("pull = false");
    assert!(at_once.elapsed_cycles < every_ms.elapsed_cycles);
    assert!(every_ms.elapsed_cycles < every_30ms.elapsed_cycles);
    assert!(every_30ms.elapsed_cycles < never.elapsed_cycles);
    // Scans that find nothing still take both queues' locks: more acquisitions than
    // dispatches, and more kernel references than pulling at once.
    let dispatches: u64 = every_ms.apps[0].context_switches;
    assert!(every_ms.runq_lock.acquires > dispatches);
    assert!(every_ms.user_kernel.accesses.kernel > at_once.user_kernel.accesses.kernel);
}

#[test]
fn per_core_global_queue_is_one_queue_behind_one_lock() {
    // Five equal threads on four processors: one shared queue rotates them (each moves), per
    // processor queues keep all but the fifth where they started.
    let run_with = |params: &str| {
        let mut m = machine(4);
        m.memory = smpsched_sim::memory::MemoryConfig::tango();
        let mut sim = build("per-core", params, m);
        let task = sim.add_task("five");
        for _ in 0..5 {
            sim.spawn(task, Box::new(Script::new([Op::Compute(3_000_000)])))
                .unwrap();
        }
        run(sim)
    };
    let global = run_with("global = true\npull = false");
    let local = run_with("pull = false");
    assert!(global.apps[0].migrations > local.apps[0].migrations);
    assert!(global.elapsed_cycles < local.elapsed_cycles);
    let table: toml::Table = toml::from_str("global = true").unwrap();
    let err = policy("per-core").unwrap().make(&table).err().unwrap();
    assert!(err.to_string().contains("pull = false"), "{err}");
}

#[test]
fn per_core_refuses_a_push_threshold_that_would_do_nothing() {
    let make = |params: &str| {
        let t: toml::Table = params.parse().unwrap();
        policy("per-core")
            .unwrap()
            .make(&t)
            .err()
            .map(|e| e.to_string())
    };
    for (params, says) in [
        ("push = true\npush_threshold = 0", "at least 1 shorter"),
        ("push_threshold = 3", "needs push = true"),
    ] {
        let e = make(params).unwrap_or_else(|| panic!("{params}: accepted"));
        assert!(
            e.contains("push_threshold") && e.contains(says),
            "{params}: {e}"
        );
    }
    assert_eq!(make("push = true\npush_threshold = 1"), None);
    assert_eq!(make("push_threshold = 2"), None, "the default, written out");
}
