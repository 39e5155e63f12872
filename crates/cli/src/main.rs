//! The `smpsched` command: a thin layer that parses arguments and calls `smpsched-lab`.
//!
//! Exit codes: 0 success, 2 bad input (file, line and field are named), 1 internal error.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use smpsched_lab::reproduce::report::render_terminal;
use smpsched_lab::reproduction::{papers, run_paper};
use smpsched_lab::{
    catalog, plan_jobs, run_experiment, terminal_table, write_results, Experiment, InputError,
    LabError,
};

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
    /// Prints a table of means per point and writes DIR/results.csv, DIR/results.json and
    /// DIR/time-split.svg (where the machine's time went, per point).
    Run {
        /// The experiment file (TOML), e.g. experiments/quickstart.toml.
        file: PathBuf,
        /// Folder for the results [default: `results/NAME`, NAME being the experiment's name].
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
        /// Base seed, overriding the file's `seed`.
        #[arg(long, value_name = "N")]
        seed: Option<u64>,
        /// Runs in parallel (0: one per core); fewer if their estimated memory would not fit
        /// in what the machine has (or in SMPSCHED_MEMORY, e.g. 8G, when set).
        #[arg(long, value_name = "N", default_value_t = 0)]
        jobs: usize,
        /// No table and no progress bar; only the paths written.
        #[arg(long)]
        quiet: bool,
    },
    /// Re-run a paper's tables and figures and write a report with our numbers beside the
    /// paper's, each claim's verdict, and plots.
    ///
    /// Writes reports/PAPER.md (the latest) and keeps the run in reports/runs/PAPER-HASH/.
    Reproduce {
        /// A paper (a folder under experiments/, e.g. black90) or `all`.
        #[arg(default_value = "all")]
        paper: String,
        /// Multiply problem sizes and run lengths by this factor (e.g. 0.1 for a quick look).
        #[arg(long, value_name = "F", default_value_t = 1.0)]
        scale: f64,
        /// Runs in parallel (0: one per core); fewer if their estimated memory would not fit
        /// in what the machine has (or in SMPSCHED_MEMORY, e.g. 8G, when set).
        #[arg(long, value_name = "N", default_value_t = 0)]
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
        /// Folder searched for experiment files.
        #[arg(long, value_name = "DIR", default_value = "experiments")]
        dir: PathBuf,
    },
    /// Explain a scheduling policy or workload (what it does, its parameters, its paper section)
    /// or a machine preset (every field it sets).
    Explain {
        /// A name shown by `smpsched list`, e.g. `priority` or `tango-12`.
        name: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            file,
            out,
            seed,
            jobs,
            quiet,
        } => run(&file, out, seed, jobs, quiet),
        Command::Reproduce {
            paper,
            scale,
            jobs,
            strict,
            experiments,
            reports,
        } => reproduce(&paper, scale, jobs, strict, &experiments, &reports),
        Command::List { dir } => catalog::listing(&dir).map(|s| print!("{s}")),
        Command::Explain { name } => match catalog::explain(&name) {
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

/// A folder name made of the experiment's name.
fn folder_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if s.is_empty() {
        "experiment".into()
    } else {
        s
    }
}

fn progress_bar(total: usize, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    // Draws on stderr only when it is a terminal.
    let bar = ProgressBar::new(total as u64);
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} runs")
    {
        bar.set_style(style);
    }
    bar
}

fn run(
    file: &Path,
    out: Option<PathBuf>,
    seed: Option<u64>,
    jobs: usize,
    quiet: bool,
) -> Result<(), LabError> {
    let mut exp = Experiment::load(file)?;
    if let Some(s) = seed {
        exp.seed = s;
    }
    if let Some(note) = plan_jobs(&exp, jobs).note() {
        eprintln!("{note}");
    }
    let total = exp.points.len() * exp.repetitions as usize;
    let bar = progress_bar(total, quiet);
    let runs = run_experiment(&exp, jobs, &|done, _| bar.set_position(done as u64));
    bar.finish_and_clear();
    let runs = runs?;
    let dir = out.unwrap_or_else(|| Path::new("results").join(folder_name(&exp.name)));
    let written = write_results(&dir, &exp, &runs)?;
    if !quiet {
        println!("{}", terminal_table(&exp, &runs));
    }
    for w in written {
        println!("wrote {}", w.display());
    }
    Ok(())
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
        papers(experiments)?
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
