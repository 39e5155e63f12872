//! A paper's reproduction on disk: every reproduction file of `experiments/PAPER/` is run and
//! the paper's report written (see [`run_paper`]), with an index of every paper reproduced.

use std::path::{Path, PathBuf};

use crate::app::reproduction::reproduce_file;
use crate::exec::pool::Pool;
use crate::exec::runner::JobPlan;
use crate::exec::shard::{prefill, Bundle, Exec};
use crate::input::error::{InputError, LabError};
use crate::input::setting::Setting;
use crate::input::source::Skipped;
use crate::reproduce::markdown::{render_index, render_paper};
use crate::reproduce::report::{PaperReport, Verdict};
use crate::spec::experiment::Experiment;
use crate::store::output::{content_hash, write_atomic, Committed, Staging};
use smpsched_workloads::input::{read_text, MAX_EXPERIMENT_BYTES};

/// The largest report `reports/index.md` reads back (a paper's JSON report is a few
/// megabytes; a file far larger, or no regular file, is passed over).
const MAX_REPORT_BYTES: u64 = 1 << 28;

/// A paper of the project, as its folder under `experiments/` describes it: the folder's
/// `README.md` opens with the paper's title as a `# ` heading and a paragraph on what the lab
/// takes from it. The list of papers is the folders that exist ([`papers`]); nothing else names
/// them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Paper {
    /// The folder under `experiments/` (what `smpsched reproduce` takes).
    pub id: String,
    /// Authors, year and title (the README's heading).
    pub title: String,
    /// What the lab builds from it and what the reproduction covers (the README's first
    /// paragraph, its lines joined).
    pub summary: String,
}

/// The README.md of every paper folder of the repository's `experiments/` when the lab was built
/// (by build.rs), so that a paper is described outside the repository too.
mod built_in {
    include!(concat!(env!("OUT_DIR"), "/papers.rs"));
}

/// The paper whose folder is `dir/id`, from the folder's `README.md` (or, without the folder,
/// the one built in); `None` if there is none or it does not open with a `# ` heading.
pub fn paper(dir: &Path, id: &str) -> Option<Paper> {
    // A README that is no regular file (a FIFO, a device) or is too large is passed over.
    let text = read_text(&dir.join(id).join("README.md"), MAX_EXPERIMENT_BYTES)
        .ok()
        .or_else(|| built_in_readme(id).map(str::to_string))?;
    describe(id, &text)
}

/// The built-in README.md of paper `id`.
fn built_in_readme(id: &str) -> Option<&'static str> {
    built_in::BUILT_IN
        .iter()
        .find(|(p, _)| *p == id)
        .map(|(_, text)| *text)
}

/// The papers built into the lab (the paper folders of `experiments/` when it was built).
pub fn built_in_papers() -> impl Iterator<Item = &'static str> {
    built_in::BUILT_IN.iter().map(|(id, _)| *id)
}

/// A paper from the text of its folder's `README.md`: the first `# ` heading and the paragraph
/// after it.
fn describe(id: &str, readme: &str) -> Option<Paper> {
    let mut lines = readme.lines().skip_while(|l| l.trim().is_empty());
    let title = lines.next()?.strip_prefix("# ")?.trim().to_string();
    let summary: Vec<&str> = lines
        .skip_while(|l| l.trim().is_empty())
        .take_while(|l| !l.trim().is_empty())
        .map(str::trim)
        .collect();
    Some(Paper {
        id: id.to_string(),
        title,
        summary: summary.join(" "),
    })
}

/// The error for a missing experiments folder: where it looked and how to point elsewhere
/// (`option`: the command's option that names the folder, `--experiments` or `--dir`).
pub fn no_experiments_folder(dir: &Path, option: &str) -> LabError {
    let cwd = std::env::current_dir().map_or_else(|_| ".".into(), |d| d.display().to_string());
    LabError::Input(Box::new(InputError {
        file: dir.to_path_buf(),
        line: None,
        field: String::new(),
        message: format!(
            "no experiments folder here (looked for `{}` from {cwd}); run smpsched from the \
             repository root, or name the folder with {option} DIR",
            dir.display()
        ),
    }))
}

/// The folders under `dir` that hold at least one experiment file with a `[reproduce]` section.
pub fn papers(dir: &Path) -> Result<Vec<String>, LabError> {
    if !dir.is_dir() {
        return Err(no_experiments_folder(dir, "--experiments"));
    }
    let mut out = Vec::new();
    for f in crate::input::source::experiment_files(dir)? {
        // A file that cannot be read is no reproduction; `list` and `run_paper` name it.
        let Ok(text) = crate::input::source::read_experiment(&f) else {
            continue;
        };
        let is_repro = toml::from_str::<toml::Table>(&text)
            .map(|t| t.contains_key("reproduce"))
            .unwrap_or(false);
        // The paper is the folder directly under `dir` that holds the file (in a subfolder
        // of it or not); a file directly in `dir` belongs to no paper (`dir` is then a
        // paper's own folder, not the folder of papers).
        let mut parts = f
            .strip_prefix(dir)
            .map(Path::components)
            .into_iter()
            .flatten();
        if let (true, Some(first), Some(_)) = (is_repro, parts.next(), parts.next()) {
            let name = first.as_os_str().to_string_lossy().to_string();
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// Which reproduction of a paper: some of its files or all, from a base seed over their own,
/// with values set over them from the command line (`--only`, `--seed`, `--set`, `--vary`); the
/// default is every file as written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Variant {
    /// The files to reproduce, by name without `.toml` (`table4`), sorted and each once (so that
    /// one set of files has one report name however it was asked for); empty: every file.
    /// Private so that only [`Variant::new`] sets it.
    only: Vec<String>,
    /// Base seed of every file, over the files' own.
    pub seed: Option<u64>,
    /// Values set over every file.
    pub settings: Vec<Setting>,
}

impl Variant {
    /// The reproduction of the files `only` names (every file when empty; any order, names
    /// repeated or not), from base seed `seed`, with `settings` set over every file.
    pub fn new(mut only: Vec<String>, seed: Option<u64>, settings: Vec<Setting>) -> Self {
        only.sort();
        only.dedup();
        Variant {
            only,
            seed,
            settings,
        }
    }

    /// The files to reproduce, sorted, each once; empty: every file.
    pub fn only(&self) -> &[String] {
        &self.only
    }

    /// The same reproduction from base seed `seed` (`None`: the files' own).
    pub fn with_seed(&self, seed: Option<u64>) -> Self {
        Variant {
            seed,
            ..self.clone()
        }
    }

    /// The command line's part for it: ` --only A,B --seed N --set PATH=VALUE ...`.
    pub(crate) fn args(&self) -> String {
        let mut out = String::new();
        if !self.only.is_empty() {
            out.push_str(&format!(" --only {}", self.only.join(",")));
        }
        if let Some(s) = self.seed {
            out.push_str(&format!(" --seed {s}"));
        }
        for s in &self.settings {
            out.push_str(&format!(" --set {}", s.arg()));
        }
        out
    }
}

/// What one paper's reproduction produced.
pub struct PaperOutcome {
    /// The paper's report.
    pub report: PaperReport,
    /// The latest report, `REPORTS/PAPER.md` (`REPORTS/PAPER-scale-F.md` at another scale).
    pub latest: PathBuf,
    /// The folder where this run's report is kept (`REPORTS/runs/PAPER-HASH/`).
    pub run_dir: PathBuf,
    /// Where an earlier `run_dir` whose files were edited or removed since was set aside.
    pub kept: Option<PathBuf>,
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
    if crate::store::output::folder_name(paper) != paper {
        return Err(bad(format!(
            "`{paper}` is not a paper: a paper is the name of a folder directly under {} \
             (letters, digits, - and _); reproductions: {}",
            exp_dir.display(),
            known()?
        )));
    }
    let dir = exp_dir.join(paper);
    if !dir.is_dir() {
        let known = known()?;
        let mut message = format!(
            "no reproduction folder for `{paper}` under {}",
            exp_dir.display()
        );
        if exp_dir.file_name().is_some_and(|n| n == paper) {
            // `--experiments experiments/weibel`: the paper's own folder, not the folder of papers.
            let parent = exp_dir.parent().filter(|p| !p.as_os_str().is_empty());
            message.push_str(&format!(
                "; {} is the paper's own folder: name the folder that holds it, --experiments {}",
                exp_dir.display(),
                parent.map_or_else(|| ".".into(), |p| p.display().to_string())
            ));
        } else if known.is_empty() {
            message.push_str(" (it holds no reproduction)");
        } else {
            message.push_str(&format!("; reproductions: {known}"));
        }
        return Err(bad(message));
    }
    Ok(dir)
}

/// Loads every file of `paper` as `variant` sets it, and runs nothing: a bad value among the
/// many reproductions `--vary` asks for is refused before the first runs.
pub fn check_loads(
    exp_dir: &Path,
    paper: &str,
    scale: f64,
    variant: &Variant,
) -> Result<(), LabError> {
    load_paper(exp_dir, paper, scale, variant).map(|_| ())
}

/// The reproduction files of `paper` (loaded and validated at `scale`, with their bundles for
/// a remote run) and the files skipped as unreadable; a paper with none is bad input.
fn load_paper(
    exp_dir: &Path,
    paper: &str,
    scale: f64,
    variant: &Variant,
) -> Result<(Vec<Experiment>, Vec<Bundle>, Skipped), LabError> {
    let dir = check_paper(exp_dir, paper)?;
    let mut exps = Vec::new();
    let mut bundles = Vec::new();
    let (found, mut skipped) = crate::input::source::find_experiment_files(&dir)?;
    let found = only_files(&dir, found, &variant.only)?;
    for f in found {
        // A file that cannot be read (a FIFO, a device, binary) is skipped and named; one that
        // reads but does not validate is an error, as for `smpsched run`.
        if let Err(e) = crate::input::source::read_experiment(&f) {
            skipped.push((f, e.message));
            continue;
        }
        let (bundle, exp) = Bundle::load_set(&f, scale, variant.seed, &variant.settings)?;
        if exp.reproduce.is_some() {
            exps.push(exp);
            bundles.push(bundle);
        } else if !variant.only.is_empty() {
            // Named by `--only`, so not to be passed over in silence.
            return Err(LabError::Input(Box::new(InputError {
                file: f,
                line: None,
                field: "--only".into(),
                message: "is not a reproduction (it has no [reproduce] section); run it with \
                          `smpsched run FILE`"
                    .into(),
            })));
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

/// The files of `found` (a paper folder's experiment files) that `only` names by their paths
/// under `dir` without `.toml` (`table4`; `sub/table4` for a file in a subfolder, so that two
/// files of one name are told apart), in the folder's order; all of them when `only` is empty.
/// A name that is not one of the folder's files is bad input, which lists the files there are.
fn only_files(dir: &Path, found: Vec<PathBuf>, only: &[String]) -> Result<Vec<PathBuf>, LabError> {
    if only.is_empty() {
        return Ok(found);
    }
    let stem = |f: &PathBuf| {
        let rel = f.strip_prefix(dir).ok()?.with_extension("");
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().to_string())
            .collect();
        Some(parts.join("/"))
    };
    let stems: Vec<String> = found.iter().filter_map(stem).collect();
    if let Some(missing) = only.iter().find(|name| !stems.contains(name)) {
        return Err(LabError::Input(Box::new(InputError {
            file: dir.to_path_buf(),
            line: None,
            field: "--only".into(),
            message: format!(
                "no file `{missing}.toml` here; the paper's files: {}",
                stems.join(", ")
            ),
        })));
    }
    Ok(found
        .into_iter()
        .filter(|f| stem(f).is_some_and(|s| only.contains(&s)))
        .collect())
}

/// Writes the run folder (report, JSON, plots) through `staging`, then the latest report and
/// JSON (drawing plots from the run folder) and the index; returns the latest report's path and
/// the run folder.
fn write_reports(
    paper: &str,
    stem: &str,
    report: &PaperReport,
    plots: &[(String, String)],
    staging: Staging,
    reports: &Path,
) -> Result<(PathBuf, Committed), LabError> {
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
    let committed = staging.commit(&run_name)?;

    // The latest report draws its plots from the run folder.
    let mut latest_report = report.clone();
    for f in &mut latest_report.files {
        for p in &mut f.plots {
            p.path = format!("runs/{run_name}/{}", p.path);
        }
    }
    let latest = reports.join(format!("{stem}.md"));
    // Temporary files of reproductions that were killed while writing.
    crate::store::output::remove_stale(reports);
    write_atomic(&latest, render_paper(&latest_report).as_bytes())?;
    write_atomic(
        &reports.join(format!("{stem}.json")),
        json(&latest_report)?.as_bytes(),
    )?;
    write_index(reports)?;
    Ok((latest, committed))
}

/// Whom [`run_paper`] tells how far it has come.
#[derive(Clone, Copy)]
pub struct Listeners<'a> {
    /// Told how many runs are made here and how many go at once, before they are made.
    pub on_runs: &'a dyn Fn(usize, &JobPlan),
    /// Told each file as its report is built.
    pub on_file: &'a dyn Fn(&Experiment),
    /// Told `(done, total)` after each run.
    pub progress: &'a (dyn Fn(usize, usize) + Sync),
}

/// Runs every reproduction file of `paper` under `exp_dir` at `scale` and writes the report.
/// Every file is loaded and the reports folder checked before anything runs. The run is kept
/// whole in `reports/runs/PAPER-HASH/` (report, JSON, plots; content-addressed, renamed into
/// place in one step, never overwritten); `reports/PAPER.md` (or `PAPER-scale-F.md`) is the
/// latest, replaced in one rename and drawing its plots from the run folder; `reports/index.md`
/// lists every paper reproduced so far. Every run is made first, with `exec.remote` there (see
/// [`crate::exec::shard`]), else here in one pool for all the files ([`Pool`]; `told` hears how
/// many and how far); then each file finds its runs made. The report is the same either way.
pub fn run_paper(
    exp_dir: &Path,
    paper: &str,
    scale: f64,
    variant: &Variant,
    exec: Exec<'_>,
    reports: &Path,
    told: Listeners<'_>,
) -> Result<PaperOutcome, LabError> {
    let Listeners {
        on_runs,
        on_file,
        progress,
    } = told;
    let (exps, bundles, skipped) = load_paper(exp_dir, paper, scale, variant)?;
    let staging = Staging::new(&reports.join("runs"), "--reports", reports)?;
    let mut files = Vec::new();
    let mut plots = Vec::new();
    let memo = crate::exec::runner::RunMemo::default();
    let all: Vec<&Experiment> = exps.iter().collect();
    if let Some(remote) = exec.remote {
        prefill(&all, &bundles, remote, &memo)?;
    } else {
        let pool = Pool::plan(&all, &memo);
        let plan = pool.job_plan(exec.jobs);
        on_runs(pool.len(), &plan);
        pool.run(&plan, &memo, exec.cancel, progress)?;
    }
    for exp in &exps {
        on_file(exp);
        let r = reproduce_file(exp, exec, paper, progress, &memo)?;
        files.push(r.report);
        plots.extend(r.plots);
    }
    let title = self::paper(exp_dir, paper).map_or_else(|| paper.to_string(), |p| p.title);
    let at_scale = if scale == 1.0 {
        String::new()
    } else {
        format!(" --scale {scale}")
    };
    let report = PaperReport {
        paper_id: paper.to_string(),
        paper_title: title,
        files,
        generated_by: format!("smpsched reproduce {paper}{at_scale}{}", variant.args()),
        settings: variant.settings.iter().map(Setting::label).collect(),
        only: variant.only.clone(),
    };
    let stem = report_stem(paper, scale, variant);
    let (latest, committed) = write_reports(paper, &stem, &report, &plots, staging, reports)?;
    Ok(PaperOutcome {
        latest,
        report,
        run_dir: committed.dir,
        kept: committed.kept,
        skipped,
    })
}

/// The name of a paper's latest report and JSON under `reports/`: the paper, then the files
/// when only some were reproduced, the scale when it is not 1, the seed when one was given over
/// the files' and each value set over them
/// (`dibella92-only-table4-scale-0.1-seed-2-set-workload.0.random_ms-0.05`), so that a run of
/// some files, or at another scale, seed or setting, never replaces the paper's own report.
pub(crate) fn report_stem(paper: &str, scale: f64, variant: &Variant) -> String {
    let mut stem = paper.to_string();
    if !variant.only.is_empty() {
        stem.push_str("-only-");
        stem.push_str(&crate::input::setting::file_safe(&variant.only.join(",")));
    }
    if scale != 1.0 {
        stem.push_str(&format!("-scale-{scale}"));
    }
    if let Some(seed) = variant.seed {
        stem.push_str(&format!("-seed-{seed}"));
    }
    for s in &variant.settings {
        stem.push('-');
        stem.push_str(&s.file_part());
    }
    bounded_stem(stem)
}

/// The longest report name kept whole: with `.md`, `.json` or a temporary file's suffix it
/// stays well under the 255 bytes a file system takes.
const LONGEST_STEM: usize = 160;

/// `stem` whole when it is at most [`LONGEST_STEM`] bytes, else its start and a hash of the
/// whole (many `--set` values, a long list of seeds).
pub(crate) fn bounded_stem(stem: String) -> String {
    if stem.len() <= LONGEST_STEM {
        return stem;
    }
    let start: String = stem.chars().take(LONGEST_STEM - 17).collect();
    let hash = crate::input::hash::fnv(crate::input::hash::FNV_START, stem.as_bytes());
    format!("{start}-{hash:016x}")
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
        let Ok(text) = read_text(&path, MAX_REPORT_BYTES) else {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// One set of files has one report name, however `--only` listed it.
    #[test]
    fn a_set_of_files_has_one_name_in_any_order() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let a = Variant::new(names(&["table6", "fig2-3", "table6"]), Some(2), Vec::new());
        let b = Variant::new(names(&["fig2-3", "table6"]), Some(2), Vec::new());
        assert_eq!(a.only(), ["fig2-3", "table6"]);
        assert_eq!(a, b);
        assert_eq!(
            report_stem("dibella92", 0.5, &a),
            "dibella92-only-fig2-3,table6-scale-0.5-seed-2"
        );
        assert_eq!(a.with_seed(None).only(), a.only());
        assert_eq!(
            report_stem("dibella92", 1.0, &Variant::default()),
            "dibella92"
        );
    }
}
