//! `smpsched.reproduce`: a paper's reproduction run by the lab exactly as `smpsched reproduce`
//! runs it (reports written to the same places), its claims and compared values returned as
//! JSON rows for data frames; with `seeds`, one reproduction per seed and the report across
//! them, as `--seeds` writes it; with `vary`, the same across values of one setting (`--vary`);
//! `set`, values set over every file (`--set`).

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use pyo3::prelude::*;
use serde_json::{json, Value};
use smpsched_lab::app::across::{vary_runs, write_seeds_report, write_vary_report};
use smpsched_lab::app::papers::{run_paper, Listeners, PaperOutcome, Variant};
use smpsched_lab::exec::shard::{Exec, Remote};
use smpsched_lab::input::setting::{check_distinct, vary_values};
use smpsched_lab::reproduce::across::check_seeds;
use smpsched_lab::reproduce::report::{PaperReport, Verdict};
use smpsched_lab::reproduce::summary::relative_distance;
use smpsched_lab::LabError;

use crate::errors::to_py;
use crate::remote::PyRemote;
use crate::run::{bad_argument, settings};
use crate::wait::{run_released, Tally};

/// Reproduces `paper` at `scale` (and `seed` over the files' when given, `set` over every file)
/// from the files under `experiments`, writing its report under `reports` (as the command
/// does); returns JSON with `claims`, `values`, `summary`, `latest`, `run_dir` and `skipped`.
/// With `remote` (the package's `smpsched.cluster.run_tasks`, its address bound) the runs are
/// made on that Ray cluster, here and in the two functions below; the files written are the
/// same.
#[pyfunction]
#[pyo3(signature = (paper, scale=1.0, jobs=0, experiments=PathBuf::from("experiments"), reports=PathBuf::from("reports"), progress=None, seed=None, set=Vec::new(), only=Vec::new(), remote=None))]
#[allow(clippy::too_many_arguments)]
pub fn reproduce_paper(
    py: Python<'_>,
    paper: String,
    scale: f64,
    jobs: usize,
    experiments: PathBuf,
    reports: PathBuf,
    progress: Option<Bound<'_, PyAny>>,
    seed: Option<u64>,
    set: Vec<String>,
    only: Vec<String>,
    remote: Option<Py<PyAny>>,
) -> PyResult<String> {
    let tally = Arc::new(Tally::default());
    let at = Where::checked(py, experiments, reports, scale, jobs)?.on(remote, &tally);
    let cluster = at.remote.clone();
    let variant = Variant::new(only, seed, settings(py, &set, &[])?);
    let t2 = Arc::clone(&tally);
    let name = paper.clone();
    let outcome = run_released(py, Arc::clone(&tally), progress.as_ref(), move || {
        run_one(&at, &name, &variant, &t2, &name)
    })?
    .map_err(|e| raised(py, e, &paper, cluster.as_deref()))?;
    Ok(outcome_json(&outcome).to_string())
}

/// Reproduces `paper` at `scale` from each of `seeds` (each report written as `seed` writes
/// it), then the report across them; returns that report's JSON (`seeds`, `claims` with a mark
/// per seed, `agreement`, `summaries`) with `latest`, its Markdown's path, and `summary_line`.
#[pyfunction]
#[pyo3(signature = (paper, seeds, scale=1.0, jobs=0, experiments=PathBuf::from("experiments"), reports=PathBuf::from("reports"), progress=None, set=Vec::new(), only=Vec::new(), remote=None))]
#[allow(clippy::too_many_arguments)]
pub fn reproduce_seeds(
    py: Python<'_>,
    paper: String,
    seeds: Vec<u64>,
    scale: f64,
    jobs: usize,
    experiments: PathBuf,
    reports: PathBuf,
    progress: Option<Bound<'_, PyAny>>,
    set: Vec<String>,
    only: Vec<String>,
    remote: Option<Py<PyAny>>,
) -> PyResult<String> {
    let tally = Arc::new(Tally::default());
    let at = Where::checked(py, experiments, reports, scale, jobs)?.on(remote, &tally);
    let cluster = at.remote.clone();
    check_seeds(&seeds).map_err(|e| bad_argument(py, "seeds", &e))?;
    let base = Variant::new(only, None, settings(py, &set, &[])?);
    let t2 = Arc::clone(&tally);
    let name = paper.clone();
    let written = run_released(py, Arc::clone(&tally), progress.as_ref(), move || {
        let mut outcomes = Vec::new();
        for &seed in &seeds {
            let label = format!("{name} at seed {seed}");
            let variant = base.with_seed(Some(seed));
            outcomes.push(run_one(&at, &name, &variant, &t2, &label)?);
        }
        write_seeds_report(&at.reports, &name, at.scale, &seeds, &base, &outcomes)
    })?
    .map_err(|e: LabError| raised(py, e, &paper, cluster.as_deref()))?;
    across_json(py, &paper, written)
}

/// Reproduces `paper` at `scale` at each value `vary` (a path and its values, once per path) gives,
/// or at each combination of the values of several paths, each report as `set` writes it (over
/// `seed` and `set`, which every run shares), then the report across them; returns that report's JSON (`varied`, `claims` with a mark per value,
/// `agreement`, `summaries`) with `latest` and `summary_line`.
#[pyfunction]
#[pyo3(signature = (paper, vary, scale=1.0, jobs=0, experiments=PathBuf::from("experiments"), reports=PathBuf::from("reports"), progress=None, seed=None, set=Vec::new(), only=Vec::new(), remote=None))]
#[allow(clippy::too_many_arguments)]
pub fn reproduce_vary(
    py: Python<'_>,
    paper: String,
    vary: Vec<(String, Vec<String>)>,
    scale: f64,
    jobs: usize,
    experiments: PathBuf,
    reports: PathBuf,
    progress: Option<Bound<'_, PyAny>>,
    seed: Option<u64>,
    set: Vec<String>,
    only: Vec<String>,
    remote: Option<Py<PyAny>>,
) -> PyResult<String> {
    let tally = Arc::new(Tally::default());
    let at = Where::checked(py, experiments, reports, scale, jobs)?.on(remote, &tally);
    let cluster = at.remote.clone();
    let axes = vary
        .iter()
        .map(|(path, values)| vary_values(path, values))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad_argument(py, "vary", &e))?;
    let varied: Vec<_> = axes.iter().filter_map(|a| a.first().cloned()).collect();
    check_distinct(&[], &varied).map_err(|e| bad_argument(py, "vary", &e))?;
    let base = Variant::new(only, seed, settings(py, &set, &varied)?);
    let runs = vary_runs(&base, &axes).map_err(|e| bad_argument(py, "vary", &e))?;
    let t2 = Arc::clone(&tally);
    let name = paper.clone();
    let written = run_released(py, Arc::clone(&tally), progress.as_ref(), move || {
        let mut outcomes = Vec::new();
        for (variant, label) in &runs {
            let label = format!("{name} with {label}");
            outcomes.push(run_one(&at, &name, variant, &t2, &label)?);
        }
        write_vary_report(&at.reports, &name, at.scale, &base, &axes, &outcomes)
    })?
    .map_err(|e: LabError| raised(py, e, &paper, cluster.as_deref()))?;
    across_json(py, &paper, written)
}

/// The report across seeds or values as JSON, with `latest` and `summary_line`.
fn across_json(
    py: Python<'_>,
    paper: &str,
    written: (PathBuf, smpsched_lab::reproduce::across::AcrossReport),
) -> PyResult<String> {
    let (path, report) = written;
    let mut out = serde_json::to_value(&report)
        .map_err(|e| to_py(py, LabError::Internal(format!("report: {e}")), paper))?;
    out["latest"] = json!(path.display().to_string());
    out["summary_line"] = json!(report.summary_line());
    Ok(out.to_string())
}

/// The Python exception for `e`: the cluster's own when it ended the sweep, else the lab's.
fn raised(py: Python<'_>, e: LabError, paper: &str, cluster: Option<&PyRemote>) -> PyErr {
    match cluster.and_then(PyRemote::take_failure) {
        Some(failure) => failure,
        None => to_py(py, e, paper),
    }
}

/// Where a reproduction reads and writes, and how it runs.
struct Where {
    experiments: PathBuf,
    reports: PathBuf,
    scale: f64,
    jobs: usize,
    /// The cluster its runs are made on, if any.
    remote: Option<Arc<PyRemote>>,
}

impl Where {
    /// The place and scale asked for; a scale outside (0, 100] is bad input naming `scale`.
    fn checked(
        py: Python<'_>,
        experiments: PathBuf,
        reports: PathBuf,
        scale: f64,
        jobs: usize,
    ) -> PyResult<Where> {
        if !(scale.is_finite() && scale > 0.0 && scale <= 100.0) {
            return Err(bad_argument(
                py,
                "scale",
                &format!("must be a number between 0 and 100, got {scale}"),
            ));
        }
        crate::run::check_jobs(py, jobs)?;
        for (field, dir) in [("experiments", &experiments), ("reports", &reports)] {
            if dir.as_os_str().is_empty() {
                return Err(bad_argument(py, field, "must name a folder, not be empty"));
            }
        }
        Ok(Where {
            experiments,
            reports,
            scale,
            jobs,
            remote: None,
        })
    }

    /// The same, with the runs made through `run_tasks` (`smpsched.cluster.run_tasks` with the
    /// address bound) when it is given, counted in `tally`.
    fn on(self, run_tasks: Option<Py<PyAny>>, tally: &Arc<Tally>) -> Where {
        Where {
            remote: run_tasks.map(|r| Arc::new(PyRemote::new(r, Arc::clone(tally)))),
            ..self
        }
    }
}

/// Reproduces `paper` as `variant` says (the files as written, from their own seed, by
/// default), telling `tally` how far it has come under `label`.
fn run_one(
    at: &Where,
    paper: &str,
    variant: &Variant,
    tally: &Tally,
    label: &str,
) -> Result<PaperOutcome, LabError> {
    run_paper(
        &at.experiments,
        paper,
        at.scale,
        variant,
        Exec {
            jobs: at.jobs,
            cancel: Some(&tally.cancel),
            remote: at.remote.as_deref().map(|r| r as &dyn Remote),
        },
        &at.reports,
        Listeners {
            on_runs: &|runs, _plan| tally.stage(runs, &format!("{label}: every file's runs")),
            on_file: &|exp| tally.stage(exp.points.len() * exp.repetitions as usize, &exp.name),
            progress: &|done, _| tally.done.store(done, Ordering::Relaxed),
        },
    )
}

/// The rows of an outcome: one per claim and one per compared value, with the report's summary.
fn outcome_json(o: &PaperOutcome) -> Value {
    let PaperReport { files, .. } = &o.report;
    let mut claims = Vec::new();
    let mut values = Vec::new();
    for f in files {
        for c in &f.claims {
            let (verdict, reason) = match &c.verdict {
                Verdict::Holds => ("holds", None),
                Verdict::Fails => ("fails", None),
                Verdict::KnownDifference { reason } => ("known_difference", Some(reason.clone())),
                Verdict::Error { message } => ("error", Some(message.clone())),
            };
            claims.push(json!({
                "file": f.experiment_file, "title": f.title, "claim": c.text,
                "verdict": verdict, "detail": c.detail, "reason": reason,
            }));
        }
        for p in &f.points {
            values.push(json!({
                "file": f.experiment_file, "point": p.point, "metric": p.metric,
                "ours": p.ours, "paper": p.paper,
                "distance": p.paper.and_then(|paper| relative_distance(p.ours, paper)),
                "tolerance": p.tolerance.as_ref().map(ToString::to_string),
                "within": p.within, "note": p.note,
            }));
        }
    }
    let s = o.report.summary();
    json!({
        "paper": o.report.paper_id,
        "title": o.report.paper_title,
        "claims": claims,
        "values": values,
        "summary": {
            "claims": s.claims, "holds": s.holds, "fails": s.fails,
            "known_differences": s.known_differences, "errors": s.errors,
            "compared": s.compared, "within": s.within,
        },
        "failed_claims": o.failed_claims(),
        "latest": o.latest.display().to_string(),
        "run_dir": o.run_dir.display().to_string(),
        "skipped": o.skipped.iter().map(|(p, why)| json!([p.display().to_string(), why])).collect::<Vec<_>>(),
    })
}
