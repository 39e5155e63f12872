//! Results are never lost, a run never hangs or panics, and every output is well formed: the
//! defects a new user found with bad or hostile input, each as a test of the binary.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::smpsched_with_memory;
use common::{check_files_well_formed, command, read_csv_strict, smpsched, tempdir};

const EXP: &str = r#"
name = "safety"
seed = 5

[machine]
preset = "tango-12"
processors = 4

[scheduler]
policy = "round-robin"

[[workload]]
kind = "synthetic"
name = "A"
threads = 6
bursts = 10
compute = { dist = "exponential", mean = 100000 }
block = { dist = "uniform", min = 1000, max = 90000 }
"#;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).to_string()
}

/// The run folders under `results/NAME` (not `latest`, not hidden).
fn run_folders(parent: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(parent)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| !n.starts_with('.') && n != "latest")
        .collect();
    v.sort();
    v
}

#[test]
fn each_run_gets_a_fresh_folder_and_earlier_results_are_kept() {
    let dir = tempdir("fresh");
    std::fs::write(dir.join("exp.toml"), EXP).unwrap();
    for args in [
        &["run", "exp.toml", "--quiet"][..],
        &["run", "exp.toml", "--quiet", "--seed", "9"],
    ] {
        let o = smpsched(args, &dir);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let parent = dir.join("results/safety");
    let folders = run_folders(&parent);
    assert_eq!(folders.len(), 2, "{folders:?}");
    assert!(folders[0].starts_with("seed5-") && folders[1].starts_with("seed9-"));
    // `latest` names the newest run; the same seed again lands in the same folder.
    let latest = std::fs::read_link(parent.join("latest")).unwrap();
    assert_eq!(latest.to_string_lossy(), folders[1]);
    let o = smpsched(&["run", "exp.toml", "--quiet"], &dir);
    assert!(o.status.success());
    assert_eq!(run_folders(&parent), folders);
    assert_eq!(
        std::fs::read_link(parent.join("latest"))
            .unwrap()
            .to_string_lossy(),
        folders[0]
    );
    assert_eq!(check_files_well_formed(&dir.join("results")), 6);
    // A file of its own added there stays; an edit sets the old folder aside, told, not lost.
    let first = parent.join(&folders[0]);
    std::fs::write(first.join("mine.txt"), "mine").unwrap();
    let o = smpsched(&["run", "exp.toml", "--quiet"], &dir);
    assert!(o.status.success() && first.join("mine.txt").exists());
    let csv = first.join("results.csv");
    let edited = std::fs::read_to_string(&csv).unwrap() + "an edit\n";
    std::fs::write(&csv, &edited).unwrap();
    let o = smpsched(&["run", "exp.toml", "--quiet"], &dir);
    assert!(o.status.success(), "{}", stderr(&o));
    let kept = parent.join(format!("{}.kept-1", folders[0]));
    let told = format!("is kept in results/safety/{}.kept-1", folders[0]);
    assert!(stderr(&o).contains(&told), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(kept.join("results.csv")).unwrap(),
        edited
    );
    assert!(kept.join("mine.txt").exists() && !first.join("mine.txt").exists());
    assert_ne!(std::fs::read_to_string(&csv).unwrap(), edited);
}

#[test]
fn an_out_folder_holding_results_is_refused_unless_forced() {
    let dir = tempdir("force");
    std::fs::write(dir.join("exp.toml"), EXP).unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["run", "exp.toml", "--quiet", "--out", "r"];
        args.extend_from_slice(extra);
        smpsched(&args, &dir)
    };
    assert!(run(&[]).status.success());
    let before = std::fs::read(dir.join("r/results.csv")).unwrap();
    let o = run(&["--seed", "7"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("r: field `--out`") && stderr(&o).contains("--force"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(dir.join("r/results.csv")).unwrap(), before);
    let o = run(&["--seed", "7", "--force"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_ne!(std::fs::read(dir.join("r/results.csv")).unwrap(), before);
    // Nothing is left beside it.
    let hidden: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
}

#[test]
fn every_csv_row_has_the_headers_width() {
    let dir = tempdir("csv");
    // Two applications, one with a comma in its name, a sweep: machine and app rows.
    let text = format!(
        "{EXP}\n[[workload]]\nkind = \"synthetic\"\nname = \"B, quoted \\\"too\\\"\"\nthreads = 2\n\
         bursts = 2\ncompute = {{ dist = \"fixed\", value = 1000 }}\n\n[sweep]\n\
         \"scheduler.policy\" = [\"batch\", \"priority\"]\n"
    );
    std::fs::write(dir.join("exp.toml"), text).unwrap();
    let o = smpsched(&["run", "exp.toml", "--quiet", "--out", "r"], &dir);
    assert!(o.status.success(), "{}", stderr(&o));
    let (header, rows) = read_csv_strict(&dir.join("r/results.csv"));
    assert_eq!(rows.len(), 2 * 3, "two points x (machine row + two apps)");
    let app = header.iter().position(|h| h == "app").unwrap();
    assert!(rows.iter().any(|r| &r[app] == "B, quoted \"too\""));
    assert!(rows.iter().any(|r| &r[app] == "*"));
}

#[test]
fn times_that_would_overflow_stop_the_run_instead_of_panicking() {
    let dir = tempdir("overflow");
    let text = EXP.replace("bursts = 10", "bursts = 20000000").replace(
        "block = { dist = \"uniform\", min = 1000, max = 90000 }",
        "block = { dist = \"fixed\", value = 1099511627776 }",
    );
    std::fs::write(dir.join("exp.toml"), text).unwrap();
    let o = smpsched(&["run", "exp.toml", "--quiet", "--out", "r"], &dir);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains("field `time_limit_cycles`"), "{err}");
    // The stopped run is in the results, marked.
    let (header, rows) = read_csv_strict(&dir.join("r/results.csv"));
    let stopped = header.iter().position(|h| h == "stopped").unwrap();
    assert!(
        rows.iter().all(|r| r[stopped].contains("time limit")),
        "{rows:?}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("r/results.json")).unwrap()).unwrap();
    assert_eq!(json["runs"][0]["stopped"]["field"], "time_limit_cycles");
}

#[test]
fn a_run_that_would_never_end_stops_at_its_event_limit() {
    let dir = tempdir("hang");
    // A billion bursts of 10 cycles each would take far longer than anyone waits. (Busy-waiting
    // pingpong threads under batch scheduling were the example until their wait became a spin
    // on a semaphore, which the engine finds to be a livelock at once.)
    let text = "name = \"busy\"\nevent_limit = 200000\n[machine]\npreset = \"tango-12\"\n\
                processors = 1\n[scheduler]\npolicy = \"batch\"\n[[workload]]\n\
                kind = \"synthetic\"\nthreads = 2\nbursts = 1000000000\n\
                compute = { dist = \"fixed\", value = 10 }\n\
                block = { dist = \"fixed\", value = 10 }\n";
    std::fs::write(dir.join("exp.toml"), text).unwrap();
    let start = Instant::now();
    let o = smpsched(&["run", "exp.toml", "--quiet"], &dir);
    assert!(start.elapsed() < Duration::from_secs(60));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        // The line the file writes the bound on.
        err.contains("exp.toml:2: field `event_limit`") && err.contains("raise"),
        "{err}"
    );
    assert_eq!(check_files_well_formed(&dir.join("results")), 3);
}

#[test]
fn runs_stopped_at_different_bounds_are_counted_by_bound() {
    let dir = tempdir("bounds");
    // Point `a` reaches the file's event limit; point `b` its own, earlier, time limit.
    let text = "name = \"bounds\"\nseed = 1\nevent_limit = 1000\n[machine]\n\
                preset = \"tango-12\"\n[scheduler]\npolicy = \"round-robin\"\n\
                [[workload]]\nkind = \"synthetic\"\nthreads = 20\nbursts = 200\n\
                compute = { dist = \"fixed\", value = 20000 }\n[[point]]\nname = \"a\"\n\
                [[point]]\nname = \"b\"\nset = { time_limit_cycles = 50000 }\n";
    std::fs::write(dir.join("exp.toml"), text).unwrap();
    let o = smpsched(&["run", "exp.toml", "--quiet", "--out", "r"], &dir);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("exp.toml:3: field `event_limit`: 2 of 2 run(s) did not finish")
            && err.contains("(1 at `event_limit`, 1 at `time_limit_cycles`)")
            && err.contains("point `a`"),
        "{err}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("r/results.json")).unwrap()).unwrap();
    assert_eq!(json["runs"][1]["stopped"]["field"], "time_limit_cycles");
}

#[test]
fn a_zero_quantum_is_refused_like_a_zero_slice() {
    let dir = tempdir("quantum");
    for policy in ["round-robin", "priority"] {
        let text = EXP.replace(
            "policy = \"round-robin\"",
            &format!("policy = \"{policy}\"\nquantum = 0"),
        );
        std::fs::write(dir.join("exp.toml"), text).unwrap();
        let o = smpsched(&["run", "exp.toml", "--quiet"], &dir);
        assert_eq!(o.status.code(), Some(2), "{policy}");
        assert!(
            stderr(&o).contains("field `scheduler.quantum`"),
            "{}",
            stderr(&o)
        );
    }
}

#[test]
fn memory_regions_are_counted_before_anything_runs() {
    let dir = tempdir("regions");
    // 64 threads sweeping a private GiB each on 64 processors: tens of GiB of directory state.
    let text = "name = \"regions\"\n[machine]\npreset = \"tango-12\"\nprocessors = 64\n\
                [scheduler]\npolicy = \"round-robin\"\n[[workload]]\nkind = \"sweep\"\n\
                threads = 64\nbytes = 1073741824\npasses = 2\n";
    std::fs::write(dir.join("exp.toml"), text).unwrap();
    let start = Instant::now();
    let o = smpsched_with_memory(&["run", "exp.toml", "--quiet"], &dir, Some("16G"));
    assert!(start.elapsed() < Duration::from_secs(20));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("field `workload.0`") && err.contains("memory model"),
        "{err}"
    );
    assert!(!dir
        .join("results/regions")
        .read_dir()
        .is_ok_and(|mut d| d.next().is_some()));
}

#[test]
fn unusable_outputs_are_refused_before_running() {
    let dir = tempdir("paths");
    // A run long enough that a check after the work would be noticed.
    std::fs::write(dir.join("exp.toml"), EXP).unwrap();
    std::fs::write(dir.join("a-file"), "x").unwrap();
    for out in ["/proc/smpsched-x", "a-file", "a-file/sub"] {
        let o = smpsched(&["run", "exp.toml", "--quiet", "--out", out], &dir);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{out}: {err}");
        assert!(
            err.contains(out) && err.contains("cannot write results"),
            "{err}"
        );
    }
    // An experiment name of 300 characters makes a folder name of at most 64.
    let long = EXP.replace(
        "name = \"safety\"",
        &format!("name = \"{}\"", "n".repeat(300)),
    );
    std::fs::write(dir.join("long.toml"), long).unwrap();
    let o = smpsched(&["run", "long.toml", "--quiet"], &dir);
    assert!(o.status.success(), "{}", stderr(&o));
    let folders: Vec<String> = std::fs::read_dir(dir.join("results"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with("nnnn"))
        .collect();
    assert_eq!(folders.len(), 1, "{folders:?}");
    assert!(folders[0].len() <= 64, "{folders:?}");
    assert!(dir
        .join("results")
        .join(&folders[0])
        .join("latest")
        .exists());
    // Unwritable reports: refused before the reproduction runs.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let o = smpsched(
        &[
            "reproduce",
            "black90",
            "--reports",
            "/proc/smpsched-r",
            "--scale",
            "0.1",
        ],
        &root,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("/proc/smpsched-r"), "{}", stderr(&o));
}

#[test]
fn a_paper_is_a_folder_name_under_experiments_and_nothing_else() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let reports = tempdir("escape");
    let r = reports.to_string_lossy().to_string();
    for paper in ["../experiments", "", "black90/../black90", "/etc", "memory"] {
        let o = smpsched(&["reproduce", paper, "--reports", &r], &root);
        assert_eq!(o.status.code(), Some(2), "`{paper}`: {}", stderr(&o));
        assert!(
            stderr(&o).contains("black90"),
            "reproductions listed: {}",
            stderr(&o)
        );
    }
    assert!(!root.join("experiments.md").exists());
    assert_eq!(
        std::fs::read_dir(&reports).unwrap().count(),
        0,
        "nothing written"
    );
}

#[test]
fn outside_the_repository_reproduce_says_where_it_looked() {
    let dir = tempdir("outside");
    let o = smpsched(&["reproduce", "black90"], &dir);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("--experiments") && err.contains("experiments"),
        "{err}"
    );
    let o = smpsched(&["reproduce"], &dir);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn the_recorded_file_does_not_depend_on_the_path_used() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = tempdir("recorded");
    let abs = root
        .join("experiments/quickstart.toml")
        .canonicalize()
        .unwrap();
    let mut jsons = Vec::new();
    for (i, (cwd, file)) in [
        (root.clone(), "experiments/quickstart.toml".to_string()),
        (
            root.join("crates"),
            "../experiments/quickstart.toml".to_string(),
        ),
        (out.clone(), abs.to_string_lossy().to_string()),
    ]
    .into_iter()
    .enumerate()
    {
        let dest = out.join(format!("r{i}"));
        let d = dest.to_string_lossy().to_string();
        let o = smpsched(&["run", &file, "--quiet", "--out", &d], &cwd);
        assert!(o.status.success(), "{}", stderr(&o));
        jsons.push(std::fs::read(dest.join("results.json")).unwrap());
    }
    assert_eq!(jsons[0], jsons[1]);
    assert_eq!(jsons[0], jsons[2]);
    let v: serde_json::Value = serde_json::from_slice(&jsons[0]).unwrap();
    assert_eq!(v["file"], "experiments/quickstart.toml");
}

/// Kills `smpsched run` at 20 random moments while it writes a large result: the results folder
/// never holds a partial file under a final name, nor a folder mixing two runs.
#[test]
fn killing_a_run_at_random_moments_never_leaves_a_mixed_or_partial_result() {
    let dir = tempdir("kill");
    // About 1,200 runs: a results.json of several MB.
    let text = EXP
        .replace("bursts = 10", "bursts = 2")
        .replace("seed = 5", "seed = 5\nrepetitions = 200")
        + "\n[sweep]\n\"scheduler.policy\" = [\"batch\", \"round-robin\", \"priority\"]\n\
           \"machine.processors\" = [1, 2]\n";
    std::fs::write(dir.join("exp.toml"), &text).unwrap();
    // How long a whole run takes here, to spread the kills over it.
    let start = Instant::now();
    let o = smpsched(&["run", "exp.toml", "--quiet", "--seed", "1000"], &dir);
    assert!(o.status.success(), "{}", stderr(&o));
    let whole = start.elapsed();
    let parent = dir.join("results/safety");
    let json_len = std::fs::metadata(parent.join("latest/results.json"))
        .unwrap()
        .len();
    assert!(json_len > 1 << 20, "a large result: {json_len} bytes");
    // A small deterministic generator for the kill times (no clock-seeded randomness).
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for i in 0..20u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let at = whole.mul_f64((x % 1000) as f64 / 1000.0 * 1.2);
        let seed = (1 + i % 3).to_string();
        let mut child = command(&["run", "exp.toml", "--quiet", "--seed", &seed], &dir, None)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(at);
        if i % 2 == 0 {
            let _ = child.kill(); // SIGKILL
        } else {
            // SIGINT, as Ctrl-C sends.
            let _ = std::process::Command::new("kill")
                .args(["-INT", &child.id().to_string()])
                .status();
        }
        let _ = child.wait();
        // Every run folder is whole: its three files, each well formed, of one run (its
        // JSON's seed is the folder's).
        for f in run_folders(&parent) {
            let run = parent.join(&f);
            let mut names: Vec<String> = std::fs::read_dir(&run)
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().to_string())
                .collect();
            names.sort();
            assert_eq!(
                names,
                [
                    ".smpsched-results",
                    "results.csv",
                    "results.json",
                    "time-split.svg"
                ],
                "{f}"
            );
            assert_eq!(check_files_well_formed(&run), 3);
            let json: serde_json::Value =
                serde_json::from_slice(&std::fs::read(run.join("results.json")).unwrap()).unwrap();
            let seed = json["seed"].as_u64().unwrap();
            assert!(
                f.starts_with(&format!("seed{seed}-")),
                "{f} holds seed {seed}"
            );
            let (_, rows) = read_csv_strict(&run.join("results.csv"));
            let first = rows.iter().filter(|r| &r[1] == "0");
            assert!(first.clone().count() > 0);
            assert!(
                first.into_iter().all(|r| r[2] == seed.to_string()),
                "{f}: mixed seeds"
            );
        }
        // `latest`, when present, names a whole run folder.
        if let Ok(target) = std::fs::read_link(parent.join("latest")) {
            assert!(parent.join(target).join("results.json").exists());
        }
    }
    // A later run cleans up what the killed ones left.
    let o = smpsched(&["run", "exp.toml", "--quiet", "--seed", "1000"], &dir);
    assert!(o.status.success());
    let hidden: Vec<String> = std::fs::read_dir(&parent)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
}

#[test]
fn ray_without_the_python_package_is_refused_and_writes_nothing() {
    let dir = tempdir("ray-missing");
    std::fs::write(dir.join("exp.toml"), EXP).unwrap();
    for python in ["/bin/false", "/no/such/python"] {
        let o = command(&["run", "exp.toml", "--out", "out", "--ray"], &dir, None)
            .env("SMPSCHED_PYTHON", python)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let err = stderr(&o);
        assert!(
            err.contains("--ray") && err.contains("SMPSCHED_PYTHON"),
            "{err}"
        );
        assert!(
            !dir.join("out").exists(),
            "a refused run leaves no results folder"
        );
    }
    // --trace records on this machine only: the two are refused together by the parser.
    let o = smpsched(&["run", "exp.toml", "--ray", "--trace", "t"], &dir);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("cannot be used with"), "{}", stderr(&o));
}

/// A point whose runs deadlock no longer loses the whole sweep: every run's results are written,
/// the stuck ones kept with what they measured up to the deadlock and marked in `stopped` (as a
/// run stopped at a bound is), the traces written, and the command exits 2 naming the point
/// (it wrote nothing and left an empty folder; found by a new-user probe, 2026-11-29).
#[test]
fn a_point_that_deadlocks_keeps_every_runs_results() {
    let dir = tempdir("deadlock-kept");
    // The waiter waits on a condition signalled before it waits: it waits for ever.
    std::fs::write(
        dir.join("lost.json"),
        r#"{ "tasks": {
            "waiter": { "loop": 1, "sleep": 1000, "lock": "m",
                        "wait": { "ref": "c", "mutex": "m" }, "unlock": "m" },
            "signaller": { "loop": 1, "signal": "c" } } }"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("ok.json"),
        r#"{ "tasks": { "worker": { "loop": 3, "run": 1000, "sleep": 500 } } }"#,
    )
    .unwrap();
    let exp = "name = \"dl\"\nrepetitions = 2\n[machine]\npreset = \"tango-12\"\n\
               processors = 2\n[scheduler]\npolicy = \"round-robin\"\n[[workload]]\n\
               kind = \"rt-app\"\nfile = \"ok.json\"\n\
               [sweep]\n\"workload.0.file\" = [\"ok.json\", \"lost.json\"]\n";
    std::fs::write(dir.join("dl.toml"), exp).unwrap();
    let o = smpsched(
        &["run", "dl.toml", "--out", "out", "--trace", "tr", "--quiet"],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("2 of 4 run(s) did not finish; point `file=lost.json` (repetition 0), could not go on: deadlock"),
        "{e}"
    );
    check_files_well_formed(&dir.join("out"));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("out/results.json")).unwrap()).unwrap();
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 4, "every run is kept");
    let stuck: Vec<&serde_json::Value> =
        runs.iter().filter(|r| r.get("stopped").is_some()).collect();
    assert_eq!(stuck.len(), 2);
    for r in stuck {
        assert_eq!(r["point"], "file=lost.json");
        assert!(r["stopped"]["stuck"]
            .as_str()
            .unwrap()
            .starts_with("deadlock at cycle"));
        assert!(r["stopped"].get("bound").is_none() && r["stopped"].get("field").is_none());
        assert_eq!(r["stopped"]["at_cycle"], r["elapsed_cycles"]);
    }
    assert!(dir.join("tr/file-lost-json.trace.json").exists());
}
