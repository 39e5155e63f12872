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

use crate::app::repro_plots::{agreement_plot, compared, draw};
use crate::exec::runner::{run_experiment, RunMemo, RunOptions};
use crate::exec::shard::Exec;
use crate::input::error::LabError;
use crate::metric;
use crate::reproduce::agreement;
use crate::reproduce::claims::Lookup;
use crate::reproduce::report::{ClaimRow, PlotRef, PointRow, ReportFile, Verdict};
use crate::spec::experiment::Experiment;

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
