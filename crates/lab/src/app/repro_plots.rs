//! A reproduction's plots: its chart (lines against a swept parameter, grouped bars with a panel
//! per measure, Gupta's per-application bars or the machine's time split) and its agreement
//! chart, drawn from the report's rows and the runs; and the names the axes give the measures.

use std::collections::BTreeMap;

use crate::exec::runner::RunRecord;
use crate::input::error::LabError;
use crate::metric;
use crate::reproduce::agreement;
use crate::reproduce::report::PointRow;
use crate::spec::experiment::Experiment;
use crate::spec::repro_spec::{PlotKind, PlotSpec, Spec};
use crate::svg::{
    agreement_chart, grouped_bars, line_chart, AgreementChart, AgreementDot, AgreementPanel,
    BarGroup, BarPanel, GroupedBars, LineChart, Series, SeriesStyle,
};

/// `(ours, paper)` of measure `metric` at each point the file gives the paper's value for.
pub(crate) fn compared<'a>(
    rows: &'a [PointRow],
    metric: &'a str,
) -> impl Iterator<Item = (f64, f64)> + 'a {
    rows.iter()
        .filter(move |r| r.metric == metric)
        .filter_map(|r| r.paper.map(|p| (r.ours, p)))
}

/// The agreement plot: a panel per measure of `[reproduce] agreement`, a dot per point, ours
/// against the paper's (points whose value we could not compute are left out).
pub(crate) fn agreement_plot(
    spec: &Spec,
    rows: &[PointRow],
    agreement: &[agreement::Agreement],
) -> Result<String, LabError> {
    let panels = agreement
        .iter()
        .map(|a| AgreementPanel {
            heading: agreement::heading(a),
            unit: metric_label(spec, &a.metric),
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
                // A label that is only the x part leaves the series its tag alone.
                let name = if s.is_empty() {
                    tag.to_string()
                } else {
                    format!("{s} ({tag})")
                };
                series.push(Series {
                    name,
                    points: pts.clone(),
                    style,
                });
            }
        }
    }
    series
}

/// What an axis calls measure `m`: the plot's `y_label` for the file's own measure (when it
/// gives one), else the measure's name made readable.
pub(crate) fn metric_label(spec: &Spec, m: &str) -> String {
    match spec.plot.as_ref().and_then(|p| p.y_label.clone()) {
        Some(label) if m == spec.metric => label,
        _ => readable_metric(m),
    }
}

/// A measure's name for people: words instead of `_`, the recorded name alone for a
/// `recorded_mean:APP:NAME` (`create_set_us` gives `create set (µs)`), a qualifier (`user`,
/// `kernel`) first, the unit last, the application after a comma (`app stall (%), MP3D`).
pub fn readable_metric(m: &str) -> String {
    let parts: Vec<&str> = m.split(':').collect();
    let name = parts[0];
    if let Some(stat) = name.strip_prefix("recorded_") {
        let words = readable_words(parts.last().copied().unwrap_or(name));
        return if stat == "mean" || parts.len() < 2 {
            words
        } else {
            format!("{stat} {words}")
        };
    }
    if name == "sd" && parts.len() > 1 {
        return format!("sd of {}", readable_metric(&parts[1..].join(":")));
    }
    let mut text = readable_words(name);
    let unit = metric::MEASURES
        .iter()
        .find(|e| e.name == name)
        .map(|e| e.unit);
    let suffix = match unit {
        Some(metric::Unit::Percent) => " (%)",
        Some(metric::Unit::Ticks) if !text.contains("ticks") => " (ticks)",
        _ => "",
    };
    text.push_str(suffix);
    if parts.len() > 1 {
        text = format!("{text}, {}", parts[1..].join(":"));
    }
    text
}

/// `snake_case` words for people: `instrs` spelled out, a trailing `user` or `kernel` put
/// first, a trailing unit (`us`, `ms`, `ticks`, `m`) in brackets, a trailing digit apart.
fn readable_words(name: &str) -> String {
    let mut words: Vec<String> = name
        .split('_')
        .filter(|w| !w.is_empty())
        .map(|w| match w {
            "instrs" => "instructions".to_string(),
            "us" => "µs".to_string(),
            "util" => "utilization".to_string(),
            _ => w.to_string(),
        })
        .collect();
    if words.len() > 1 && matches!(words.last().map(String::as_str), Some("user" | "kernel")) {
        let last = words.pop().unwrap_or_default();
        words.insert(0, last);
    }
    if words.len() > 1 {
        let unit = match words.last().map(String::as_str) {
            Some("µs") => Some("(µs)"),
            Some("ms") => Some("(ms)"),
            Some("ticks") => Some("(ticks)"),
            Some("m") => Some("(millions)"),
            _ => None,
        };
        if let Some(unit) = unit {
            words.pop();
            words.push(unit.to_string());
        }
    }
    let text = words.join(" ");
    // `load0` reads `load 0`.
    match text.find(|c: char| c.is_ascii_digit()) {
        Some(at) if at > 0 && text[at..].chars().all(|c| c.is_ascii_digit()) => {
            let (word, digits) = text.split_at(at);
            if word.ends_with(' ') {
                text
            } else {
                format!("{word} {digits}")
            }
        }
        _ => text,
    }
}

/// The panels of a bar chart: one per measure the rows carry, the file's own measure first,
/// each titled by [`metric_label`]; a row whose value we could not compute keeps its place.
fn bar_panels(spec: &Spec, rows: &[PointRow]) -> Vec<BarPanel> {
    let mut metrics: Vec<&str> = Vec::new();
    for r in rows {
        if !metrics.contains(&r.metric.as_str()) {
            metrics.push(&r.metric);
        }
    }
    metrics.sort_by_key(|m| *m != spec.metric);
    metrics
        .into_iter()
        .map(|m| BarPanel {
            y_label: metric_label(spec, m),
            groups: rows
                .iter()
                .filter(|r| r.metric == m)
                .map(|r| BarGroup {
                    label: r.point.clone(),
                    ours: r.ours.is_finite().then_some(r.ours),
                    paper: r.paper,
                })
                .collect(),
        })
        .collect()
}

/// Draws one of a reproduction's plots (see [`PlotKind`]) as an SVG document.
pub(crate) fn draw(
    exp: &Experiment,
    spec: &Spec,
    ps: &PlotSpec,
    runs: &[RunRecord],
    rows: &[PointRow],
) -> Result<String, LabError> {
    // The plot's own title where the file gives one (a plot showing one of the file's
    // measures), else the file's.
    let title = ps.title.clone().unwrap_or_else(|| spec.title.clone());
    let y_label = ps
        .y_label
        .clone()
        .unwrap_or_else(|| readable_metric(&spec.metric));
    let plot_err = |e: crate::svg::PlotError| LabError::Internal(format!("plot: {e}"));
    match ps.kind {
        PlotKind::Line => {
            let x = ps.x.as_deref().unwrap_or_default();
            let short = x.rsplit('.').next().unwrap_or(x);
            line_chart(&LineChart {
                title,
                x_label: ps.x_label.clone().unwrap_or_else(|| short.to_string()),
                y_label,
                log_y: ps.log_y,
                log_x: ps.log_x,
                series: line_series(exp, spec, x, runs, rows),
                x_names: Vec::new(),
                points_only: false,
                y_range: None,
            })
            .map_err(plot_err)
        }
        PlotKind::Bars => grouped_bars(&GroupedBars {
            title,
            panels: bar_panels(spec, rows),
        })
        .map_err(plot_err),
        PlotKind::Apps => {
            let paper: Vec<(String, String, f64)> = rows
                .iter()
                .filter_map(|r| Some((r.point.clone(), r.metric.clone(), r.paper?)))
                .collect();
            crate::results::app_split_chart(&title, &y_label, exp, runs, &paper)
        }
        PlotKind::Stacked => crate::results::time_split_chart(&title, exp, runs),
    }
}
