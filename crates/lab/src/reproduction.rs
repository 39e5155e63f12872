//! Reproductions: an experiment file's `[reproduce]` section names the paper, the values the paper
//! reports for some points (with a tolerance), the paper's claims in the claim language of
//! [`crate::reproduce::claims`], and the plot to draw. [`reproduce_file`] runs the experiment and
//! turns it into a [`ReportFile`]: our numbers beside the paper's, and each claim's verdict.
//!
//! ```toml
//! [reproduce]
//! paper = "black90"
//! title = "Table 2: time per synchronization"
//! metric = "us_per_op"              # the measure compared by default (see `metric::METRICS`)
//! tolerance = "50%"                 # default tolerance: "10%" relative, "±2" absolute
//! scale = ["workload.0.syncs"]      # integer sizes that --scale multiplies
//! notes = ["why a number differs"]
//! plot = { kind = "line", x = "workload.0.threads", x_label = "threads", log_y = true }
//!
//! [[reproduce.expect]]
//! point = "handoff/threads=3"
//! paper = 413
//!
//! [[reproduce.claim]]
//! claim = "flat(us_per_op, handoff/threads=3, handoff/threads=7, within 10%)"
//! known_difference = "optional: why it does not reproduce"
//! ```

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::error::{InputError, LabError};
use crate::experiment::{Experiment, Point};
use crate::metric;
use crate::reproduce::plot::{
    grouped_bars, line_chart, BarGroup, GroupedBars, LineChart, Series, SeriesStyle,
};
use crate::reproduce::report::{ClaimRow, PlotRef, PointRow, ReportFile, Verdict};
use crate::reproduce::{Claim, Tolerance};
use crate::runner::{run_experiment, RunRecord};
use crate::source::{split_de_error, Source};

/// The `[reproduce]` section of an experiment file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Paper identifier (the folder under `experiments/`), e.g. `black90`.
    pub paper: String,
    /// Which table or figure this file reproduces.
    pub title: String,
    /// The measure compared by default.
    pub metric: String,
    /// Default tolerance of expected values.
    #[serde(default)]
    pub tolerance: Option<Tolerance>,
    /// Integer sizes (dotted paths) that `--scale` multiplies.
    #[serde(default)]
    pub scale: Vec<String>,
    /// Notes for the report: why numbers differ, what was assumed.
    #[serde(default)]
    pub notes: Vec<String>,
    /// The plot to draw.
    #[serde(default)]
    pub plot: Option<PlotSpec>,
    /// The paper's values.
    #[serde(default)]
    pub expect: Vec<Expect>,
    /// The paper's claims.
    #[serde(default)]
    pub claim: Vec<ClaimSpec>,
}

/// The plot of a reproduction.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlotSpec {
    /// `line` (metric against a swept parameter, one series per remaining label), `bars` (ours
    /// beside the paper per expected point) or `stacked` (time split per point).
    pub kind: String,
    /// For `line`: the swept parameter (dotted path) on the x axis.
    #[serde(default)]
    pub x: Option<String>,
    /// Label of the x axis.
    #[serde(default)]
    pub x_label: Option<String>,
    /// Label of the y axis (default: the metric).
    #[serde(default)]
    pub y_label: Option<String>,
    /// Logarithmic y axis (line plots).
    #[serde(default)]
    pub log_y: bool,
}

/// A value the paper reports for one point.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// The point's label.
    pub point: String,
    /// The measure (default: the section's `metric`).
    #[serde(default)]
    pub metric: Option<String>,
    /// The paper's value.
    pub paper: f64,
    /// Tolerance (default: the section's).
    #[serde(default)]
    pub tolerance: Option<Tolerance>,
    /// A note shown beside the row.
    #[serde(default)]
    pub note: Option<String>,
}

/// A claim of the paper, with an optional known difference.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClaimSpec {
    /// The claim as written.
    #[serde(rename = "claim")]
    pub text: String,
    /// The parsed claim (filled in when the file is checked).
    #[serde(skip)]
    pub parsed: Option<Claim>,
    /// If the claim does not reproduce, why (the report shows it as a known difference).
    #[serde(default)]
    pub known_difference: Option<String>,
}

/// Reads and checks the `[reproduce]` table of a file against its points.
pub(crate) fn parse_spec(
    src: &Source,
    table: toml::Table,
    points: &[Point],
) -> Result<Spec, InputError> {
    let mut spec: Spec = toml::Value::Table(table).try_into().map_err(|e| {
        let (key, message) = split_de_error(&e);
        let field = if key.is_empty() {
            "reproduce".to_string()
        } else {
            format!("reproduce.{key}")
        };
        src.error(&field, message)
    })?;
    let find = |label: &str| points.iter().find(|p| p.label == label);
    let known_points = || {
        let names: Vec<&str> = points.iter().map(|p| p.label.as_str()).take(12).collect();
        names.join(", ")
    };
    let Some(first) = points.first() else {
        return Err(src.error("reproduce", "the experiment has no points"));
    };
    if !metric::is_metric(&spec.metric, first) {
        return Err(src.error(
            "reproduce.metric",
            format!("unknown measure `{}`; see `smpsched list`", spec.metric),
        ));
    }
    for (i, e) in spec.expect.iter().enumerate() {
        let Some(p) = find(&e.point) else {
            return Err(src.error(
                &format!("reproduce.expect.{i}.point"),
                format!(
                    "no point is labelled `{}`; points: {} ...",
                    e.point,
                    known_points()
                ),
            ));
        };
        let m = e.metric.as_deref().unwrap_or(&spec.metric);
        if !metric::is_metric(m, p) {
            return Err(src.error(
                &format!("reproduce.expect.{i}.metric"),
                format!("unknown measure `{m}`"),
            ));
        }
        if e.tolerance.is_none() && spec.tolerance.is_none() {
            return Err(src.error(
                &format!("reproduce.expect.{i}.tolerance"),
                "no tolerance here and no default `tolerance` in [reproduce]",
            ));
        }
    }
    for (i, c) in spec.claim.iter_mut().enumerate() {
        let claim = Claim::parse(&c.text).map_err(|e| {
            src.error(
                &format!("reproduce.claim.{i}.claim"),
                format!("at column {}: {}", e.column + 1, e.message),
            )
        })?;
        for r in claim.references() {
            let Some(p) = find(&r.point) else {
                return Err(src.error(
                    &format!("reproduce.claim.{i}.claim"),
                    format!(
                        "unknown point `{}` in claim; points: {} ...",
                        r.point,
                        known_points()
                    ),
                ));
            };
            if !metric::is_metric(&r.metric, p) {
                return Err(src.error(
                    &format!("reproduce.claim.{i}.claim"),
                    format!("unknown measure `{}` in claim", r.metric),
                ));
            }
        }
        c.parsed = Some(claim);
    }
    if let Some(plot) = &spec.plot {
        match plot.kind.as_str() {
            "line" if plot.x.is_none() => {
                return Err(src.error("reproduce.plot.x", "a line plot needs `x`"))
            }
            "line" | "bars" | "stacked" => {}
            other => {
                return Err(src.error(
                    "reproduce.plot.kind",
                    format!("unknown plot kind `{other}`; valid: line, bars, stacked"),
                ))
            }
        }
    }
    Ok(spec)
}

/// Multiplies the integer at dotted `path` of `doc` by `factor` (at least 1), if present.
pub(crate) fn scale_path(doc: &mut toml::Table, path: &str, factor: f64) {
    let mut node: Option<&mut toml::Value> = None;
    for (i, seg) in path.split('.').enumerate() {
        node = if i == 0 {
            doc.get_mut(seg)
        } else {
            match node {
                Some(toml::Value::Table(t)) => t.get_mut(seg),
                Some(toml::Value::Array(a)) => seg.parse::<usize>().ok().and_then(|j| a.get_mut(j)),
                _ => None,
            }
        };
    }
    if let Some(toml::Value::Integer(v)) = node {
        *v = ((*v as f64 * factor).round() as i64).max(1);
    }
}

/// One reproduced file: its report, plots (file name, SVG) and whether every claim held.
pub struct Reproduced {
    /// The report section of this file.
    pub report: ReportFile,
    /// Plots as (file name, SVG text).
    pub plots: Vec<(String, String)>,
}

/// Runs a reproduction file and builds its report. `plot_dir` is the folder (relative to the
/// report) where plots will be written.
pub fn reproduce_file(
    exp: &Experiment,
    jobs: usize,
    plot_dir: &str,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<Reproduced, LabError> {
    let spec = exp
        .reproduce
        .as_ref()
        .ok_or_else(|| LabError::Internal(format!("{} has no [reproduce] section", exp.name)))?;
    let runs = run_experiment(exp, jobs, progress)?;
    let point = |label: &str| exp.points.iter().find(|p| p.label == label);
    let lookup = |m: &str, p: &str| point(p).and_then(|pt| metric::value(m, pt, &runs));

    let mut rows = Vec::new();
    for e in &spec.expect {
        let m = e.metric.clone().unwrap_or_else(|| spec.metric.clone());
        let ours = lookup(&m, &e.point).unwrap_or(f64::NAN);
        let tol = e.tolerance.or(spec.tolerance);
        rows.push(PointRow {
            point: e.point.clone(),
            metric: m,
            ours,
            paper: Some(e.paper),
            tolerance: tol,
            within: tol.map(|t| t.check(ours, e.paper)),
            note: e.note.clone(),
        });
    }
    if spec.expect.is_empty() {
        for p in &exp.points {
            rows.push(PointRow {
                point: p.label.clone(),
                metric: spec.metric.clone(),
                ours: lookup(&spec.metric, &p.label).unwrap_or(f64::NAN),
                paper: None,
                tolerance: None,
                within: None,
                note: None,
            });
        }
    }
    let claims = spec
        .claim
        .iter()
        .filter_map(|c| Some((c, c.parsed.as_ref()?)))
        .map(|(c, claim)| {
            let (verdict, detail) = match claim.evaluate(&lookup) {
                Ok(o) if o.holds => (Verdict::Holds, o.detail),
                Ok(o) => match &c.known_difference {
                    Some(reason) => (
                        Verdict::KnownDifference {
                            reason: reason.clone(),
                        },
                        o.detail,
                    ),
                    None => (Verdict::Fails, o.detail),
                },
                Err(e) => (
                    Verdict::Error {
                        message: e.to_string(),
                    },
                    String::new(),
                ),
            };
            ClaimRow {
                text: claim.to_string(),
                verdict,
                detail,
            }
        })
        .collect();
    let stem = exp
        .path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("plot")
        .to_string();
    let mut plots = Vec::new();
    let mut plot_refs = Vec::new();
    if let Some(ps) = &spec.plot {
        let svg = draw(exp, spec, ps, &runs, &rows)?;
        let name = format!("{stem}.svg");
        plot_refs.push(PlotRef {
            title: spec.title.clone(),
            path: format!("{plot_dir}/{name}"),
        });
        plots.push((name, svg));
    }
    let first = &exp.points[0];
    let setup = vec![
        ("machine".to_string(), first.machine.name.clone()),
        (
            "processors".to_string(),
            first.machine.processors.to_string(),
        ),
        (
            "clock".to_string(),
            format!("{} MHz", first.machine.clock_mhz),
        ),
        ("points".to_string(), exp.points.len().to_string()),
        ("repetitions".to_string(), exp.repetitions.to_string()),
        ("seed".to_string(), exp.seed.to_string()),
        ("measure".to_string(), spec.metric.clone()),
    ];
    Ok(Reproduced {
        report: ReportFile {
            title: spec.title.clone(),
            source_paper: spec.paper.clone(),
            experiment_file: exp.path.display().to_string(),
            setup,
            points: rows,
            claims,
            plots: plot_refs,
            notes: spec.notes.clone(),
        },
        plots,
    })
}

fn draw(
    exp: &Experiment,
    spec: &Spec,
    ps: &PlotSpec,
    runs: &[RunRecord],
    rows: &[PointRow],
) -> Result<String, LabError> {
    let y_label = ps.y_label.clone().unwrap_or_else(|| spec.metric.clone());
    let plot_err = |e: crate::reproduce::plot::PlotError| LabError::Internal(format!("plot: {e}"));
    match ps.kind.as_str() {
        "line" => {
            let x = ps.x.as_deref().unwrap_or_default();
            let short = x.rsplit('.').next().unwrap_or(x);
            // One series per label with the x part removed.
            let mut ours: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
            let mut order: Vec<String> = Vec::new();
            let paper: BTreeMap<&str, f64> = rows
                .iter()
                .filter_map(|r| Some((r.point.as_str(), r.paper?)))
                .collect();
            let mut paper_series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
            for p in &exp.points {
                let Some(xv) = p
                    .params
                    .iter()
                    .find(|(k, _)| k == x)
                    .and_then(|(_, v)| v.parse::<f64>().ok())
                else {
                    continue;
                };
                let series: String = p
                    .label
                    .split('/')
                    .filter(|part| !part.starts_with(&format!("{short}=")))
                    .collect::<Vec<_>>()
                    .join("/");
                if !order.contains(&series) {
                    order.push(series.clone());
                }
                if let Some(v) = metric::value(&spec.metric, p, runs) {
                    ours.entry(series.clone()).or_default().push((xv, v));
                }
                if let Some(&v) = paper.get(p.label.as_str()) {
                    paper_series.entry(series).or_default().push((xv, v));
                }
            }
            // Series with paper values first, so the i-th ours and i-th paper series share a colour.
            order.sort_by_key(|s| !paper_series.contains_key(s));
            let mut series = Vec::new();
            for s in &order {
                if let Some(pts) = ours.get(s) {
                    series.push(Series {
                        name: format!("{s} (ours)"),
                        points: pts.clone(),
                        style: SeriesStyle::Ours,
                    });
                }
            }
            for s in &order {
                if let Some(pts) = paper_series.get(s) {
                    series.push(Series {
                        name: format!("{s} (paper)"),
                        points: pts.clone(),
                        style: SeriesStyle::Paper,
                    });
                }
            }
            line_chart(&LineChart {
                title: spec.title.clone(),
                x_label: ps.x_label.clone().unwrap_or_else(|| short.to_string()),
                y_label,
                log_y: ps.log_y,
                series,
            })
            .map_err(plot_err)
        }
        "bars" => grouped_bars(&GroupedBars {
            title: spec.title.clone(),
            y_label,
            groups: rows
                .iter()
                .map(|r| BarGroup {
                    label: r.point.clone(),
                    ours: r.ours.is_finite().then_some(r.ours),
                    paper: r.paper,
                })
                .collect(),
        })
        .map_err(plot_err),
        _ => crate::results::time_split_chart(&spec.title, exp, runs),
    }
}

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

/// The folders under `dir` that hold at least one experiment file with a `[reproduce]` section.
pub fn papers(dir: &std::path::Path) -> Result<Vec<String>, LabError> {
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
    pub report: crate::reproduce::report::PaperReport,
    /// The latest report, `REPORTS/PAPER.md`.
    pub latest: std::path::PathBuf,
    /// The folder where this run's report is kept (`REPORTS/runs/PAPER-HASH/`).
    pub run_dir: std::path::PathBuf,
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

/// FNV-1a, for content-addressed run folders.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Runs every reproduction file of `paper` under `exp_dir` at `scale` and writes the report:
/// the run is kept in `reports/runs/PAPER-HASH/` (content-addressed, so a re-run never
/// overwrites another result) and copied to `reports/PAPER.md` as the latest, with
/// `reports/index.md` listing every paper reproduced so far.
pub fn run_paper(
    exp_dir: &std::path::Path,
    paper: &str,
    scale: f64,
    jobs: usize,
    reports: &std::path::Path,
    on_file: &dyn Fn(&Experiment),
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<PaperOutcome, LabError> {
    use crate::reproduce::report::{render_index, render_paper, PaperReport};
    use crate::results::write_atomic;

    let dir = exp_dir.join(paper);
    if !dir.is_dir() {
        return Err(LabError::Input(Box::new(InputError {
            file: dir.clone(),
            line: None,
            field: String::new(),
            message: format!(
                "no reproduction folder for `{paper}`; reproductions: {}",
                papers(exp_dir)?.join(", ")
            ),
        })));
    }
    let mut files = Vec::new();
    let mut plots = Vec::new();
    for f in crate::catalog::experiment_files(&dir)? {
        let exp = Experiment::load_scaled(&f, scale)?;
        if exp.reproduce.is_none() {
            continue;
        }
        on_file(&exp);
        let r = reproduce_file(&exp, jobs, paper, progress)?;
        files.push(r.report);
        plots.extend(r.plots);
    }
    let title = PAPERS
        .iter()
        .find(|(id, _)| *id == paper)
        .map(|(_, t)| t.to_string())
        .unwrap_or_else(|| paper.to_string());
    let report = PaperReport {
        paper_id: paper.to_string(),
        paper_title: title,
        files,
        generated_by: format!("smpsched reproduce {paper} --scale {scale}"),
    };
    let md = render_paper(&report);
    let hash = fnv(md.as_bytes()) ^ plots.iter().fold(0, |h, (_, s)| h ^ fnv(s.as_bytes()));
    let run_dir = reports.join("runs").join(format!("{paper}-{hash:016x}"));
    for base in [run_dir.as_path(), reports] {
        let plot_dir = base.join(paper);
        std::fs::create_dir_all(&plot_dir).map_err(|e| LabError::io(&plot_dir, e))?;
        for (name, svg) in &plots {
            write_atomic(&plot_dir.join(name), svg.as_bytes())?;
        }
        write_atomic(&base.join(format!("{paper}.md")), md.as_bytes())?;
    }
    let json = serde_json::to_string_pretty(&report)
        .map_err(|e| LabError::Internal(format!("report: {e}")))?;
    write_atomic(&reports.join(format!("{paper}.json")), json.as_bytes())?;
    // The index lists every paper with a report in `reports/`.
    let mut jsons: Vec<std::path::PathBuf> = std::fs::read_dir(reports)
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
        if let Ok(r) = serde_json::from_str::<PaperReport>(&text) {
            index.push((
                r.paper_id.clone(),
                r.paper_title.clone(),
                r.summary().to_string(),
                format!("{}.md", r.paper_id),
            ));
        }
    }
    write_atomic(&reports.join("index.md"), render_index(&index).as_bytes())?;
    Ok(PaperOutcome {
        latest: reports.join(format!("{paper}.md")),
        report,
        run_dir,
    })
}
