//! Runs every point and repetition of an experiment, in parallel across cores. Each run is a
//! self-contained deterministic simulation, so the order in which they finish never changes the
//! results; they are returned in plan order.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use rayon::prelude::*;
use smpsched_sim::trace::TraceConfig;
use smpsched_sim::{Progress, RunReport, SimError};

use crate::input::budget;
use crate::input::error::LabError;
use crate::plan::point::{Point, SimOptions};
use crate::spec::experiment::Experiment;

pub use crate::plan::record::{RunRecord, Stopped};

/// How often (in engine events) a run reports its progress: a few times a second.
pub const PROGRESS_EVERY: u64 = 1 << 22;

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
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    // More runs at once than cores only adds threads: never more than the cores.
    let asked = if jobs == 0 { cores } else { jobs.min(cores) };
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

/// The runs a reproduction has made, by point key and seed: a point that several files share
/// (Gupta et al.'s batch and blocking runs appear in four and five figures) is simulated once
/// and its measures reused, which changes no result since a run depends only on its point and
/// its seed.
#[derive(Default)]
pub struct RunMemo(Mutex<BTreeMap<(String, u64), MemoRun>>);

/// What a memoized run measured, and where it stopped if it did.
pub type MemoRun = (RunReport, Option<Stopped>);

impl RunMemo {
    fn get(&self, key: &str, seed: u64) -> Option<MemoRun> {
        let map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.get(&(key.to_string(), seed)).cloned()
    }

    /// Whether the run of the point with `key` at `seed` is already kept.
    pub fn contains(&self, key: &str, seed: u64) -> bool {
        self.get(key, seed).is_some()
    }

    /// Keeps the run of the point with `key` at `seed` (made here or elsewhere: see
    /// [`crate::exec::shard`]).
    pub fn put(&self, key: &str, seed: u64, run: MemoRun) {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        map.insert((key.to_string(), seed), run);
    }
}

/// Estimated bytes of one run of `point`.
fn point_bytes(point: &Point) -> u64 {
    let threads = point.apps.iter().map(|a| a.workload.threads()).sum();
    budget::run_bytes(threads, point.machine.processors)
}

/// Told `(done, total)` after each run of an experiment.
pub type OnProgress<'a> = dyn Fn(usize, usize) + Sync + 'a;

/// Counts finished runs and tells each new count to a progress callback, in order: counted and
/// told under one lock. Counted apart (a `fetch_add`, then the call), a worker's 3 could be
/// told after another's 4, and a progress bar end at 3 of 4.
#[derive(Default)]
pub(crate) struct DoneCount(Mutex<usize>);

impl DoneCount {
    /// One more run of `total` finished: tells `progress` the new count.
    pub(crate) fn tick(&self, total: usize, progress: Option<&OnProgress<'_>>) {
        let mut n = self.0.lock().unwrap_or_else(|e| e.into_inner());
        *n += 1;
        if let Some(progress) = progress {
            progress(*n, total);
        }
    }
}

/// Told `(point, progress)` as a run goes.
pub type OnRunning<'a> = dyn Fn(&str, Progress) + Sync + 'a;

/// How to run an experiment: how many runs at once, whom to tell how far it has come, what to
/// trace, which earlier runs to reuse and when to stop starting runs. The default runs on every
/// core, tells no one, traces nothing, reuses nothing and is never cancelled.
#[derive(Clone, Copy, Default)]
pub struct RunOptions<'a> {
    /// Runs at once (0 = all cores; fewer when memory cannot hold that many, see [`plan_jobs`]).
    pub jobs: usize,
    /// Called as `progress(done, total)` after each run.
    pub progress: Option<&'a OnProgress<'a>>,
    /// Called as `running(point, progress)` every [`PROGRESS_EVERY`] events of each run, so a
    /// long point can say how far it has come.
    pub running: Option<&'a OnRunning<'a>>,
    /// Records a trace of each point's first repetition (in its report's `trace`).
    pub trace: Option<TraceConfig>,
    /// Takes a run from here when an earlier experiment made it (same point key and seed), and
    /// keeps each new run here.
    pub memo: Option<&'a RunMemo>,
    /// Once set, no further run starts (runs under way finish); a cancelled experiment is an
    /// internal error. For callers that can be interrupted without ending the process (the
    /// Python package's Ctrl-C).
    pub cancel: Option<&'a AtomicBool>,
    /// Keeps every job's times in the runs' reports (for `jobs.csv`, one row per job). A run
    /// taken from `memo` is taken as it was made.
    pub per_job: bool,
    /// Measures every application's threads (their `per_thread` reports, for `threads.csv`),
    /// not only rt-app's; a run taken from `memo` is taken as it was made.
    pub per_thread: bool,
}

/// Runs every point of `exp` `exp.repetitions` times as `options` say, returning the runs in
/// plan order. Stops at the first failing run; a run that reaches a bound is not a failure: it
/// is recorded with what it measured and [`RunRecord::stopped`].
pub fn run_experiment(
    exp: &Experiment,
    options: &RunOptions<'_>,
) -> Result<Vec<RunRecord>, LabError> {
    let work: Vec<(usize, u32)> = (0..exp.points.len())
        .flat_map(|p| (0..exp.repetitions).map(move |r| (p, r)))
        .collect();
    let total = work.len();
    let done = DoneCount::default();
    let tick = || done.tick(total, options.progress);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(plan_jobs(exp, options.jobs).jobs)
        .build()
        .map_err(|e| LabError::Internal(format!("cannot start worker threads: {e}")))?;
    pool.install(|| {
        work.par_iter()
            .map(|&(p, r)| {
                if options.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
                    return Err(LabError::Internal(format!("{}: cancelled", exp.name)));
                }
                let record = run_one(exp, &exp.points[p], r, options)?;
                tick();
                Ok(record)
            })
            .collect()
    })
}

/// One run of `point` (repetition `r`): from the memo when it holds it, else simulated (and kept
/// in the memo).
pub(crate) fn run_one(
    exp: &Experiment,
    point: &Point,
    r: u32,
    options: &RunOptions<'_>,
) -> Result<RunRecord, LabError> {
    let seed = exp.seed_of(r);
    let record = |(report, stopped)| RunRecord {
        point: point.label.clone(),
        params: point.params.clone(),
        repetition: r,
        seed,
        report,
        stopped,
    };
    if let Some(outcome) = options.memo.and_then(|m| m.get(&point.key, seed)) {
        return Ok(record(outcome));
    }
    let mut observe = |p| {
        if let Some(running) = options.running {
            running(&point.label, p);
        }
    };
    let sim = SimOptions {
        every: PROGRESS_EVERY,
        observe: Some(&mut observe),
        trace: options.trace.filter(|_| r == 0),
        per_job: options.per_job,
        per_thread: options.per_thread,
    };
    let outcome = match point.simulate(seed, sim) {
        Ok(report) => (report, None),
        Err(SimError::Limit {
            bound,
            at,
            events,
            live,
            partial,
        }) => (*partial, Some(Stopped::at(bound, at, events, live))),
        Err(source) => match kept_stuck(source) {
            Ok(outcome) => outcome,
            Err(source) => {
                return Err(LabError::Run {
                    experiment: exp.name.clone(),
                    point: point.label.clone(),
                    repetition: r,
                    seed,
                    source,
                })
            }
        },
    };
    if let Some(m) = options.memo {
        m.put(&point.key, seed, outcome.clone());
    }
    Ok(record(outcome))
}

/// A run that could not go on (a deadlock, a livelock, threads no processor takes), kept with
/// what it measured up to then, as a run stopped at a bound is; any other error as it is.
fn kept_stuck(e: SimError) -> Result<(RunReport, Option<Stopped>), SimError> {
    let why = e.to_string();
    match e {
        SimError::Deadlock {
            blocked: n,
            partial: Some(p),
            ..
        }
        | SimError::Livelock {
            spinning: n,
            partial: Some(p),
            ..
        }
        | SimError::Stranded {
            ready: n,
            partial: Some(p),
            ..
        } => {
            let stopped = Stopped::stuck(why, p.elapsed_cycles, p.events, n as u64);
            Ok((*p, Some(stopped)))
        }
        other => Err(other),
    }
}

/// The error for runs that stopped at a bound or could not go on: bad input (exit code 2) naming the file, the
/// field to raise and its line when the file writes it, after the results were written. With
/// runs stopped at different bounds, it counts those at each and names the first run's field.
/// `None` when every run finished.
pub fn stopped_error(exp: &Experiment, runs: &[RunRecord]) -> Option<LabError> {
    let stopped: Vec<(&RunRecord, &Stopped)> = runs
        .iter()
        .filter_map(|r| Some((r, r.stopped.as_ref()?)))
        .collect();
    let (first, why) = stopped.first()?;
    // How many stopped at each bound (or stuck), in the order first met.
    let mut at: Vec<(&str, usize)> = Vec::new();
    for (_, s) in &stopped {
        match at.iter_mut().find(|(f, _)| *f == s.field) {
            Some((_, n)) => *n += 1,
            None => at.push((s.field, 1)),
        }
    }
    let mut message = format!("{} of {} run(s) did not finish", stopped.len(), runs.len());
    if at.len() > 1 {
        let counts: Vec<String> = at
            .iter()
            .map(|(f, n)| {
                if f.is_empty() {
                    format!("{n} stuck")
                } else {
                    format!("{n} at `{f}`")
                }
            })
            .collect();
        message.push_str(&format!(" ({}); the first,", counts.join(", ")));
    } else {
        message.push(';');
    }
    message.push_str(&format!(
        " point `{}` (repetition {}), {}",
        first.point,
        first.repetition,
        why.describe()
    ));
    let line = exp
        .limit_lines
        .iter()
        .find(|(f, _)| *f == why.field)
        .map(|&(_, l)| l);
    Some(LabError::Input(Box::new(crate::input::error::InputError {
        file: exp.path.clone(),
        line,
        field: why.field.to_string(),
        message,
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finished_runs_are_told_in_order_and_the_last_report_says_all() {
        // Eight workers finishing 2,000 runs each: every count is told once, in order, so the
        // last report is the total (counted apart from the telling, a late 3 could follow a 4).
        let (count, told) = (DoneCount::default(), Mutex::new(Vec::new()));
        let progress = |n: usize, total: usize| told.lock().unwrap().push((n, total));
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| (0..2000).for_each(|_| count.tick(16_000, Some(&progress))));
            }
        });
        let told = told.into_inner().unwrap();
        assert_eq!(told.len(), 16_000);
        assert!(told.iter().enumerate().all(|(i, &t)| t == (i + 1, 16_000)));
    }

    #[test]
    fn runs_at_once_never_exceed_the_cores() {
        let text = "name = \"j\"\n[machine]\npreset = \"tango-12\"\n[scheduler]\n\
                    policy = \"batch\"\n[[workload]]\n\
                    kind = \"synthetic\"\nthreads = 1\nbursts = 1\n\
                    compute = { dist = \"fixed\", value = 10 }\n";
        let exp = Experiment::parse(std::path::Path::new("j.toml"), text.into()).unwrap();
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        assert!(plan_jobs(&exp, 100_000).jobs <= cores);
        assert_eq!(plan_jobs(&exp, 1).jobs, 1);
        assert_eq!(plan_jobs(&exp, 0).jobs, plan_jobs(&exp, cores).jobs);
    }
}
