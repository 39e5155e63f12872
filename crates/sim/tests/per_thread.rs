//! Per-thread measures (dispatches, runtime, wake-to-run latency) against hand-computed
//! figures, and their absence for tasks that do not ask.

use smpsched_sim::sched::policy;
use smpsched_sim::{MachineConfig, Op, Script, Simulation};

fn sim(policy_name: &str) -> Simulation {
    let mut m = MachineConfig::tango_12();
    m.processors = 1;
    m.memory = smpsched_sim::memory::MemoryConfig::none();
    m.context_switch_cycles = 50;
    m.sched_op_cycles = 0;
    let sched = policy(policy_name)
        .unwrap()
        .make(&toml::Table::new())
        .unwrap();
    Simulation::new(m, sched, 1).unwrap()
}

#[test]
fn a_sleeper_waits_for_the_runner_and_its_latency_is_measured() {
    for name in ["round-robin", "scx-simple", "scx-central"] {
        let mut s = sim(name);
        let task = s.add_task("rt");
        s.measure_threads(task);
        // Thread 0 sleeps 1,000 cycles, then computes 100; thread 1 computes 10,000.
        s.spawn(
            task,
            Box::new(Script::new([Op::Sleep(1_000), Op::Compute(100)])),
        )
        .unwrap();
        s.spawn(task, Box::new(Script::new([Op::Compute(10_000)])))
            .unwrap();
        let r = s.run().unwrap();
        let app = &r.apps[0];
        assert_eq!(app.per_thread.len(), 2, "{name}");
        let (b, a) = (&app.per_thread[0], &app.per_thread[1]);
        assert_eq!((b.rank, a.rank), (0, 1));
        let lat_cycles = b.wake_lat_mean_us * 25.0; // tango-12: 25 MHz
        if name == "scx-central" {
            // scx_central's enqueue kicks the central processor with SCX_KICK_PREEMPT: thread 1
            // is preempted at thread 0's wake-up, which runs after one switch.
            assert_eq!((a.dispatches, b.dispatches), (2, 2), "{name}");
            assert!((40.0..=120.0).contains(&lat_cycles), "{name}: {lat_cycles}");
            continue;
        }
        assert_eq!((a.dispatches, b.dispatches), (1, 2), "{name}");
        assert_eq!((a.wakeups, b.wakeups), (0, 1), "{name}");
        assert!(
            a.runtime_cycles >= 10_000 && b.runtime_cycles >= 100,
            "{name}"
        );
        // Thread 0 runs first (a switch in: 50), sleeps from 50 to 1,050; thread 1 switches
        // in (50) and computes until 10,100; thread 0 switches in again and runs at 10,150:
        // 9,100 cycles after its wake-up. No slice ends within 10,000 cycles at tango-12's
        // 10 ms, so no policy preempts thread 1.
        assert!(
            (9_050.0..=9_150.0).contains(&lat_cycles),
            "{name}: {lat_cycles} cycles"
        );
        assert_eq!(b.wake_lat_p50_us, b.wake_lat_mean_us);
        let w = app.recorded["wake_lat_us"];
        assert_eq!(w.count, 1);
        assert_eq!(w.p99, Some(b.wake_lat_p99_us));
    }
}

#[test]
fn a_task_that_does_not_ask_has_no_per_thread_measures() {
    let mut s = sim("round-robin");
    let task = s.add_task("plain");
    s.spawn(
        task,
        Box::new(Script::new([Op::Sleep(10), Op::Compute(10)])),
    )
    .unwrap();
    let r = s.run().unwrap();
    assert!(r.apps[0].per_thread.is_empty());
    assert!(!r.apps[0].recorded.contains_key("wake_lat_us"));
}
