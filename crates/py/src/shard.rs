//! `smpsched.run(..., cluster=...)`: an experiment's runs made on a Ray cluster. Home plans the
//! tasks and ships a bundle ([`smpsched_lab::exec::shard`]); each Ray worker calls [`run_task`]; home
//! merges what comes back with [`run_shipped`], so the results are those of a local run, byte
//! for byte.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use smpsched_lab::exec::runner::RunMemo;
use smpsched_lab::exec::shard::{accept, tasks, Bundle, Task};
use smpsched_lab::LabError;

use crate::errors::to_py;
use crate::run::{run_loaded, settings, Outcome};

/// A run made on a worker: `(point, repetition, run bytes or None, exit code, message)`.
type Shipped = (usize, u32, Option<Vec<u8>>, u8, String);

/// A plan: the bundle to ship and the `(point, repetition)` tasks.
type Plan<'py> = (Bound<'py, PyBytes>, Vec<(usize, u32)>);

/// Loads the experiment at `path` (or given as `text`) with `seed` over the file's and `set`
/// (`PATH=VALUE` texts) over its values; returns the bundle to ship (its runs keeping every
/// job's times when `per_job`) and its `(point, repetition)` tasks in plan order. `jobs`, the
/// merge's later `run_shipped` argument, is checked here, before anything is shipped.
#[pyfunction]
#[pyo3(signature = (path, text=None, seed=None, per_job=false, set=Vec::new(), jobs=0))]
pub fn shard_plan<'py>(
    py: Python<'py>,
    path: PathBuf,
    text: Option<String>,
    seed: Option<u64>,
    per_job: bool,
    set: Vec<String>,
    jobs: usize,
) -> PyResult<Plan<'py>> {
    crate::run::check_jobs(py, jobs)?;
    let name = path.display().to_string();
    let settings = settings(py, &set, &[])?;
    let loaded = py.allow_threads(|| match text {
        Some(t) => Bundle::parse_set(&path, t, 1.0, seed, &settings),
        None => Bundle::load_set(&path, 1.0, seed, &settings),
    });
    let (mut bundle, exp) = loaded.map_err(|e| to_py(py, e, &name))?;
    bundle.per_job = per_job;
    let planned = tasks(&exp, &RunMemo::default(), &mut Default::default());
    let list = planned.iter().map(|t| (t.point, t.repetition)).collect();
    Ok((PyBytes::new(py, &bundle.to_bytes()), list))
}

/// One run on a worker (the GIL released while it runs): `(run bytes, 0, "")`, or `(None, exit
/// code, message)` when the run fails for its own reason.
#[pyfunction]
pub fn run_task<'py>(
    py: Python<'py>,
    bundle: Vec<u8>,
    point: usize,
    repetition: u32,
) -> (Option<Bound<'py, PyBytes>>, u8, String) {
    let task = Task { point, repetition };
    match py.allow_threads(|| smpsched_lab::exec::shard::run_task(&bundle, task)) {
        Ok(run) => (Some(PyBytes::new(py, &run)), 0, String::new()),
        Err(f) => (None, f.code, f.message),
    }
}

/// The results of the bundle's experiment from the runs `shipped` back by workers, exactly as
/// `run_experiment` returns them for a local run; the first failed run in plan order is raised
/// as it would be locally.
#[pyfunction]
#[pyo3(signature = (bundle, shipped, jobs=0, progress=None))]
pub fn run_shipped(
    py: Python<'_>,
    bundle: Vec<u8>,
    shipped: Vec<Shipped>,
    jobs: usize,
    progress: Option<Bound<'_, PyAny>>,
) -> PyResult<Outcome> {
    crate::run::check_jobs(py, jobs)?;
    let bundle = Bundle::from_bytes(&bundle).map_err(|e| to_py(py, e, "<bundle>"))?;
    let exp = bundle.experiment().map_err(|e| to_py(py, e, "<bundle>"))?;
    let name = exp.path.display().to_string();
    let memo = RunMemo::default();
    let mut failed: Option<(usize, u32, u8, String)> = None;
    for (point, repetition, run, code, message) in shipped {
        let task = Task { point, repetition };
        match run {
            Some(bytes) => accept(&exp, task, &bytes, &memo).map_err(|e| to_py(py, e, &name))?,
            None => {
                if failed
                    .as_ref()
                    .is_none_or(|f| (point, repetition) < (f.0, f.1))
                {
                    failed = Some((point, repetition, code, message));
                }
            }
        }
    }
    if let Some((_, _, code, message)) = failed {
        return Err(to_py(py, LabError::Elsewhere { code, message }, &name));
    }
    run_loaded(py, exp, jobs, progress, Some(memo), bundle.per_job)
}
