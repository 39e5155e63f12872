//! An rt-app file read as rt-app reads it (its `src/rt-app_parse_config.c` and `src/rt-app.c`
//! at 55cb0c0): event keys by the event name they begin with, numbers as json-c's integers, a
//! phase without an event refused, a fork cycle named at its fork, and a duration the run lasts
//! even when every thread has ended before it.

use super::spec::{Event, Spec};
use super::tests::run;
use super::{read, RtApp};
use crate::Workload;

fn spec(text: &str) -> Spec {
    read("t.json", text).unwrap()
}

fn error(text: &str) -> String {
    read("t.json", text).unwrap_err()
}

#[test]
fn an_event_key_is_the_event_whose_name_begins_it() {
    // rt-app tests `run` and `sleep` first (a key beginning with `runtime` is a runtime),
    // `memrun` before `mem`; whatever follows the name is the key's own.
    let s = spec(
        r#"{ "tasks": { "a": { "loop": 1, "run_first": 10, "runtime_b": 20, "run_time": 30,
        "sleep_long": 40, "timer_a": { "ref": "t", "period": 50 }, "lockout": "m",
        "unlock_m": "m", "memory": 64, "iorun2": 8, "yields": 0, "signal_x": "c",
        "broadcast": "c" } } }"#,
    );
    let timer = Event::Timer {
        name: "t".into(),
        period: 50.0,
        absolute: false,
    };
    assert_eq!(
        s.tasks[0].phases[0].events,
        [
            Event::Run(10.0),
            Event::Runtime(20.0),
            Event::Run(30.0),
            Event::Sleep(40.0),
            timer,
            Event::Lock("m".into()),
            Event::Unlock("m".into()),
            Event::Mem(64),
            Event::IoRun(8),
            Event::Yield,
            Event::Signal("c".into()),
            Event::Broad("c".into()),
        ]
    );
    // A run of such keys runs as the plain names do.
    let r = run(
        r#"{ "tasks": { "a": { "loop": 2, "run_a": 100, "runtime_b": 200,
                   "sleep_c": 300 } } }"#,
    );
    assert_eq!(r.apps[0].time.useful, 2 * 300 * 100);
    assert_eq!(r.elapsed_cycles, 2 * 600 * 100);
}

#[test]
fn a_key_beginning_with_no_event_or_an_unmodelled_one_is_refused_where_it_is() {
    for (text, want) in [
        (
            "{ \"tasks\": { \"a\": { \"loop\": 1, \"phases\": {\n \"p\": { \"run\": 1,\n \
             \"walk_fast\": 5 } } } } }",
            "line 3, task `a`, phase `p`, event `walk_fast`: unknown event: no event's name \
             begins it",
        ),
        // A property's name with more after it is no property and no event.
        (
            r#"{ "tasks": { "a": { "loops": 2, "run": 1 } } }"#,
            "task `a`, event `loops`: unknown event",
        ),
        (
            r#"{ "tasks": { "a": { "loop": 1, "memrun_x": { "type": "read" } } } }"#,
            "event `memrun_x`: rt-app's `memrun` event: smpsched does not model it",
        ),
        (
            r#"{ "tasks": { "a": { "loop": 1, "sem_post": "s", "run": 1 } } }"#,
            "rt-app's `sem_post` event",
        ),
        // Beside `phases`, a key that begins with an event's name is an event out of place.
        (
            r#"{ "tasks": { "a": { "sleeper": 1, "phases": { "p": { "run": 1 } } } } }"#,
            "event `sleeper`: events go inside `phases`",
        ),
    ] {
        let e = error(text);
        assert!(e.contains(want), "want `{want}` in: {e}");
    }
}

#[test]
fn a_number_rt_app_reads_as_an_integer_is_refused_with_a_fraction_or_an_exponent() {
    // json-c types a number written with `.`, `e` or `E` as a double, which every integer
    // field of rt-app refuses (even `10.0`); the error names the line, task, phase and key.
    let file = |global: &str, task: &str, phase: &str| {
        format!(
            "{{ \"global\": {{ {global} }},\n\"tasks\": {{ \"a\": {{ {task}\n\"phases\": {{ \
             \"p\": {{\n{phase} }} }} }} }} }}"
        )
    };
    for (text, want) in [
        (
            file("", "", "\"run\": 2.5"),
            "line 4, task `a`, phase `p`, event `run`: must be an integer, written without `.` \
             or an exponent, got 2.5: rt-app reads it",
        ),
        (
            file("", "", "\"runtime\": 10.0"),
            "event `runtime`: must be an integer, written without `.` or an exponent, got 10.0",
        ),
        (
            file("", "", "\"sleep_a\": 1e3"),
            "event `sleep_a`: must be an integer, written without `.` or an exponent, got 1000.0",
        ),
        (
            file("", "", "\"timer\": { \"ref\": \"t\", \"period\": 999.9 }"),
            "event `timer`",
        ),
        (file("", "", "\"run\": 1, \"loop\": 2.0"), "event `loop`"),
        (file("", "", "\"mem\": 4096.0"), "event `mem`"),
        (file("", "", "\"iorun\": 1.5"), "event `iorun`"),
        (
            file("", "", "\"run\": 1, \"priority\": 5.5"),
            "event `priority`",
        ),
        (
            file("", "\"delay\": 0.5,", "\"run\": 1"),
            "line 2, task `a`, event `delay`",
        ),
        (
            file("", "\"instance\": 1.0,", "\"run\": 1"),
            "event `instance`",
        ),
        (
            file("\"duration\": 0.5", "", "\"run\": 1"),
            "line 1, event `global.duration`",
        ),
        (
            file("\"calibration\": 300.5", "", "\"run\": 1"),
            "global.calibration",
        ),
        (
            file("\"mem_buffer_size\": 6.4e4", "", "\"run\": 1"),
            "global.mem_buffer_size",
        ),
    ] {
        let e = error(&text);
        assert!(
            e.contains(want) && e.contains("must be an integer, written without `.` or an"),
            "want `{want}` in: {e}"
        );
    }
    // Written as integers they are read.
    spec(&file(
        "\"duration\": 2, \"calibration\": 300",
        "\"delay\": 5, \"instance\": 2,",
        "\"run\": 10, \"mem\": 64, \"loop\": 2",
    ));
}

#[test]
fn a_cpu_number_with_a_fraction_is_truncated_as_rt_app_does_with_a_note() {
    // rt-app reads `cpus` with json-c's json_object_get_int and no type check: toward zero.
    let text = "{ \"tasks\": { \"a\": { \"loop\": 1,\n\"cpus\": [1.7, 2, 3.0], \"run\": 10 } } }";
    let s = spec(text);
    assert_eq!(s.tasks[0].attrs.cpus, Some(vec![1, 2, 3]));
    let w = RtApp {
        file: "t.json".into(),
        spec: Some(s),
    };
    assert_eq!(
        w.notes(),
        [
            "note: `t.json`: line 2, task `a`, event `cpus`: 1.7 is read as CPU 1, as rt-app \
          reads it (json-c's integer of a number with a fraction, toward zero)"
        ]
    );
    // Without a fraction dropped, no note; a negative CPU is refused.
    assert!(
        spec(r#"{ "tasks": { "a": { "loop": 1, "cpus": [0], "run": 1 } } }"#)
            .notes
            .is_empty()
    );
    assert!(
        error(r#"{ "tasks": { "a": { "loop": 1, "cpus": [-1.5], "run": 1 } } }"#)
            .contains("must be a CPU number from 0 to 65535, got -1")
    );
}

#[test]
fn a_phase_of_properties_alone_is_refused_as_rt_app_refuses_it() {
    let e = error(
        "{ \"tasks\": { \"a\": { \"loop\": 1, \"phases\": {\n\"p1\": { \"run\": 10 },\n\
         \"p2\": { \"loop\": 3, \"cpus\": [0] } } } } }",
    );
    assert!(
        e.contains("line 3, task `a`, phase `p2`: has no event (rt-app refuses a phase"),
        "{e}"
    );
    // A task of properties alone (its own phase), and an empty `phases`, likewise.
    for text in [
        r#"{ "tasks": { "a": { "loop": 2, "cpus": [0] } } }"#,
        r#"{ "tasks": { "a": { "loop": 2, "phases": {} } } }"#,
    ] {
        assert!(error(text).contains("task `a`: has no event"), "{text}");
    }
}

#[test]
fn a_fork_error_names_the_forks_line_task_and_phase() {
    // The fork that closes the cycle: b's, on line 4; the cycle from the task it closes on.
    let e = error(
        "{ \"tasks\": {\n\"a\": { \"loop\": 1, \"phases\": { \"pa\": { \"fork\": \"b\" } } },\n\
         \"b\": { \"loop\": 1, \"phases\": { \"pb\": { \"run\": 1,\n\"fork\": \"a\" } } } } }",
    );
    assert!(
        e.ends_with("line 4, task `b`, phase `pb`, event `fork`: forks make a cycle: a -> b -> a"),
        "{e}"
    );
    // A task that forks itself, and a fork of no task of the file.
    let e = error("{ \"tasks\": { \"c\": { \"loop\": 1,\n\"fork\": \"c\" } } }");
    assert!(
        e.ends_with("line 2, task `c`, phase `phase0`, event `fork`: forks make a cycle: c -> c"),
        "{e}"
    );
    let e = error("{ \"tasks\": { \"c\": { \"loop\": 1,\n\"fork_x\": \"zz\" } } }");
    assert!(
        e.contains("line 2, task `c`, phase `phase0`, event `fork`: forks `zz`"),
        "{e}"
    );
}

#[test]
fn a_run_lasts_its_duration_when_every_thread_ends_before_it() {
    // rt-app's main process sleeps out the duration whatever its threads do: 1 ms of work in a
    // run of 1 s, the rest idle. The application itself completed at 1 ms.
    let r = run(r#"{ "global": { "duration": 1 }, "tasks": { "p": { "loop": 1, "run": 1000 } } }"#);
    assert_eq!(r.elapsed_cycles, 1_000_000 * 100);
    assert_eq!(r.apps[0].completion_cycles, 1000 * 100);
    assert!(!r.apps[0].unfinished);
    assert_eq!(r.apps[0].time.useful, 1000 * 100);
    assert_eq!(r.utilization, 1000.0 / (4.0 * 1e6));
    // Without a duration the run ends with its threads.
    let r = run(r#"{ "tasks": { "p": { "loop": 1, "run": 1000 } } }"#);
    assert_eq!(r.elapsed_cycles, 1000 * 100);
}
