//! Runs every experiment under `experiments/memory/` and checks what each is meant to show:
//! conservation always, miss stall wherever the memory model is on, and the file's own claim
//! (working set in or out of the cache, sharing invalidations, reload stall after rescheduling).

use std::path::{Path, PathBuf};

use smpsched_lab::{run_experiment, Experiment, RunOptions, RunRecord};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments/memory")
}

fn run(name: &str) -> Vec<RunRecord> {
    let exp = Experiment::load(&dir().join(name)).unwrap();
    let records = run_experiment(
        &exp,
        &RunOptions {
            jobs: 1,
            ..RunOptions::default()
        },
    )
    .unwrap();
    assert!(!records.is_empty(), "{name} ran nothing");
    for r in &records {
        r.report.check_conservation().unwrap();
        assert!(r.report.total.stall > 0, "{name} {}: no stall", r.point);
        assert!(
            r.report.memory.refs > 0,
            "{name} {}: no references",
            r.point
        );
    }
    records
}

#[test]
fn every_memory_experiment_loads_and_conserves_time() {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".toml"))
        .collect();
    names.sort();
    assert!(names.len() >= 3, "{names:?}");
    for n in &names {
        run(n);
    }
}

#[test]
fn cache_fit_misses_once_when_it_fits_and_always_when_not() {
    let r = run("cache-fit.toml");
    let (fit, big) = (&r[0].report.apps[0], &r[1].report.apps[0]);
    assert_eq!(fit.misses, 2048 / 16);
    assert_eq!(big.misses, 8 * 8192 / 16);
}

#[test]
fn sharing_invalidates_only_when_shared() {
    let r = run("sharing.toml");
    let (private, shared) = (&r[0].report.apps[0], &r[1].report.apps[0]);
    assert_eq!(private.invalidations, 0);
    assert_eq!(private.misses, 4 * 1024 / 16);
    assert!(shared.invalidations > 0);
    assert!(shared.misses > 2 * private.misses);
}

#[test]
fn affinity_short_quanta_reload_more() {
    let r = run("affinity.toml");
    let (short, long) = (&r[0].report.apps[0], &r[1].report.apps[0]);
    assert!(
        short.misses > long.misses,
        "{} vs {}",
        short.misses,
        long.misses
    );
    assert!(short.stall > long.stall);
}
