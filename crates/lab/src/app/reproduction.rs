//! Reproductions: an experiment file's `[reproduce]` section names the paper, the values the paper
//! reports for some points (with a tolerance), the paper's claims in the claim language of
//! [`crate::reproduce::claims`], and the plot to draw. [`reproduce_file`] runs the experiment and
//! turns it into a [`ReportFile`]: our numbers beside the paper's, and each claim's verdict.
//!
//! ```toml
//! [reproduce]
//! paper = "black90"
//! title = "Table 2: time per synchronization"
//! metric = "us_per_op"              # the measure compared by default (see `metric::MEASURES`)
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
//! headline = "optional: the paper's finding in words, listed at the top of the report"
//! ```

use std::collections::BTreeMap;

use crate::exec::runner::{run_experiment, RunMemo, RunOptions, RunRecord};
use crate::exec::shard::Exec;
use crate::input::error::LabError;
use crate::metric;
use crate::reproduce::agreement;
use crate::reproduce::claims::Lookup;
use crate::reproduce::report::{ClaimRow, PlotRef, PointRow, ReportFile, Verdict};
use crate::spec::experiment::Experiment;
use crate::svg::{
    agreement_chart, grouped_bars, line_chart, AgreementChart, AgreementDot, AgreementPanel,
    BarGroup, GroupedBars, LineChart, Series, SeriesStyle,
};

pub use crate::spec::repro_spec::{ClaimSpec, Expect, PlotKind, PlotSpec, Spec};

/// One reproduced file: its report, plots (file name, SVG) and whether every claim held.
pub struct Reproduced {
    /// The report section of this file.
    pub report: ReportFile,
    /// Plots as (file name, SVG text).
    pub plots: Vec<(String, String)>,
}

/// Runs a reproduction file and builds its report. `plot_dir` is the folder (relative to the
/// report) where plots will be written; `memo` holds the runs of the paper's earlier files.
pub fn reproduce_file(
    exp: &Experiment,
    exec: Exec<'_>,
    plot_dir: &str,
    progress: &(dyn Fn(usize, usize) + Sync),
    memo: &RunMemo,
) -> Result<Reproduced, LabError> {
    let spec = exp
        .reproduce
        .as_ref()
        .ok_or_else(|| LabError::Internal(format!("{} has no [reproduce] section", exp.name)))?;
    let options = RunOptions {
        jobs: exec.jobs,
        progress: Some(progress),
        memo: Some(memo),
        cancel: exec.cancel,
        ..RunOptions::default()
    };
    let runs = run_experiment(exp, &options)?;
    // A run that stopped at a bound measured only part of the experiment: no verdicts on it.
    if let Some(e) = crate::exec::runner::stopped_error(exp, &runs) {
        return Err(e);
    }
    let point = |label: &str| exp.points.iter().find(|p| p.label == label);
    let lookup = |m: &str, p: &str| point(p).and_then(|pt| metric::value(m, pt, &runs));

    let rows = point_rows(exp, spec, &lookup);
    let claims = claim_rows(spec, &lookup);
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
    let setup = setup_rows(exp, spec);
    let agreement: Vec<agreement::Agreement> = spec
        .agreement
        .iter()
        .map(|m| agreement::of_pairs(m, compared(&rows, m)))
        .collect();
    if !agreement.is_empty() {
        let svg = agreement_plot(spec, &rows, &agreement)?;
        let name = format!("{stem}-agreement.svg");
        plot_refs.push(PlotRef {
            title: format!("{}: ours against the paper's", spec.title),
            path: format!("{plot_dir}/{name}"),
        });
        plots.push((name, svg));
    }
    Ok(Reproduced {
        report: ReportFile {
            title: spec.title.clone(),
            source_paper: spec.paper.clone(),
            experiment_file: exp.recorded_path.clone(),
            setup,
            points: rows,
            claims,
            plots: plot_refs,
            notes: spec
                .note_texts
                .iter()
                .map(|n| n.render_noting_errors(&lookup))
                .collect(),
            agreement,
        },
        plots,
    })
}

/// `(ours, paper)` of measure `metric` at each point the file gives the paper's value for.
fn compared<'a>(rows: &'a [PointRow], metric: &'a str) -> impl Iterator<Item = (f64, f64)> + 'a {
    rows.iter()
        .filter(move |r| r.metric == metric)
        .filter_map(|r| r.paper.map(|p| (r.ours, p)))
}

/// The agreement plot: a panel per measure of `[reproduce] agreement`, a dot per point, ours
/// against the paper's (points whose value we could not compute are left out).
fn agreement_plot(
    spec: &Spec,
    rows: &[PointRow],
    agreement: &[agreement::Agreement],
) -> Result<String, LabError> {
    let panels = agreement
        .iter()
        .map(|a| AgreementPanel {
            heading: agreement::heading(a),
            dots: compared(rows, &a.metric)
                .filter(|(ours, paper)| ours.is_finite() && paper.is_finite())
                .map(|(ours, paper)| AgreementDot {
                    paper,
                    ours,
                    within: agreement::within(ours, paper),
                })
                .collect(),
        })
        .collect();
    agreement_chart(&AgreementChart {
        title: spec.title.clone(),
        band: agreement::BAND,
        panels,
    })
    .map_err(|e| LabError::Internal(format!("agreement plot: {e}")))
}

/// The compared values: each expected point beside the paper's, or every point's measure when
/// the file expects none.
fn point_rows(exp: &Experiment, spec: &Spec, lookup: &Lookup<'_>) -> Vec<PointRow> {
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
    rows
}

/// Each parsed claim's verdict: holds, fails, a known difference, or not evaluated.
fn claim_rows(spec: &Spec, lookup: &Lookup<'_>) -> Vec<ClaimRow> {
    spec.claim
        .iter()
        .filter_map(|c| Some((c, c.parsed.as_ref()?)))
        .map(|(c, claim)| {
            let (verdict, detail) = match claim.evaluate(lookup) {
                Ok(o) if o.holds => (Verdict::Holds, o.detail),
                Ok(o) => match c.reason.as_ref().map(|r| r.render(lookup)) {
                    Some(Ok(reason)) => (Verdict::KnownDifference { reason }, o.detail),
                    Some(Err(e)) => (
                        Verdict::Error {
                            message: format!("its known difference: {e}"),
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
                headline: c.headline.clone(),
            }
        })
        .collect()
}

/// The setup lines of a file's report: machine, processors, clock, points, repetitions, seed and
/// measure.
fn setup_rows(exp: &Experiment, spec: &Spec) -> Vec<(String, String)> {
    let first = &exp.points[0];
    vec![
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
    ]
}

/// A line plot's series against the swept parameter `x`: ours and (where the file expects
/// values) the paper's for each label with the `x` part removed; series with paper values
/// first, so the i-th ours and i-th paper series share a colour.
fn line_series(
    exp: &Experiment,
    spec: &Spec,
    x: &str,
    runs: &[RunRecord],
    rows: &[PointRow],
) -> Vec<Series> {
    let short = x.rsplit('.').next().unwrap_or(x);
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
            .and_then(|(_, v)| v.number())
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
    order.sort_by_key(|s| !paper_series.contains_key(s));
    let mut series = Vec::new();
    for (set, style, tag) in [
        (&ours, SeriesStyle::Ours, "ours"),
        (&paper_series, SeriesStyle::Paper, "paper"),
    ] {
        for s in &order {
            if let Some(pts) = set.get(s) {
                series.push(Series {
                    name: format!("{s} ({tag})"),
                    points: pts.clone(),
                    style,
                });
            }
        }
    }
    series
}

/// Draws one of a reproduction's plots (see [`PlotKind`]) as an SVG document.
fn draw(
    exp: &Experiment,
    spec: &Spec,
    ps: &PlotSpec,
    runs: &[RunRecord],
    rows: &[PointRow],
) -> Result<String, LabError> {
    let y_label = ps.y_label.clone().unwrap_or_else(|| spec.metric.clone());
    let plot_err = |e: crate::svg::PlotError| LabError::Internal(format!("plot: {e}"));
    match ps.kind {
        PlotKind::Line => {
            let x = ps.x.as_deref().unwrap_or_default();
            let short = x.rsplit('.').next().unwrap_or(x);
            line_chart(&LineChart {
                title: spec.title.clone(),
                x_label: ps.x_label.clone().unwrap_or_else(|| short.to_string()),
                y_label,
                log_y: ps.log_y,
                series: line_series(exp, spec, x, runs, rows),
            })
            .map_err(plot_err)
        }
        PlotKind::Bars => grouped_bars(&GroupedBars {
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
        PlotKind::Apps => {
            let paper: Vec<(String, String, f64)> = rows
                .iter()
                .filter_map(|r| Some((r.point.clone(), r.metric.clone(), r.paper?)))
                .collect();
            crate::results::app_split_chart(&spec.title, &y_label, exp, runs, &paper)
        }
        PlotKind::Stacked => crate::results::time_split_chart(&spec.title, exp, runs),
    }
}
