//! End-to-end tests of the `smpsched` binary: determinism of results files, exit codes and
//! error messages for bad input, listing and explaining.

use std::path::Path;

mod common;

use common::{
    read_csv_strict, reproduce_tiny as reproduce, smpsched, smpsched_with_memory, tempdir,
    tiny_repro_dir as repro_dir, SWEEP_EXP as EXP, TINY_REPRO as REPRO,
};

fn run_to(dir: &Path, out: &str, extra: &[&str]) -> (String, String, String) {
    let mut args = vec!["run", "exp.toml", "--out", out, "--quiet"];
    args.extend_from_slice(extra);
    let o = smpsched(&args, dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    read_csv_strict(&dir.join(out).join("results.csv"));
    let read = |f: &str| std::fs::read_to_string(dir.join(out).join(f)).unwrap();
    (
        read("results.csv"),
        read("results.json"),
        read("time-split.svg"),
    )
}

#[test]
fn same_seed_gives_byte_identical_results_and_another_seed_changes_them() {
    let dir = tempdir("det");
    std::fs::write(dir.join("exp.toml"), EXP).unwrap();
    let a = run_to(&dir, "a", &[]);
    let b = run_to(&dir, "b", &["--jobs", "1"]);
    assert_eq!(a, b, "same seed, different parallelism: results differ");
    let c = run_to(&dir, "c", &["--seed", "6"]);
    assert_ne!(a.0, c.0, "a different seed must change random demands");
    // The time-split chart has a bar per point, labelled.
    assert!(a.2.starts_with("<svg"), "{}", &a.2[..a.2.len().min(200)]);
    for label in ["policy=batch", "policy=round-robin", "policy=priority"] {
        assert!(a.2.contains(label), "{label} missing from the chart");
    }
    // 3 points x 2 repetitions x (machine row + 1 app row) + header.
    assert_eq!(a.0.lines().count(), 1 + 3 * 2 * 2);
    let json: serde_json::Value = serde_json::from_str(&a.1).unwrap();
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 6);
    for r in runs {
        let elapsed = r["elapsed_cycles"].as_u64().unwrap();
        for p in r["processors"].as_array().unwrap() {
            let sum: u64 = ["useful", "stall", "spin", "idle", "switch", "kernel"]
                .iter()
                .map(|k| p[k].as_u64().unwrap())
                .sum();
            assert_eq!(sum, elapsed, "conservation broken in {r}");
        }
    }
}

#[test]
fn per_job_writes_one_row_per_job_and_changes_no_other_file() {
    let dir = tempdir("perjob");
    std::fs::write(dir.join("exp.toml"), EXP).unwrap();
    let plain = run_to(&dir, "plain", &[]);
    let kept = run_to(&dir, "kept", &["--per-job", "--jobs", "1"]);
    assert_eq!(
        plain, kept,
        "--per-job changed results.csv, results.json or the chart"
    );
    assert!(!dir.join("plain/jobs.csv").exists());
    let (header, rows) = read_csv_strict(&dir.join("kept/jobs.csv"));
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    // 3 points x 2 repetitions x 6 threads, each a job numbered 0..6 within its run.
    assert_eq!(rows.len(), 3 * 2 * 6);
    let json: serde_json::Value = serde_json::from_str(&plain.1).unwrap();
    for (i, run) in json["runs"].as_array().unwrap().iter().enumerate() {
        let jobs = &rows[i * 6..(i + 1) * 6];
        let num = |r: &csv::StringRecord, c: &str| r[col(c)].parse::<u64>().unwrap();
        let responses: Vec<u64> = jobs.iter().map(|r| num(r, "response")).collect();
        for (k, r) in jobs.iter().enumerate() {
            assert_eq!(num(r, "job"), k as u64);
            assert_eq!(num(r, "response"), num(r, "exited") - num(r, "arrived"));
            assert_eq!(num(r, "wait"), num(r, "first_run") - num(r, "arrived"));
        }
        // The summary in results.json is computed from the same times.
        let summary = &run["apps"][0]["jobs"];
        assert_eq!(summary["jobs"].as_u64(), Some(6));
        assert_eq!(
            summary["max_response"].as_u64(),
            responses.iter().max().copied()
        );
        let mean = responses.iter().sum::<u64>() as f64 / 6.0;
        assert!((summary["mean_response"].as_f64().unwrap() - mean).abs() <= 1e-9 * mean);
    }
}

#[test]
fn per_thread_writes_one_row_per_thread_deterministically() {
    let dir = tempdir("perthread");
    std::fs::write(dir.join("exp.toml"), EXP).unwrap();
    let plain = run_to(&dir, "plain", &[]);
    let a = run_to(&dir, "a", &["--per-thread"]);
    let b = run_to(&dir, "b", &["--per-thread", "--jobs", "1"]);
    assert_eq!(a, b, "--per-thread: results differ with the parallelism");
    assert_eq!(plain.0, a.0, "--per-thread changed results.csv");
    assert!(!dir.join("plain/threads.csv").exists());
    let text = |d: &str| std::fs::read_to_string(dir.join(d).join("threads.csv")).unwrap();
    assert_eq!(text("a"), text("b"));
    let (header, rows) = read_csv_strict(&dir.join("a/threads.csv"));
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    // 3 points x 2 repetitions x 6 threads, numbered 0..6 within each run.
    assert_eq!(rows.len(), 3 * 2 * 6);
    let json: serde_json::Value = serde_json::from_str(&a.1).unwrap();
    for (i, run) in json["runs"].as_array().unwrap().iter().enumerate() {
        let threads = &rows[i * 6..(i + 1) * 6];
        let num = |r: &csv::StringRecord, c: &str| r[col(c)].parse::<f64>().unwrap();
        let mut held = 0.0;
        for (k, r) in threads.iter().enumerate() {
            assert_eq!(num(r, "thread"), k as f64);
            // Each of the 10 bursts but the first follows a block: 9 wake-ups, each dispatched.
            assert_eq!(num(r, "wakeups"), 9.0, "{r:?}");
            assert!(num(r, "dispatches") >= 10.0, "{r:?}");
            assert!(
                num(r, "wake_lat_p50_us") <= num(r, "wake_lat_p99_us"),
                "{r:?}"
            );
            held += num(r, "runtime_cycles");
        }
        // The threads' runtimes are the processor time the application held.
        let time = &run["apps"][0]["time"];
        let app_held: f64 = ["useful", "stall", "spin", "switch", "kernel"]
            .iter()
            .map(|k| time[k].as_f64().unwrap_or(0.0))
            .sum();
        assert_eq!(held, app_held);
        assert_eq!(run["apps"][0]["per_thread"].as_array().unwrap().len(), 6);
    }
}

#[test]
fn a_deprecated_name_is_noted_with_its_line_and_runs_as_the_new_one() {
    let dir = tempdir("deprecated");
    // Round-robin alone (batch, swept in EXP, takes no slice).
    let base = EXP.split("[sweep]").next().unwrap();
    let with = |slice: &str| {
        base.replace(
            "policy = \"round-robin\"",
            &format!("policy = \"round-robin\"\n{slice}"),
        )
    };
    std::fs::write(dir.join("exp.toml"), with("quantum = 50000")).unwrap();
    let o = smpsched(&["run", "exp.toml", "--out", "old", "--quiet"], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("note: exp.toml:12: `scheduler.quantum` is deprecated; write `slice_ms`"),
        "{err}"
    );
    std::fs::write(dir.join("exp.toml"), with("slice_ms = 2.0")).unwrap();
    let o = smpsched(&["run", "exp.toml", "--out", "new", "--quiet"], &dir);
    assert!(o.status.success() && !String::from_utf8_lossy(&o.stderr).contains("deprecated"));
    let read = |d: &str| std::fs::read_to_string(dir.join(d).join("results.json")).unwrap();
    assert_eq!(
        read("old"),
        read("new"),
        "2 ms at 25 MHz is the 50,000 cycles of the old name"
    );
}

#[test]
fn idle_handoff_is_the_kernels_and_the_old_scheduler_key_still_works() {
    let dir = tempdir("idle-handoff");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let file = std::fs::read_to_string(root.join("experiments/black90/table3.toml")).unwrap();
    assert!(file.contains("kernel.idle_handoff = true\n"));
    let run = |name: &str, text: String| {
        std::fs::write(dir.join(format!("{name}.toml")), text).unwrap();
        let o = smpsched(
            &["run", &format!("{name}.toml"), "--out", name, "--quiet"],
            &dir,
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = std::fs::read_to_string(dir.join(name).join("results.json")).unwrap();
        // The file's own name is the one line that may differ.
        let out = out.replace(&format!("\"file\": \"{name}.toml\""), "");
        (out, String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let (new, quiet) = run("new", file.clone());
    assert!(!quiet.contains("deprecated"), "{quiet}");
    let old_text = file.replace("kernel.idle_handoff = true\n", "").replace(
        "policy = \"round-robin\"\n",
        "policy = \"round-robin\"\nidle_handoff = true\n",
    );
    let (old, note) = run("old", old_text);
    assert!(
        note.contains("`scheduler.idle_handoff` is deprecated; write `kernel.idle_handoff`"),
        "{note}"
    );
    assert!(old == new, "the old key turns on the same handoff");
}

fn bad(dir: &Path, text: &str) -> String {
    std::fs::write(dir.join("bad.toml"), text).unwrap();
    let o = smpsched(&["run", "bad.toml", "--quiet"], dir);
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.stdout.is_empty());
    String::from_utf8(o.stderr).unwrap()
}

#[test]
fn bad_input_exits_2_naming_file_line_and_field() {
    let dir = tempdir("bad");
    let e = bad(&dir, &EXP.replace("processors = 4", "processors = 100000"));
    assert!(e.contains("bad.toml:8: field `machine.processors`"), "{e}");
    let e = bad(&dir, &EXP.replace("\"batch\",", "\"gang-of-four\","));
    assert!(e.contains("bad.toml:21: field `scheduler.policy`"), "{e}");
    assert!(e.contains("round-robin"), "valid names listed: {e}");
    let e = bad(
        &dir,
        &EXP.replace("kind = \"synthetic\"", "kind = \"mp5d\""),
    );
    assert!(e.contains("bad.toml:14: field `workload.0.kind`"), "{e}");
    let e = bad(&dir, &EXP.replace("threads = 6", "threads = 99999999"));
    assert!(e.contains("workload.0.threads"), "{e}");
    let e = bad(&dir, &EXP.replace("[machine]", "[machine"));
    assert!(
        e.contains("bad.toml:6:") && e.contains("malformed TOML"),
        "{e}"
    );
    let e = bad(&dir, &EXP.replace("seed = 5", "seed = -5"));
    assert!(e.contains("bad.toml:3: field `seed`"), "{e}");
    let o = smpsched(&["run", "missing.toml"], &dir);
    assert_eq!(o.status.code(), Some(2));
    let o = smpsched(&["run"], &dir);
    assert_eq!(o.status.code(), Some(2), "clap usage errors exit 2");
}

#[test]
fn a_point_too_big_for_memory_is_refused_and_parallel_runs_are_capped() {
    let dir = tempdir("memory");
    let exp = |threads: u64| {
        format!(
            "name = \"mem\"\n[machine]\npreset = \"tango-12\"\n[scheduler]\n\
             policy = \"round-robin\"\n[[workload]]\nkind = \"synthetic\"\n\
             threads = {threads}\nbursts = 1\ncompute = {{ dist = \"fixed\", value = 1000 }}\n\
             [sweep]\n\"machine.processors\" = [2, 4, 8, 16]\n"
        )
    };
    // A million threads take hundreds of megabytes: refused, before anything runs, when only
    // 64 MiB may be used; the error names the file, line and field.
    std::fs::write(dir.join("big.toml"), exp(1_000_000)).unwrap();
    let o = smpsched_with_memory(&["run", "big.toml", "--quiet"], &dir, Some("64M"));
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("big.toml:8: field `workload.0.threads`"),
        "{err}"
    );
    assert!(err.contains("64.0 MiB available"), "{err}");
    assert!(!dir.join("results").exists());

    // Runs of 20,000 threads (about 30 MiB each): with 45 MiB, one at a time, not one per
    // core; the results are those of an unconstrained run.
    std::fs::write(dir.join("exp.toml"), exp(20_000)).unwrap();
    let args = |out| ["run", "exp.toml", "--quiet", "--jobs", "4", "--out", out];
    let o = smpsched_with_memory(&args("capped"), &dir, Some("45M"));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let note = String::from_utf8_lossy(&o.stderr);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if cores > 1 {
        assert!(note.contains("running 1 at a time instead of"), "{note}");
    }
    let o = smpsched_with_memory(&args("free"), &dir, Some("1T"));
    assert!(o.status.success());
    assert!(!String::from_utf8_lossy(&o.stderr).contains("note:"));
    let read = |d: &str| std::fs::read(dir.join(d).join("results.json")).unwrap();
    assert_eq!(read("capped"), read("free"));

    // A value that is not a size is bad input.
    let o = smpsched_with_memory(&["run", "exp.toml"], &dir, Some("plenty"));
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("SMPSCHED_MEMORY: must be"));
}

#[test]
fn list_and_explain() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let o = smpsched(&["list"], &root);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    for name in [
        "quickstart.toml",
        "batch",
        "round-robin",
        "priority",
        "synthetic",
        "tango-12",
    ] {
        assert!(text.contains(name), "list lacks {name}:\n{text}");
    }
    let o = smpsched(&["explain", "priority"], &root);
    assert!(o.status.success());
    assert!(String::from_utf8(o.stdout).unwrap().contains("0.66"));
    let o = smpsched(&["explain", "lottery"], &root);
    assert_eq!(o.status.code(), Some(2));
    // A measure `list` shows is not explained, but named as a measure.
    let o = smpsched(&["explain", "app_util:LU"], &root);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is a measure"), "{err}");
}

#[test]
fn list_skips_malformed_files_and_a_papers_own_folder_is_named_as_such() {
    let dir = repro_dir("list-skips", REPRO);
    std::fs::write(dir.join("exp/tiny/bad.toml"), "name = \n").unwrap();
    let o = smpsched(&["list", "--dir", "exp"], &dir);
    assert!(o.status.success());
    let text = String::from_utf8(o.stdout).unwrap();
    let skipped = text
        .split("Skipped")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        skipped.contains("bad.toml: malformed TOML (line 1)"),
        "{text}"
    );
    // The paper's own folder given as the folder of papers: no paper `tiny` inside it.
    let o = smpsched(&["list", "--dir", "exp/tiny"], &dir);
    assert!(!String::from_utf8(o.stdout)
        .unwrap()
        .contains("Reproductions"));
    let o = smpsched(
        &[
            "reproduce",
            "tiny",
            "--experiments",
            "exp/tiny",
            "--reports",
            "rep",
        ],
        &dir,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("exp/tiny is the paper's own folder") && err.contains("--experiments exp"),
        "{err}"
    );
    // An --out folder holding the user's own files is not called a results folder.
    std::fs::create_dir_all(dir.join("mine")).unwrap();
    std::fs::write(dir.join("mine/notes.txt"), "mine").unwrap();
    let o = smpsched(&["run", "exp/tiny/t.toml", "--out", "mine"], &dir);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("files smpsched did not write"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.join("mine/notes.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn an_application_still_running_at_the_end_has_no_completion_or_response() {
    // `until` ends the run when `short` is done; `long` has run a tenth of its work.
    let dir = tempdir("until-unfinished");
    let text = "name = \"u\"\nuntil = \"short\"\n[machine]\npreset = \"tango-12\"\n\
                processors = 2\n[machine.memory]\nenabled = false\n[scheduler]\n\
                policy = \"round-robin\"\n[[workload]]\nkind = \"synthetic\"\nname = \"short\"\n\
                threads = 1\nbursts = 1\ncompute = { dist = \"fixed\", value = 100000 }\n\
                [[workload]]\nkind = \"synthetic\"\nname = \"long\"\nthreads = 1\nbursts = 1\n\
                compute = { dist = \"fixed\", value = 1000000 }\n";
    std::fs::write(dir.join("u.toml"), text).unwrap();
    let o = smpsched(&["run", "u.toml", "--out", "r"], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("r/results.json")).unwrap()).unwrap();
    let apps = &json["runs"][0]["apps"];
    assert_eq!(apps[0]["name"], "short");
    assert!(apps[0].get("unfinished").is_none(), "{apps}");
    assert_eq!(apps[1]["unfinished"], true, "{apps}");
    // Its completion and response cells are empty, not 0; the finished one's are filled.
    let (header, rows) = read_csv_strict(&dir.join("r/results.csv"));
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let long = rows.iter().find(|r| &r[col("app")] == "long").unwrap();
    let short = rows.iter().find(|r| &r[col("app")] == "short").unwrap();
    for c in ["completion_cycles", "mean_response", "p95_response"] {
        assert_eq!(&long[col(c)], "", "{c}");
        assert!(short[col(c)].parse::<f64>().is_ok_and(|x| x > 0.0), "{c}");
    }
}

#[test]
fn gang_slices_an_applications_threads_that_share_a_processor() {
    // Two threads of one application on one processor, busy-waiting at barriers: the one that
    // waits must give the processor up at a slice's end, or it spins for ever (a livelock
    // stop, exit 2, until the metamorphic probe found it).
    let dir = tempdir("gang-shared");
    let text = "name = \"par\"\n[machine]\npreset = \"tango-12\"\nprocessors = 1\n\
                [scheduler]\npolicy = \"gang\"\n[[workload]]\nkind = \"parallel\"\n\
                name = \"par\"\nthreads = 2\nphases = 2\nphase_cycles = 10000\n";
    std::fs::write(dir.join("par.toml"), text).unwrap();
    let o = smpsched(&["run", "par.toml", "--out", "r", "--quiet"], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("r/results.json")).unwrap()).unwrap();
    assert!(json["runs"][0]["apps"][0].get("unfinished").is_none());
}

#[test]
fn reproduce_writes_a_report_and_keeps_each_run() {
    let dir = repro_dir("repro", REPRO);
    let o = reproduce(&dir, &["--strict"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains("1 of 1 claim holds"), "{out}");
    let md = std::fs::read_to_string(dir.join("rep/tiny.md")).unwrap();
    assert!(md.contains("| handoff |") && md.contains("413"), "{md}");
    // The latest report draws its plot from the run folder, which holds the whole run.
    let plot = md
        .split(['(', ')'])
        .find(|p| p.starts_with("runs/tiny-") && p.ends_with("/tiny/t.svg"))
        .unwrap_or_else(|| panic!("no plot link into runs/: {md}"));
    assert!(dir.join("rep").join(plot).exists(), "{plot}");
    let run = dir
        .join("rep")
        .join(plot)
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    assert!(run.join("tiny.md").exists() && run.join("tiny.json").exists());
    common::check_files_well_formed(&dir.join("rep"));
    assert!(std::fs::read_to_string(dir.join("rep/index.md"))
        .unwrap()
        .contains("tiny"));
    // A run with another seed is kept beside the first, not over it.
    std::fs::write(
        dir.join("exp/tiny/t.toml"),
        REPRO.replace("seed = 1", "seed = 2"),
    )
    .unwrap();
    assert!(reproduce(&dir, &[]).status.success());
    let runs = std::fs::read_dir(dir.join("rep/runs")).unwrap().count();
    assert_eq!(runs, 2);
}

/// The tiny reproduction with exponential bursts, so that the seed shows in the values.
fn random_repro() -> String {
    const RANDOM: &str = "[[workload]]
kind = \"synthetic\"
threads = 3
bursts = 20
compute = { dist = \"exponential\", mean = 40000 }
";
    REPRO.replacen("[[point]]", &format!("{RANDOM}\n[[point]]"), 1)
}

#[test]
fn reproduce_at_another_seed_is_the_file_at_that_seed_kept_apart() {
    let text = random_repro();
    let dir = repro_dir("repro-seed", &text);
    assert!(reproduce(&dir, &[]).status.success());
    let own = std::fs::read_to_string(dir.join("rep/tiny.md")).unwrap();
    let o = reproduce(&dir, &["--seed", "2"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // Beside the paper's own report, not over it, and saying how it was made.
    assert_eq!(
        std::fs::read_to_string(dir.join("rep/tiny.md")).unwrap(),
        own
    );
    let seeded = std::fs::read_to_string(dir.join("rep/tiny-seed-2.md")).unwrap();
    assert!(
        seeded.contains("`smpsched reproduce tiny --seed 2`"),
        "{seeded}"
    );
    assert!(std::fs::read_to_string(dir.join("rep/index.md"))
        .unwrap()
        .contains("tiny-seed-2"));
    // The same as the file with `seed = 2`, value for value.
    let json = |p: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(p)).unwrap()).unwrap()
    };
    let points = |v: &serde_json::Value| v["files"][0]["points"].clone();
    let seeded = json("rep/tiny-seed-2.json");
    assert_ne!(points(&seeded), points(&json("rep/tiny.json")));
    std::fs::write(
        dir.join("exp/tiny/t.toml"),
        text.replace("seed = 1", "seed = 2"),
    )
    .unwrap();
    assert!(reproduce(&dir, &[]).status.success());
    assert_eq!(points(&seeded), points(&json("rep/tiny.json")));
    // A seed that is not a number is refused.
    let o = reproduce(&dir, &["--seed", "two"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn reproduce_at_several_seeds_puts_them_side_by_side() {
    let text = random_repro();
    let dir = repro_dir("repro-seeds", &text);
    let o = reproduce(&dir, &["--seeds", "1-3"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains("tiny: over 3 seeds, of 1 claim 1 holds at every seed"),
        "{out}"
    );
    assert!(
        out.contains("tiny at seed 2 (2 of 3): 1 of 1 claim holds"),
        "{out}"
    );
    let json = |p: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(p)).unwrap()).unwrap()
    };
    // Each seed's own report, as `--seed N` writes it, and the report across them.
    let across = json("rep/tiny-seeds-1-3.json");
    assert_eq!(across["seeds"], serde_json::json!([1, 2, 3]));
    for (k, seed) in [1, 2, 3].iter().enumerate() {
        let own = json(&format!("rep/tiny-seed-{seed}.json"));
        let verdict = own["files"][0]["claims"][0]["verdict"]["verdict"].clone();
        assert_eq!(across["claims"][0]["marks"][k], verdict, "seed {seed}");
        assert_eq!(
            across["reports"][k],
            serde_json::json!(format!("tiny-seed-{seed}.md"))
        );
    }
    let md = std::fs::read_to_string(dir.join("rep/tiny-seeds-1-3.md")).unwrap();
    assert!(md.contains("`smpsched reproduce tiny --seeds 1-3`"), "{md}");
    assert!(md.contains("[tiny-seed-2.md](tiny-seed-2.md)"), "{md}");
    common::check_files_well_formed(&dir.join("rep"));
    // A seed's report is the one `--seed N` writes, byte for byte.
    let seed2 = std::fs::read_to_string(dir.join("rep/tiny-seed-2.json")).unwrap();
    assert!(reproduce(&dir, &["--seed", "2"]).status.success());
    assert_eq!(
        std::fs::read_to_string(dir.join("rep/tiny-seed-2.json")).unwrap(),
        seed2
    );
    // Seeds the command cannot take exit with 2 and say why.
    for (bad, says) in [
        (vec!["--seeds", "3-1"], "backwards"),
        (vec!["--seeds", "5"], "at least two"),
        (vec!["--seeds", "1-3", "--seed", "2"], "cannot be used with"),
    ] {
        let o = reproduce(&dir, &bad);
        assert_eq!(o.status.code(), Some(2), "{bad:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(says), "{bad:?}: {err}");
    }
    // With --strict, a claim failing at any seed fails the command.
    let failing = text.replace(
        "us_per_op(handoff) < us_per_op(mild)",
        "us_per_op(handoff) > us_per_op(mild)",
    );
    std::fs::write(dir.join("exp/tiny/t.toml"), failing).unwrap();
    let o = reproduce(&dir, &["--seeds", "1,4", "--strict"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(dir.join("rep/tiny-seeds-1,4.md").exists());
}

#[test]
fn a_failing_claim_is_reported_and_fails_strict_mode() {
    let text = REPRO.replace(
        "us_per_op(handoff) < us_per_op(mild)",
        "us_per_op(handoff) > us_per_op(mild)",
    );
    let dir = repro_dir("fail", &text);
    let o = reproduce(&dir, &[]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("fails"));
    let o = reproduce(&dir, &["--strict"]);
    assert_eq!(o.status.code(), Some(1));
    let known = text.replace(
        "us_per_op(handoff) > us_per_op(mild)\"",
        "us_per_op(handoff) > us_per_op(mild)\"\nknown_difference = \"on purpose\"",
    );
    std::fs::write(dir.join("exp/tiny/t.toml"), known).unwrap();
    let o = reproduce(&dir, &["--strict"]);
    assert!(
        o.status.success(),
        "a known difference does not fail --strict"
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains("known difference"));
}

#[test]
fn bad_reproduction_files_name_line_and_field() {
    for (from, to, want) in [
        (
            "us_per_op(handoff) <",
            "us_per_op(handof) <",
            "t.toml:37: field `reproduce.claim.0.claim`",
        ),
        (
            "tolerance = \"50%\"",
            "tolerance = \"50\"",
            "t.toml:29: field `reproduce.tolerance`",
        ),
        (
            "us_per_op(handoff) <",
            "us_per_op(handoff <",
            "t.toml:37: field `reproduce.claim.0.claim`",
        ),
        (
            "point = \"handoff\"",
            "point = \"nowhere\"",
            "t.toml:33: field `reproduce.expect.0.point`",
        ),
    ] {
        let dir = repro_dir("badrepro", &REPRO.replace(from, to));
        let o = reproduce(&dir, &[]);
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains(want), "want {want} in: {err}");
    }
}

#[test]
fn an_incompatible_dibella_pair_is_bad_input_naming_both_and_the_compatible_clients() {
    let dir = tempdir("dibella-pair");
    let exp = |client: &str| {
        format!(
            "name = \"pair\"\n[machine]\npreset = \"sequent-symmetry\"\n[scheduler]\n\
             policy = \"batch\"\n[[workload]]\nkind = \"dibella\"\nscheduler = \"global\"\n\
             client = \"{client}\"\nschedulers = 2\nclients = 3\nrequests = 40\n\
             load = \"synchronous\"\n"
        )
    };
    std::fs::write(dir.join("bad.toml"), exp("random")).unwrap();
    let o = smpsched(&["run", "bad.toml", "--quiet"], &dir);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.toml"), "{err}");
    assert!(
        err.contains("`global`") && err.contains("`random`"),
        "names both policies: {err}"
    );
    assert!(
        err.contains("compatible client policies: global"),
        "lists the compatible ones: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // The compatible pair runs, byte-identically from one run to the next.
    std::fs::write(dir.join("good.toml"), exp("global")).unwrap();
    let o = smpsched(&["run", "good.toml", "--quiet", "--out", "o"], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = smpsched(
        &["run", "good.toml", "--quiet", "--out", "p", "--jobs", "1"],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let read = |d: &str| std::fs::read(dir.join(d).join("results.json")).unwrap();
    assert_eq!(read("o"), read("p"), "a dibella run is not deterministic");
}
