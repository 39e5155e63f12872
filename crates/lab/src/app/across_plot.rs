//! The plots of a report across seeds or values ([`crate::reproduce::across`]): each agreement
//! measure's rank correlation with the paper, and its share of values within 25% of the paper's,
//! at each run, as line charts with one line per file and measure. Where a setting was varied over
//! numbers, the runs lie at their values, so that a reader sees at a glance how far the
//! agreement rests on one guess of a constant; seeds and combinations of values are points on
//! their own (named on the axis, not joined), and the y axes cover -1 to 1 and 0 to 100% whatever
//! the values.
//!
//! Pure: the report in, the charts' specifications out ([`crate::svg::line_chart`] draws them).

use std::path::Path;

use crate::reproduce::across::{AcrossReport, AgreementAcross};
use crate::svg::{LineChart, Series, SeriesStyle};

/// The two charts of a report across runs: rank correlations, then shares within 25%.
#[derive(Debug, Clone, PartialEq)]
pub struct AgreementCharts {
    /// Each measure's rank correlation with the paper at each run (measures without one, such
    /// as those summed over several files, left out).
    pub ranks: LineChart,
    /// Each measure's values within 25% of the paper's at each run, in percent of its values.
    pub within: LineChart,
}

/// Where the runs lie on the x axis: each run's place, the axis's label, and the names of the
/// places 1..n when they are categories (empty when x is a number).
struct Positions {
    x: Vec<f64>,
    label: String,
    names: Vec<String>,
}

/// Where each run lies on the x axis: at its value when one path is varied and every value is a
/// number, at its seed across seeds, else at its place in the report, named by its value (or
/// its combination of values).
fn x_positions(r: &AcrossReport) -> Positions {
    let n = r.summaries.len();
    let in_order = || (1..=n).map(|k| k as f64).collect();
    match &r.varied {
        Some(v) if !v.is_grid() => {
            let numbers: Option<Vec<f64>> = v
                .values
                .iter()
                .map(|s| s.parse::<f64>().ok().filter(|x| x.is_finite()))
                .collect();
            match numbers {
                Some(x) => Positions {
                    x,
                    label: v.path.clone(),
                    names: Vec::new(),
                },
                None => Positions {
                    x: in_order(),
                    label: v.path.clone(),
                    names: v.values.clone(),
                },
            }
        }
        Some(v) => Positions {
            x: in_order(),
            label: format!("combinations of {}", v.path),
            names: v.values.clone(),
        },
        None => Positions {
            x: r.seeds.iter().map(|&s| s as f64).collect(),
            label: "seed".into(),
            names: Vec::new(),
        },
    }
}

/// A measure's line name: its file's name without folder and extension, and the measure.
fn line_name(a: &AgreementAcross) -> String {
    let file = Path::new(&a.file)
        .file_stem()
        .map_or_else(|| a.file.clone(), |s| s.to_string_lossy().to_string());
    format!("{file}: {}", a.metric)
}

/// The report's two charts, or none when it has no agreement measure.
pub fn agreement_charts(r: &AcrossReport) -> Option<AgreementCharts> {
    if r.agreement.is_empty() {
        return None;
    }
    let Positions {
        x,
        label: x_label,
        names,
    } = x_positions(r);
    // Seeds and categories have no order between them to draw a line along.
    let points_only = r.varied.is_none() || !names.is_empty();
    let ranks = r
        .agreement
        .iter()
        .filter(|a| a.rank_correlation.iter().any(Option::is_some))
        .map(|a| Series {
            name: line_name(a),
            points: x
                .iter()
                .zip(&a.rank_correlation)
                .filter_map(|(&x, c)| c.filter(|c| c.is_finite()).map(|c| (x, c)))
                .collect(),
            style: SeriesStyle::Ours,
        })
        .collect();
    let within = r
        .agreement
        .iter()
        .filter(|a| a.values > 0)
        .map(|a| Series {
            name: line_name(a),
            points: x
                .iter()
                .zip(&a.within_25)
                .map(|(&x, &w)| (x, 100.0 * w as f64 / a.values as f64))
                .collect(),
            style: SeriesStyle::Ours,
        })
        .collect();
    let noun = r.run_noun();
    Some(AgreementCharts {
        ranks: LineChart {
            title: format!(
                "{}: rank correlation with the paper at each {noun}",
                r.paper_id
            ),
            x_label: x_label.clone(),
            y_label: "rank correlation".into(),
            log_y: false,
            log_x: false,
            series: ranks,
            x_names: names.clone(),
            points_only,
            y_range: Some((-1.0, 1.0)),
        },
        within: LineChart {
            title: format!(
                "{}: values within 25% of the paper's at each {noun}",
                r.paper_id
            ),
            x_label,
            y_label: "% of the values".into(),
            log_y: false,
            log_x: false,
            series: within,
            x_names: names,
            points_only,
            y_range: Some((0.0, 100.0)),
        },
    })
}
