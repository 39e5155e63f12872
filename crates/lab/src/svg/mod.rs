//! SVG figures in the style of the papers' own, drawn with plotters into a `String`.
//!
//! Four kinds: [`line_chart`] (e.g. Black's time per synchronization against threads, DiBella's
//! delay and throughput against service time), [`stacked_bars`] (Gupta's breakdowns of machine
//! time into useful work, cache-miss stalls, spinning, idling, context switches and kernel time),
//! [`grouped_bars`] (ours beside the paper's for many points at once, a panel per measure) and
//! [`agreement_chart`] (ours against the paper's, a dot per point, beside the line of equality).
//! Our data is drawn solid with filled markers; the paper's dashed, hollow, lighter or hatched;
//! each line has a marker shape of its own, so that the charts read in greyscale. Colours come
//! from the colour-blind-safe Okabe–Ito palette. Titles wrap to the canvas, long labels lose
//! their shared `key=` parts or their middle (never their distinguishing end), a value axis
//! turns logarithmic (and says so) where positive values span more than two orders of magnitude,
//! and a zero or missing bar is marked. Output is deterministic: the same input gives the same
//! string. Empty input draws a chart that says "no data"; NaN or infinite values, negative
//! stacked segments, non-positive values on a log axis and ranges too wide for `f64` are errors.

use std::ops::Range;

use plotters::coord::ranged1d::{BoldPoints, KeyPointHint, NoDefaultFormatting, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use thiserror::Error;

use crate::input::format::format_number;

/// Whose numbers a series or bar shows, which decides how it is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SeriesStyle {
    /// Measured by us: solid line, filled markers, full colour.
    Ours,
    /// Copied from the paper: dashed line, hollow markers, lighter or hatched fill.
    Paper,
}

/// One line of a [`LineChart`]; points are drawn in order of x.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Series {
    /// Legend text.
    pub name: String,
    /// `(x, y)` points.
    pub points: Vec<(f64, f64)>,
    /// Ours or the paper's.
    pub style: SeriesStyle,
}

/// A line chart; the i-th `Ours` series and the i-th `Paper` series share a colour, so list the
/// matching series in the same order.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LineChart {
    /// Title above the chart.
    pub title: String,
    /// Description of the x axis.
    pub x_label: String,
    /// Description of the y axis.
    pub y_label: String,
    /// Draw the y axis logarithmically (all y values must then be positive). Without it the
    /// axis is still logarithmic where every y is positive and they span more than
    /// [`WIDE_SPAN`] to one.
    pub log_y: bool,
    /// Draw the x axis logarithmically (all x values must then be positive): for counts that
    /// double (processors 1 to 256).
    #[serde(default)]
    pub log_x: bool,
    /// The lines.
    pub series: Vec<Series>,
    /// Names of the x positions 1, 2, ... when x is a category (a combination of settings)
    /// rather than a number: the ticks then name them. Empty: x is a number.
    #[serde(default)]
    pub x_names: Vec<String>,
    /// Draw the points alone, unjoined: for runs that have no order between them (seeds).
    #[serde(default)]
    pub points_only: bool,
    /// A range the y axis covers whatever the values (e.g. -1 to 1 for a correlation).
    #[serde(default)]
    pub y_range: Option<(f64, f64)>,
}

/// One bar of a [`StackedBars`] chart: a value (in percent) per category, bottom to top.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StackedBar {
    /// Label under the bar, e.g. `MP3D ours`.
    pub label: String,
    /// One non-negative value per category, in the chart's category order (0 when unknown).
    pub values: Vec<f64>,
    /// Ours (full colour) or the paper's (lighter, outlined).
    pub style: SeriesStyle,
}

/// Bars made of stacked segments on a 0–100 % axis, e.g. a utilization breakdown.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StackedBars {
    /// Title above the chart.
    pub title: String,
    /// Description of the y axis, e.g. `% of machine time`.
    pub y_label: String,
    /// Segment categories from the bottom up; each gets a fixed colour by position.
    pub categories: Vec<String>,
    /// The bars, left to right.
    pub bars: Vec<StackedBar>,
}

/// One group of a [`GroupedBars`] chart: our value beside the paper's.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BarGroup {
    /// Label under the group.
    pub label: String,
    /// Our value, if measured.
    pub ours: Option<f64>,
    /// The paper's value, if it gives one.
    pub paper: Option<f64>,
}

/// One measure's panel of a [`GroupedBars`] chart: its own y axis, titled by the measure.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct BarPanel {
    /// Description of the panel's y axis: the measure and its unit.
    pub y_label: String,
    /// The groups, left to right.
    pub groups: Vec<BarGroup>,
}

/// Our value and the paper's side by side for each of many points, a panel per measure (each
/// with its own y axis, linear or logarithmic as its values need) under one title and legend.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GroupedBars {
    /// Title above the chart.
    pub title: String,
    /// The panels, in order (laid out in rows, left to right).
    pub panels: Vec<BarPanel>,
}

/// Why a chart could not be drawn.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PlotError {
    /// A value was NaN or infinite.
    #[error("{what} is not a finite number")]
    NonFinite {
        /// Which value, e.g. "series `ours`, point 3, y".
        what: String,
    },
    /// A log-scale axis got a value that is zero or negative.
    #[error("{what} is {value}, but a logarithmic axis needs values above 0")]
    NonPositiveOnLogScale {
        /// Which value.
        what: String,
        /// The value, printed.
        value: String,
    },
    /// A stacked segment was negative.
    #[error("{what} is {value}, but stacked segments cannot be negative")]
    NegativeSegment {
        /// Which segment.
        what: String,
        /// The value, printed.
        value: String,
    },
    /// A stacked bar's value count differs from the number of categories.
    #[error("bar `{bar}` has {found} values but there are {expected} categories")]
    WrongSegmentCount {
        /// The bar's label.
        bar: String,
        /// The number of categories.
        expected: usize,
        /// The number of values given.
        found: usize,
    },
    /// The values span more than an `f64` can represent once padded.
    #[error("the {axis} axis range is too wide to draw")]
    RangeTooLarge {
        /// `x` or `y`.
        axis: &'static str,
    },
    /// plotters reported an error while drawing.
    #[error("drawing failed: {0}")]
    Drawing(String),
}

// ---------------------------------------------------------------------------------------------
// Colours and fonts

/// Okabe–Ito colours for lines, in assignment order (yellow left out: too faint on white).
const LINE_COLORS: [RGBColor; 7] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(230, 159, 0),   // orange
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
];

/// Colours for stacked categories in order: useful work, cache-miss stall, spin, idle, context
/// switch, kernel, then two spares; colour-blind safe (Okabe–Ito plus a neutral grey for idle).
const CATEGORY_COLORS: [RGBColor; 8] = [
    RGBColor(0, 158, 115),   // bluish green: useful
    RGBColor(230, 159, 0),   // orange: cache-miss stall
    RGBColor(213, 94, 0),    // vermillion: spin
    RGBColor(170, 170, 170), // grey: idle
    RGBColor(204, 121, 167), // reddish purple: context switch
    RGBColor(0, 114, 178),   // blue: kernel
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(240, 228, 66),  // yellow
];

const FONT: &str = "sans-serif";
const TITLE_SIZE: u32 = 20;
const LABEL_SIZE: u32 = 13;
const AXIS_DESC_SIZE: u32 = 14;
/// Generous width of one character at [`LABEL_SIZE`], for layout.
const CHAR_WIDTH: u32 = 6;
/// Generous width of one character at [`AXIS_DESC_SIZE`].
const DESC_CHAR_WIDTH: u32 = 7;
/// Generous width of one character of a title at [`TITLE_SIZE`] (plotters draws it at 16 px).
const TITLE_CHAR_WIDTH: u32 = 10;
/// The height of one line of a title.
const TITLE_LINE: u32 = 22;
/// Labels longer than this many characters lose their middle.
const LONGEST_LABEL: usize = 40;
/// The widest canvas a chart takes while its content still fits at a readable size: shown
/// 1,000 to 1,400 pixels wide, its labels (10.5 pixels at full size) stay above 8.5.
const MAX_WIDTH: u32 = 1200;
/// Positive values spanning more than this ratio (two orders of magnitude) get a log axis.
pub const WIDE_SPAN: f64 = 100.0;

/// The colour blended toward white: `amount` 0 keeps it, 1 gives white.
fn lighten(color: RGBColor, amount: f64) -> RGBColor {
    let mix = |c: u8| (f64::from(c) + (255.0 - f64::from(c)) * amount).round() as u8;
    RGBColor(mix(color.0), mix(color.1), mix(color.2))
}

fn drawing<E: std::fmt::Display>(err: E) -> PlotError {
    PlotError::Drawing(err.to_string())
}

/// The width of `text` at [`LABEL_SIZE`], generously estimated.
fn text_width(text: &str) -> u32 {
    (text.chars().count() as u32).saturating_mul(CHAR_WIDTH)
}

mod axis;
mod bars;
mod draw;
mod grouped;
mod labels;
mod line;
mod marker;
mod scatter;

pub use bars::stacked_bars;
pub use grouped::grouped_bars;
pub use labels::{category_labels, distinct_labels, title_lines, CategoryLabels};
pub use line::line_chart;
pub use scatter::{agreement_chart, AgreementChart, AgreementDot, AgreementPanel};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_layout;

use axis::*;
use bars::*;
use draw::*;
use labels::*;
use line::*;
use marker::*;
