//! A paper's reproduction on disk: every reproduction file of `experiments/PAPER/` is run and
//! the paper's report written (see [`run_paper`]), with an index of every paper reproduced.

use std::path::{Path, PathBuf};

use crate::error::{InputError, LabError};
use crate::experiment::Experiment;
use crate::output::{content_hash, write_atomic, Staging};
use crate::reproduce::report::{render_index, render_paper, PaperReport, Verdict};
use crate::reproduction::reproduce_file;

/// Papers of the project, by the folder name of their experiments.
pub const PAPERS: &[(&str, &str)] = &[
    (
        "dibella92",
        "DiBella, Ramamritham, Chrysanthis, Raghuram 1992: Scheduling Algorithms and their \
         Performance on Shared Memory Multiprocessors",
    ),
    (
        "gupta91",
        "Gupta, Tucker, Urushibara 1991: The Impact of Operating System Scheduling Policies and \
         Synchronization Methods on the Performance of Parallel Applications",
    ),
    (
        "george90",
        "George 1990: A Scheduling Strategy for Shared Memory Multiprocessors",
    ),
    (
        "black90",
        "Black 1990: Scheduling Support for Concurrency and Parallelism in the Mach Operating \
         System",
    ),
    (
        "weibel",
        "Weibel: Theoretical and Experimental Approach to SMP Scheduling",
    ),
];

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
    for f in crate::catalog::experiment_files(dir)? {
        let text = std::fs::read_to_string(&f).map_err(|e| LabError::io(&f, e))?;
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

/// Runs every reproduction file of `paper` under `exp_dir` at `scale` and writes the report.
/// Every file is loaded and the reports folder checked before anything runs. The run is kept
/// whole in `reports/runs/PAPER-HASH/` (report, JSON, plots; content-addressed, renamed into
/// place in one step, never overwritten); `reports/PAPER.md` (or `PAPER-scale-F.md`) is the
/// latest, replaced in one rename and drawing its plots from the run folder; `reports/index.md`
/// lists every paper reproduced so far.
pub fn run_paper(
    exp_dir: &Path,
    paper: &str,
    scale: f64,
    jobs: usize,
    reports: &Path,
    on_file: &dyn Fn(&Experiment),
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<PaperOutcome, LabError> {
    let dir = check_paper(exp_dir, paper)?;
    let mut exps = Vec::new();
    for f in crate::catalog::experiment_files(&dir)? {
        let exp = Experiment::load_scaled(&f, scale)?;
        if exp.reproduce.is_some() {
            exps.push(exp);
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
    let staging = Staging::new(&reports.join("runs"), "--reports", reports)?;
    let mut files = Vec::new();
    let mut plots = Vec::new();
    for exp in &exps {
        on_file(exp);
        let r = reproduce_file(exp, jobs, paper, progress)?;
        files.push(r.report);
        plots.extend(r.plots);
    }
    let title = PAPERS
        .iter()
        .find(|(id, _)| *id == paper)
        .map_or_else(|| paper.to_string(), |(_, t)| t.to_string());
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
    let json = |r: &PaperReport| {
        serde_json::to_string_pretty(r).map_err(|e| LabError::Internal(format!("report: {e}")))
    };
    let mut kept = vec![
        (format!("{paper}.md"), render_paper(&report).into_bytes()),
        (format!("{paper}.json"), json(&report)?.into_bytes()),
    ];
    for (name, svg) in &plots {
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
    write_atomic(&latest, render_paper(&latest_report).as_bytes())?;
    write_atomic(
        &reports.join(format!("{stem}.json")),
        json(&latest_report)?.as_bytes(),
    )?;
    write_index(reports)?;
    Ok(PaperOutcome {
        latest,
        report,
        run_dir,
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
