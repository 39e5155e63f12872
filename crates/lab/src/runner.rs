//! Runs every point and repetition of an experiment, in parallel across cores. Each run is a
//! self-contained deterministic simulation, so the order in which they finish never changes the
//! results; they are returned in plan order.

use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;
use serde::Serialize;
use smpsched_sim::RunReport;

use crate::error::LabError;
use crate::experiment::Experiment;

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

/// Runs every point of `exp` `exp.repetitions` times on `jobs` threads (0 = all cores),
/// calling `progress(done, total)` after each run. Stops at the first failing run.
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
        .num_threads(jobs)
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
