//! Reproduction reports as data: the points, claims, verdicts and plots a reproduction produced
//! for each experiment file of a paper, and the cell text the renderers share ([`super::markdown`]
//! renders them as Markdown, [`super::terminal`] as a fixed-width table).

use serde::{Deserialize, Serialize};

use super::agreement::Agreement;
use super::tolerance::{relative_difference, Tolerance};
use super::{format_number, format_percent};

/// One measured value beside the paper's, if the paper gives one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointRow {
    /// The experiment point, e.g. `gang-25ms`.
    pub point: String,
    /// The metric, e.g. `utilization`.
    pub metric: String,
    /// Our measured value.
    pub ours: f64,
    /// The paper's value, when it prints one.
    pub paper: Option<f64>,
    /// The tolerance the comparison uses.
    pub tolerance: Option<Tolerance>,
    /// Whether ours is within the tolerance of the paper's (`None` when not compared).
    pub within: Option<bool>,
    /// A remark shown beside the row.
    pub note: Option<String>,
}

/// What became of a claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// The claim holds.
    Holds,
    /// The claim does not hold.
    Fails,
    /// The claim does not hold, for a documented reason (e.g. different hardware).
    KnownDifference {
        /// Why the difference is expected.
        reason: String,
    },
    /// The claim could not be evaluated (missing value, division by zero, ...).
    Error {
        /// What went wrong.
        message: String,
    },
}

/// One claim with its verdict and the numbers behind it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimRow {
    /// The claim as written (canonical form).
    pub text: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The evaluation detail, e.g. `62.1 > 59.8`.
    pub detail: String,
    /// The headline finding this claim checks, in the paper's words (see [`super::headline`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<String>,
}

/// A figure to embed, by path relative to the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlotRef {
    /// Alt text and caption.
    pub title: String,
    /// Path of the SVG relative to the Markdown file.
    pub path: String,
}

/// The results of one experiment file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportFile {
    /// Heading, e.g. `Figure 3: priority scheduling with blocking locks`.
    pub title: String,
    /// Where in the paper the numbers come from, e.g. `Gupta et al. 1991, Figure 3`.
    pub source_paper: String,
    /// The experiment file, as a path relative to the repository.
    pub experiment_file: String,
    /// Setup as `(setting, value)` pairs, shown as a small table.
    pub setup: Vec<(String, String)>,
    /// Our numbers beside the paper's.
    pub points: Vec<PointRow>,
    /// The claims and their verdicts.
    pub claims: Vec<ClaimRow>,
    /// Figures to embed.
    pub plots: Vec<PlotRef>,
    /// Free-form remarks.
    pub notes: Vec<String>,
    /// How the measures the file names in `[reproduce] agreement` agree with the paper's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agreement: Vec<Agreement>,
}

/// Everything reproduced from one paper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaperReport {
    /// Short identifier, e.g. `gupta1991`.
    pub paper_id: String,
    /// Full title of the paper.
    pub paper_title: String,
    /// One section per experiment file.
    pub files: Vec<ReportFile>,
    /// The command line, seed and scale that produced the report (no timestamps).
    pub generated_by: String,
    /// Values set over every file from the command line (`--set`, `--vary`), as
    /// `workload.0.random_ms = 0.05`: when any, the report is not of the files as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<String>,
    /// The files reproduced by name, when only some of the paper's were (`--only`); empty:
    /// every file.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub only: Vec<String>,
}

/// The difference column: relative to the paper's value when that is not zero (for absolute
/// tolerances after the absolute difference, `-9.3 (-15.68%)`), absolute otherwise; `—` without
/// a paper value.
pub(crate) fn difference_text(row: &PointRow) -> String {
    let Some(paper) = row.paper else {
        return "—".to_string();
    };
    let absolute = || {
        let diff = row.ours - paper;
        if diff > 0.0 {
            format!("+{}", format_number(diff))
        } else {
            format_number(diff)
        }
    };
    match (row.tolerance, relative_difference(row.ours, paper)) {
        (Some(Tolerance::Absolute(_)), Some(r)) => {
            format!("{} ({})", absolute(), format_percent(r))
        }
        (_, Some(r)) => format_percent(r),
        (_, None) => absolute(),
    }
}

/// A value, or `—` without one.
pub(crate) fn option_number(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_string(), format_number)
}

/// A tolerance, or `—` without one.
pub(crate) fn tolerance_text(tolerance: Option<Tolerance>) -> String {
    tolerance.map_or_else(|| "—".to_string(), |t| t.to_string())
}
