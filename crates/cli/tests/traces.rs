//! Traces (`smpsched run FILE --trace DIR`): Chrome trace JSON per point that Perfetto reads as
//! written (times on the nanosecond grid, so that slices meeting in cycles meet there too),
//! bounded by `--trace-events` (the stretches under way cut at the stop, which is marked) and
//! `--trace-window`, saying which run each is of, and never written over a folder that holds
//! files or found unusable only after the runs.

mod common;

use std::path::Path;

use common::{read_csv_strict, smpsched, tempdir, SWEEP_EXP as EXP};
use serde_json::Value;

fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["run", "exp.toml", "--quiet"];
    all.extend_from_slice(args);
    smpsched(&all, dir)
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Times in microseconds as Perfetto's importer takes them: rounded to whole nanoseconds.
fn ns(v: &Value) -> i64 {
    (v.as_f64().unwrap() * 1000.0).round() as i64
}

/// Each processor's slices as (start, end) in nanoseconds and cycles, in time order.
fn slices(v: &Value) -> Vec<Vec<(i64, i64, u64, u64)>> {
    let mut by: Vec<Vec<(i64, i64, u64, u64)>> = Vec::new();
    for e in v["traceEvents"].as_array().unwrap() {
        if e["ph"] != "X" {
            continue;
        }
        let p = e["tid"].as_u64().unwrap() as usize;
        by.resize(by.len().max(p + 1), Vec::new());
        let (c0, n) = (
            e["args"]["start_cycle"].as_u64().unwrap(),
            e["args"]["cycles"].as_u64().unwrap(),
        );
        by[p].push((ns(&e["ts"]), ns(&e["ts"]) + ns(&e["dur"]), c0, c0 + n));
    }
    for s in &mut by {
        s.sort();
    }
    by
}

#[test]
fn traces_are_chrome_json_per_point_bounded_and_never_overwrite() {
    let dir = tempdir("trace");
    std::fs::write(dir.join("exp.toml"), EXP).unwrap();
    // At 1,200 MHz (Weibel's rpi3) a cycle is no whole number of nanoseconds: slices that meet
    // in cycles met a nanosecond apart once rounded, before times were written on the grid.
    let o = run(
        &dir,
        &[
            "--out",
            "r",
            "--trace",
            "t",
            "--per-thread",
            "--set",
            "machine.clock_mhz=1200",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (head, threads) = read_csv_strict(&dir.join("r/threads.csv"));
    let col = |name: &str| head.iter().position(|h| h == name).unwrap();
    for point in ["policy-batch", "policy-round-robin", "policy-priority"] {
        let v = read(&dir.join("t").join(format!("{point}.trace.json")));
        let events = v["traceEvents"].as_array().unwrap();
        assert!(
            events.iter().all(|e| e["pid"] == 1),
            "processors are process 1"
        );
        let by = slices(&v);
        assert!(
            !by.is_empty() && by.len() <= 4,
            "{point}: the machine's processors"
        );
        for s in by.iter().flatten() {
            assert!(s.1 > s.0 && s.0 >= 0);
        }
        // Slices that meet in cycles meet in nanoseconds, and none overlaps the one before.
        for track in &by {
            for w in track.windows(2) {
                assert!(w[0].1 <= w[1].0, "{point}: {w:?}");
                assert!(w[0].3 != w[1].2 || w[0].1 == w[1].0, "{point}: {w:?}");
            }
        }
        // `thread` is the thread's rank in its application, as threads.csv numbers it.
        let name = point.replace("policy-", "policy=");
        let mut held = std::collections::BTreeMap::<u64, u64>::new();
        for e in events.iter().filter(|e| e["ph"] == "X") {
            *held
                .entry(e["args"]["thread"].as_u64().unwrap())
                .or_default() += e["args"]["cycles"].as_u64().unwrap();
        }
        let rows: Vec<_> = threads
            .iter()
            .filter(|r| r[col("point")] == name && &r[col("repetition")] == "0")
            .collect();
        assert_eq!(rows.len(), 6, "{point}");
        for r in rows {
            let rank: u64 = r[col("thread")].parse().unwrap();
            let runtime: u64 = r[col("runtime_cycles")].parse().unwrap();
            assert_eq!(
                held.get(&rank).copied().unwrap_or(0),
                runtime,
                "{point} thread {rank}"
            );
        }
        let about = &v["otherData"];
        assert!(about["truncated_at_cycle"].is_null());
        assert_eq!(about["experiment"], "cli test");
        assert_eq!(about["point"], name.as_str());
        assert_eq!(about["seed"].as_u64(), Some(5));
        assert!(about["params"]["scheduler.policy"].is_string());
    }
    // The folder now holds traces: a second run may not write into it.
    let o = run(&dir, &["--out", "r2", "--trace", "t"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--trace"));
    assert!(!dir.join("r2").exists(), "nothing ran");
    // A place under a file is found before anything runs.
    std::fs::write(dir.join("afile"), "x").unwrap();
    let o = run(&dir, &["--out", "r5", "--trace", "afile/sub"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--trace"));
    assert!(!dir.join("r5").exists(), "nothing ran");
}

#[test]
fn a_trace_the_budget_stops_keeps_what_ran_until_the_stop_and_marks_it() {
    let dir = tempdir("trace-budget");
    std::fs::write(dir.join("exp.toml"), EXP).unwrap();
    assert!(run(&dir, &["--out", "r", "--trace", "full"])
        .status
        .success());
    let o = run(
        &dir,
        &["--out", "r3", "--trace", "t3", "--trace-events", "10"],
    );
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("stopped at cycle"));
    for point in ["policy-batch", "policy-round-robin", "policy-priority"] {
        let part = read(&dir.join("t3").join(format!("{point}.trace.json")));
        let full = read(&dir.join("full").join(format!("{point}.trace.json")));
        let stop = part["otherData"]["truncated_at_cycle"].as_u64().unwrap();
        let events = part["traceEvents"].as_array().unwrap();
        let marks: Vec<_> = events
            .iter()
            .filter(|e| e["name"] == "trace stopped (--trace-events)")
            .collect();
        assert_eq!(marks.len(), 1, "{point}");
        assert_eq!(marks[0]["args"]["cycle"].as_u64(), Some(stop));
        let kept = events.iter().filter(|e| e["ph"] == "X" || e["ph"] == "i");
        assert!(
            kept.count() <= 10 + 4 + 1,
            "{point}: the budget, a cut slice per processor"
        );
        // Every processor's slices up to the stop are the full trace's, cut at the stop.
        let cut = |by: Vec<Vec<(i64, i64, u64, u64)>>| -> Vec<Vec<(u64, u64)>> {
            by.into_iter()
                .map(|t| {
                    t.into_iter()
                        .filter(|s| s.2 < stop)
                        .map(|s| (s.2, s.3.min(stop)))
                        .collect()
                })
                .collect()
        };
        let (mut a, mut b) = (cut(slices(&full)), cut(slices(&part)));
        a.retain(|t| !t.is_empty());
        b.retain(|t| !t.is_empty());
        assert_eq!(a, b, "{point}");
    }
}

#[test]
fn bad_trace_windows_are_refused_naming_the_option_and_why() {
    let dir = tempdir("trace-window");
    std::fs::write(dir.join("exp.toml"), EXP).unwrap();
    for (window, says) in [
        ("5:2", "before it starts"),
        ("5:5", "where it starts"),
        ("-5:10", "negative"),
        ("x:10", "not a number"),
        ("5", "FROM:UNTIL"),
    ] {
        let arg = format!("--trace-window={window}");
        let o = run(&dir, &["--out", "r4", "--trace", "t4", &arg]);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(2), "{window}: {err}");
        assert!(
            err.contains("--trace-window") && err.contains(says),
            "{window}: {err}"
        );
        assert!(!dir.join("r4").exists(), "{window}: nothing ran");
    }
}
