//! `threads.csv`: one row per measured thread (its dispatches, runtime and wake-to-run
//! latency, the measures scx_simulator's users read of each task), for runs asked to
//! measure every thread (`RunOptions::per_thread`, `smpsched run --per-thread`). rt-app
//! applications are measured in every run (their `per_thread` in `results.json`); the flag
//! measures every application's threads and writes them here.

use crate::exec::runner::RunRecord;
use crate::input::error::LabError;
use crate::results::format_table;
use crate::results::jobs::per_app_csv;
use crate::spec::experiment::Experiment;

/// The measure columns of `threads.csv`, after the run's and the point's columns: the
/// application, the thread's rank among its threads in creation order (from 0), its dispatches,
/// the cycles it held a processor, its wake-ups and their wake-to-run latency in microseconds
/// (mean exact; median and 99th percentile within 0.4%, from a histogram).
pub const THREAD_MEASURES: [&str; 9] = [
    "app",
    "thread",
    "dispatches",
    "runtime_cycles",
    "wakeups",
    "wake_lat_mean_us",
    "wake_lat_p50_us",
    "wake_lat_p99_us",
    "stopped",
];

/// The CSV table of every measured thread of `runs`: one row per run, application and thread.
pub fn to_csv(runs: &[RunRecord]) -> Result<String, LabError> {
    per_app_csv("threads.csv", runs, &THREAD_MEASURES, |a| {
        let rows = a.per_thread.iter().map(|t| {
            vec![
                a.name.clone(),
                t.rank.to_string(),
                t.dispatches.to_string(),
                t.runtime_cycles.to_string(),
                t.wakeups.to_string(),
                t.wake_lat_mean_us.to_string(),
                t.wake_lat_p50_us.to_string(),
                t.wake_lat_p99_us.to_string(),
            ]
        });
        rows.collect()
    })
}

/// `(mean, min, max)` of `v` (zeros for none).
fn spread(v: &[f64]) -> (f64, f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (v.iter().sum::<f64>() / v.len() as f64, min, max)
}

/// The terminal's per-thread section (`smpsched run --per-thread`): for each point and measured
/// application, over the threads of all the point's runs, the dispatches and runtime per thread
/// (mean, min-max), the mean wake-to-run latency and the largest thread's 99th percentile.
pub fn terminal_section(exp: &Experiment, runs: &[RunRecord]) -> String {
    let mut rows = vec![[
        "point",
        "app",
        "threads",
        "dispatches (min-max)",
        "runtime ms (min-max)",
        "wake mean us",
        "worst p99 us",
    ]
    .map(String::from)
    .to_vec()];
    let runs_of = crate::metric::runs_of(runs);
    for point in &exp.points {
        let rs: Vec<&RunRecord> = runs_of(&point.label)
            .iter()
            .filter(|r| r.point == point.label)
            .collect();
        let apps = rs.first().map_or(0, |r| r.report.apps.len());
        for k in 0..apps {
            let threads: Vec<_> = rs
                .iter()
                .filter_map(|r| r.report.apps.get(k))
                .flat_map(|a| &a.per_thread)
                .collect();
            if threads.is_empty() {
                continue;
            }
            let ms = |c| point.machine.to_us(c) / 1000.0;
            let d = spread(
                &threads
                    .iter()
                    .map(|t| t.dispatches as f64)
                    .collect::<Vec<_>>(),
            );
            let run = spread(
                &threads
                    .iter()
                    .map(|t| ms(t.runtime_cycles))
                    .collect::<Vec<_>>(),
            );
            let woken: u64 = threads.iter().map(|t| t.wakeups).sum();
            let lat: f64 = threads
                .iter()
                .map(|t| t.wake_lat_mean_us * t.wakeups as f64)
                .sum();
            let p99 = threads
                .iter()
                .map(|t| t.wake_lat_p99_us)
                .fold(0.0, f64::max);
            rows.push(vec![
                point.label.clone(),
                rs[0].report.apps[k].name.clone(),
                threads.len().to_string(),
                format!("{:.1} ({:.0}-{:.0})", d.0, d.1, d.2),
                format!("{:.2} ({:.2}-{:.2})", run.0, run.1, run.2),
                format!("{:.1}", if woken == 0 { 0.0 } else { lat / woken as f64 }),
                format!("{p99:.1}"),
            ]);
        }
    }
    format!("per thread:\n{}", format_table(&rows))
}
