//! How close a reproduced number must be to the paper's: a relative (`10%`) or absolute (`±2`)
//! tolerance.
//!
//! Written forms, with optional spaces between the number and its unit:
//!
//! | text | meaning |
//! |---|---|
//! | `10%` | [`Tolerance::Relative`]`(0.10)`: within 10 % of the paper's value |
//! | `±2`, `+-2`, `2 abs` | [`Tolerance::Absolute`]`(2.0)`: within 2 units of the paper's value |
//!
//! A bare number (`2`) is rejected because it is ambiguous; so are negative and non-finite
//! amounts. Errors carry the byte `column` within the parsed text so that a caller can point at
//! the offending place in its own file.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserialize, Deserializer, Visitor};
use serde::ser::{Serialize, Serializer};
use thiserror::Error;

/// The valid written forms, quoted in error messages.
const FORMS: &str = "`10%` (relative), `±2`, `+-2` or `2 abs` (absolute)";

/// Relative slack added to every bound so that decimal fractions such as `0.1 + 0.2` against a
/// bound of `0.3` are not rejected by floating-point rounding.
const ROUNDING_SLACK: f64 = 1e-12;

/// An allowed deviation of a measured value from a reference (paper) value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance {
    /// A fraction of the reference value's magnitude: `Relative(0.1)` is written `10%`.
    Relative(f64),
    /// A fixed amount in the metric's own unit: `Absolute(2.0)` is written `±2`.
    Absolute(f64),
}

/// Why a tolerance could not be parsed; every variant carries the byte `column` it refers to.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ToleranceError {
    /// The text was empty or only spaces.
    #[error("the tolerance is empty; expected {FORMS}")]
    Empty {
        /// Byte offset of the (empty) tolerance.
        column: usize,
    },
    /// A plain number without `%`, `±`, `+-` or `abs`.
    #[error(
        "the tolerance `{text}` is missing a unit; write `{text}%` for a relative tolerance or \
         `±{text}`, `+-{text}` or `{text} abs` for an absolute one"
    )]
    MissingUnit {
        /// Byte offset of the number.
        column: usize,
        /// The number as written.
        text: String,
    },
    /// The amount is not a number at all.
    #[error("`{text}` is not a valid tolerance; expected {FORMS}")]
    Invalid {
        /// Byte offset of the offending text.
        column: usize,
        /// The offending text.
        text: String,
    },
    /// The amount is below zero.
    #[error("the tolerance must not be negative, found `{text}`; expected {FORMS}")]
    Negative {
        /// Byte offset of the number.
        column: usize,
        /// The number as written.
        text: String,
    },
    /// The amount is infinite or NaN (`inf`, `nan`, `1e999`).
    #[error("the tolerance must be a finite number, found `{text}`")]
    NotFinite {
        /// Byte offset of the number.
        column: usize,
        /// The number as written.
        text: String,
    },
}

impl ToleranceError {
    /// The byte offset within the parsed text that the error points at.
    pub fn column(&self) -> usize {
        match self {
            ToleranceError::Empty { column }
            | ToleranceError::MissingUnit { column, .. }
            | ToleranceError::Invalid { column, .. }
            | ToleranceError::Negative { column, .. }
            | ToleranceError::NotFinite { column, .. } => *column,
        }
    }

    /// The same error with its column moved right by `offset` bytes (for embedded tolerances).
    pub(crate) fn shifted(mut self, offset: usize) -> Self {
        match &mut self {
            ToleranceError::Empty { column }
            | ToleranceError::MissingUnit { column, .. }
            | ToleranceError::Invalid { column, .. }
            | ToleranceError::Negative { column, .. }
            | ToleranceError::NotFinite { column, .. } => *column += offset,
        }
        self
    }
}

/// The signed absolute difference `ours - paper`.
pub fn absolute_difference(ours: f64, paper: f64) -> f64 {
    ours - paper
}

/// The signed relative difference `(ours - paper) / |paper|`, or `None` when `paper` is zero or
/// not finite (no meaningful ratio exists).
pub fn relative_difference(ours: f64, paper: f64) -> Option<f64> {
    if paper == 0.0 || !paper.is_finite() {
        None
    } else {
        Some((ours - paper) / paper.abs())
    }
}

impl Tolerance {
    /// Parses `10%`, `±2`, `+-2` or `2 abs` (spaces allowed around the parts).
    pub fn parse(text: &str) -> Result<Tolerance, ToleranceError> {
        let start = text.len() - text.trim_start().len();
        let trimmed = text.trim();
        if trimmed.is_empty() {
            return Err(ToleranceError::Empty { column: start });
        }
        if let Some(body) = trimmed.strip_suffix('%') {
            let amount = parse_amount(body, start)?;
            return Ok(Tolerance::Relative(amount / 100.0));
        }
        for prefix in ["±", "+-"] {
            if let Some(body) = trimmed.strip_prefix(prefix) {
                let amount = parse_amount(body, start + prefix.len())?;
                return Ok(Tolerance::Absolute(amount));
            }
        }
        if let Some(body) = trimmed.strip_suffix("abs") {
            let amount = parse_amount(body, start)?;
            return Ok(Tolerance::Absolute(amount));
        }
        match parse_amount(trimmed, start) {
            Ok(_) => Err(ToleranceError::MissingUnit {
                column: start,
                text: trimmed.to_string(),
            }),
            Err(ToleranceError::Invalid { .. }) => Err(ToleranceError::Invalid {
                column: start,
                text: trimmed.to_string(),
            }),
            // A negative or infinite bare number: report that first, the unit comes after.
            Err(other) => Err(other),
        }
    }

    /// The largest allowed `|ours - paper|` when comparing against `paper`.
    pub fn bound(&self, paper: f64) -> f64 {
        match *self {
            Tolerance::Relative(fraction) => fraction * paper.abs(),
            Tolerance::Absolute(amount) => amount,
        }
    }

    /// Whether `ours` is within this tolerance of `paper`.
    ///
    /// Relative tolerances are taken against `|paper|`, so a paper value of 0 admits only an
    /// exact 0. A tiny rounding slack (one part in 10^12 of the bound) is allowed; any NaN or
    /// infinite input fails.
    pub fn check(&self, ours: f64, paper: f64) -> bool {
        if !ours.is_finite() || !paper.is_finite() {
            return false;
        }
        let bound = self.bound(paper);
        (ours - paper).abs() <= bound * (1.0 + ROUNDING_SLACK)
    }

    /// The difference in this tolerance's own unit: a signed fraction of `|paper|` for relative
    /// tolerances (`None` when `paper` is 0), the signed amount `ours - paper` for absolute ones.
    pub fn difference(&self, ours: f64, paper: f64) -> Option<f64> {
        match self {
            Tolerance::Relative(_) => relative_difference(ours, paper),
            Tolerance::Absolute(_) => Some(absolute_difference(ours, paper)),
        }
    }
}

/// Parses the numeric part of a tolerance; `column` is where `body` starts in the full text.
fn parse_amount(body: &str, column: usize) -> Result<f64, ToleranceError> {
    let lead = body.len() - body.trim_start().len();
    let column = column + lead;
    let number = body.trim();
    if number.is_empty() {
        return Err(ToleranceError::Invalid {
            column,
            text: body.to_string(),
        });
    }
    // Only plain decimal numbers: `f64::from_str` would also take `inf` and `nan`, which are
    // reported as not finite below only when they look like numbers.
    let looks_numeric = number
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
        && number.chars().any(|c| c.is_ascii_digit());
    let lowered = number.to_ascii_lowercase();
    let named_special = matches!(
        lowered.trim_start_matches(['-', '+']),
        "inf" | "infinity" | "nan"
    );
    if !looks_numeric && !named_special {
        return Err(ToleranceError::Invalid {
            column,
            text: number.to_string(),
        });
    }
    let value: f64 = number.parse().map_err(|_| ToleranceError::Invalid {
        column,
        text: number.to_string(),
    })?;
    if !value.is_finite() {
        return Err(ToleranceError::NotFinite {
            column,
            text: number.to_string(),
        });
    }
    if value < 0.0 {
        return Err(ToleranceError::Negative {
            column,
            text: number.to_string(),
        });
    }
    Ok(value)
}

/// Prints a number with at most 12 significant digits, so `0.07 * 100` shows as `7`.
fn canonical_number(value: f64) -> String {
    let rounded: f64 = format!("{value:.11e}").parse().unwrap_or(value);
    // Normalise -0 to 0.
    format!("{}", rounded + 0.0)
}

impl fmt::Display for Tolerance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Tolerance::Relative(fraction) => write!(f, "{}%", canonical_number(fraction * 100.0)),
            Tolerance::Absolute(amount) => write!(f, "±{}", canonical_number(amount)),
        }
    }
}

impl FromStr for Tolerance {
    type Err = ToleranceError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        Tolerance::parse(text)
    }
}

impl Serialize for Tolerance {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Tolerance {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ToleranceVisitor)
    }
}

/// Accepts a string in one of the written forms; a bare number gets the missing-unit message.
struct ToleranceVisitor;

impl ToleranceVisitor {
    fn missing_unit<E: de::Error>(text: String) -> E {
        E::custom(ToleranceError::MissingUnit { column: 0, text })
    }
}

impl Visitor<'_> for ToleranceVisitor {
    type Value = Tolerance;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a tolerance string: {FORMS}")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Tolerance, E> {
        Tolerance::parse(value).map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Tolerance, E> {
        Err(Self::missing_unit(value.to_string()))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Tolerance, E> {
        Err(Self::missing_unit(value.to_string()))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<Tolerance, E> {
        Err(Self::missing_unit(value.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_every_form() {
        assert_eq!(Tolerance::parse("10%"), Ok(Tolerance::Relative(0.10)));
        assert_eq!(Tolerance::parse(" 2.5 % "), Ok(Tolerance::Relative(0.025)));
        assert_eq!(Tolerance::parse("±2"), Ok(Tolerance::Absolute(2.0)));
        assert_eq!(Tolerance::parse("± 2"), Ok(Tolerance::Absolute(2.0)));
        assert_eq!(Tolerance::parse("+-2"), Ok(Tolerance::Absolute(2.0)));
        assert_eq!(Tolerance::parse("2 abs"), Ok(Tolerance::Absolute(2.0)));
        assert_eq!(Tolerance::parse("0.5abs"), Ok(Tolerance::Absolute(0.5)));
        assert_eq!(Tolerance::parse("0%"), Ok(Tolerance::Relative(0.0)));
        assert_eq!(Tolerance::parse("1e1%"), Ok(Tolerance::Relative(0.1)));
    }

    #[test]
    fn bare_number_is_missing_a_unit() {
        let err = Tolerance::parse("  2").unwrap_err();
        assert!(matches!(err, ToleranceError::MissingUnit { column: 2, .. }));
        let message = err.to_string();
        assert!(message.contains("missing a unit"), "{message}");
        assert!(
            message.contains("2%") && message.contains("±2"),
            "{message}"
        );
        assert!(message.contains("2 abs"), "{message}");
    }

    #[test]
    fn rejects_negative_non_finite_and_garbage() {
        assert!(matches!(
            Tolerance::parse("-5%"),
            Err(ToleranceError::Negative { column: 0, .. })
        ));
        assert!(matches!(
            Tolerance::parse("±-2"),
            Err(ToleranceError::Negative { column: 2, .. })
        ));
        assert!(matches!(
            Tolerance::parse("inf%"),
            Err(ToleranceError::NotFinite { .. })
        ));
        assert!(matches!(
            Tolerance::parse("1e999 abs"),
            Err(ToleranceError::NotFinite { .. })
        ));
        assert!(matches!(
            Tolerance::parse("NaN%"),
            Err(ToleranceError::NotFinite { .. })
        ));
        assert!(matches!(
            Tolerance::parse(""),
            Err(ToleranceError::Empty { .. })
        ));
        assert!(matches!(
            Tolerance::parse("ten%"),
            Err(ToleranceError::Invalid { .. })
        ));
        assert!(matches!(
            Tolerance::parse("%"),
            Err(ToleranceError::Invalid { .. })
        ));
        assert!(matches!(
            Tolerance::parse("abc"),
            Err(ToleranceError::Invalid { .. })
        ));
        assert!(matches!(
            Tolerance::parse("-3"),
            Err(ToleranceError::Negative { .. })
        ));
    }

    #[test]
    fn checks_relative_and_absolute() {
        let ten = Tolerance::Relative(0.10);
        assert!(ten.check(110.0, 100.0));
        assert!(ten.check(90.0, 100.0));
        assert!(!ten.check(110.5, 100.0));
        assert!(ten.check(-95.0, -100.0));
        // Paper value 0 with a relative tolerance admits only 0.
        assert!(ten.check(0.0, 0.0));
        assert!(!ten.check(1e-9, 0.0));
        let two = Tolerance::Absolute(2.0);
        assert!(two.check(3.0, 1.0));
        assert!(!two.check(3.1, 1.0));
        assert!(Tolerance::Absolute(0.3).check(0.1 + 0.2, 0.0));
        assert!(!two.check(f64::NAN, 1.0));
        assert!(!two.check(1.0, f64::INFINITY));
    }

    #[test]
    fn differences() {
        assert_eq!(absolute_difference(12.0, 10.0), 2.0);
        assert_eq!(relative_difference(12.0, 10.0), Some(0.2));
        assert_eq!(relative_difference(-12.0, -10.0), Some(-0.2));
        assert_eq!(relative_difference(1.0, 0.0), None);
        assert_eq!(Tolerance::Relative(0.1).difference(9.0, 10.0), Some(-0.1));
        assert_eq!(Tolerance::Absolute(1.0).difference(9.0, 10.0), Some(-1.0));
        assert_eq!(Tolerance::Relative(0.1).bound(-50.0), 5.0);
    }

    #[test]
    fn displays_canonically() {
        assert_eq!(Tolerance::Relative(0.10).to_string(), "10%");
        assert_eq!(Tolerance::Relative(0.07).to_string(), "7%");
        assert_eq!(Tolerance::Relative(0.025).to_string(), "2.5%");
        assert_eq!(Tolerance::Absolute(2.0).to_string(), "±2");
        assert_eq!(Tolerance::parse("+-0.5").unwrap().to_string(), "±0.5");
        assert_eq!(Tolerance::parse("3 abs").unwrap().to_string(), "±3");
    }

    #[test]
    fn serde_from_string() {
        #[derive(serde::Deserialize)]
        struct Row {
            tolerance: Tolerance,
        }
        let row: Row = toml::from_str("tolerance = \"5%\"").unwrap();
        assert_eq!(row.tolerance, Tolerance::Relative(0.05));
        let err = toml::from_str::<Row>("tolerance = 5").err().unwrap();
        assert!(err.to_string().contains("missing a unit"), "{err}");
        let err = toml::from_str::<Row>("tolerance = \"-5%\"").err().unwrap();
        assert!(err.to_string().contains("negative"), "{err}");
        let json = serde_json::to_string(&Tolerance::Absolute(2.0)).unwrap();
        assert_eq!(json, "\"±2\"");
        let back: Tolerance = serde_json::from_str(&json).unwrap();
        assert_eq!(back, Tolerance::Absolute(2.0));
    }

    proptest! {
        #[test]
        fn parse_never_panics(text in any::<String>()) {
            if let Err(err) = Tolerance::parse(&text) {
                prop_assert!(err.column() <= text.len());
            }
        }

        #[test]
        fn display_round_trips(percent in 0u32..100_000, amount in 0u32..100_000) {
            let relative = Tolerance::Relative(f64::from(percent) / 1000.0);
            prop_assert_eq!(Tolerance::parse(&relative.to_string()).unwrap().to_string(),
                relative.to_string());
            let absolute = Tolerance::Absolute(f64::from(amount) / 100.0);
            prop_assert_eq!(Tolerance::parse(&absolute.to_string()), Ok(absolute));
        }
    }
}
