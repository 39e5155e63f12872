//! How close a report's values are to the paper's, for its summary lines: beside the count
//! within each file's own tolerance (which a file may set wide), the counts within fixed bands of
//! 10% and 25% of the paper's value and the largest relative distance, so that "all within
//! tolerance" cannot hide values 59% off under a 60% tolerance.

use super::format_number;
use super::report::Summary;
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
