//! The `smpsched` command: a thin layer that parses arguments and calls `smpsched-lab`.
//!
//! Exit codes: 0 success, 2 bad input (file, line and field are named), 1 internal error.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod real;
use indicatif::{ProgressBar, ProgressStyle};
use smpsched_lab::output::folder_name;
use smpsched_lab::papers::{papers, run_paper};
use smpsched_lab::reproduce::terminal::render_terminal;
use smpsched_lab::{
    catalog, plan_jobs, run_experiment, stopped_error, terminal_table, traces, Destination,
    Experiment, InputError, LabError, Outbox, RunOptions,
};
use smpsched_sim::trace::TraceConfig;
use smpsched_sim::Progress;

/// A laboratory for scheduling on shared-memory multiprocessors: a deterministic simulator of a
/// multiprogrammed multiprocessor, the kernel policies and ready queues of five classic papers,
/// and reproductions of their tables and figures.
#[derive(Parser)]
#[command(name = "smpsched", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run an experiment file: every point of its sweep and every repetition, in parallel.
    ///
    /// Prints a table of means per point and writes results.csv, results.json and
    /// time-split.svg (where the machine's time went, per point) into a fresh folder
    /// results/NAME/seedS-HASH/, with results/NAME/latest pointing at it: earlier results are
    /// kept. Files are written whole and renamed into place, so an interrupted run leaves no
    /// partial file. Every run is bounded (`time_limit_cycles`, `event_limit` in the file); a
    /// run that reaches a bound is kept in the results, marked, and the command exits with 2.
    Run {
        /// The experiment file (TOML), e.g. experiments/quickstart.toml.
        file: PathBuf,
        /// Write the results into exactly this folder, which must be new or empty (see --force)
        /// [default: a fresh folder under results/NAME/].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// With --out: replace the results already in DIR (whole, in one step).
        #[arg(long, requires = "out")]
        force: bool,
        /// Base seed, overriding the file's `seed`.
        #[arg(long, value_name = "N", allow_negative_numbers = true)]
        seed: Option<u64>,
        /// Runs in parallel (0: one per core); fewer if their estimated memory would not fit
        /// in what the machine has (or in SMPSCHED_MEMORY, e.g. 8G, when set).
        #[arg(long, value_name = "N", default_value_t = 0, allow_negative_numbers = true,
              value_parser = jobs_arg)]
        jobs: usize,
        /// No table and no progress bar; only the paths written.
        #[arg(long)]
        quiet: bool,
        /// Also write a trace of each point's first repetition into DIR (new or empty), as
        /// Chrome trace JSON for Perfetto (ui.perfetto.dev) or chrome://tracing: what each
        /// processor ran, wake-ups, preemptions, blocks, migrations, waits.
        #[arg(long, value_name = "DIR")]
        trace: Option<PathBuf>,
        /// Most events kept per trace; recording stops there and the trace says when.
        #[arg(long, value_name = "N", default_value_t = 50_000, requires = "trace",
              value_parser = trace_events_arg)]
        trace_events: usize,
        /// Trace only this window of simulated time, in milliseconds: FROM:UNTIL (either may be
        /// left out).
        #[arg(long, value_name = "FROM:UNTIL", requires = "trace")]
        trace_window: Option<String>,
    },
    /// Re-run a paper's tables and figures and write a report with our numbers beside the
    /// paper's, each claim's verdict, and plots.
    ///
    /// Keeps the run whole in reports/runs/PAPER-HASH/ (report, JSON and plots, never
    /// overwritten) and points reports/PAPER.md at it as the latest (reports/PAPER-scale-F.md
    /// for another --scale).
    Reproduce {
        /// A paper: black90, gupta91, dibella92, george90, weibel (`smpsched list` shows those
        /// under --experiments), or `all` (the default) for every reproduction.
        #[arg(default_value = "all")]
        paper: String,
        /// Multiply problem sizes and run lengths by this factor (e.g. 0.1 for a quick look).
        #[arg(long, value_name = "F", default_value_t = 1.0)]
        scale: f64,
        /// Runs in parallel (0: one per core); fewer if their estimated memory would not fit
        /// in what the machine has (or in SMPSCHED_MEMORY, e.g. 8G, when set).
        #[arg(long, value_name = "N", default_value_t = 0, allow_negative_numbers = true,
              value_parser = jobs_arg)]
        jobs: usize,
        /// Exit with code 1 if any claim fails (known differences excepted).
        #[arg(long)]
        strict: bool,
        /// Folder of experiment files.
        #[arg(long, value_name = "DIR", default_value = "experiments")]
        experiments: PathBuf,
        /// Folder for reports.
        #[arg(long, value_name = "DIR", default_value = "reports")]
        reports: PathBuf,
    },
    /// List experiment files, scheduling policies, workloads and machine presets.
    List {
        /// Folder searched for experiment files [default: experiments].
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
    /// Explain a scheduling policy or workload (what it does, its parameters, its paper section),
    /// a machine preset (every field it sets) or a paper (what is reproduced, and its files).
    Explain {
        /// A name shown by `smpsched list`, e.g. `priority`, `tango-12` or `gupta91`.
        name: String,
        /// Folder of experiment files, where a paper's reproduction files are looked for.
        #[arg(long, value_name = "DIR", default_value = "experiments")]
        experiments: PathBuf,
    },
    /// Run DiBella's client/scheduler request test on real threads over a real ready queue
    /// (delay, throughput and load distribution per scheduler, as in DiBella's Table 4).
    ///
    /// Client threads post requests carrying a service time; one scheduler thread per queue
    /// services them. Loads: synchronous, uniform or non-uniform asynchronous. The scheduler and
    /// client policies must be a pair of DiBella's Table 3; an incompatible pair or an unknown
    /// name exits with 2 and names the valid choices.
    Real(real::RealArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            file,
            out,
            force,
            seed,
            jobs,
            quiet,
            trace,
            trace_events,
            trace_window,
        } => match trace
            .map(|dir| trace_options(trace_events, trace_window.as_deref()).map(|t| (dir, t)))
            .transpose()
        {
            Ok(trace) => run(&file, out, force, seed, jobs, quiet, trace),
            Err(e) => Err(e),
        },
        Command::Reproduce {
            paper,
            scale,
            jobs,
            strict,
            experiments,
            reports,
        } => reproduce(&paper, scale, jobs, strict, &experiments, &reports),
        Command::Real(args) => return real::main(args),
        Command::List { dir } => {
            let explicit = dir.is_some();
            let dir = dir.unwrap_or_else(|| PathBuf::from("experiments"));
            catalog::listing(&dir, explicit).map(|s| print!("{s}"))
        }
        Command::Explain { name, experiments } => match catalog::explain(&name, &experiments) {
            Some(text) => {
                print!("{text}");
                Ok(())
            }
            None => Err(LabError::Input(Box::new(InputError {
                file: PathBuf::from("explain"),
                line: None,
                field: String::new(),
                message: format!(
                    "nothing is called `{name}`; known names: {}",
                    catalog::explainable().join(", ")
                ),
            }))),
        },
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// `--trace-events N`: 1 to [`traces::MAX_EVENTS`].
fn trace_events_arg(s: &str) -> Result<usize, String> {
    match s.trim().parse::<u128>() {
        Ok(n) if (1..=traces::MAX_EVENTS as u128).contains(&n) => Ok(n as usize),
        _ => Err(format!(
            "must be a whole number from 1 to {}",
            traces::MAX_EVENTS
        )),
    }
}

/// Most runs at once that `--jobs` may ask for.
const MAX_JOBS: usize = 1024;

/// `--jobs N`: 0 (one run per core) to [`MAX_JOBS`], with a message saying so otherwise.
fn jobs_arg(s: &str) -> Result<usize, String> {
    match s.trim().parse::<i128>() {
        Ok(n) if (0..=MAX_JOBS as i128).contains(&n) => Ok(n as usize),
        _ => Err(format!(
            "must be a whole number from 0 (one run per core) to {MAX_JOBS}"
        )),
    }
}

fn progress_bar(total: usize, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    // Draws on stderr only when it is a terminal.
    let bar = ProgressBar::new(total as u64);
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs, about {eta} left {wide_msg}",
    ) {
        bar.set_style(style);
    }
    bar
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

/// The bounds of `--trace`: `events` at most, within `window` (milliseconds, `FROM:UNTIL`).
fn trace_options(events: usize, window: Option<&str>) -> Result<TraceRequest, LabError> {
    let bad = |message: String| {
        LabError::Input(Box::new(InputError {
            file: PathBuf::from("smpsched run"),
            line: None,
            field: "--trace-window".into(),
            message,
        }))
    };
    let (from, until) = match window {
        None => (None, None),
        Some(w) => {
            let (a, b) = w
                .split_once(':')
                .ok_or_else(|| bad(format!("expected FROM:UNTIL in milliseconds, got `{w}`")))?;
            let ms = |s: &str| -> Result<Option<f64>, LabError> {
                if s.trim().is_empty() {
                    return Ok(None);
                }
                match s.trim().parse::<f64>() {
                    Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
                    _ => Err(bad(format!("`{s}` is not a number of milliseconds"))),
                }
            };
            let (from, until) = (ms(a)?, ms(b)?);
            if let (Some(f), Some(u)) = (from, until) {
                if u <= f {
                    return Err(bad(format!(
                        "the window ends ({u} ms) before it starts ({f} ms)"
                    )));
                }
            }
            (from, until)
        }
    };
    Ok(TraceRequest {
        events,
        from,
        until,
    })
}

/// What `--trace` asked for; the window becomes cycles per machine.
#[derive(Clone, Copy)]
struct TraceRequest {
    events: usize,
    from: Option<f64>,
    until: Option<f64>,
}

fn run(
    file: &Path,
    out: Option<PathBuf>,
    force: bool,
    seed: Option<u64>,
    jobs: usize,
    quiet: bool,
    trace: Option<(PathBuf, TraceRequest)>,
) -> Result<(), LabError> {
    let mut exp = Experiment::load(file)?;
    if let Some(s) = seed {
        exp.seed = s;
    }
    // The output is checked (and a staging folder made) before anything runs.
    let dest = match out {
        Some(dir) => Destination::Exactly {
            dir,
            replace: force,
        },
        None => Destination::Under(Path::new("results").join(folder_name(&exp.name))),
    };
    let outbox = Outbox::prepare(dest, file)?;
    if let Some((dir, t)) = &trace {
        traces::check_destination(dir)?;
        let avail = smpsched_lab::budget::available().map_err(|e| LabError::Input(Box::new(e)))?;
        traces::check_budget(exp.points.len(), t.events, avail)?;
    }
    // Every point of a file shares one clock rate in practice; the window is converted with the
    // first point's machine.
    let trace_config = trace.as_ref().map(|(_, t)| {
        let m = &exp.points[0].machine;
        TraceConfig {
            max_events: t.events,
            from: t.from.map_or(0, |ms| m.ms(ms)),
            until: t.until.map_or(u64::MAX, |ms| m.ms(ms)),
        }
    });
    if let Some(note) = plan_jobs(&exp, jobs).note() {
        eprintln!("{note}");
    }
    let total = exp.points.len() * exp.repetitions as usize;
    let bar = progress_bar(total, quiet);
    let progress = |done: usize, _| bar.set_position(done as u64);
    let running = |point: &str, p| bar.set_message(running_message(&exp, point, p));
    let runs = run_experiment(
        &exp,
        &RunOptions {
            jobs,
            progress: Some(&progress),
            running: Some(&running),
            trace: trace_config,
            ..RunOptions::default()
        },
    );
    bar.finish_and_clear();
    let runs = runs?;
    let written = outbox.deliver(&exp, &runs)?;
    if !quiet {
        println!("{}", terminal_table(&exp, &runs));
    }
    for w in &written.files {
        println!("wrote {}", w.display());
    }
    if let Some(latest) = &written.latest {
        println!("latest: {} -> {}", latest.display(), written.dir.display());
    }
    if let Some((dir, _)) = &trace {
        let written = traces::write_traces(&exp, &runs, dir)?;
        for f in &written.files {
            println!("wrote {}", f.display());
        }
        for (point, at) in written.truncated {
            eprintln!(
                "note: the trace of {point} stopped at cycle {at}: it reached --trace-events"
            );
        }
    }
    // Runs that stopped at a bound are in the results, marked; the command says so and fails.
    match stopped_error(&exp, &runs) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn reproduce(
    paper: &str,
    scale: f64,
    jobs: usize,
    strict: bool,
    experiments: &Path,
    reports: &Path,
) -> Result<(), LabError> {
    if !(scale.is_finite() && scale > 0.0 && scale <= 100.0) {
        return Err(LabError::Input(Box::new(InputError {
            file: PathBuf::from("--scale"),
            line: None,
            field: String::new(),
            message: format!("must be a number between 0 and 100, got {scale}"),
        })));
    }
    let list = if paper == "all" {
        let all = papers(experiments)?;
        if all.is_empty() {
            return Err(LabError::Input(Box::new(InputError {
                file: experiments.to_path_buf(),
                line: None,
                field: "--experiments".into(),
                message: "holds no reproduction (no experiment file with a [reproduce] \
                          section); name the folder of the repository's experiments"
                    .into(),
            })));
        }
        eprintln!(
            "reproducing every paper under {}: {} (name one to reproduce only it)",
            experiments.display(),
            all.join(", ")
        );
        all
    } else {
        vec![paper.to_string()]
    };
    let mut failed = 0;
    for p in &list {
        let bar = progress_bar(0, false);
        let outcome = run_paper(
            experiments,
            p,
            scale,
            jobs,
            reports,
            &|exp| {
                if let Some(note) = plan_jobs(exp, jobs).note() {
                    bar.println(note);
                }
                bar.reset();
                bar.set_length((exp.points.len() * exp.repetitions as usize) as u64);
                bar.set_message(exp.name.clone());
            },
            &|done, _| bar.set_position(done as u64),
        );
        bar.finish_and_clear();
        let outcome = outcome?;
        for (path, why) in &outcome.skipped {
            eprintln!("note: skipped {}: {why}", path.display());
        }
        for f in &outcome.report.files {
            println!("{}", render_terminal(f));
        }
        println!("{}: {}", p, outcome.report.summary());
        println!(
            "report: {} (this run is kept in {})\n",
            outcome.latest.display(),
            outcome.run_dir.display()
        );
        failed += outcome.failed_claims();
    }
    if strict && failed > 0 {
        return Err(LabError::Internal(format!(
            "{failed} claim(s) failed (--strict)"
        )));
    }
    Ok(())
}
