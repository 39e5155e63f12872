//! `jobs.csv`: one row per job that exited (every thread a job, from its arrival
//! through its first dispatch to its exit), for runs asked to keep every job's times
//! (`RunOptions::per_job`, `smpsched run --per-job`, the Python package's `Result.jobs`).
//! `results.json` and `results.csv` keep the per-application summary; this file is the data
//! behind it, for distributions the summary does not show.

use std::borrow::Cow;

use smpsched_sim::{AppReport, RunReport};

use crate::exec::runner::RunRecord;
use crate::input::error::LabError;

/// The measure columns of `jobs.csv`, after the run's and the point's columns: the application,
/// the job's rank among its threads in creation order (from 0), its times in cycles, and its
/// response (exit minus arrival), wait (first dispatch minus arrival) and slowdown (response
/// over the processor time it held).
pub const JOB_MEASURES: [&str; 10] = [
    "app",
    "job",
    "arrived",
    "first_run",
    "exited",
    "held",
    "response",
    "wait",
    "slowdown",
    "stopped",
];

/// The swept parameters' names over `runs`, in first-seen order (the columns after `seed`).
pub(crate) fn param_columns(runs: &[RunRecord]) -> Vec<&str> {
    let mut cols: Vec<&str> = Vec::new();
    for r in runs {
        for (k, _) in &r.params {
            if !cols.contains(&k.as_str()) {
                cols.push(k);
            }
        }
    }
    cols
}

/// A row's first cells: point, repetition, seed and the value of each of `cols` (empty where
/// the run's point does not set it).
pub(crate) fn row_prefix(r: &RunRecord, cols: &[&str]) -> Vec<String> {
    let mut prefix = vec![
        r.point.clone(),
        r.repetition.to_string(),
        r.seed.to_string(),
    ];
    for c in cols {
        let v = r
            .params
            .iter()
            .find(|(k, _)| k == c)
            .map(|(_, v)| v.label());
        prefix.push(v.unwrap_or("").to_string());
    }
    prefix
}

/// Whether any of `runs` kept its jobs' times.
pub fn kept(runs: &[RunRecord]) -> bool {
    runs.iter()
        .any(|r| r.report.apps.iter().any(|a| !a.job_times.is_empty()))
}

/// `report` without its jobs' times (which go to `jobs.csv`, not `results.json`): borrowed when
/// it kept none.
pub(crate) fn summary_only(report: &RunReport) -> Cow<'_, RunReport> {
    if report.apps.iter().all(|a| a.job_times.is_empty()) {
        return Cow::Borrowed(report);
    }
    let mut owned = report.clone();
    for a in &mut owned.apps {
        a.job_times = Vec::new();
    }
    Cow::Owned(owned)
}

/// The CSV table of every kept job of `runs`: one row per run, application and job.
pub fn to_csv(runs: &[RunRecord]) -> Result<String, LabError> {
    per_app_csv("jobs.csv", runs, &JOB_MEASURES, |a| {
        let rows = a.job_times.iter().map(|j| {
            vec![
                a.name.clone(),
                j.rank.to_string(),
                j.arrived.to_string(),
                j.first_run.to_string(),
                j.exited.to_string(),
                j.held.to_string(),
                j.response().to_string(),
                j.wait().to_string(),
                j.slowdown().to_string(),
            ]
        });
        rows.collect()
    })
}

/// A CSV table `file` of `runs` with a row per run and each row `rows` gives for an
/// application: the run's and the point's columns, then those of `measures` (the last,
/// `stopped`, filled in here).
pub(crate) fn per_app_csv(
    file: &str,
    runs: &[RunRecord],
    measures: &[&str],
    rows: impl Fn(&AppReport) -> Vec<Vec<String>>,
) -> Result<String, LabError> {
    let cols = param_columns(runs);
    let fail = |e: &dyn std::fmt::Display| LabError::Internal(format!("{file}: {e}"));
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<&str> = vec!["point", "repetition", "seed"];
    header.extend(&cols);
    header.extend(measures);
    w.write_record(&header).map_err(|e| fail(&e))?;
    for r in runs {
        let prefix = row_prefix(r, &cols);
        let stopped = r
            .stopped
            .as_ref()
            .map_or_else(String::new, |s| s.describe());
        for a in &r.report.apps {
            for cells in rows(a) {
                let mut row = prefix.clone();
                row.extend(cells);
                row.push(stopped.clone());
                w.write_record(&row).map_err(|e| fail(&e))?;
            }
        }
    }
    let bytes = w.into_inner().map_err(|e| fail(&e))?;
    String::from_utf8(bytes).map_err(|e| fail(&e))
}
