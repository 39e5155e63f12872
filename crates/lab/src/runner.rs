//! Runs every point and repetition of an experiment, in parallel across cores. Each run is a
//! self-contained deterministic simulation, so the order in which they finish never changes the
//! results; they are returned in plan order.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;
use serde::Serialize;
use smpsched_sim::RunReport;

use crate::budget;
use crate::error::LabError;
use crate::experiment::{Experiment, Point};

/// The outcome of one run: which point and repetition, with which seed, and what was measured.
#[derive(Clone, Debug, Serialize)]
pub struct RunRecord {
    /// The point's label.
    pub point: String,
    /// The values the point sets, as (dotted path, value).
    pub params: Vec<(String, String)>,
    /// Repetition index, from 0.
    pub repetition: u32,
    /// The seed the run used.
    pub seed: u64,
    /// What the simulator measured.
    pub report: RunReport,
}

/// How many runs of an experiment go at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobPlan {
    /// Runs at once.
    pub jobs: usize,
    /// What was asked for (or the number of cores), when memory forced fewer.
    pub capped_from: Option<usize>,
    /// Estimated bytes of the largest run.
    pub largest_run: u64,
    /// Bytes the machine can give, if known.
    pub available: Option<u64>,
}

impl JobPlan {
    /// A line for people when memory forced fewer runs at once than asked for.
    pub fn note(&self) -> Option<String> {
        let asked = self.capped_from?;
        Some(format!(
            "note: running {} at a time instead of {asked}: a run may need about {} and about {} \
             is available (set {} to state the memory smpsched may use)",
            self.jobs,
            budget::human(self.largest_run),
            budget::human(self.available.unwrap_or(0)),
            budget::MEMORY_ENV,
        ))
    }
}

/// Plans `jobs` parallel runs (0 = one per core) of `exp` within the memory the machine can give
/// ([`budget::available`]; an unreadable `SMPSCHED_MEMORY`, already refused when the experiment
/// was loaded, counts as unknown here).
pub fn plan_jobs(exp: &Experiment, jobs: usize) -> JobPlan {
    let asked = if jobs == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        jobs
    };
    let largest_run = exp.points.iter().map(point_bytes).max().unwrap_or(0);
    let available = budget::available().ok().flatten();
    let fit = budget::concurrent_runs(asked, largest_run, available);
    JobPlan {
        jobs: fit,
        capped_from: (fit < asked).then_some(asked),
        largest_run,
        available,
    }
}

/// Estimated bytes of one run of `point`.
fn point_bytes(point: &Point) -> u64 {
    let threads = point.apps.iter().map(|a| a.workload.threads()).sum();
    budget::run_bytes(threads, point.machine.processors)
}

/// Runs every point of `exp` `exp.repetitions` times on `jobs` threads (0 = all cores; fewer
/// when memory cannot hold that many runs at once, see [`plan_jobs`]), calling
/// `progress(done, total)` after each run. Stops at the first failing run.
pub fn run_experiment(
    exp: &Experiment,
    jobs: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Vec<RunRecord>, LabError> {
    let work: Vec<(usize, u32)> = (0..exp.points.len())
        .flat_map(|p| (0..exp.repetitions).map(move |r| (p, r)))
        .collect();
    let total = work.len();
    let done = AtomicUsize::new(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(plan_jobs(exp, jobs).jobs)
        .build()
        .map_err(|e| LabError::Internal(format!("cannot start worker threads: {e}")))?;
    pool.install(|| {
        work.par_iter()
            .map(|&(p, r)| {
                let point = &exp.points[p];
                let seed = exp.seed_of(r);
                let report = point.simulate(seed).map_err(|source| LabError::Run {
                    experiment: exp.name.clone(),
                    point: point.label.clone(),
                    repetition: r,
                    seed,
                    source,
                })?;
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
                Ok(RunRecord {
                    point: point.label.clone(),
                    params: point.params.clone(),
                    repetition: r,
                    seed,
                    report,
                })
            })
            .collect()
    })
}
