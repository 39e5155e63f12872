//! Results on disk and on the terminal: `results.json` (everything, per run), `results.csv` (one
//! row per run and application, plus a machine row), `time-split.svg` (where the machine's time
//! went, per point: Gupta et al. 1991's utilization breakdown), and a readable table of means per
//! point.
//!
//! Output is a pure function of the records: no timestamps, no absolute paths, no hash-map
//! order, so the same experiment and seed give byte-identical files. The files of a run are
//! written together into a fresh folder and renamed into place whole ([`crate::output`]): by
//! default `results/NAME/seedS-HASH/` with `results/NAME/latest` pointing at it, so earlier
//! results are never replaced.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::LabError;
use crate::experiment::Experiment;
use crate::metric::{self, TermColumn};
use crate::output::{self, Staging};
use crate::runner::{RunRecord, Stopped};
use crate::svg::{stacked_bars, SeriesStyle, StackedBar, StackedBars};

#[derive(Serialize)]
struct JsonFile<'a> {
    experiment: &'a str,
    description: &'a str,
    file: String,
    seed: u64,
    repetitions: u32,
    runs: Vec<JsonRun<'a>>,
}

#[derive(Serialize)]
struct JsonRun<'a> {
    point: &'a str,
    params: serde_json::Map<String, serde_json::Value>,
    repetition: u32,
    seed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    stopped: Option<&'a Stopped>,
    #[serde(flatten)]
    report: &'a smpsched_sim::RunReport,
}

/// The JSON document of an experiment's runs.
pub fn to_json(exp: &Experiment, runs: &[RunRecord]) -> String {
    let doc = JsonFile {
        experiment: &exp.name,
        description: &exp.description,
        file: exp.recorded_path.clone(),
        seed: exp.seed,
        repetitions: exp.repetitions,
        runs: runs
            .iter()
            .map(|r| JsonRun {
                point: &r.point,
                params: r
                    .params
                    .iter()
                    .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                    .collect(),
                repetition: r.repetition,
                seed: r.seed,
                stopped: r.stopped.as_ref(),
                report: &r.report,
            })
            .collect(),
    };
    let mut s = serde_json::to_string_pretty(&doc).expect("results serialize");
    s.push('\n');
    s
}

/// The CSV table of an experiment's runs: one row per run and application, and one row per run
/// for the whole machine (`app` = `*`, with the per-application columns empty). Every row has
/// the header's width (the `csv` writer refuses anything else). `stopped` says why a run did
/// not finish (empty when it did).
pub fn to_csv(runs: &[RunRecord]) -> Result<String, LabError> {
    let mut param_cols: Vec<&str> = Vec::new();
    for r in runs {
        for (k, _) in &r.params {
            if !param_cols.contains(&k.as_str()) {
                param_cols.push(k);
            }
        }
    }
    let mut w = csv::Writer::from_writer(Vec::new());
    let fail = |e: csv::Error| LabError::Internal(format!("results.csv: {e}"));
    let mut header: Vec<&str> = vec!["point", "repetition", "seed"];
    header.extend(&param_cols);
    let cols = metric::views::csv_columns();
    header.push("app");
    header.extend(cols.iter().map(|c| c.header));
    w.write_record(&header).map_err(fail)?;
    for r in runs {
        let mut prefix = vec![
            r.point.clone(),
            r.repetition.to_string(),
            r.seed.to_string(),
        ];
        for c in &param_cols {
            let v = r
                .params
                .iter()
                .find(|(k, _)| k == c)
                .map(|(_, v)| v.as_str());
            prefix.push(v.unwrap_or("").to_string());
        }
        let mut row = prefix.clone();
        row.push("*".to_string());
        row.extend(cols.iter().map(|c| (c.cell)(r, None)));
        w.write_record(&row).map_err(fail)?;
        for a in &r.report.apps {
            let mut row = prefix.clone();
            row.push(a.name.clone());
            row.extend(cols.iter().map(|c| (c.cell)(r, Some(a))));
            w.write_record(&row).map_err(fail)?;
        }
    }
    let bytes = w
        .into_inner()
        .map_err(|e| LabError::Internal(format!("results.csv: {e}")))?;
    String::from_utf8(bytes).map_err(|e| LabError::Internal(format!("results.csv: {e}")))
}

/// The files of an experiment's results, by name, in the order they are listed.
pub fn result_files(
    exp: &Experiment,
    runs: &[RunRecord],
) -> Result<Vec<(String, Vec<u8>)>, LabError> {
    let title = format!("{}: where the machine's time went", exp.name);
    Ok(vec![
        ("results.json".into(), to_json(exp, runs).into_bytes()),
        ("results.csv".into(), to_csv(runs)?.into_bytes()),
        (
            "time-split.svg".into(),
            time_split_chart(&title, exp, runs)?.into_bytes(),
        ),
    ])
}

/// Where `smpsched run` puts an experiment's results.
#[derive(Clone, Debug)]
pub enum Destination {
    /// A fresh folder `seedS-HASH` under this one (`results/NAME` by default), with `latest`
    /// pointing at it: earlier results are kept.
    Under(PathBuf),
    /// Exactly this folder (`--out DIR`): it must be absent or empty, unless `replace` is set
    /// (`--force`), when earlier results there are replaced whole.
    Exactly {
        /// The folder.
        dir: PathBuf,
        /// Replace earlier results there.
        replace: bool,
    },
}

/// A destination checked, and a staging folder made in it, before any run starts.
pub struct Outbox {
    staging: Staging,
    dest: Destination,
    /// The experiment file, never inside a folder `--force` replaces.
    experiment: PathBuf,
    /// Held while the run goes on: a second run into the same `--out` is refused.
    _lock: Option<crate::outdir::Lock>,
}

/// What [`Outbox::deliver`] wrote.
#[derive(Debug)]
pub struct Delivered {
    /// The results folder.
    pub dir: PathBuf,
    /// `latest` beside it, for a [`Destination::Under`].
    pub latest: Option<PathBuf>,
    /// The files in it.
    pub files: Vec<PathBuf>,
}

/// The option named in errors about the default results folder.
const DEFAULT_PLACE: &str = "results folder (the default; name another with --out)";

impl Outbox {
    /// Checks that results can be written at `dest` (creating folders as needed): an unusable
    /// place, an `--out` folder holding earlier results without `--force`, a folder `--force`
    /// may not replace (see [`crate::outdir`]) or a place another run is writing into is bad
    /// input naming the path. `experiment` is the experiment file.
    pub fn prepare(dest: Destination, experiment: &Path) -> Result<Outbox, LabError> {
        let (parent, named, what, lock) = match &dest {
            Destination::Under(dir) => {
                let latest = dir.join("latest");
                if latest.exists() && !crate::outdir::is_link(&latest) {
                    return Err(output::unusable(
                        &latest,
                        DEFAULT_PLACE,
                        "it is no link smpsched made (a folder or file is in its place); move \
                         it away so that `latest` can point at the newest results",
                    ));
                }
                (dir.clone(), dir.clone(), DEFAULT_PLACE, None)
            }
            Destination::Exactly { dir, replace } => {
                crate::outdir::check_place(dir, "--out")?;
                if dir.exists() && !dir.is_dir() {
                    return Err(output::unusable(
                        dir,
                        "--out",
                        "it exists and is not a folder",
                    ));
                }
                if !replace && !output::is_absent_or_empty(dir) {
                    return Err(output::unusable(
                        dir,
                        "--out",
                        "it holds earlier results; name a new folder, leave out --out (each \
                         run then gets a folder of its own under results/), or add --force to \
                         replace them",
                    ));
                }
                if *replace {
                    crate::outdir::check_replaceable(dir, experiment, "--out")?;
                }
                let parent = match dir.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                let lock = crate::outdir::Lock::take(dir, "--out")?;
                (parent, dir.clone(), "--out", Some(lock))
            }
        };
        let staging = Staging::new(&parent, what, &named)?;
        Ok(Outbox {
            staging,
            dest,
            experiment: experiment.to_path_buf(),
            _lock: lock,
        })
    }

    /// Writes the results of `runs` and renames them into place whole. An `--out` folder is
    /// checked again at that moment: without `--force` it must still be absent or empty, with
    /// it still a results folder.
    pub fn deliver(self, exp: &Experiment, runs: &[RunRecord]) -> Result<Delivered, LabError> {
        let files = result_files(exp, runs)?;
        self.staging.write_all(&files)?;
        self.staging.mark()?;
        let (dir, latest) = match &self.dest {
            Destination::Under(parent) => {
                let name = format!(
                    "seed{}-{:012x}",
                    exp.seed,
                    output::content_hash(&files) >> 16
                );
                let dir = self.staging.commit(&name)?;
                (dir, Some(output::set_latest(parent, &name)?))
            }
            Destination::Exactly { dir, replace } => {
                if *replace && !output::is_absent_or_empty(dir) {
                    crate::outdir::check_replaceable(dir, &self.experiment, "--out")?;
                    (self.staging.replace(dir)?, None)
                } else {
                    (self.staging.rename_into(dir, "--out")?, None)
                }
            }
        };
        let files = files.iter().map(|(n, _)| dir.join(n)).collect();
        Ok(Delivered { dir, latest, files })
    }
}

/// A stacked bar per point (means over repetitions) of the machine's time split into useful,
/// stall, spin, idle, switch and kernel, as an SVG document.
pub fn time_split_chart(
    title: &str,
    exp: &Experiment,
    runs: &[RunRecord],
) -> Result<String, LabError> {
    let cats = ["useful", "stall", "spin", "idle", "switch", "kernel"];
    let bars = exp
        .points
        .iter()
        .map(|p| StackedBar {
            label: p.label.clone(),
            values: cats
                .iter()
                .map(|c| {
                    let m = if *c == "useful" { "utilization" } else { c };
                    metric::value(m, p, runs).map_or(0.0, |v| v.max(0.0))
                })
                .collect(),
            style: SeriesStyle::Ours,
        })
        .collect();
    stacked_bars(&StackedBars {
        title: title.to_string(),
        y_label: "% of machine time".into(),
        categories: cats.iter().map(|c| c.to_string()).collect(),
        bars,
    })
    .map_err(|e| LabError::Internal(format!("plot: {e}")))
}

/// Gupta et al.'s stacked bars: for each point and application, the share of the processor time
/// the application held that was useful work, cache-miss stall, and synchronization (spinning,
/// context switches and kernel work), with the paper's bar beside ours where `paper` gives the
/// application's utilization at that point. `paper` is (point, metric, value) as the
/// reproduction's expectations give them (`app_util:APP`, and `app_stall:APP` when known); the
/// paper's bar shows its utilization, its stall when given, and the rest as "not split".
pub fn app_split_chart(
    title: &str,
    y_label: &str,
    exp: &Experiment,
    runs: &[RunRecord],
    paper: &[(String, String, f64)],
) -> Result<String, LabError> {
    let cats = [
        "useful",
        "cache miss",
        "sync + switch",
        "paper: rest, not split",
    ];
    let paper_value = |point: &str, metric: String| {
        paper
            .iter()
            .find(|(p, m, _)| p == point && *m == metric)
            .map(|(_, _, v)| *v)
    };
    let mut bars = Vec::new();
    for p in &exp.points {
        for a in &p.apps {
            let v = |m: &str| metric::value(&format!("{m}:{}", a.name), p, runs);
            let (useful, stall, sync) = (v("app_util"), v("app_stall"), v("app_sync"));
            if let (Some(u), Some(st), Some(sy)) = (useful, stall, sync) {
                bars.push(StackedBar {
                    label: format!("{} {} ours", p.label, a.name),
                    values: vec![u.max(0.0), st.max(0.0), sy.max(0.0), 0.0],
                    style: SeriesStyle::Ours,
                });
            }
            if let Some(u) = paper_value(&p.label, format!("app_util:{}", a.name)) {
                let st = paper_value(&p.label, format!("app_stall:{}", a.name)).unwrap_or(0.0);
                let rest = (100.0 - u - st).max(0.0);
                bars.push(StackedBar {
                    label: format!("{} {} paper", p.label, a.name),
                    values: vec![u.max(0.0), st.max(0.0), 0.0, rest],
                    style: SeriesStyle::Paper,
                });
            }
        }
    }
    stacked_bars(&StackedBars {
        title: title.to_string(),
        y_label: y_label.to_string(),
        categories: cats.iter().map(|c| c.to_string()).collect(),
        bars,
    })
    .map_err(|e| LabError::Internal(format!("plot: {e}")))
}

/// A readable table of the means per point: the terminal columns of the measure table, the
/// machine's (elapsed time, utilization, the time split), then each application's.
pub fn terminal_table(exp: &Experiment, runs: &[RunRecord]) -> String {
    let (machine, apps) = (
        metric::views::terminal_columns(false),
        metric::views::terminal_columns(true),
    );
    let header = |first: &[&str], cols: &[TermColumn]| -> Vec<String> {
        let names = cols.iter().map(|c| c.header);
        first
            .iter()
            .copied()
            .chain(names)
            .map(String::from)
            .collect()
    };
    let mut rows = vec![header(&["point"], &machine)];
    let mut app_rows = vec![header(&["point", "app"], &apps)];
    for point in &exp.points {
        let rs: Vec<&RunRecord> = runs.iter().filter(|r| r.point == point.label).collect();
        if rs.is_empty() {
            continue;
        }
        let mean = |c: &TermColumn, app: Option<usize>| {
            let sum: f64 = rs
                .iter()
                .map(|r| (c.read)(&r.report, app.and_then(|i| r.report.apps.get(i))))
                .sum();
            c.format.show(sum / rs.len() as f64)
        };
        let mut row = vec![point.label.clone()];
        row.extend(machine.iter().map(|c| mean(c, None)));
        rows.push(row);
        for (i, app) in point.apps.iter().enumerate() {
            let mut row = vec![point.label.clone(), app.name.clone()];
            row.extend(apps.iter().map(|c| mean(c, Some(i))));
            app_rows.push(row);
        }
    }
    let mut out = format!(
        "{} — {} point(s) x {} repetition(s), means\n\n",
        exp.name,
        exp.points.len(),
        exp.repetitions
    );
    out.push_str(&format_table(&rows));
    out.push('\n');
    out.push_str(&format_table(&app_rows));
    out
}

/// Aligns rows into columns: the first column left-aligned, the others right-aligned.
pub fn format_table(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c > 0 {
                line.push_str("  ");
            }
            let pad = widths[c] - cell.chars().count();
            if c == 0 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
        if i == 0 {
            let total: usize = widths.iter().sum::<usize>() + 2 * cols.saturating_sub(1);
            out.push_str(&"-".repeat(total));
            out.push('\n');
        }
    }
    out
}
