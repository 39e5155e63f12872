//! Runs elsewhere: an experiment's runs sharded to workers on other machines (a Ray cluster,
//! through the Python package) and merged back so that every file written is byte-identical to a
//! local run.
//!
//! What travels is a [`Bundle`] (the experiment file's text, the files it reads, its scale and
//! seed: never the repository) and a list of [`Task`]s (a point and a repetition). A worker
//! loads the bundle with its files served from memory ([`smpsched_workloads::shipped`]) and
//! makes one run ([`run_task`]); what comes back is that run's full measures, bit for bit (CBOR,
//! so floats, NaN included, survive exactly). Home keeps them in the [`RunMemo`] that the usual
//! runner reads, so ordering, results, reports and errors are the local ones: runs are placed by
//! point and repetition, never by completion.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use serde::{Deserialize, Serialize};
use smpsched_sim::{Bound, Cycles, RunReport, UserKernel};
use smpsched_workloads::shipped::{self, Files};

use crate::exec::runner::{run_one, RunMemo, RunOptions};
use crate::input::error::LabError;
use crate::input::setting::Setting;
use crate::plan::record::Stopped;
use crate::spec::experiment::Experiment;

/// What a worker needs to load an experiment exactly as home did.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Bundle {
    /// The file's path as home named it (messages, and the base of the paths it names).
    pub path: PathBuf,
    /// The file's text.
    pub text: String,
    /// The scale of its `[reproduce] scale` sizes (1 for a plain run).
    pub scale: f64,
    /// The base seed (the file's, or the one the caller set).
    pub seed: u64,
    /// Every file loading it read, by the path it was read at.
    pub files: Files,
    /// Whether each run keeps every job's times (as [`RunOptions::per_job`]).
    #[serde(default)]
    pub per_job: bool,
    /// Whether each run measures every application's threads (as [`RunOptions::per_thread`]).
    #[serde(default)]
    pub per_thread: bool,
    /// Values set over the file from the command line (`--set`, `--vary`).
    #[serde(default)]
    pub settings: Vec<Setting>,
}

/// One run to make: a point of the experiment and a repetition.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
pub struct Task {
    /// Index of the point, in the experiment's order.
    pub point: usize,
    /// Repetition, from 0.
    pub repetition: u32,
}

/// A run as it travels back: everything the lab reads of it, exactly.
#[derive(Serialize, Deserialize)]
struct WireRun {
    report: RunReport,
    user_kernel: UserKernel,
    /// The bound (none for a run that could not go on), the cycle, events, live threads, and
    /// why it could not go on.
    stopped: Option<WireStop>,
}

/// A stop as it travels: [`Stopped`]'s fields but the one its bound implies.
type WireStop = (Option<Bound>, Cycles, u64, u64, Option<String>);

/// A task that failed for its own reason (bad input, a failing simulation): the exit code the
/// command gives and the message, exactly as a local run would report it.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct TaskFailure {
    /// 2 for bad input, 1 otherwise.
    pub code: u8,
    /// The message.
    pub message: String,
}

impl Bundle {
    /// Loads the experiment file at `path` at `scale` (and `seed` over the file's), keeping the
    /// bundle a worker needs to load it the same way.
    pub fn load(
        path: &Path,
        scale: f64,
        seed: Option<u64>,
    ) -> Result<(Bundle, Experiment), LabError> {
        Self::load_set(path, scale, seed, &[])
    }

    /// [`Bundle::load`] with `settings` applied over the file (`--set`, `--vary`).
    pub fn load_set(
        path: &Path,
        scale: f64,
        seed: Option<u64>,
        settings: &[Setting],
    ) -> Result<(Bundle, Experiment), LabError> {
        let text = crate::input::source::read_experiment(path)?;
        Self::parse_set(path, text, scale, seed, settings)
    }

    /// Like [`Bundle::load_set`] for an experiment given as text (`path` names it).
    pub fn parse_set(
        path: &Path,
        text: String,
        scale: f64,
        seed: Option<u64>,
        settings: &[Setting],
    ) -> Result<(Bundle, Experiment), LabError> {
        let (exp, files) =
            shipped::record(|| Experiment::parse_set(path, text.clone(), scale, settings));
        let mut exp = exp?;
        if let Some(s) = seed {
            exp.seed = s;
        }
        let bundle = Bundle {
            path: path.to_path_buf(),
            text,
            scale,
            seed: exp.seed,
            files,
            per_job: false,
            per_thread: false,
            settings: settings.to_vec(),
        };
        Ok((bundle, exp))
    }

    /// The experiment, loaded from the bundle alone (no file of this machine is read).
    pub fn experiment(&self) -> Result<Experiment, LabError> {
        let exp = shipped::serve(self.files.clone(), || {
            Experiment::parse_set(&self.path, self.text.clone(), self.scale, &self.settings)
        });
        let mut exp = exp?;
        exp.seed = self.seed;
        Ok(exp)
    }

    /// The bundle as bytes to ship.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        // Writing into a Vec cannot fail, and every field serializes.
        ciborium::into_writer(self, &mut out).expect("a bundle serializes");
        out
    }

    /// The bundle from shipped bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Bundle, LabError> {
        ciborium::from_reader(bytes)
            .map_err(|e| LabError::Internal(format!("a shipped bundle does not decode: {e}")))
    }
}

/// The runs of `exp` not yet in `memo` nor in `planned` (runs other files of a reproduction share
/// are planned once), in plan order; each one's (point key, seed) is added to `planned`.
pub fn tasks(exp: &Experiment, memo: &RunMemo, planned: &mut BTreeSet<(String, u64)>) -> Vec<Task> {
    let mut out = Vec::new();
    for (point, p) in exp.points.iter().enumerate() {
        for repetition in 0..exp.repetitions {
            let seed = exp.seed_of(repetition);
            if memo.contains(&p.key, seed) || !planned.insert((p.key.clone(), seed)) {
                continue;
            }
            out.push(Task { point, repetition });
        }
    }
    out
}

/// The runs of every file of `exps` not yet in `memo`, each (point key, seed) once, in plan
/// order: (index of its file, task).
pub fn plan(exps: &[&Experiment], memo: &RunMemo) -> Vec<(usize, Task)> {
    let mut planned = BTreeSet::new();
    let mut work = Vec::new();
    for (e, exp) in exps.iter().enumerate() {
        work.extend(tasks(exp, memo, &mut planned).into_iter().map(|t| (e, t)));
    }
    work
}

/// Makes one run on a worker: `bundle` as shipped, the task's point and repetition. The bytes
/// returned go home to [`accept`]; a failure is reported as the local run would report it.
pub fn run_task(bundle: &[u8], task: Task) -> Result<Vec<u8>, TaskFailure> {
    let failure = |e: LabError| TaskFailure {
        code: e.exit_code(),
        message: e.to_string(),
    };
    let bundle = Bundle::from_bytes(bundle).map_err(failure)?;
    let exp = bundle.experiment().map_err(failure)?;
    if task.point >= exp.points.len() || task.repetition >= exp.repetitions {
        return Err(failure(LabError::Internal(format!(
            "{}: no point {} repetition {} to run",
            exp.name, task.point, task.repetition
        ))));
    }
    let run = run_one(
        &exp,
        &exp.points[task.point],
        task.repetition,
        &RunOptions {
            per_job: bundle.per_job,
            per_thread: bundle.per_thread,
            ..RunOptions::default()
        },
    )
    .map_err(failure)?;
    let wire = WireRun {
        user_kernel: run.report.user_kernel,
        report: run.report,
        stopped: run
            .stopped
            .map(|s| (s.bound, s.at_cycle, s.events, s.live, s.stuck)),
    };
    let mut out = Vec::new();
    ciborium::into_writer(&wire, &mut out).expect("a run serializes");
    Ok(out)
}

/// Keeps in `memo` the run a worker made of `task` of `exp` (the bytes [`run_task`] returned).
pub fn accept(exp: &Experiment, task: Task, run: &[u8], memo: &RunMemo) -> Result<(), LabError> {
    let wire: WireRun = ciborium::from_reader(run).map_err(|e| {
        LabError::Internal(format!(
            "{}: a run from a worker does not decode: {e}",
            exp.name
        ))
    })?;
    let point = exp
        .points
        .get(task.point)
        .ok_or_else(|| LabError::Internal(format!("{}: a worker ran no such point", exp.name)))?;
    let mut report = wire.report;
    report.user_kernel = wire.user_kernel;
    let stopped = wire
        .stopped
        .map(|(bound, at, events, live, stuck)| match bound {
            Some(bound) => Stopped::at(bound, at, events, live),
            None => Stopped::stuck(stuck.unwrap_or_default(), at, events, live),
        });
    memo.put(&point.key, exp.seed_of(task.repetition), (report, stopped));
    Ok(())
}

/// Where an experiment's runs are made: `jobs` at once on this machine (0: one per core), or
/// first on `remote` when it is set; once `cancel` is set no further run starts here.
#[derive(Clone, Copy, Default)]
pub struct Exec<'a> {
    /// Runs at once here.
    pub jobs: usize,
    /// Where to make the runs instead, if anywhere.
    pub remote: Option<&'a dyn Remote>,
    /// Set by the caller to start no further run (the Python package's Ctrl-C).
    pub cancel: Option<&'a AtomicBool>,
}

impl Exec<'_> {
    /// Every run here, `jobs` at once.
    pub fn local(jobs: usize) -> Self {
        Exec {
            jobs,
            ..Exec::default()
        }
    }
}

/// Something that makes runs elsewhere: given shipped bundles and `(bundle index, task)` pairs,
/// it calls `done(i, result)` once for each pair `i`, in any order, as they finish.
pub trait Remote {
    /// Makes every task; an error here (the cluster unreachable, interrupted) ends the whole
    /// sweep.
    fn run(
        &self,
        bundles: &[Vec<u8>],
        tasks: &[(usize, Task)],
        done: &mut dyn FnMut(usize, Result<Vec<u8>, TaskFailure>) -> Result<(), LabError>,
    ) -> Result<(), LabError>;
}

/// Makes every run of `exps` (loaded from `bundles`, in the same order) on `remote` and keeps
/// them in `memo`, so that the usual runner then simulates nothing. A task that failed for its
/// own reason is reported once, as a local run would report it: the first failing one in plan
/// order.
pub fn prefill(
    exps: &[&Experiment],
    bundles: &[Bundle],
    remote: &dyn Remote,
    memo: &RunMemo,
) -> Result<(), LabError> {
    let work = plan(exps, memo);
    let shipped: Vec<Vec<u8>> = bundles.iter().map(Bundle::to_bytes).collect();
    let mut failures: Vec<(usize, TaskFailure)> = Vec::new();
    remote.run(&shipped, &work, &mut |i, result| {
        let (b, task) = *work
            .get(i)
            .ok_or_else(|| LabError::Internal(format!("the cluster answered for no task {i}")))?;
        match result {
            Ok(run) => accept(exps[b], task, &run, memo),
            Err(f) => {
                failures.push((i, f));
                Ok(())
            }
        }
    })?;
    match failures.into_iter().min_by_key(|(i, _)| *i) {
        None => Ok(()),
        Some((_, f)) => Err(LabError::Elsewhere {
            code: f.code,
            message: f.message,
        }),
    }
}

#[cfg(test)]
mod tests;
