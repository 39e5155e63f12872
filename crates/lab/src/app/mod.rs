//! The commands as a front end calls them: [`run`] an experiment file, [`reproduce`] papers,
//! [`list`] and [`explain`]; what they print goes through a [`Console`], so the `smpsched`
//! binary only parses arguments and draws. The top of the pipeline: nothing in the lab imports it.
//! Its parts: one file's reproduction ([`reproduction`]), one paper's on disk ([`mod@papers`]), a
//! paper's at several seeds or values side by side ([`across`], plotted by [`across_plot`]), and
//! what `list` and `explain` show ([`catalog`]).

pub mod across;
pub mod across_plot;
pub mod catalog;
pub mod papers;
pub mod repro_plots;
pub mod reproduction;
pub mod trace_request;

use std::path::{Path, PathBuf};

use smpsched_sim::Progress;

use crate::app::papers::{papers, run_paper, Listeners, PaperOutcome, Variant};
use crate::exec::runner::{plan_jobs, run_experiment, stopped_error, RunMemo, RunOptions};
use crate::exec::shard::{prefill, Bundle, Exec, Remote};
use crate::input::error::{InputError, LabError};
use crate::input::setting::{check_distinct, Setting};
use crate::reproduce::terminal::render_terminal;
use crate::results::{terminal_table, Delivered, Destination, Outbox};
use crate::spec::experiment::Experiment;
use crate::store::output::folder_name;
use crate::store::traces;
pub use trace_request::TraceRequest;

/// Where a command's output goes: lines for people, notes, and a progress display of runs.
pub trait Console: Sync {
    /// A line of results (standard output).
    fn print(&self, line: &str);
    /// A note or warning (standard error).
    fn note(&self, line: &str);
    /// A progress display begins (one per `run`, one per paper of `reproduce`).
    fn begin(&self);
    /// A note about the runs, shown with the progress display (and only where it is shown).
    fn progress_note(&self, line: &str);
    /// A stage of `total` runs named `name` begins on the display.
    fn stage(&self, total: usize, name: &str);
    /// `done` runs of the stage have finished.
    fn done(&self, done: usize);
    /// How far a run under way has come, in a line.
    fn running(&self, line: String);
    /// The progress display ends and is cleared.
    fn finish(&self);
}

/// What `smpsched run` was asked.
#[derive(Clone, Debug)]
pub struct RunArgs {
    /// The experiment file.
    pub file: PathBuf,
    /// Exactly this results folder, or a fresh one under `results/NAME/`.
    pub out: Option<PathBuf>,
    /// Replace the results already in `out`.
    pub force: bool,
    /// Base seed, overriding the file's.
    pub seed: Option<u64>,
    /// Values set over the file (`--set PATH=VALUE`).
    pub set: Vec<Setting>,
    /// Runs at once (0: one per core).
    pub jobs: usize,
    /// No table and no progress; only the paths written.
    pub quiet: bool,
    /// A trace of each point's first repetition into this folder.
    pub trace: Option<(PathBuf, TraceRequest)>,
    /// Also write `jobs.csv`: one row per job, every run's every job.
    pub per_job: bool,
    /// Measure every application's threads and write `threads.csv`: one row per thread.
    pub per_thread: bool,
}

/// Runs an experiment file: checks the destination, runs every point (on `remote` when it is
/// given, see [`crate::exec::shard`]), writes the results (and traces), prints the table and the
/// paths; a run stopped at a bound makes it an input error.
pub fn run(
    args: &RunArgs,
    remote: Option<&dyn Remote>,
    console: &dyn Console,
) -> Result<(), LabError> {
    let (mut bundle, exp) = load_run(args, console)?;
    bundle.per_job = args.per_job;
    bundle.per_thread = args.per_thread;
    if let (Some(out), Some((trace, _))) = (&args.out, &args.trace) {
        traces::check_apart(trace, out)?;
    }
    // The output is checked (and a staging folder made) before anything runs.
    let dest = match &args.out {
        Some(dir) => Destination::Exactly {
            dir: dir.clone(),
            replace: args.force,
        },
        None => Destination::Under(Path::new("results").join(folder_name(&exp.name))),
    };
    let outbox = Outbox::prepare(dest, &args.file)?.with_threads(args.per_thread);
    let (trace_config, trace_staging) = trace_request::prepare(args.trace.as_ref(), &exp)?;
    let memo = RunMemo::default();
    match remote {
        Some(remote) => prefill(&[&exp], &[bundle], remote, &memo)?,
        None => {
            if let Some(note) = plan_jobs(&exp, args.jobs).note() {
                console.note(&note);
            }
        }
    }
    // Runs the cluster made are merged here at once: no second bar counting them again.
    if remote.is_none() {
        console.begin();
    }
    console.stage(exp.points.len() * exp.repetitions as usize, "");
    let progress = |done: usize, _| console.done(done);
    let running = |point: &str, p| console.running(running_message(&exp, point, p));
    let options = RunOptions {
        jobs: args.jobs,
        progress: Some(&progress),
        running: Some(&running),
        trace: trace_config,
        memo: remote.map(|_| &memo),
        per_job: args.per_job,
        per_thread: args.per_thread,
        ..RunOptions::default()
    };
    let runs = run_experiment(&exp, &options);
    console.finish();
    let runs = runs?;
    let written = outbox.deliver(&exp, &runs)?;
    if !args.quiet {
        console.print(&terminal_table(&exp, &runs));
        if args.per_thread {
            console.print(&crate::results::threads::terminal_section(&exp, &runs));
        }
    }
    tell_written(&written, console);
    if let (Some((dir, _)), Some(staging)) = (&args.trace, trace_staging) {
        let written = traces::write_traces(&exp, &runs, dir, staging)?;
        for f in &written.files {
            console.print(&format!("wrote {}", f.display()));
        }
        for (point, at) in written.truncated {
            console.note(&format!(
                "note: the trace of {point} stopped at cycle {at}: it reached --trace-events"
            ));
        }
    }
    // Runs that stopped at a bound are in the results, marked; the command says so and fails.
    match stopped_error(&exp, &runs) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Loads the experiment file `run` was given, with its settings (`--set`, each path once), and
/// tells its notes and what the command line set over it.
fn load_run(args: &RunArgs, console: &dyn Console) -> Result<(Bundle, Experiment), LabError> {
    check_distinct(&args.set, &[]).map_err(|message| {
        LabError::Input(Box::new(InputError {
            file: PathBuf::from("smpsched run"),
            line: None,
            field: "--set".into(),
            message,
        }))
    })?;
    let (bundle, exp) = Bundle::load_set(&args.file, 1.0, args.seed, &args.set)?;
    for note in &exp.notes {
        console.note(note);
    }
    if !exp.settings.is_empty() {
        let set: Vec<String> = exp.settings.iter().map(Setting::label).collect();
        console.note(&format!(
            "note: not the file as written: {} set from the command line (recorded in \
             results.json)",
            set.join(", ")
        ));
    }
    Ok((bundle, exp))
}

/// Prints the result files written and where `latest` points.
fn tell_written(written: &Delivered, console: &dyn Console) {
    for w in &written.files {
        console.print(&format!("wrote {}", w.display()));
    }
    if let Some(latest) = &written.latest {
        console.print(&format!(
            "latest: {} -> {}",
            latest.display(),
            written.dir.display()
        ));
    }
    if let Some(kept) = &written.kept {
        console.note(&kept_note(&written.dir, kept));
    }
}

/// The note for a results folder whose earlier version, edited since, was set aside.
fn kept_note(dir: &Path, kept: &Path) -> String {
    format!(
        "note: {} held the same run with files edited or removed since; that version is kept \
         in {}",
        dir.display(),
        kept.display()
    )
}

/// A line on how far a long run has come: events so far, simulated time, and how near it is
/// to its bound.
fn running_message(exp: &Experiment, point: &str, p: Progress) -> String {
    let clock = exp
        .points
        .iter()
        .find(|x| x.label == point)
        .map_or(1.0, |x| x.machine.clock_mhz);
    format!(
        "| {point}: {:.1} M events, {:.3} s simulated, {:.0}% of its limit",
        p.events as f64 / 1e6,
        p.now as f64 / clock / 1e6,
        100.0 * p.fraction_of_limit()
    )
}

/// What `smpsched reproduce` was asked.
#[derive(Clone, Debug)]
pub struct ReproduceArgs {
    /// A paper's folder name, or `all`.
    pub paper: String,
    /// Of one paper, the files to reproduce by name without `.toml` (`--only table4`); empty:
    /// every file.
    pub only: Vec<String>,
    /// Factor on problem sizes and run lengths.
    pub scale: f64,
    /// Base seed of every file, over the files' own.
    pub seed: Option<u64>,
    /// Base seeds to run every file from, one reproduction each, then a report across them
    /// (none: the one reproduction `seed` asks for).
    pub seeds: Vec<u64>,
    /// Values set over every file (`--set PATH=VALUE`).
    pub set: Vec<Setting>,
    /// The paths to vary, each with its values (`--vary PATH=V1,V2,...`, once per path): one
    /// reproduction at each value, or at each combination of the values of several paths, then
    /// a report across them (none: no such report). Not with `seeds`.
    pub vary: Vec<Vec<Setting>>,
    /// Runs at once (0: one per core).
    pub jobs: usize,
    /// Fail when a claim fails (known differences excepted).
    pub strict: bool,
    /// The folder of experiment files.
    pub experiments: PathBuf,
    /// The folder of reports.
    pub reports: PathBuf,
}

/// Reproduces one paper or all (its runs made on `remote` when it is given, see
/// [`crate::exec::shard`]): runs each, writes its reports, prints each file's table, the summary and
/// where the report is; with `seeds`, runs each paper from every seed in turn and writes the
/// report across them ([`across`]); with `strict`, a failed claim (at any seed) is an error.
pub fn reproduce(
    args: &ReproduceArgs,
    remote: Option<&dyn Remote>,
    console: &dyn Console,
) -> Result<(), LabError> {
    let scale = args.scale;
    if !(scale.is_finite() && scale > 0.0 && scale <= 100.0) {
        return Err(LabError::Input(Box::new(InputError {
            file: PathBuf::from("--scale"),
            line: None,
            field: String::new(),
            message: format!("must be a number between 0 and 100, got {scale}"),
        })));
    }
    check_settings(args)?;
    if !args.only.is_empty() && args.paper == "all" {
        return Err(LabError::Input(Box::new(InputError {
            file: PathBuf::from("smpsched reproduce"),
            line: None,
            field: "--only".into(),
            message: "name the paper whose files these are (smpsched reproduce PAPER --only FILE)"
                .into(),
        })));
    }
    let list = paper_list(&args.paper, &args.experiments, console)?;
    let runs = variants(args)?;
    // Each combination `--vary` asks for is loaded before anything runs, so that a bad value
    // (the last of a hundred, say) is refused at once, not after the runs before it.
    if !args.vary.is_empty() {
        for p in &list {
            for (variant, _) in runs.iter().skip(1) {
                crate::app::papers::check_loads(&args.experiments, p, scale, variant)?;
            }
        }
    }
    let mut failed = 0;
    for p in &list {
        let mut outcomes = Vec::new();
        for (k, (variant, what)) in runs.iter().enumerate() {
            // With several runs: which one of how many, and the files' notes told once.
            let name = match what {
                Some(what) => format!("{p} {what} ({} of {})", k + 1, runs.len()),
                None => p.clone(),
            };
            let outcome = reproduce_paper(args, (p, &name), variant, k == 0, remote, console)?;
            failed += outcome.failed_claims();
            outcomes.push(outcome);
        }
        let across = write_across(args, p, &outcomes)?;
        if let Some((path, report)) = across {
            console.print(&format!("{p}: {}", report.summary_line()));
            console.print(&format!(
                "report across the {}s: {}\n",
                report.run_noun(),
                path.display()
            ));
        }
    }
    if args.strict && failed > 0 {
        return Err(LabError::Internal(format!(
            "{failed} claim(s) failed (--strict)"
        )));
    }
    Ok(())
}

/// With `--seeds` or `--vary`, writes the report across the reproductions of paper `p` (their
/// outcomes in order); returns its path and the report.
fn write_across(
    args: &ReproduceArgs,
    p: &str,
    outcomes: &[PaperOutcome],
) -> Result<Option<(PathBuf, across::AcrossReport)>, LabError> {
    let (reports, scale) = (&args.reports, args.scale);
    let base = base_variant(args, args.seed);
    if !args.seeds.is_empty() {
        let written = across::write_seeds_report(reports, p, scale, &args.seeds, &base, outcomes);
        return written.map(Some);
    }
    if args.vary.is_empty() {
        return Ok(None);
    }
    across::write_vary_report(reports, p, scale, &base, &args.vary, outcomes).map(Some)
}

/// The reproductions `args` asks for, each with what tells it from the others when there are
/// several (`at seed 3`, `with workload.0.random_ms = 0.05`).
fn variants(args: &ReproduceArgs) -> Result<Vec<(Variant, Option<String>)>, LabError> {
    let with = |seed: Option<u64>| base_variant(args, seed);
    if !args.seeds.is_empty() {
        return Ok(args
            .seeds
            .iter()
            .map(|&s| (with(Some(s)), Some(format!("at seed {s}"))))
            .collect());
    }
    if !args.vary.is_empty() {
        let runs = across::vary_runs(&with(args.seed), &args.vary).map_err(LabError::Internal)?;
        return Ok(runs
            .into_iter()
            .map(|(v, label)| (v, Some(format!("with {label}"))))
            .collect());
    }
    Ok(vec![(with(args.seed), None)])
}

/// The reproduction `args` asks for from base seed `seed`: its files and the values it sets.
fn base_variant(args: &ReproduceArgs, seed: Option<u64>) -> Variant {
    Variant::new(args.only.clone(), seed, args.set.clone())
}

/// Checks the settings against each other and the other options: each path set once, and
/// `--vary` neither with `--seeds` nor with fewer than two values a path nor with more
/// combinations than one command runs.
fn check_settings(args: &ReproduceArgs) -> Result<(), LabError> {
    let bad = |message: String| {
        LabError::Input(Box::new(InputError {
            file: PathBuf::from("smpsched reproduce"),
            line: None,
            field: if args.vary.is_empty() {
                "--set"
            } else {
                "--vary"
            }
            .into(),
            message,
        }))
    };
    if !args.vary.is_empty() && !args.seeds.is_empty() {
        return Err(bad("give --vary or --seeds, not both".into()));
    }
    if args.vary.iter().any(|axis| axis.len() < 2) {
        return Err(bad("give at least two values (for one, use --set)".into()));
    }
    let varied: Vec<Setting> = args
        .vary
        .iter()
        .filter_map(|a| a.first().cloned())
        .collect();
    check_distinct(&args.set, &varied).map_err(bad)?;
    crate::input::setting::grid(&args.vary)
        .map(|_| ())
        .map_err(bad)
}

/// Reproduces paper `p` as `variant` says (base seed, settings): runs it, writes its report and
/// prints each file's table (only the summary when several run), the summary and where the
/// report is. `name` is what the progress display and the summary call it; the files' notes are
/// told only when `notes`.
fn reproduce_paper(
    args: &ReproduceArgs,
    (p, name): (&str, &str),
    variant: &Variant,
    notes: bool,
    remote: Option<&dyn Remote>,
    console: &dyn Console,
) -> Result<PaperOutcome, LabError> {
    console.begin();
    let told = std::sync::Mutex::new(Vec::<String>::new());
    let outcome = run_paper(
        &args.experiments,
        p,
        args.scale,
        variant,
        Exec {
            jobs: args.jobs,
            remote,
            cancel: None,
        },
        &args.reports,
        Listeners {
            on_runs: &|runs, plan| {
                if let Some(note) = plan.note() {
                    console.progress_note(&note);
                }
                console.stage(runs, &format!("{name}: every file's runs"));
            },
            on_file: &|exp| {
                // A note every file gets (a deprecated name from --set) is told once.
                let mut told = told.lock().unwrap_or_else(|e| e.into_inner());
                for note in exp.notes.iter().filter(|_| notes) {
                    if !told.contains(note) {
                        told.push(note.clone());
                        console.note(note);
                    }
                }
                console.stage(exp.points.len() * exp.repetitions as usize, &exp.name);
            },
            progress: &|done, _| console.done(done),
        },
    );
    console.finish();
    let outcome = outcome?;
    for (path, why) in &outcome.skipped {
        console.note(&format!("note: skipped {}: {why}", path.display()));
    }
    if args.seeds.is_empty() && args.vary.is_empty() {
        for f in &outcome.report.files {
            console.print(&render_terminal(f));
        }
    }
    console.print(&format!("{name}: {}", outcome.report.summary()));
    if let Some(kept) = &outcome.kept {
        console.note(&kept_note(&outcome.run_dir, kept));
    }
    console.print(&format!(
        "report: {} (this run is kept in {})\n",
        outcome.latest.display(),
        outcome.run_dir.display()
    ));
    Ok(outcome)
}

/// The papers `paper` names: itself, or for `all` every paper folder under `experiments`.
fn paper_list(
    paper: &str,
    experiments: &Path,
    console: &dyn Console,
) -> Result<Vec<String>, LabError> {
    if paper != "all" {
        return Ok(vec![paper.to_string()]);
    }
    let all = papers(experiments)?;
    if all.is_empty() {
        return Err(LabError::Input(Box::new(InputError {
            file: experiments.to_path_buf(),
            line: None,
            field: "--experiments".into(),
            message: "holds no reproduction (no experiment file with a [reproduce] section); \
                      name the folder of the repository's experiments"
                .into(),
        })));
    }
    console.note(&format!(
        "reproducing every paper under {}: {} (name one to reproduce only it)",
        experiments.display(),
        all.join(", ")
    ));
    Ok(all)
}

/// What `smpsched list` prints: the papers and experiment files under `dir` (the default
/// `experiments` when `None`), and the policies, workloads, structures and presets.
pub fn list(dir: Option<&Path>) -> Result<String, LabError> {
    let explicit = dir.is_some();
    let dir = dir.unwrap_or(Path::new("experiments"));
    catalog::listing(dir, explicit)
}

/// What `smpsched explain NAME` prints; an unknown name is an input error listing the known.
pub fn explain(name: &str, experiments: &Path) -> Result<String, LabError> {
    catalog::explain(name, experiments).ok_or_else(|| {
        LabError::Input(Box::new(InputError {
            file: PathBuf::from("explain"),
            line: None,
            field: String::new(),
            message: if catalog::is_measure(name) {
                format!(
                    "`{name}` is a measure, not a policy, workload, structure, preset or \
                     paper: `smpsched list` describes every measure"
                )
            } else {
                format!(
                    "nothing is called `{name}`; known names: {}",
                    catalog::explainable(experiments).join(", ")
                )
            },
        }))
    })
}
