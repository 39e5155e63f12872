//! Tests of experiment files: sweeps, named points, errors with file, line and field, bounds.
use super::*;
use crate::input::setting::Setting;
use crate::plan::point::SimOptions;
use smpsched_sim::{Limits, MachineConfig};

const GOOD: &str = r#"
name = "t"
seed = 3

[machine]
preset = "tango-12"
processors = 4

[scheduler]
policy = "round-robin"

[[workload]]
kind = "synthetic"
name = "A"
threads = 4
bursts = 3
compute = { dist = "fixed", value = 1000 }

[sweep]
"scheduler.policy" = ["batch", "priority"]
"machine.processors" = [1, 2]
"#;

fn parse(text: &str) -> Result<Experiment, InputError> {
    Experiment::parse(Path::new("exp.toml"), text.to_string())
}

#[test]
fn sweep_is_a_cartesian_product_in_file_order() {
    let e = parse(GOOD).unwrap();
    let labels: Vec<&str> = e.points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "policy=batch/processors=1",
            "policy=batch/processors=2",
            "policy=priority/processors=1",
            "policy=priority/processors=2"
        ]
    );
    assert_eq!(e.points[3].machine.processors, 2);
    assert_eq!(e.points[3].policy.name, "priority");
}

#[test]
fn named_points_combine_with_the_sweep() {
    let text = GOOD.replace(
        "[sweep]",
        "[[point]]\nname = \"slow\"\nset = { \"machine.clock_mhz\" = 1.0 }\n\n[sweep]",
    );
    let e = parse(&text).unwrap();
    assert_eq!(e.points.len(), 4);
    assert!(e.points[0].label.starts_with("slow/policy=batch"));
    assert_eq!(e.points[0].machine.clock_mhz, 1.0);
}

fn err(text: &str) -> InputError {
    match parse(text) {
        Ok(_) => panic!("accepted"),
        Err(e) => e,
    }
}

#[test]
fn errors_name_file_line_and_field() {
    let base = &GOOD[..GOOD.find("[sweep]").unwrap()];
    let e = err(&base.replace("policy = \"round-robin\"", "policy = \"lottery\""));
    assert_eq!(e.field, "scheduler.policy");
    assert_eq!(e.line, Some(10));
    assert!(e.message.contains("round-robin"), "{e}");

    let e = err(&GOOD.replace("\"batch\", \"priority\"", "\"batch\", \"lottery\""));
    assert_eq!((e.field.as_str(), e.line), ("scheduler.policy", Some(20)));

    let e = err(&base.replace("processors = 4", "processors = 100000"));
    assert_eq!((e.field.as_str(), e.line), ("machine.processors", Some(7)));

    let e = err(&base.replace("processors = 4", "procesors = 4"));
    assert_eq!(e.field, "machine.procesors");
    assert_eq!(e.line, Some(7));

    let e = err(&GOOD.replace("threads = 4", "threads = -4"));
    assert_eq!((e.field.as_str(), e.line), ("workload.0.threads", Some(15)));

    let e = err(&GOOD.replace("kind = \"synthetic\"", "kind = \"mp4d\""));
    assert_eq!((e.field.as_str(), e.line), ("workload.0.kind", Some(13)));

    let e = err(&GOOD.replace("[1, 2]", "[1, 70000]"));
    assert_eq!(e.field, "machine.processors");
    assert_eq!(
        e.line,
        Some(21),
        "a swept value is reported at its sweep line"
    );

    let e = err(&GOOD.replace("seed = 3", "seed = 3\ncolour = 1"));
    assert_eq!((e.field.as_str(), e.line), ("colour", Some(4)));

    let e = err(&GOOD.replace("threads = 4", "threads = 20000000"));
    assert_eq!(e.field, "workload.0.threads");

    let e = err("name = \"x\"\n[scheduler]\npolicy = \"batch\"\n");
    assert_eq!(e.field, "workload");
    assert!(e.to_string().starts_with("exp.toml"), "{e}");
}

#[test]
fn two_applications_with_one_name_are_refused() {
    let base = &GOOD[..GOOD.find("[sweep]").unwrap()];
    let twice = format!("{base}\n[[workload]]\nkind = \"synthetic\"\nname = \"A\"\nthreads = 1\nbursts = 1\ncompute = {{ dist = \"fixed\", value = 1 }}\n");
    let e = err(&twice);
    assert_eq!((e.field.as_str(), e.line), ("workload.1.name", Some(22)));
    assert!(e.message.contains("already called `A`"), "{e}");
}

#[test]
fn runs_are_bounded_by_default_and_bounds_are_checked() {
    let e = parse(GOOD).unwrap();
    assert_eq!(
        e.points[0].limits,
        Limits {
            cycles: Limits::DEFAULT_CYCLES,
            events: Limits::DEFAULT_EVENTS,
            references: Limits::DEFAULT_REFERENCES,
        }
    );
    let e = parse(&GOOD.replace(
        "seed = 3",
        "seed = 3\nevent_limit = 5000\ntime_limit_cycles = 7\nreference_limit = 9",
    ))
    .unwrap();
    assert_eq!(
        e.points[0].limits,
        Limits {
            cycles: 7,
            events: 5000,
            references: 9,
        }
    );
    for bad in [
        "event_limit = 0",
        "reference_limit = 0",
        "time_limit_cycles = -1",
        "time_limit_cycles = 9223372036854775807",
        "event_limit = \"lots\"",
    ] {
        let e = err(&GOOD.replace("seed = 3", &format!("seed = 3\n{bad}")));
        assert_eq!(e.line, Some(4), "{bad}: {e}");
        assert!(bad.starts_with(&e.field), "{bad}: {e}");
    }
}

#[test]
fn points_simulate_deterministically() {
    let e = parse(GOOD).unwrap();
    let a = e.points[2].simulate(1, SimOptions::default()).unwrap();
    let b = e.points[2].simulate(1, SimOptions::default()).unwrap();
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    a.check_conservation().unwrap();
}

#[test]
fn nested_machine_overrides_keep_the_presets_other_fields() {
    let text = GOOD[..GOOD.find("[sweep]").unwrap()].replace(
        "processors = 4",
        "processors = 4\n\n[machine.memory]\nchunk_cycles = 500",
    );
    let e = parse(&text).unwrap();
    let mem = &e.points[0].machine.memory;
    assert_eq!(mem.chunk_cycles, 500);
    assert_eq!(mem, &{
        let mut t = MachineConfig::tango_12().memory;
        t.chunk_cycles = 500;
        t
    });
}

#[test]
fn set_path_handles_arrays_and_rejects_bad_indices() {
    let mut doc: toml::Table = toml::from_str("[[workload]]\nthreads = 1\n").unwrap();
    set_path(&mut doc, "workload.0.threads", toml::Value::Integer(5)).unwrap();
    assert_eq!(doc["workload"][0]["threads"].as_integer(), Some(5));
    assert!(set_path(&mut doc, "workload.3.threads", toml::Value::Integer(5)).is_err());
    assert!(set_path(&mut doc, "workload.x.threads", toml::Value::Integer(5)).is_err());
    set_path(&mut doc, "scheduler.decay", toml::Value::Float(0.5)).unwrap();
    assert_eq!(doc["scheduler"]["decay"].as_float(), Some(0.5));
}

#[test]
fn until_names_an_application_of_the_point() {
    let e = parse(&GOOD.replace("seed = 3", "seed = 3\nuntil = \"A\"")).unwrap();
    assert!(e.points.iter().all(|p| p.until.as_deref() == Some("A")));
    let e = err(&GOOD.replace("seed = 3", "seed = 3\nuntil = \"LU\""));
    assert_eq!(e.field, "until", "{e}");
    assert_eq!(e.line, Some(4), "{e}");
    assert!(e.message.contains("`A`"), "{e}");
}

#[test]
fn fields_lists_every_top_level_field_the_parser_takes() {
    let text = "name = \"x\"\nbogus = 1\n[scheduler]\npolicy = \"batch\"\n";
    let Err(err) = Experiment::parse(Path::new("f.toml"), text.to_string()) else {
        panic!("an unknown field is refused");
    };
    let quoted: Vec<String> = FIELDS.iter().map(|f| format!("`{f}`")).collect();
    let want = format!("expected one of {}", quoted.join(", "));
    assert!(err.to_string().ends_with(&want), "{err}\nwant: {want}");
}

#[test]
fn the_machines_slice_is_slice_ms_and_slice_cycles_still_works() {
    let with = |extra: &str| GOOD.replace("[machine]", &format!("[machine]\n{extra}"));
    let e = parse(&with("slice_ms = 2.0")).unwrap();
    assert!(e.points.iter().all(|p| p.machine.slice_cycles == 50_000));
    assert!(e.notes.is_empty(), "{:?}", e.notes);
    let old = parse(&with("slice_cycles = 50000")).unwrap();
    assert_eq!(old.points[0].machine.slice_cycles, 50_000);
    assert_eq!(old.notes.len(), 1, "{:?}", old.notes);
    assert!(old.notes[0].contains("`machine.slice_cycles` is deprecated; write `slice_ms`"));
    for bad in [
        "slice_ms = 0",
        "slice_ms = \"x\"",
        "slice_ms = 1\nslice_cycles = 5",
    ] {
        let e = err(&with(bad));
        assert_eq!(e.field, "machine.slice_ms", "{bad}: {e}");
        assert!(e.line.is_some(), "{bad}: {e}");
    }
    // The preset's slice is 10 ms (`explain` prints `slice_ms = 10.0`): at another clock it is
    // 10 ms of that clock, as writing `slice_ms = 10.0` gives; a deprecated `slice_cycles` is
    // cycles whatever the clock.
    let slow = parse(&with("clock_mhz = 5.0")).unwrap();
    let written = parse(&with(
        "clock_mhz = 5.0
slice_ms = 10.0",
    ))
    .unwrap();
    assert_eq!(slow.points[0].machine.slice_cycles, 50_000);
    assert_eq!(written.points[0].machine.slice_cycles, 50_000);
    let cycles = parse(&with(
        "clock_mhz = 5.0
slice_cycles = 250000",
    ))
    .unwrap();
    assert_eq!(cycles.points[0].machine.slice_cycles, 250_000);
}

fn parse_set(text: &str, settings: &[&str]) -> Result<Experiment, InputError> {
    let settings: Vec<Setting> = settings
        .iter()
        .map(|s| Setting::parse(s).unwrap())
        .collect();
    Experiment::parse_set(Path::new("exp.toml"), text.to_string(), 1.0, &settings)
}

fn refused(text: &str, settings: &[&str]) -> InputError {
    match parse_set(text, settings) {
        Err(e) => e,
        Ok(_) => panic!("{settings:?} was taken"),
    }
}

#[test]
fn a_setting_applies_to_every_point_as_if_the_file_wrote_it() {
    let set = parse_set(GOOD, &["machine.clock_mhz=50"]).unwrap();
    let written = parse(&GOOD.replace("processors = 4", "processors = 4\nclock_mhz = 50")).unwrap();
    assert_eq!(set.points.len(), 4);
    for (a, b) in set.points.iter().zip(&written.points) {
        assert_eq!(a.machine, b.machine);
        assert_eq!(a.machine.clock_mhz, 50.0);
    }
    assert_ne!(
        set.points[0].machine,
        parse(GOOD).unwrap().points[0].machine
    );
}

#[test]
fn a_setting_the_file_sweeps_or_cannot_take_is_refused_with_its_place() {
    // The sweep sets it at every point: its line is named.
    let e = refused(GOOD, &["machine.processors=8"]);
    assert_eq!(e.line, Some(21), "{e}");
    assert!(
        e.message
            .contains("the file sets `machine.processors` itself"),
        "{e}"
    );
    // Inside a table a sweep replaces whole.
    let whole = GOOD.replace("\"scheduler.policy\" = [\"batch\", \"priority\"]", "");
    let whole = whole.replace(
        "[sweep]",
        "[sweep]\n\"scheduler\" = [{ policy = \"batch\" }]",
    );
    let e = refused(&whole, &["scheduler.quantum_ms=5"]);
    assert!(
        e.message.contains("the file sets `scheduler` itself"),
        "{e}"
    );
    // A field the workload does not have, and a bad value: the command line is named.
    let e = refused(GOOD, &["workload.0.threadz=6"]);
    assert!(
        e.message.contains("threadz") && e.message.contains("workload.0.threadz=6"),
        "{e}"
    );
    let e = refused(GOOD, &["workload.0.threads=many"]);
    assert!(e.message.contains("set by the command line"), "{e}");
    let e = refused(GOOD, &["workload.4.threads=6"]);
    assert!(e.message.contains("not an index"), "{e}");
}

#[test]
fn a_workload_with_data_on_no_node_is_noted_on_a_numa_machine() {
    let file = |preset: &str, workload: &str| {
        format!(
            "name = \"n\"\n[machine]\npreset = \"{preset}\"\nprocessors = 4\n\
             [scheduler]\npolicy = \"round-robin\"\n[[workload]]\n{workload}\n"
        )
    };
    let matmul = "kind = \"matmul\"\nname = \"M\"\nprocesses = 4\nn = 16\nblock = 8";
    let e = parse(&file("bbn-gp1000", matmul)).unwrap();
    assert_eq!(e.notes.len(), 1, "{:?}", e.notes);
    assert!(
        e.notes[0].starts_with("note: `M` (matmul) places its data on no NUMA node"),
        "{}",
        e.notes[0]
    );
    // On a bus machine, and for a workload that places its data on nodes, nothing to note.
    assert!(parse(&file("tango-12", matmul)).unwrap().notes.is_empty());
    let sweep = "kind = \"sweep\"\nthreads = 4\nbytes = 4096\npasses = 1";
    let e = parse(&file("bbn-gp1000", sweep)).unwrap();
    assert!(e.notes.is_empty(), "{:?}", e.notes);
    let uma = format!("{sweep}\nplacement = \"uma\"");
    assert_eq!(parse(&file("bbn-gp1000", &uma)).unwrap().notes.len(), 1);
}

#[test]
fn swept_paths_with_one_last_name_are_labelled_apart() {
    let text = GOOD
        .replace(
            "[sweep]",
            "[[workload]]\nkind = \"synthetic\"\nname = \"B\"\nthreads = 2\nbursts = 1\n\
             compute = { dist = \"fixed\", value = 10 }\n\n[sweep]\n\
             \"workload.0.threads\" = [1, 2]\n\"workload.1.threads\" = [3]",
        )
        .replace("\"machine.processors\" = [1, 2]\n", "");
    let e = parse(&text).unwrap();
    let labels: Vec<&str> = e.points.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "0.threads=1/1.threads=3/policy=batch",
            "0.threads=1/1.threads=3/policy=priority",
            "0.threads=2/1.threads=3/policy=batch",
            "0.threads=2/1.threads=3/policy=priority",
        ]
    );
    // Paths whose last names differ keep them alone.
    let plain = parse(GOOD).unwrap();
    assert_eq!(plain.points[0].label, "policy=batch/processors=1");
}
