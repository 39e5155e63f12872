//! The plots of a report across seeds or values ([`crate::reproduce::across`]): each agreement
//! measure's rank correlation with the paper, and its share of values within 25% of the paper's,
//! at each run, as line charts with one line per file and measure. Where a setting was varied over
//! numbers, the runs lie at their values, so that a reader sees at a glance how far the
//! agreement rests on one guess of a constant.
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

/// Where each run lies on the x axis, and the axis's label: at its value when one path is varied
/// and every value is a number, at its seed across seeds, else at its place in the report.
fn x_positions(r: &AcrossReport) -> (Vec<f64>, String) {
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
                Some(x) => (x, v.path.clone()),
                None => (
                    in_order(),
                    format!("{} (its values in the report's order)", v.path),
                ),
            }
        }
        Some(v) => (
            in_order(),
            format!("combinations of {} (in the report's order)", v.path),
        ),
        None => (r.seeds.iter().map(|&s| s as f64).collect(), "seed".into()),
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
    let (x, x_label) = x_positions(r);
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
            series: ranks,
        },
        within: LineChart {
            title: format!(
                "{}: values within 25% of the paper's at each {noun}",
                r.paper_id
            ),
            x_label,
            y_label: "% of the values".into(),
            log_y: false,
            series: within,
        },
    })
}
