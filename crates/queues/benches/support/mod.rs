//! Shared by the benchmark executables: criterion's configuration (short warm-up and
//! measurement so that a whole run stays within minutes, overridable by the usual criterion
//! flags), where results go, a summary of ratios read back from criterion's estimates, and the
//! core-to-core handoff every figure is read against.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::Criterion;

/// The machine's core count, read at run time.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// Where criterion writes: `$CRITERION_HOME`, else `$CARGO_TARGET_DIR/criterion`, else
/// `./target/criterion` (so a copied executable works without cargo).
pub fn output_dir() -> PathBuf {
    if let Some(h) = std::env::var_os("CRITERION_HOME") {
        return PathBuf::from(h);
    }
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(t).join("criterion");
    }
    PathBuf::from("target/criterion")
}

/// Criterion with 1 s warm-up and 2 s measurement unless the command line says otherwise.
pub fn criterion() -> Criterion {
    Criterion::default()
        .output_directory(&output_dir())
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
        .configure_from_args()
}

/// The median time per iteration (ns) criterion estimated for `group/id`, if it ran (the
/// median, not the mean: on a shared machine a preempted sample is an outlier, not a signal).
pub fn median_ns(out: &Path, group: &str, id: &str) -> Option<f64> {
    let path = out
        .join(group.replace('/', "_"))
        .join(id.replace('/', "_"))
        .join("new")
        .join("estimates.json");
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["median"]["point_estimate"].as_f64()
}

/// The time of `iters` core-to-core round trips: this thread and a peer take turns advancing
/// one counter with compare-and-swaps, so each trip is two one-way handoffs of its line.
pub fn cas_round_trips(iters: u64) -> Duration {
    let flag = Arc::new(AtomicU64::new(0));
    let f = flag.clone();
    let peer = std::thread::spawn(move || {
        for i in 0..iters {
            while f
                .compare_exchange_weak(2 * i + 1, 2 * i + 2, Ordering::AcqRel, Ordering::Relaxed)
                .is_err()
            {
                std::hint::spin_loop();
            }
        }
    });
    let start = Instant::now();
    for i in 0..iters {
        while flag
            .compare_exchange_weak(2 * i, 2 * i + 1, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            std::hint::spin_loop();
        }
    }
    while flag.load(Ordering::Acquire) != 2 * iters {
        std::hint::spin_loop();
    }
    let t = start.elapsed();
    peer.join().unwrap();
    t
}
