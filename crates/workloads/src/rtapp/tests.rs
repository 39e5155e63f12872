//! rt-app loads in the simulator: periods kept by timers, mutual exclusion, condition variables
//! that lose a signal with no waiter, barriers, forks, suspend and resume, each exact where the
//! arithmetic is; bad files name the task, the phase and the event; spoiled files never panic.

use proptest::prelude::*;
use smpsched_sim::sched::policy;
use smpsched_sim::{Limits, MachineConfig, RunReport, SimError, Simulation};

use super::{read, RtApp};
use crate::Workload;

/// A 4-processor machine at 100 MHz (100 cycles per microsecond), no memory model.
pub(super) fn machine() -> MachineConfig {
    let mut m = MachineConfig::tango_12();
    m.processors = 4;
    m.clock_mhz = 100.0;
    m.memory = smpsched_sim::memory::MemoryConfig::none();
    m.context_switch_cycles = 0;
    m.sched_op_cycles = 0;
    m.kernel = toml::from_str(
        "sync_op = 0\nspin_notice = 0\nblock = 0\nwake = 0\nyield_call = 0\ndepress = 0\n\
         handoff = 0\nmessage = 0\nspawn = 0",
    )
    .unwrap();
    m
}

pub(super) fn simulate(text: &str, sched: &str) -> Result<RunReport, SimError> {
    let w = RtApp {
        file: "t.json".into(),
        spec: Some(read("t.json", text).unwrap()),
    };
    let s = policy(sched).unwrap().make(&toml::Table::new()).unwrap();
    let mut sim = Simulation::new(machine(), s, 1).unwrap();
    let task = sim.add_task("rt");
    w.install(&mut sim, task)?;
    sim.set_limits(Limits {
        cycles: u64::MAX,
        events: 2_000_000,
        ..Limits::NONE
    });
    let r = sim.run()?;
    r.check_conservation().unwrap();
    Ok(r)
}

pub(super) fn run(text: &str) -> RunReport {
    simulate(text, "round-robin").unwrap()
}

#[test]
fn a_periodic_task_keeps_its_timer_period_and_records_its_wake_up_latency() {
    // run 1 ms every 10 ms, 10 times; the timer counts from the thread's start (rt-app's
    // `t_first`), not from its first use after the first run, so the tenth period ends at
    // 100 ms.
    let r = run(r#"{ "tasks": { "p": { "loop": 10, "run": 1000,
                   "timer": { "ref": "t", "period": 10000 } } } }"#);
    assert_eq!(r.elapsed_cycles, 10 * 10_000 * 100);
    assert_eq!(r.apps[0].time.useful, 10 * 1000 * 100);
    let lat = &r.apps[0].recorded["wu_lat_us"];
    assert_eq!((lat.count, lat.max), (10, 0.0));
}

#[test]
fn a_missed_timer_keeps_its_reference_when_absolute_and_restarts_when_relative() {
    // Each loop: run 1.5 ms, the timer, run 0.1 ms, the same timer again (one timer per name
    // and thread). The timer counts from the thread's start, so its first expiry, at 1 ms, is
    // missed at 1.5: the absolute timer keeps 1 ms as its reference and sleeps until 2, the
    // relative one restarts from 1.5 and sleeps until 2.5. In the second loop the run ends at
    // 3.5 (absolute) and 4 (relative), past the expiries at 3 and 3.5: again missed, then the
    // second timer sleeps until 4 and until 5.
    let file = |mode: &str| {
        format!(
            r#"{{ "tasks": {{ "p": {{ "loop": 2,
            "run": 1500, "timer": {{ "ref": "t", "period": 1000, "mode": "{mode}" }},
            "run": 100, "timer": {{ "ref": "t", "period": 1000, "mode": "{mode}" }} }} }} }}"#
        )
    };
    let (abs, rel) = (run(&file("absolute")), run(&file("relative")));
    assert_eq!(abs.elapsed_cycles, 4000 * 100);
    assert_eq!(rel.elapsed_cycles, 5000 * 100);
    for r in [&abs, &rel] {
        // Two sleeps, each woken on time; the missed expiries record nothing.
        let lat = &r.apps[0].recorded["wu_lat_us"];
        assert_eq!((lat.count, lat.max), (2, 0.0));
    }
}

#[test]
fn a_run_is_whole_calibrated_loops_and_a_runtime_is_exact() {
    // 300 ns a loop: `run` 1000 us is floor(1,000,000 / 300) = 3,333 loops, 999.9 us.
    let r = run(r#"{ "global": { "calibration": 300 },
                   "tasks": { "p": { "loop": 1, "run": 1000, "runtime": 1000 } } }"#);
    assert_eq!(r.apps[0].time.useful, 99_990 + 100_000);
}

#[test]
fn sleep_drifts_where_a_timer_does_not() {
    // Two tasks on one CPU: `t` runs 5 then waits for its 19-period timer, `s` runs 5 and
    // sleeps 10. Sharing the processor delays `s`, whose period stretches; `t`'s stays 19.
    let r = run(r#"{ "tasks": {
        "t": { "cpus": [0], "loop": 20, "run": 5000, "timer": { "ref": "x", "period": 19000 } },
        "s": { "cpus": [0], "loop": 20, "run": 5000, "sleep": 10000 } } }"#);
    let t_end = 20 * 19_000 * 100;
    assert!(r.elapsed_cycles >= t_end, "{}", r.elapsed_cycles);
    assert_eq!(r.apps[0].time.useful, 40 * 5000 * 100);
}

#[test]
fn a_mutex_serializes_its_critical_sections() {
    // Four threads each hold the mutex for 1 ms, 5 times, on four CPUs: 20 ms one after another.
    let r = run(r#"{ "tasks": { "w": { "instance": 4, "loop": 5,
                   "lock": "m", "run": 1000, "unlock": "m" } } }"#);
    assert_eq!(r.elapsed_cycles, 20 * 1000 * 100);
}

#[test]
fn a_signal_wakes_one_waiter_and_a_broadcast_all_and_a_lost_signal_stays_lost() {
    // Two waiters; the signaller first sleeps so both wait, signals once (one wakes), then
    // broadcasts (the other wakes). Everything ends.
    let r = run(r#"{ "tasks": {
        "waiter": { "instance": 2, "loop": 1, "lock": "m",
                    "wait": { "ref": "c", "mutex": "m" }, "unlock": "m", "run": 100 },
        "signaller": { "loop": 1, "sleep": 1000, "signal": "c", "sleep1": 1000,
                       "broad": "c" } } }"#);
    assert_eq!(r.apps[0].time.useful, 2 * 100 * 100);
    // A signal before anyone waits is lost: the waiter then waits for ever.
    let e = simulate(
        r#"{ "tasks": {
        "waiter": { "loop": 1, "sleep": 1000, "lock": "m",
                    "wait": { "ref": "c", "mutex": "m" }, "unlock": "m" },
        "signaller": { "loop": 1, "signal": "c" } } }"#,
        "round-robin",
    )
    .unwrap_err();
    assert!(matches!(e, SimError::Deadlock { blocked: 1, .. }), "{e}");
}

#[test]
fn barriers_forks_and_suspend_resume_run_their_threads() {
    // Three instances meet at a barrier after unequal runs: all leave at the slowest's time.
    let r = run(r#"{ "tasks": {
        "a": { "instance": 2, "loop": 1, "run": 1000, "barrier": "b" },
        "b": { "loop": 1, "run": 3000, "barrier": "b", "run1": 10 } } }"#);
    assert_eq!(r.elapsed_cycles, 3010 * 100);
    // A parent forks a child (no instance of its own) three times.
    let r = run(r#"{ "tasks": {
        "parent": { "loop": 3, "fork": "child", "sleep": 100 },
        "child": { "instance": 0, "loop": 1, "run": 500 } } }"#);
    assert_eq!(r.apps[0].time.useful, 3 * 500 * 100);
    assert_eq!(r.apps[0].threads, 4);
    // A suspended task runs on after another resumes it.
    let r = run(r#"{ "tasks": {
        "sleeper": { "loop": 1, "suspend": "sleeper", "run": 700 },
        "waker": { "loop": 1, "sleep": 2000, "resume": "sleeper" } } }"#);
    assert_eq!(r.elapsed_cycles, 2700 * 100);
}

#[test]
fn a_duration_ends_threads_that_loop_for_ever() {
    let r = run(r#"{ "global": { "duration": 1 },
                   "tasks": { "p": { "run": 1000, "sleep": 1000 } } }"#);
    // 500 loops of 2 ms fit in 1 s; the thread exits at its next event after that.
    assert_eq!(r.apps[0].time.useful, 500 * 1000 * 100);
    // Killed at the duration, the application ends there: it is not unfinished.
    assert!(!r.apps[0].unfinished);
    assert_eq!(r.apps[0].completion_cycles, r.elapsed_cycles);
    assert!(r.elapsed_cycles > 0);
}

#[test]
fn bad_files_name_the_task_the_phase_and_the_event() {
    for (text, want) in [
        (
            r#"{ "tasks": { "a": { "loop": 1, "jump": 5 } } }"#,
            "task `a`, event `jump`: unknown event",
        ),
        (
            r#"{ "tasks": { "a": { "loop": 1, "phases": { "p1": { "timer": { "ref": "t" } } } } } }"#,
            "task `a`, phase `p1`, event `timer`: needs a `period`",
        ),
        (
            r#"{ "tasks": { "a": { "loop": 1, "sleep": -5 } } }"#,
            "event `sleep`: must be from 0",
        ),
        (
            r#"{ "tasks": { "a": { "loop": 1, "fork": "b" }, "b": { "loop": 1, "fork": "a" } } }"#,
            "forks make a cycle",
        ),
        (
            r#"{ "tasks": { "a": { "loop": 1, "fork": "zz" } } }"#,
            "which is no task",
        ),
        (r#"{ "tasks": { "a": { "run": 5 } } }"#, "loops forever"),
        (
            r#"{ "tasks": { "a": { "loop": 1, "unlock": "m" } } }"#,
            "releases `m`",
        ),
        (
            r#"{ "tasks": { "a": { "loop": 1, "policy": "SCHED_DEADLINE", "run": 1 } } }"#,
            "SCHED_DEADLINE",
        ),
        (r#"{ "tasks": { "a": { "loop": 1, "run": 1, } }"#, "line 1"),
        (
            r#"{ "global": { "duration": 0 }, "tasks": {} }"#,
            "global.duration",
        ),
    ] {
        let e = read("t.json", text).unwrap_err();
        assert!(e.contains(want), "want `{want}` in: {e}");
    }
}

/// A file of `n` tasks where task `i` forks tasks `i + 1` and `i + 2` (those that exist), and
/// the last task forks `back` when given.
fn fork_ladder(n: usize, back: Option<usize>) -> String {
    let tasks: Vec<String> = (0..n)
        .map(|i| {
            let mut forks: Vec<usize> = (i + 1..n.min(i + 3)).collect();
            if i == n - 1 {
                forks.extend(back);
            }
            let events: Vec<String> = forks
                .iter()
                .enumerate()
                .map(|(k, f)| format!(r#""fork{k}": "t{f}""#))
                .chain(std::iter::once(r#""run": 1"#.to_string()))
                .collect();
            format!(r#""t{i}": {{ "loop": 1, {} }}"#, events.join(", "))
        })
        .collect();
    format!(r#"{{ "tasks": {{ {} }} }}"#, tasks.join(", "))
}

#[test]
fn forks_that_join_are_checked_once_a_task_and_a_cycle_through_them_is_found() {
    // Every path from t0 to t59 of this ladder would be walked by a search that keeps no
    // record of the tasks it has finished: about 1.5e12 of them (Fibonacci). The check ends
    // at once, and the threads so many forks would make are refused after it.
    let e = read("t.json", &fork_ladder(60, None)).unwrap_err();
    assert!(e.contains("a simulation creates at most"), "{e}");
    let e = read("t.json", &fork_ladder(60, Some(30))).unwrap_err();
    assert!(
        e.contains("task `t59`, phase `phase0`, event `fork`: forks make a cycle: t30 -> "),
        "{e}"
    );
    assert!(e.ends_with("t59 -> t30"), "{e}");
    let e = read(
        "t.json",
        r#"{ "tasks": { "a": { "loop": 1, "fork": "b" }, "b": { "loop": 1, "fork": "a" } } }"#,
    )
    .unwrap_err();
    assert!(
        e.contains("task `b`, phase `phase0`, event `fork`: forks make a cycle: a -> b -> a"),
        "{e}"
    );
}

#[test]
fn the_threads_a_file_creates_are_counted_before_it_runs_forks_included() {
    for (text, threads) in [
        // Two parents of 3 loops, each forking a child in a phase run twice: 12 children.
        (
            r#"{ "tasks": {
                "parent": { "instance": 2, "loop": 3, "phases": {
                    "p": { "loop": 2, "fork": "child", "run": 10 } } },
                "child": { "instance": 0, "loop": 1, "run": 50, "fork": "grandchild" },
                "grandchild": { "loop": 1, "run": 5 } } }"#,
            2 + 12 + (1 + 12),
        ),
        // Task i has 1 + (threads of i - 1) + (threads of i - 2): 1, 2, 4, 7, 12, ... 376.
        (&fork_ladder(12, None), 972),
    ] {
        let w = RtApp {
            file: "t.json".into(),
            spec: Some(read("t.json", text).unwrap()),
        };
        assert_eq!(w.threads(), threads, "{text}");
        assert_eq!(u64::from(run(text).apps[0].threads), threads, "{text}");
    }
    // A chain of forks whose threads multiply: refused when the file is read.
    let e = read("t.json", &fork_chain(5000, 1)).unwrap_err();
    assert!(
        e.contains(
            "task `t4999`, phase `phase0`, event `fork`: its forks would make 5000 threads of \
             `t5000`"
        ) && e.contains("12507501 threads in all"),
        "{e}"
    );
}

/// A file of `n + 1` tasks, each of the first `n` looping `loops` times and forking the next.
fn fork_chain(n: usize, loops: u32) -> String {
    let chain: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#""t{i}": {{ "loop": {loops}, "run": 1, "fork": "t{}" }}"#,
                i + 1
            )
        })
        .chain(std::iter::once(format!(
            r#""t{n}": {{ "loop": 1, "run": 1 }}"#
        )))
        .collect();
    format!(r#"{{ "tasks": {{ {} }} }}"#, chain.join(", "))
}

#[test]
fn a_count_past_64_bits_and_a_number_past_a_double_are_told_as_such() {
    // Forty tasks, each forking the next five times: 5^40 threads of the last, past 2^64.
    let e = read("t.json", &fork_chain(40, 5)).unwrap_err();
    assert!(
        e.contains("more than 2^64") && !e.contains("18446744073709551615"),
        "{e}"
    );
    // A loop of 2^64: the double it reads as is shown as one, not as digits never written.
    let e = read(
        "t.json",
        r#"{ "tasks": { "t": { "loop": 18446744073709551616, "run": 1 } } }"#,
    )
    .unwrap_err();
    assert!(e.contains("got 1.8446744073709552e19"), "{e}");
}

#[test]
fn the_same_file_and_seed_give_the_same_run() {
    let text = r#"{ "tasks": { "w": { "instance": 6, "loop": 4, "run": 300, "sleep": 200,
                  "lock": "m", "run1": 50, "unlock": "m", "yield": "" } } }"#;
    let a = run(text);
    let b = run(text);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}

/// Values a spoiled rt-app file might hold.
const JUNK: &[&str] = &[
    "-1", "0", "1e30", "\"\"", "\"x\"", "[]", "{}", "true", "null", "[1, 99]", "2.5", "[0.5]",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// A file with one value replaced by junk, or cut short, is refused with a message or runs
    /// (bounded) without a panic.
    #[test]
    fn spoiled_rt_app_files_never_panic(at in 0usize..400, junk in 0usize..12, cut in any::<bool>()) {
        let text = r#"{ "global": { "duration": 1, "calibration": 10 },
          "tasks": {
            "a": { "instance": 2, "cpus": [0, 1], "loop": 3, "phases": {
              "p0": { "loop": 2, "run": 100, "timer": { "ref": "t", "period": 300, "mode": "absolute" } },
              "p1": { "priority": 5, "lock": "m", "mem": 4096, "unlock": "m", "barrier": "b" } } },
            "c": { "loop": 2, "sleep": 50, "signal": "q", "resume": "a", "barrier": "b" } } }"#;
        let spoiled = if cut {
            text[..at.min(text.len())].to_string()
        } else {
            // Replace the value after the n-th colon.
            let colons: Vec<usize> = text.match_indices(':').map(|(i, _)| i).collect();
            let i = colons[at % colons.len()] + 1;
            let end = text[i..].find([',', '}']).map_or(text.len(), |e| i + e);
            format!("{}{}{}", &text[..i], JUNK[junk], &text[end..])
        };
        if let Ok(spec) = read("t.json", &spoiled) {
            let w = RtApp { file: "t.json".into(), spec: Some(spec) };
            let s = policy("round-robin").unwrap().make(&toml::Table::new()).unwrap();
            let mut sim = Simulation::new(machine(), s, 1).unwrap();
            let task = sim.add_task("rt");
            if w.install(&mut sim, task).is_ok() {
                sim.set_limits(Limits { cycles: u64::MAX, events: 200_000, ..Limits::NONE });
                let _ = sim.run();
            }
        }
    }
}

#[test]
fn per_thread_measures_are_kept_and_deterministic_under_the_scx_policies() {
    // Three instances of a task running 1 ms every 10 ms, ten times: each thread sleeps on
    // its timer between runs, so it has a wake-up for each period after the first.
    let text = r#"{ "tasks": { "p": { "instance": 3, "loop": 10, "run": 1000,
                   "timer": { "ref": "t", "period": 10000 } } } }"#;
    for sched in ["round-robin", "scx-simple", "scx-central"] {
        let a = simulate(text, sched).unwrap();
        let b = simulate(text, sched).unwrap();
        assert_eq!(format!("{:?}", a.apps), format!("{:?}", b.apps), "{sched}");
        let pt = &a.apps[0].per_thread;
        assert_eq!(pt.len(), 3, "{sched}");
        for t in pt {
            assert!((9..=10).contains(&t.wakeups), "{sched}: {t:?}");
            assert!(t.dispatches > t.wakeups, "{sched}: {t:?}");
            assert!(t.runtime_cycles >= 10 * 1000 * 100, "{sched}: {t:?}");
            assert!(t.wake_lat_p50_us <= t.wake_lat_p99_us, "{sched}: {t:?}");
        }
        let all = &a.apps[0].recorded["wake_lat_us"];
        assert_eq!(
            all.count,
            pt.iter().map(|t| t.wakeups).sum::<u64>(),
            "{sched}"
        );
    }
}

// rt-app's own definition, read against a probe of the examples in its doc/ (2026-11-29).

#[test]
fn a_phase_without_cpus_goes_back_to_the_tasks() {
    // rt-app sets each phase's affinity: the phase's cpus, else the task's, else every CPU.
    let r = run(r#"{ "tasks": { "p": { "cpus": [2], "loop": 1, "phases": {
        "a": { "cpus": [0], "run": 1000 }, "b": { "run": 2000 } } } } }"#);
    let useful: Vec<u64> = r.processors.iter().map(|p| p.useful).collect();
    assert_eq!(useful, [1000 * 100, 0, 2000 * 100, 0]);
}

#[test]
fn a_phase_priority_without_a_policy_keeps_the_threads_policy() {
    let spec = read(
        "t.json",
        r#"{ "tasks": { "hi": { "policy": "SCHED_FIFO", "priority": 50, "loop": 1, "phases": {
            "a": { "run": 100 }, "b": { "priority": 60, "run": 100 } } } } }"#,
    )
    .unwrap();
    // SCHED_FIFO 60 (100 + 60), not a nice value of 60 under the default SCHED_OTHER.
    assert_eq!(spec.tasks[0].phases[1].attrs.priority, Some(160));
}

#[test]
fn suspend_waits_on_its_own_tasks_name_and_a_sync_may_hold_its_mutex() {
    // rt-app ignores suspend's string: `resume: "sleeper"` wakes the task `sleeper`.
    run(
        r#"{ "tasks": { "sleeper": { "loop": 3, "suspend": "whatever", "run": 1000 },
        "waker": { "loop": 3, "sleep": 5000, "resume": "sleeper" } } }"#,
    );
    // A sync between a lock and an unlock of its mutex (rt-app's examples) ping-pongs two
    // tasks until the duration.
    let r = run(r#"{ "global": { "duration": 1 }, "tasks": {
        "a": { "lock": "m", "sync": { "ref": "c", "mutex": "m" }, "unlock": "m", "run": 100 },
        "b": { "lock": "m", "sync": { "ref": "c", "mutex": "m" }, "unlock": "m", "run": 100 } } }"#);
    assert!(
        r.apps[0].time.useful >= 2 * 100 * 100,
        "{:?}",
        r.apps[0].time
    );
}

#[test]
fn files_rt_app_reads_are_read_and_misspellings_are_refused() {
    // `frag` (in rt-app's own examples, read by no rt-app) and SCHED_BATCH are accepted.
    read(
        "t.json",
        r#"{ "global": { "frag": 1, "default_policy": "SCHED_BATCH" },
        "tasks": { "p": { "loop": 1, "run": 10 } } }"#,
    )
    .unwrap();
    for (text, says) in [
        (
            r#"{ "globals": {}, "tasks": { "p": { "loop": 1, "run": 10 } } }"#,
            "unknown top-level key",
        ),
        (
            r#"{ "global": {}, "global": {}, "tasks": { "p": { "loop": 1, "run": 10 } } }"#,
            "given twice",
        ),
        (r#"{ "tasks": {} }"#, "no thread to run"),
        (
            r#"{ "tasks": { "p": { "instance": 0, "loop": 1, "run": 10 } } }"#,
            "no thread to run",
        ),
        (
            r#"{ "tasks": { "p": { "instnace": 4, "phases": { "a": { "run": 10 } } } } }"#,
            "instnace",
        ),
        (
            r#"{ "tasks": { "p": { "taskgroup": "/a", "phases": { "a": { "run": 10 } } } } }"#,
            "does not model",
        ),
    ] {
        let e = read("t.json", text).unwrap_err();
        assert!(e.contains(says), "{text}: {e}");
    }
}

#[test]
fn strings_take_json_unicode_escapes() {
    let spec = read(
        "t.json",
        r#"{ "tasks": { "caf\u00e9 \ud83d\ude00": { "loop": 1, "run": 10 } } }"#,
    )
    .unwrap();
    assert_eq!(spec.tasks[0].name, "café 😀");
    for bad in [r#""\ud83d""#, r#""\u12""#, r#""\udc00""#] {
        let text = format!(r#"{{ "tasks": {{ {bad}: {{ "loop": 1, "run": 10 }} }} }}"#);
        assert!(read("t.json", &text).is_err(), "{bad}");
    }
}
