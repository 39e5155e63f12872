//! The SVG charts drawn from a run's measures: where the machine's time went per point
//! (`time-split.svg`, Gupta et al. 1991's utilization breakdown) and Gupta's per-application
//! bars beside the paper's.

use crate::exec::runner::RunRecord;
use crate::input::error::LabError;
use crate::metric;
use crate::spec::experiment::Experiment;
use crate::svg::{stacked_bars, SeriesStyle, StackedBar, StackedBars};

/// The categories of the machine's time split, each with the measure that gives its share.
const TIME_SPLIT: [(&str, &str); 6] = [
    ("useful", "utilization"),
    ("stall", "stall"),
    ("spin", "spin"),
    ("idle", "idle"),
    ("switch", "switch"),
    ("kernel", "kernel"),
];

/// A stacked bar per point (means over repetitions) of the machine's time split into useful,
/// stall, spin, idle, switch and kernel, as an SVG document.
pub fn time_split_chart(
    title: &str,
    exp: &Experiment,
    runs: &[RunRecord],
) -> Result<String, LabError> {
    let runs_of = metric::runs_of(runs);
    let bars = exp
        .points
        .iter()
        .map(|p| StackedBar {
            label: p.label.clone(),
            values: TIME_SPLIT
                .iter()
                .map(|(_, m)| metric::value(m, p, runs_of(&p.label)).map_or(0.0, |v| v.max(0.0)))
                .collect(),
            style: SeriesStyle::Ours,
        })
        .collect();
    stacked_bars(&StackedBars {
        title: title.to_string(),
        y_label: "% of machine time".into(),
        categories: TIME_SPLIT.iter().map(|(c, _)| c.to_string()).collect(),
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
    let runs_of = metric::runs_of(runs);
    for p in &exp.points {
        let runs = runs_of(&p.label);
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
