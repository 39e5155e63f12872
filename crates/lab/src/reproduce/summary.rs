//! How close a report's values are to the paper's, for its summary lines: beside the count
//! within each file's own tolerance (which a file may set wide), the counts within fixed bands of
//! 10% and 25% of the paper's value and the largest relative distance, so that "all within
//! tolerance" cannot hide values 59% off under a 60% tolerance.

use super::format_number;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::report::{PaperReport, ReportFile, Verdict};
use super::tolerance::Tolerance;

/// The fixed bands every summary counts values within, as fractions of the paper's value.
pub const BANDS: [f64; 2] = [0.10, 0.25];

/// The relative distance `|ours - paper| / |paper|`: 0 when both are 0, `None` when there is no
/// finite ratio (a missing value, or a paper value of 0 that ours does not match).
pub fn relative_distance(ours: f64, paper: f64) -> Option<f64> {
    if !ours.is_finite() || !paper.is_finite() {
        None
    } else if paper == 0.0 {
        (ours == 0.0).then_some(0.0)
    } else {
        Some((ours - paper).abs() / paper.abs())
    }
}

/// Whether `ours` is within `band` (a fraction) of `paper`, with the rounding slack of
/// [`Tolerance::check`].
pub fn within_band(ours: f64, paper: f64, band: f64) -> bool {
    Tolerance::Relative(band).check(ours, paper)
}

/// Formats a relative distance as an unsigned percentage, e.g. `59%`.
pub fn distance_text(distance: f64) -> String {
    format!("{}%", format_number(distance * 100.0))
}

/// The values part of a summary, e.g. `23 values: 14 within 10%, 19 within 25%, 23 within the
/// file's tolerances (largest distance 59%)`; empty when no value was compared.
pub fn values_text(summary: &Summary) -> String {
    if summary.compared == 0 {
        return String::new();
    }
    let noun = if summary.compared == 1 {
        "value"
    } else {
        "values"
    };
    let whose = if summary.files > 1 {
        "the files'"
    } else {
        "the file's"
    };
    let mut text = format!(
        "{} {noun}: {} within {}, {} within {}, {} within {whose} tolerances",
        summary.compared,
        summary.within_10,
        distance_text(BANDS[0]),
        summary.within_25,
        distance_text(BANDS[1]),
        summary.within,
    );
    let mut notes = Vec::new();
    if let Some(largest) = summary.largest_distance {
        notes.push(format!("largest distance {}", distance_text(largest)));
    }
    if summary.incomparable > 0 {
        notes.push(format!(
            "{} without a finite distance",
            summary.incomparable
        ));
    }
    if !notes.is_empty() {
        text.push_str(&format!(" ({})", notes.join("; ")));
    }
    text
}

/// Counts of verdicts and tolerance checks over a report, and how close the compared values are
/// to the paper's (within the fixed [`BANDS`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of claims.
    pub claims: usize,
    /// Claims that hold.
    pub holds: usize,
    /// Claims that fail.
    pub fails: usize,
    /// Claims that fail for a documented reason.
    pub known_differences: usize,
    /// Claims that could not be evaluated.
    pub errors: usize,
    /// Values compared against the paper within a tolerance.
    pub compared: usize,
    /// Compared values that are within tolerance.
    pub within: usize,
    /// Compared values within 10% of the paper's value.
    #[serde(default)]
    pub within_10: usize,
    /// Compared values within 25% of the paper's value.
    #[serde(default)]
    pub within_25: usize,
    /// The largest relative distance `|ours - paper| / |paper|` of a compared value.
    #[serde(default)]
    pub largest_distance: Option<f64>,
    /// Compared values with no finite relative distance (missing, or off a paper value of 0).
    #[serde(default)]
    pub incomparable: usize,
    /// Files summed up.
    #[serde(default)]
    pub files: usize,
}

impl Summary {
    /// Counts the claims and compared points of the given files.
    pub fn of_files(files: &[ReportFile]) -> Summary {
        let mut summary = Summary {
            files: files.len(),
            ..Summary::default()
        };
        for file in files {
            for claim in &file.claims {
                summary.claims += 1;
                match claim.verdict {
                    Verdict::Holds => summary.holds += 1,
                    Verdict::Fails => summary.fails += 1,
                    Verdict::KnownDifference { .. } => summary.known_differences += 1,
                    Verdict::Error { .. } => summary.errors += 1,
                }
            }
            for point in &file.points {
                let (Some(within), Some(paper)) = (point.within, point.paper) else {
                    continue;
                };
                summary.compared += 1;
                summary.within += usize::from(within);
                summary.within_10 += usize::from(within_band(point.ours, paper, BANDS[0]));
                summary.within_25 += usize::from(within_band(point.ours, paper, BANDS[1]));
                match relative_distance(point.ours, paper) {
                    Some(d) => {
                        let largest = summary.largest_distance.get_or_insert(d);
                        *largest = largest.max(d);
                    }
                    None => summary.incomparable += 1,
                }
            }
        }
        summary
    }
}

/// `count` with the noun in singular or plural.
pub(crate) fn plural(count: usize, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

impl fmt::Display for Summary {
    /// `N of M claims hold, K known differences[, F fail][, E not evaluated]; Y values: A within
    /// 10%, B within 25%, X within the file's tolerances (largest distance D%)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = if self.claims == 1 { "holds" } else { "hold" };
        write!(
            f,
            "{} of {} {verb}, {}",
            self.holds,
            plural(self.claims, "claim", "claims"),
            plural(
                self.known_differences,
                "known difference",
                "known differences"
            )
        )?;
        if self.fails > 0 {
            write!(
                f,
                ", {} {}",
                self.fails,
                if self.fails == 1 { "fails" } else { "fail" }
            )?;
        }
        if self.errors > 0 {
            write!(f, ", {} not evaluated", self.errors)?;
        }
        if self.compared > 0 {
            write!(f, "; {}", values_text(self))?;
        }
        Ok(())
    }
}

impl PaperReport {
    /// The summary over all of the paper's files.
    pub fn summary(&self) -> Summary {
        Summary::of_files(&self.files)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(relative_distance(159.0, 100.0), Some(0.59));
        assert_eq!(relative_distance(41.0, 100.0), Some(0.59));
        assert_eq!(relative_distance(-12.0, -10.0), Some(0.2));
        assert_eq!(relative_distance(0.0, 0.0), Some(0.0));
        assert_eq!(relative_distance(1.0, 0.0), None);
        assert_eq!(relative_distance(f64::NAN, 1.0), None);
        assert!(within_band(110.0, 100.0, 0.10));
        assert!(!within_band(110.5, 100.0, 0.10));
        assert_eq!(distance_text(0.59), "59%");
    }

    #[test]
    fn wording() {
        let mut s = Summary {
            compared: 1,
            within: 1,
            within_10: 1,
            within_25: 1,
            largest_distance: Some(0.0),
            files: 1,
            ..Summary::default()
        };
        assert_eq!(
            values_text(&s),
            "1 value: 1 within 10%, 1 within 25%, 1 within the file's tolerances \
             (largest distance 0%)"
        );
        s.incomparable = 1;
        s.compared = 2;
        s.files = 2;
        assert!(values_text(&s)
            .ends_with("the files' tolerances (largest distance 0%; 1 without a finite distance)"));
        assert_eq!(values_text(&Summary::default()), "");
    }
}
