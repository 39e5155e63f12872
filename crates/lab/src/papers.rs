//! A paper's reproduction on disk: every reproduction file of `experiments/PAPER/` is run and
//! the paper's report written (see [`run_paper`]), with an index of every paper reproduced.

use std::path::{Path, PathBuf};

use crate::error::{InputError, LabError};
use crate::experiment::Experiment;
use crate::output::{content_hash, write_atomic, Staging};
use crate::reproduce::markdown::{render_index, render_paper};
use crate::reproduce::report::{PaperReport, Verdict};
use crate::reproduction::reproduce_file;
use crate::shard::{prefill, Bundle, Exec};
use crate::source::Skipped;

/// A paper of the project: the folder of its experiments, its title, and what the lab takes
/// from it.
#[derive(Clone, Copy, Debug)]
pub struct Paper {
    /// The folder under `experiments/` (what `smpsched reproduce` takes).
    pub id: &'static str,
    /// Authors, year and title.
    pub title: &'static str,
    /// What the lab builds from it and what the reproduction covers.
    pub summary: &'static str,
}

/// Papers of the project, by the folder name of their experiments.
pub const PAPERS: &[Paper] = &[
    Paper {
        id: "dibella92",
        title: "DiBella, Ramamritham, Chrysanthis, Raghuram 1992: Scheduling Algorithms and their \
                Performance on Shared Memory Multiprocessors",
        summary: "Multi-access distributed ready queues (a mailbox array and bitmap per \
                  processor, two-level optimistic locking) with six scheduler and five client \
                  policies, against Global and Distributed FCFS queues, on a 16-processor \
                  Sequent Symmetry; delay, throughput and load distribution. Reproduced: Table \
                  4's 30 policy pairs, Table 6, Figures 2-7, the bidirectional option.",
    },
    Paper {
        id: "gupta91",
        title: "Gupta, Tucker, Urushibara 1991: The Impact of Operating System Scheduling \
                Policies and Synchronization Methods on the Performance of Parallel \
                Applications",
        summary: "Four parallel applications (MP3D, LU, Maxflow, Matmul) multiprogrammed on a \
                  simulated 12-processor bus machine with caches under priority scheduling, \
                  busy-waiting and spin-then-block locks, handoff, cache affinity, gang \
                  scheduling, partitioning and process control; utilization split into useful \
                  work, cache-miss stall and synchronization. Reproduced: Table 1, Figures \
                  1-10.",
    },
    Paper {
        id: "george90",
        title: "George 1990: A Scheduling Strategy for Shared Memory Multiprocessors",
        summary: "Distributed Dual Queues: a tree of atomic counters over dual queues, lazy \
                  ascends and several trees, against a centralized queue with exponential \
                  backoff, on a NUMA machine (BBN GP1000, remote:local 5:1) up to 256 \
                  processors; producer/consumer and prime-sieve loads. Reproduced: Figures 1, 5 \
                  and 6, section 2.4's atomics per operation.",
    },
    Paper {
        id: "black90",
        title: "Black 1990: Scheduling Support for Concurrency and Parallelism in the Mach \
                Operating System",
        summary: "The Mach scheduler (32-level run queues with hint and count, local and global \
                  queues, 5/8 usage aging with the overload factor, quanta, idle-processor \
                  handoff), thread_switch hints and handoff, processor sets and a gang \
                  allocation server, on an Encore Multimax. Reproduced: Tables 2, 3 and 4 and \
                  the gang server's latency.",
    },
    Paper {
        id: "weibel",
        title: "Weibel: Theoretical and Experimental Approach to SMP Scheduling",
        summary: "A global run queue against per-core run queues with and without pull \
                  migration, push migration, affinity masks, thread pools against one thread \
                  per work item, on a quad-core Cortex-A53 (Raspberry Pi 3); user and kernel \
                  instructions, cycles and cache refills. Reproduced: Tables 1-11 and a sweep \
                  of the pull interval.",
    },
];

/// The paper whose folder is `id`.
pub fn paper(id: &str) -> Option<&'static Paper> {
    PAPERS.iter().find(|p| p.id == id)
}

/// The error for a missing experiments folder: where it looked and how to point elsewhere.
pub fn no_experiments_folder(dir: &Path) -> LabError {
    let cwd = std::env::current_dir().map_or_else(|_| ".".into(), |d| d.display().to_string());
    LabError::Input(Box::new(InputError {
        file: dir.to_path_buf(),
        line: None,
        field: String::new(),
        message: format!(
            "no experiments folder here (looked for `{}` from {cwd}); run smpsched from the \
             repository root, or name the folder with --experiments DIR",
            dir.display()
        ),
    }))
}

/// The folders under `dir` that hold at least one experiment file with a `[reproduce]` section.
pub fn papers(dir: &Path) -> Result<Vec<String>, LabError> {
    if !dir.is_dir() {
        return Err(no_experiments_folder(dir));
    }
    let mut out = Vec::new();
    for f in crate::source::experiment_files(dir)? {
        // A file that cannot be read is no reproduction; `list` and `run_paper` name it.
        let Ok(text) = crate::source::read_experiment(&f) else {
            continue;
        };
        let is_repro = toml::from_str::<toml::Table>(&text)
            .map(|t| t.contains_key("reproduce"))
            .unwrap_or(false);
        if let (true, Some(parent)) = (is_repro, f.parent().and_then(|p| p.file_name())) {
            let name = parent.to_string_lossy().to_string();
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// What one paper's reproduction produced.
pub struct PaperOutcome {
    /// The paper's report.
    pub report: PaperReport,
    /// The latest report, `REPORTS/PAPER.md` (`REPORTS/PAPER-scale-F.md` at another scale).
    pub latest: PathBuf,
    /// The folder where this run's report is kept (`REPORTS/runs/PAPER-HASH/`).
    pub run_dir: PathBuf,
    /// Files of the paper's folder that could not be read, with why (not in the report).
    pub skipped: Vec<(PathBuf, String)>,
}

impl PaperOutcome {
    /// Claims that fail (known differences excluded).
    pub fn failed_claims(&self) -> usize {
        self.report
            .files
            .iter()
            .flat_map(|f| &f.claims)
            .filter(|c| matches!(c.verdict, Verdict::Fails | Verdict::Error { .. }))
            .count()
    }
}

/// Checks that `paper` names a reproduction: a plain folder name (letters, digits, `-`, `_`)
/// directly under `exp_dir` holding at least one file with a `[reproduce]` section.
fn check_paper(exp_dir: &Path, paper: &str) -> Result<PathBuf, LabError> {
    let bad = |message: String| {
        LabError::Input(Box::new(InputError {
            file: exp_dir.join(paper),
            line: None,
            field: "PAPER".into(),
            message,
        }))
    };
    let known = || papers(exp_dir).map(|p| p.join(", "));
    // A plain name is one that names its own folder (the rule results folders follow).
    if crate::output::folder_name(paper) != paper {
        return Err(bad(format!(
            "`{paper}` is not a paper: a paper is the name of a folder directly under {} \
             (letters, digits, - and _); reproductions: {}",
            exp_dir.display(),
            known()?
        )));
    }
    let dir = exp_dir.join(paper);
    if !dir.is_dir() {
        return Err(bad(format!(
            "no reproduction folder for `{paper}`; reproductions: {}",
            known()?
        )));
    }
    Ok(dir)
}

/// The reproduction files of `paper` (loaded and validated at `scale`, with their bundles for
/// a remote run) and the files skipped as unreadable; a paper with none is bad input.
fn load_paper(
    exp_dir: &Path,
    paper: &str,
    scale: f64,
) -> Result<(Vec<Experiment>, Vec<Bundle>, Skipped), LabError> {
    let dir = check_paper(exp_dir, paper)?;
    let mut exps = Vec::new();
    let mut bundles = Vec::new();
    let (found, mut skipped) = crate::source::find_experiment_files(&dir)?;
    for f in found {
        // A file that cannot be read (a FIFO, a device, binary) is skipped and named; one that
        // reads but does not validate is an error, as for `smpsched run`.
        if let Err(e) = crate::source::read_experiment(&f) {
            skipped.push((f, e.message));
            continue;
        }
        let (bundle, exp) = Bundle::load(&f, scale, None)?;
        if exp.reproduce.is_some() {
            exps.push(exp);
            bundles.push(bundle);
        }
    }
    if exps.is_empty() {
        return Err(LabError::Input(Box::new(InputError {
            file: dir.clone(),
            line: None,
            field: "PAPER".into(),
            message: format!(
                "holds no reproduction (no experiment file with a [reproduce] section); \
                 reproductions: {}; run a plain experiment with `smpsched run FILE`",
                papers(exp_dir)?.join(", ")
            ),
        })));
    }
    Ok((exps, bundles, skipped))
}

/// Writes the run folder (report, JSON, plots) through `staging`, then the latest report and
/// JSON (drawing plots from the run folder) and the index; returns the latest report's path and
/// the run folder.
fn write_reports(
    paper: &str,
    scale: f64,
    report: &PaperReport,
    plots: &[(String, String)],
    staging: Staging,
    reports: &Path,
) -> Result<(PathBuf, PathBuf), LabError> {
    let json = |r: &PaperReport| {
        serde_json::to_string_pretty(r).map_err(|e| LabError::Internal(format!("report: {e}")))
    };
    let mut kept = vec![
        (format!("{paper}.md"), render_paper(report).into_bytes()),
        (format!("{paper}.json"), json(report)?.into_bytes()),
    ];
    for (name, svg) in plots {
        kept.push((format!("{paper}/{name}"), svg.clone().into_bytes()));
    }
    let run_name = format!("{paper}-{:016x}", content_hash(&kept));
    staging.write_all(&kept)?;
    let run_dir = staging.commit(&run_name)?;

    // The latest report draws its plots from the run folder.
    let mut latest_report = report.clone();
    for f in &mut latest_report.files {
        for p in &mut f.plots {
            p.path = format!("runs/{run_name}/{}", p.path);
        }
    }
    let stem = if scale == 1.0 {
        paper.to_string()
    } else {
        format!("{paper}-scale-{scale}")
    };
    let latest = reports.join(format!("{stem}.md"));
    // Temporary files of reproductions that were killed while writing.
    crate::output::remove_stale(reports);
    write_atomic(&latest, render_paper(&latest_report).as_bytes())?;
    write_atomic(
        &reports.join(format!("{stem}.json")),
        json(&latest_report)?.as_bytes(),
    )?;
    write_index(reports)?;
    Ok((latest, run_dir))
}

/// Runs every reproduction file of `paper` under `exp_dir` at `scale` and writes the report.
/// Every file is loaded and the reports folder checked before anything runs. The run is kept
/// whole in `reports/runs/PAPER-HASH/` (report, JSON, plots; content-addressed, renamed into
/// place in one step, never overwritten); `reports/PAPER.md` (or `PAPER-scale-F.md`) is the
/// latest, replaced in one rename and drawing its plots from the run folder; `reports/index.md`
/// lists every paper reproduced so far. With `exec.remote` every run is made there first
/// (see [`crate::shard`]); the report is the same.
pub fn run_paper(
    exp_dir: &Path,
    paper: &str,
    scale: f64,
    exec: Exec<'_>,
    reports: &Path,
    on_file: &dyn Fn(&Experiment),
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<PaperOutcome, LabError> {
    let (exps, bundles, skipped) = load_paper(exp_dir, paper, scale)?;
    let staging = Staging::new(&reports.join("runs"), "--reports", reports)?;
    let mut files = Vec::new();
    let mut plots = Vec::new();
    let memo = crate::runner::RunMemo::default();
    if let Some(remote) = exec.remote {
        prefill(&exps.iter().collect::<Vec<_>>(), &bundles, remote, &memo)?;
    }
    for exp in &exps {
        on_file(exp);
        let r = reproduce_file(exp, exec, paper, progress, &memo)?;
        files.push(r.report);
        plots.extend(r.plots);
    }
    let title = self::paper(paper).map_or_else(|| paper.to_string(), |p| p.title.to_string());
    let at_scale = if scale == 1.0 {
        String::new()
    } else {
        format!(" --scale {scale}")
    };
    let report = PaperReport {
        paper_id: paper.to_string(),
        paper_title: title,
        files,
        generated_by: format!("smpsched reproduce {paper}{at_scale}"),
    };
    let (latest, run_dir) = write_reports(paper, scale, &report, &plots, staging, reports)?;
    Ok(PaperOutcome {
        latest,
        report,
        run_dir,
        skipped,
    })
}

/// Rewrites `reports/index.md`: every report in `reports/` (one per paper and scale).
fn write_index(reports: &Path) -> Result<(), LabError> {
    let mut jsons: Vec<PathBuf> = std::fs::read_dir(reports)
        .map_err(|e| LabError::io(reports, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    jsons.sort();
    let mut index = Vec::new();
    for path in jsons {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let Some(stem) = path.file_stem().map(|s| s.to_string_lossy().to_string()) else {
            continue;
        };
        if let Ok(r) = serde_json::from_str::<PaperReport>(&text) {
            index.push((
                stem.clone(),
                r.paper_title.clone(),
                r.summary().to_string(),
                format!("{stem}.md"),
            ));
        }
    }
    write_atomic(&reports.join("index.md"), render_index(&index).as_bytes())
}
