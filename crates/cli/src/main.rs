//! The `smpsched` command: a thin layer that parses arguments and calls `smpsched-lab`.
//!
//! Exit codes: 0 success, 2 bad input (file, line and field are named), 1 internal error.

// The options' doc comments are their `--help` text, which names the file's `[sweep]` table
// as written; rustdoc would read it as a link.
#![allow(rustdoc::broken_intra_doc_links)]

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Mutex;

use clap::{Parser, Subcommand};

mod ray;
mod real;
mod stdout;
use indicatif::{ProgressBar, ProgressStyle};
use smpsched_lab::app::{self, Console, ReproduceArgs, RunArgs, TraceRequest};
use smpsched_lab::exec::shard::Remote;
use smpsched_lab::input::setting::Setting;
use smpsched_lab::store::traces;

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
    /// partial file. Every run is bounded (`time_limit_cycles`, `event_limit`,
    /// `reference_limit` in the file); a run that reaches a bound, or cannot go on (a
    /// deadlock, a livelock), is kept in the results, marked, and the command exits with 2.
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
        /// Set a value over the file, in place of its own or the default: a dotted path as
        /// [sweep] writes them, e.g. --set machine.processors=32 (a TOML value, or a bare word
        /// as a string). May be given more than once; results.json records them.
        #[arg(long = "set", value_name = "PATH=VALUE", value_parser = setting_arg)]
        set: Vec<Setting>,
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
        /// Also write jobs.csv: one row per job of every run (arrival, first dispatch, exit,
        /// processor time held, response, wait, slowdown), beside the per-application summary.
        #[arg(long)]
        per_job: bool,
        /// Also write threads.csv: one row per thread of every run (dispatches, runtime, wake-ups,
        /// wake-to-run latency mean, p50 and p99), every application's threads measured.
        #[arg(long)]
        per_thread: bool,
        /// Make the runs on a Ray cluster: its ADDRESS, or none for RAY_ADDRESS, a cluster
        /// started on this machine, or a private local instance. Runs through the Python
        /// package (pip install './crates/py[ray]'; the interpreter is SMPSCHED_PYTHON, default
        /// python3); the files written are those of a local run, byte for byte.
        #[arg(long, value_name = "ADDRESS", num_args = 0..=1, default_missing_value = "",
              conflicts_with = "trace")]
        ray: Option<String>,
    },
    /// Re-run a paper's tables and figures and write a report with our numbers beside the
    /// paper's, each claim's verdict, and plots.
    ///
    /// Keeps the run whole in reports/runs/PAPER-HASH/ (report, JSON and plots, never
    /// overwritten) and points reports/PAPER.md at it as the latest (reports/PAPER-scale-F.md
    /// for another --scale, reports/PAPER-seed-N.md for --seed). With --seeds, reproduces the
    /// paper from each seed and writes reports/PAPER-seeds-A-B.md: which claims hold at every
    /// seed and which turn on the seed. With --vary, the same across values of one constant the
    /// files set (reports/PAPER-vary-PATH-VALUES.md): which claims rest on a guessed constant;
    /// with --vary once per constant, across every combination of their values.
    Reproduce {
        /// A paper: black90, gupta91, dibella92, george90, weibel (`smpsched list` shows those
        /// under --experiments), or `all` (the default) for every reproduction.
        #[arg(default_value = "all")]
        paper: String,
        /// Reproduce only these files of the paper, by name without .toml (a path, sub/table4,
        /// for a file in a subfolder; a list A,B or the option given again, e.g. --only table4;
        /// `smpsched explain PAPER` lists them). The report is reports/PAPER-only-A,B.md (the
        /// files sorted), never the paper's own.
        #[arg(long, value_name = "FILES", value_delimiter = ',')]
        only: Vec<String>,
        /// Multiply problem sizes and run lengths by this factor (e.g. 0.1 for a quick look).
        #[arg(long, value_name = "F", default_value_t = 1.0)]
        scale: f64,
        /// Base seed of every file, overriding the files' `seed` (as `run --seed` does): does
        /// each claim hold at another seed? The report is reports/PAPER-seed-N.md.
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
        /// Reproduce from each of these base seeds (A-B, or a list A,B,C), each with its own
        /// report as --seed writes it, then compare them in reports/PAPER-seeds-A-B.md: the
        /// claims that hold at every seed, those whose verdict turns on the seed, and how far
        /// the agreement with the paper moves. Takes as long as one reproduction per seed.
        #[arg(long, value_name = "SEEDS", conflicts_with = "seed", value_parser = seeds_arg)]
        seeds: Option<SeedList>,
        /// Set a value over every file of the paper, in place of the file's own or its default:
        /// a dotted path as [sweep] writes them, e.g. --set workload.0.random_ms=0.05 (a TOML
        /// value, or a bare word as a string). May be given more than once. The report says so
        /// at its top and is reports/PAPER-set-PATH-VALUE.md, never the paper's own.
        #[arg(long = "set", value_name = "PATH=VALUE", value_parser = setting_arg)]
        set: Vec<Setting>,
        /// Reproduce at each of these values of one setting (PATH=V1,V2,..., e.g.
        /// workload.0.random_ms=0.02,0.05,0.09), each with its own report as --set writes it,
        /// then compare them in reports/PAPER-vary-PATH-VALUES.md: the claims that hold at every
        /// value, those whose verdict turns on it, and the agreement with the paper at each.
        /// Given once per path, at every combination of their values (at most 100), the first
        /// path outermost.
        #[arg(long, value_name = "PATH=VALUES", conflicts_with = "seeds",
              value_parser = vary_arg)]
        vary: Vec<VaryList>,
        /// Runs in parallel (0: one per core); fewer if their estimated memory would not fit
        /// in what the machine has (or in SMPSCHED_MEMORY, e.g. 8G, when set).
        #[arg(long, value_name = "N", default_value_t = 0, allow_negative_numbers = true,
              value_parser = jobs_arg)]
        jobs: usize,
        /// Exit with code 1 if any claim fails (known differences excepted; at any seed with
        /// --seeds, at any value with --vary).
        #[arg(long)]
        strict: bool,
        /// Folder of experiment files.
        #[arg(long, value_name = "DIR", default_value = "experiments")]
        experiments: PathBuf,
        /// Folder for reports.
        #[arg(long, value_name = "DIR", default_value = "reports")]
        reports: PathBuf,
        /// Make the runs on a Ray cluster: its ADDRESS, or none for RAY_ADDRESS, a cluster
        /// started on this machine, or a private local instance. Runs through the Python
        /// package (pip install './crates/py[ray]'; the interpreter is SMPSCHED_PYTHON, default
        /// python3); the files written are those of a local run, byte for byte.
        #[arg(long, value_name = "ADDRESS", num_args = 0..=1, default_missing_value = "")]
        ray: Option<String>,
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
        /// A policy, workload, ready-queue structure, machine preset or paper as `smpsched list`
        /// shows them, e.g. `priority`, `tango-12` or `gupta91`.
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
    stdout::finish(command(Cli::parse()))
}

/// Runs the command `cli` names; its exit code.
fn command(cli: Cli) -> ExitCode {
    let result = match cli.command {
        Command::Run {
            file,
            out,
            force,
            seed,
            set,
            jobs,
            quiet,
            trace,
            trace_events,
            trace_window,
            per_job,
            per_thread,
            ray,
        } => trace
            .map(|dir| TraceRequest::parse(trace_events, trace_window.as_deref()).map(|t| (dir, t)))
            .transpose()
            .and_then(|trace| {
                let remote = remote_of(ray, jobs, quiet)?;
                let args = RunArgs {
                    file,
                    out,
                    force,
                    seed,
                    set,
                    jobs,
                    quiet,
                    trace,
                    per_job,
                    per_thread,
                };
                app::run(&args, remote.as_ref().map(as_remote), &Terminal::new(quiet))
            }),
        Command::Reproduce {
            paper,
            only,
            scale,
            seed,
            seeds,
            set,
            vary,
            jobs,
            strict,
            experiments,
            reports,
            ray,
        } => {
            let args = ReproduceArgs {
                paper,
                only,
                scale,
                seed,
                seeds: seeds.map(|s| s.0).unwrap_or_default(),
                set,
                vary: vary.into_iter().map(|v| v.0).collect(),
                jobs,
                strict,
                experiments,
                reports,
            };
            remote_of(ray, jobs, false).and_then(|remote| {
                app::reproduce(&args, remote.as_ref().map(as_remote), &Terminal::new(false))
            })
        }
        Command::Real(args) => return real::main(args),
        Command::List { dir } => app::list(dir.as_deref()).map(|s| stdout::text(&s)),
        Command::Explain { name, experiments } => {
            app::explain(&name, &experiments).map(|s| stdout::text(&s))
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

/// The cluster `--ray` names, its address checked before anything runs (and a note that
/// `--jobs` does not apply there); `None` without `--ray`.
fn remote_of(
    ray: Option<String>,
    jobs: usize,
    quiet: bool,
) -> Result<Option<ray::Ray>, smpsched_lab::LabError> {
    let Some(address) = ray else {
        return Ok(None);
    };
    ray::check_address(&address)?;
    if jobs != 0 {
        eprintln!(
            "note: --jobs has no effect with --ray: the cluster's CPUs decide how many runs go \
             at once"
        );
    }
    Ok(Some(ray::Ray::new(address, quiet)))
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
/// The seeds `--seeds` names (one value to clap, not a list of values).
#[derive(Clone, Debug)]
struct SeedList(Vec<u64>);

fn seeds_arg(s: &str) -> Result<SeedList, String> {
    smpsched_lab::reproduce::across::parse_seeds(s).map(SeedList)
}

fn setting_arg(s: &str) -> Result<Setting, String> {
    Setting::parse(s)
}

/// The values `--vary` names (one value to clap, not a list of values).
#[derive(Clone, Debug)]
struct VaryList(Vec<Setting>);

fn vary_arg(s: &str) -> Result<VaryList, String> {
    smpsched_lab::input::setting::parse_vary(s).map(VaryList)
}

fn jobs_arg(s: &str) -> Result<usize, String> {
    match s.trim().parse::<i128>() {
        Ok(n) if (0..=MAX_JOBS as i128).contains(&n) => Ok(n as usize),
        _ => Err(format!(
            "must be a whole number from 0 (one run per core) to {MAX_JOBS}"
        )),
    }
}

/// The remote as the lab takes it.
fn as_remote(r: &ray::Ray) -> &dyn Remote {
    r
}

/// A bar of `total` runs on stderr (drawn only when it is a terminal; hidden when `quiet`).
fn progress_bar(total: usize, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total as u64);
    // No count of runs until there are some (a bar staged later): "0/0 runs" while planning.
    let template = if total == 0 {
        "{spinner} [{elapsed_precise}] {wide_msg}"
    } else {
        RUNS_TEMPLATE
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}

/// The bar's look once it counts runs.
const RUNS_TEMPLATE: &str =
    "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} runs, about {eta} left {wide_msg}";

/// The terminal as the lab's [`Console`]: results on stdout, notes on stderr, and a progress
/// bar on stderr (drawn only when it is a terminal; none with --quiet).
struct Terminal {
    quiet: bool,
    bar: Mutex<Option<ProgressBar>>,
}

impl Terminal {
    fn new(quiet: bool) -> Self {
        Terminal {
            quiet,
            bar: Mutex::new(None),
        }
    }

    fn with_bar(&self, f: impl FnOnce(&ProgressBar)) {
        if let Some(bar) = self.bar.lock().ok().as_ref().and_then(|b| b.as_ref()) {
            f(bar);
        }
    }
}

impl Console for Terminal {
    fn print(&self, line: &str) {
        stdout::line(line);
    }

    fn note(&self, line: &str) {
        eprintln!("{line}");
    }

    fn begin(&self) {
        let bar = progress_bar(0, self.quiet);
        if let Ok(mut slot) = self.bar.lock() {
            *slot = Some(bar);
        }
    }

    fn progress_note(&self, line: &str) {
        self.with_bar(|bar| bar.println(line));
    }

    fn stage(&self, total: usize, name: &str) {
        self.with_bar(|bar| {
            bar.reset();
            if let Ok(style) = ProgressStyle::with_template(RUNS_TEMPLATE) {
                bar.set_style(style);
            }
            bar.set_length(total as u64);
            bar.set_message(name.to_string());
        });
    }

    fn done(&self, done: usize) {
        self.with_bar(|bar| bar.set_position(done as u64));
    }

    fn running(&self, line: String) {
        self.with_bar(|bar| bar.set_message(line));
    }

    fn finish(&self) {
        if let Some(bar) = self.bar.lock().ok().and_then(|mut b| b.take()) {
            bar.finish_and_clear();
        }
    }
}
