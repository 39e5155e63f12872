//! `smpsched.run`: an experiment (a file, or its text) loaded, validated and run by the lab, its
//! runs returned as the same `results.json` text the `smpsched run` command writes.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use pyo3::prelude::*;
use smpsched_lab::exec::runner::RunMemo;
use smpsched_lab::input::setting::{check_distinct, Setting};
use smpsched_lab::{results, run_experiment as run_lab, stopped_error, Experiment, RunOptions};

use crate::errors::{input_error, to_py};
use crate::wait::{run_released, Tally};

/// Most runs at once that `jobs` may ask for (as the command's `--jobs`).
const MAX_JOBS: usize = 1024;

/// What a run of an experiment returns to Python: `results.json`'s text, why runs stopped at a
/// bound (or None), `jobs.csv`'s text when every job's times were kept (or None), and the
/// notes on the file (deprecated names) for warnings.
pub type Outcome = (String, Option<String>, Option<String>, Vec<String>);

/// Runs the experiment at `path` (or given as `text`, `path` then naming it in messages) with
/// `seed` overriding the file's and `set` (`PATH=VALUE` texts, as `run --set`) over its values,
/// keeping every job's times when `per_job`. Raises `ExperimentError` for bad input,
/// `KeyboardInterrupt` on Ctrl-C.
#[pyfunction]
#[pyo3(signature = (path, text=None, seed=None, jobs=0, progress=None, per_job=false, set=Vec::new()))]
#[allow(clippy::too_many_arguments)]
pub fn run_experiment(
    py: Python<'_>,
    path: PathBuf,
    text: Option<String>,
    seed: Option<u64>,
    jobs: usize,
    progress: Option<Bound<'_, PyAny>>,
    per_job: bool,
    set: Vec<String>,
) -> PyResult<Outcome> {
    let name = path.display().to_string();
    check_jobs(py, jobs)?;
    // Loading validates every point before anything runs (it can take a while for big sweeps,
    // so the GIL is released here too).
    let settings = settings(py, &set, &[])?;
    let loaded = py.allow_threads(|| match text {
        Some(t) => Experiment::parse_set(&path, t, 1.0, &settings).map_err(Into::into),
        None => Experiment::load_set(&path, 1.0, &settings),
    });
    let mut exp = loaded.map_err(|e| to_py(py, e, &name))?;
    if let Some(s) = seed {
        exp.seed = s;
    }
    run_loaded(py, exp, jobs, progress, None, per_job)
}

/// Runs a loaded experiment (each run `memo` holds taken from it, when given) with the GIL
/// released, keeping every job's times when `per_job`.
pub fn run_loaded(
    py: Python<'_>,
    exp: Experiment,
    jobs: usize,
    progress: Option<Bound<'_, PyAny>>,
    memo: Option<RunMemo>,
    per_job: bool,
) -> PyResult<Outcome> {
    let name = exp.path.display().to_string();
    let exp = Arc::new(exp);
    let tally = Arc::new(Tally::default());
    tally.stage(exp.points.len() * exp.repetitions as usize, &exp.name);
    let (e2, t2) = (Arc::clone(&exp), Arc::clone(&tally));
    let runs = run_released(py, Arc::clone(&tally), progress.as_ref(), move || {
        let progress = |done, _| t2.done.store(done, Ordering::Relaxed);
        let options = RunOptions {
            jobs,
            progress: Some(&progress),
            cancel: Some(&t2.cancel),
            memo: memo.as_ref(),
            per_job,
            ..RunOptions::default()
        };
        run_lab(&e2, &options)
    })?
    .map_err(|e| to_py(py, e, &name))?;
    let (json, jobs_csv) = py.allow_threads(|| {
        let jobs_csv = per_job.then(|| results::jobs::to_csv(&runs)).transpose();
        (results::to_json(&exp, &runs), jobs_csv)
    });
    let jobs_csv = jobs_csv.map_err(|e| to_py(py, e, &name))?;
    let stopped = stopped_error(&exp, &runs).map(|e| e.to_string());
    Ok((json, stopped, jobs_csv, exp.notes.clone()))
}

/// The settings `set` gives as `PATH=VALUE` texts (`--set`), each path once and none a path
/// `vary` varies (one setting of each); a bad one is bad input naming `set`.
pub fn settings(py: Python<'_>, set: &[String], vary: &[Setting]) -> PyResult<Vec<Setting>> {
    set.iter()
        .map(|s| Setting::parse(s))
        .collect::<Result<Vec<_>, _>>()
        .and_then(|v| check_distinct(&v, vary).map(|()| v))
        .map_err(|e| bad_argument(py, "set", &e))
}

/// Refuses a `jobs` past [`MAX_JOBS`] (every call that runs takes the same range).
pub fn check_jobs(py: Python<'_>, jobs: usize) -> PyResult<()> {
    if jobs > MAX_JOBS {
        return Err(bad_argument(
            py,
            "jobs",
            &format!("must be a whole number from 0 (one run per core) to {MAX_JOBS}"),
        ));
    }
    Ok(())
}

/// The `ExperimentError` for a bad value of a keyword argument of the Python API.
pub fn bad_argument(py: Python<'_>, field: &str, message: &str) -> PyErr {
    input_error(
        py,
        &smpsched_lab::InputError {
            file: PathBuf::from("smpsched"),
            line: None,
            field: field.into(),
            message: message.into(),
        },
    )
}
