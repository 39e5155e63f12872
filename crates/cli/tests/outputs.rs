//! The files of one run agree with each other where they carry the same thing: `jobs.csv`'s
//! jobs are `threads.csv`'s threads by rank, and `results.json` gives no value where
//! `results.csv` leaves a cell empty (found by a consistency probe, 2026-11-29).

use std::path::Path;

mod common;

use common::{read_csv_strict, smpsched, tempdir};

/// The rt-app example whose `duration` kills some threads (its sweep of six policies), run
/// with every per-job and per-thread file.
fn run_mixed(dir: &Path) {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/rt-app");
    for f in ["mixed.toml", "mixed.json"] {
        std::fs::copy(example.join(f), dir.join(f)).unwrap();
    }
    let o = smpsched(
        &[
            "run",
            "mixed.toml",
            "--out",
            "r",
            "--per-job",
            "--per-thread",
        ],
        dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn a_job_is_its_thread_by_rank_when_some_threads_never_exit() {
    let dir = tempdir("jobs-ranks");
    run_mixed(&dir);
    let (jh, jobs) = read_csv_strict(&dir.join("r/jobs.csv"));
    let (th, threads) = read_csv_strict(&dir.join("r/threads.csv"));
    let jc = |n: &str| jh.iter().position(|h| h == n).unwrap();
    let tc = |n: &str| th.iter().position(|h| h == n).unwrap();
    // Some threads were killed by the file's duration: fewer jobs exited than threads ran.
    assert!(
        jobs.len() < threads.len(),
        "{} {}",
        jobs.len(),
        threads.len()
    );
    let same = |a: &csv::StringRecord, ca: &dyn Fn(&str) -> usize, b: &csv::StringRecord| {
        ["point", "repetition", "app"]
            .iter()
            .all(|&k| a[ca(k)] == b[tc(k)])
    };
    let points: std::collections::BTreeSet<&str> = jobs.iter().map(|j| &j[jc("point")]).collect();
    assert_eq!(points.len(), 6, "{points:?}");
    for point in points {
        let mut ranks = Vec::new();
        for j in jobs.iter().filter(|j| &j[jc("point")] == point) {
            let rank = &j[jc("job")];
            let t = threads
                .iter()
                .find(|t| &t[tc("thread")] == rank && same(j, &jc, t))
                .unwrap_or_else(|| panic!("{point}: no thread {rank} in threads.csv"));
            // The job's processor time is its thread's runtime.
            assert_eq!(
                &j[jc("held")],
                &t[tc("runtime_cycles")],
                "{point}: job {rank}"
            );
            ranks.push(rank.parse::<u32>().unwrap());
        }
        // Each rank once, in creation order, and some rank skipped (a killed thread's).
        assert!(ranks.windows(2).all(|w| w[0] < w[1]), "{point}: {ranks:?}");
        assert!(
            ranks.last().copied().unwrap() as usize >= ranks.len(),
            "{point}: {ranks:?}"
        );
    }
}

#[test]
fn no_exited_job_gives_no_response_in_the_json_either() {
    let dir = tempdir("jobs-null");
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/rt-app");
    for f in ["periodic.toml", "periodic.json"] {
        std::fs::copy(example.join(f), dir.join(f)).unwrap();
    }
    let o = smpsched(&["run", "periodic.toml", "--out", "r"], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("r/results.json")).unwrap()).unwrap();
    // Every thread runs until the file's duration kills it: no job exited, at any point.
    for run in json["runs"].as_array().unwrap() {
        let jobs = &run["apps"][0]["jobs"];
        assert_eq!(jobs["jobs"], 0, "{jobs}");
        for k in [
            "mean_response",
            "p50_response",
            "p95_response",
            "p99_response",
            "max_response",
            "mean_wait",
            "mean_slowdown",
        ] {
            assert!(jobs[k].is_null(), "{k}: {jobs}");
        }
    }
    let (header, rows) = read_csv_strict(&dir.join("r/results.csv"));
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    for app in rows.iter().filter(|r| &r[col("app")] != "*") {
        assert_eq!(&app[col("mean_response")], "");
    }
}

/// The printed table gives the elapsed time's spread over the repetitions beside its mean, and
/// says so when the repetitions ran identically (nothing drew on the seed), which a table of
/// means alone hid (found by a new-user probe, 2026-11-29).
#[test]
fn the_table_shows_the_repetitions_spread_and_says_when_there_is_none() {
    let dir = tempdir("spread");
    std::fs::write(dir.join("random.toml"), common::SWEEP_EXP).unwrap();
    let pingpong = "name = \"fixed\"\nrepetitions = 2\n[machine]\npreset = \"multimax\"\n\
                    processors = 1\n[scheduler]\npolicy = \"round-robin\"\n[[workload]]\n\
                    kind = \"parallel\"\nthreads = 2\nphases = 3\nphase_cycles = 1000\n";
    std::fs::write(dir.join("fixed.toml"), pingpong).unwrap();
    let table = |file: &str| {
        let out = format!("{file}.out");
        let o = smpsched(&["run", file, "--out", &out], &dir);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let random = table("random.toml");
    assert!(random.contains("± sd %"), "{random}");
    assert!(!random.contains("ran alike"), "{random}");
    let fixed = table("fixed.toml");
    assert!(fixed.contains("± sd %"), "{fixed}");
    assert!(
        fixed.contains("every point's repetitions ran alike"),
        "{fixed}"
    );
}
