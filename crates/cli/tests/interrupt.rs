//! Interruptions: `run --out DIR --force` and `reproduce` into folders that already hold
//! results, killed at random moments with SIGINT (as Ctrl-C sends) and SIGKILL, 25 times each
//! per command (50 of each in all). After every kill the old results or the new ones are there,
//! whole: each results folder holds the files of one run, each well formed. A replacement
//! killed between its two renames leaves the old folder aside, whole, and the next run puts it
//! back. After a last, uninterrupted run, nothing hidden is left.

mod common;

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{check_files_well_formed, command, read_csv_strict, smpsched, tempdir};

/// An experiment of about a thousand short runs (a results.json of a few MB), seed `seed`.
fn experiment(seed: u64) -> String {
    format!(
        r#"name = "interrupt"
seed = {seed}
repetitions = 150

[machine]
preset = "tango-12"
processors = 2

[scheduler]
policy = "round-robin"

[[workload]]
kind = "synthetic"
name = "A"
threads = 4
bursts = 2
compute = {{ dist = "exponential", mean = 100000 }}
block = {{ dist = "uniform", min = 1000, max = 90000 }}

[sweep]
"scheduler.policy" = ["batch", "round-robin", "priority"]
"machine.processors" = [1, 2]
"#
    )
}

/// A deterministic generator of kill times (no clock-seeded randomness): fractions of `whole`
/// from 0 to 1.2.
fn kill_times(whole: Duration, n: usize) -> Vec<Duration> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            whole.mul_f64((x % 1000) as f64 / 1000.0 * 1.2)
        })
        .collect()
}

/// Starts `args` in `cwd`, kills it after `at` (SIGKILL when `hard`, else SIGINT), waits.
fn kill_after(args: &[&str], cwd: &Path, at: Duration, hard: bool) {
    let mut child = command(args, cwd, None)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(at);
    if hard {
        let _ = child.kill();
    } else {
        let _ = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status();
    }
    let _ = child.wait();
}

/// The hidden entries of `dir`.
fn hidden(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with('.'))
        .collect()
}

/// A results folder is one run's, whole: its files well formed, the JSON's seed that of every
/// CSV row.
fn check_results_folder(dir: &Path) {
    assert_eq!(check_files_well_formed(dir), 3, "{}", dir.display());
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("results.json")).unwrap()).unwrap();
    let seed = json["seed"].as_u64().unwrap();
    let (_, rows) = read_csv_strict(&dir.join("results.csv"));
    let first: Vec<_> = rows.iter().filter(|r| &r[1] == "0").collect();
    assert!(!first.is_empty());
    assert!(
        first.iter().all(|r| r[2] == seed.to_string()),
        "{}: mixed seeds",
        dir.display()
    );
}

#[test]
fn killing_run_out_force_at_random_moments_leaves_old_or_new_results_whole() {
    let dir = tempdir("interrupt-run");
    std::fs::write(dir.join("exp.toml"), experiment(1)).unwrap();
    let start = Instant::now();
    let o = smpsched(&["run", "exp.toml", "--quiet", "--out", "r"], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let whole = start.elapsed();
    for (i, at) in kill_times(whole, 50).into_iter().enumerate() {
        let seed = (2 + i % 3).to_string();
        kill_after(
            &[
                "run", "exp.toml", "--quiet", "--out", "r", "--force", "--seed", &seed,
            ],
            &dir,
            at,
            i % 2 == 0,
        );
        if dir.join("r").exists() {
            check_results_folder(&dir.join("r"));
        } else {
            // Killed between the two renames: the old results wait aside, whole.
            let aside: Vec<String> = hidden(&dir)
                .into_iter()
                .filter(|n| n.starts_with(".replaced-") && n.ends_with(".r"))
                .collect();
            assert_eq!(
                aside.len(),
                1,
                "kill {i}: r is gone and not aside: {aside:?}"
            );
            check_results_folder(&dir.join(&aside[0]));
        }
    }
    let o = smpsched(
        &["run", "exp.toml", "--quiet", "--out", "r", "--force"],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    check_results_folder(&dir.join("r"));
    assert!(hidden(&dir).is_empty(), "{:?}", hidden(&dir));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn killing_reproduce_at_random_moments_leaves_old_or_new_reports_whole() {
    let dir = tempdir("interrupt-reproduce");
    std::fs::create_dir_all(dir.join("exps/paper")).unwrap();
    let file = |seed: u64| {
        experiment(seed).replace("repetitions = 150", "repetitions = 60")
            + "\n[reproduce]\npaper = \"paper\"\ntitle = \"Interrupted\"\n\
               metric = \"elapsed_ms\"\n"
    };
    let reproduce = [
        "reproduce",
        "paper",
        "--experiments",
        "exps",
        "--reports",
        "reps",
    ];
    // The two reports the kills alternate between, each from a whole run.
    let mut versions = Vec::new();
    let mut whole = Duration::ZERO;
    for seed in [1, 2] {
        std::fs::write(dir.join("exps/paper/p.toml"), file(seed)).unwrap();
        let start = Instant::now();
        let o = smpsched(&reproduce, &dir);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        whole = whole.max(start.elapsed());
        versions.push(std::fs::read(dir.join("reps/paper.md")).unwrap());
    }
    assert_ne!(versions[0], versions[1]);
    let runs = |dir: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir.join("reps/runs"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| !n.starts_with('.'))
            .collect();
        v.sort();
        v
    };
    // Content-addressed: the two runs' folders, and no others, ever.
    let known = runs(&dir);
    assert_eq!(known.len(), 2, "{known:?}");
    for (i, at) in kill_times(whole, 50).into_iter().enumerate() {
        std::fs::write(dir.join("exps/paper/p.toml"), file(1 + (i as u64 % 2))).unwrap();
        kill_after(&reproduce, &dir, at, i % 2 == 1);
        let latest = std::fs::read(dir.join("reps/paper.md")).unwrap();
        assert!(
            versions.contains(&latest),
            "kill {i}: reps/paper.md is neither report"
        );
        assert_eq!(runs(&dir), known, "kill {i}");
        for name in &known {
            let run = dir.join("reps/runs").join(name);
            let md = std::fs::read_to_string(run.join("paper.md")).unwrap();
            assert!(
                md.ends_with('\n') && md.contains("Interrupted"),
                "kill {i}: {name}"
            );
            let json = std::fs::read(run.join("paper.json")).unwrap();
            assert!(serde_json::from_slice::<serde_json::Value>(&json).is_ok());
        }
    }
    let o = smpsched(&reproduce, &dir);
    assert!(o.status.success());
    assert!(hidden(&dir.join("reps/runs")).is_empty());
    assert!(
        hidden(&dir.join("reps")).is_empty(),
        "{:?}",
        hidden(&dir.join("reps"))
    );
    let _ = std::fs::remove_dir_all(&dir);
}
