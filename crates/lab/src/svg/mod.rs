//! SVG figures in the style of the papers' own, drawn with plotters into a `String`.
//!
//! Three kinds: [`line_chart`] (e.g. Black's time per synchronization against threads, DiBella's
//! delay and throughput against service time), [`stacked_bars`] (Gupta's breakdowns of machine
//! time into useful work, cache-miss stalls, spinning, idling, context switches and kernel time)
//! and [`grouped_bars`] (ours beside the paper's for many points at once). Our data is drawn solid
//! with filled markers; the paper's dashed, hollow, lighter or hatched. Colours come from the
//! colour-blind-safe Okabe–Ito palette. Output is deterministic: the same input gives the same
//! string. Empty input draws a chart that says "no data"; NaN or infinite values, negative
//! stacked segments, non-positive values on a log axis and ranges too wide for `f64` are errors.

use std::ops::Range;

use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, ValueFormatter};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use thiserror::Error;

use super::format_number;

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
    /// Draw the y axis logarithmically (all y values must then be positive).
    pub log_y: bool,
    /// The lines.
    pub series: Vec<Series>,
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

/// Our value and the paper's side by side for each of many points.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct GroupedBars {
    /// Title above the chart.
    pub title: String,
    /// Description of the y axis.
    pub y_label: String,
    /// The groups, left to right.
    pub groups: Vec<BarGroup>,
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
const LONGEST_LABEL: usize = 40;
/// Titles longer than this many characters are cut with an ellipsis.
const LONGEST_TITLE: usize = 100;

/// The colour blended toward white: `amount` 0 keeps it, 1 gives white.
fn lighten(color: RGBColor, amount: f64) -> RGBColor {
    let mix = |c: u8| (f64::from(c) + (255.0 - f64::from(c)) * amount).round() as u8;
    RGBColor(mix(color.0), mix(color.1), mix(color.2))
}

fn drawing<E: std::fmt::Display>(err: E) -> PlotError {
    PlotError::Drawing(err.to_string())
}

/// Cuts a label to [`LONGEST_LABEL`] characters, ending it with an ellipsis if cut.
fn shorten(label: &str) -> String {
    shorten_to(label, LONGEST_LABEL)
}

/// Cuts `label` to `max` characters, ending it with an ellipsis if cut.
fn shorten_to(label: &str, max: usize) -> String {
    if label.chars().count() > max {
        let mut short: String = label.chars().take(max.saturating_sub(1)).collect();
        short.push('…');
        short
    } else {
        label.to_string()
    }
}

fn text_width(text: &str) -> u32 {
    (text.chars().count() as u32).saturating_mul(CHAR_WIDTH)
}

// ---------------------------------------------------------------------------------------------
// Axes

/// A numeric axis, linear or base-10 logarithmic, with "nice" tick values (1, 2, 5 × 10^k).
#[derive(Debug, Clone, Copy)]
struct ValueAxis {
    lo: f64,
    hi: f64,
    log: bool,
}

impl ValueAxis {
    /// An axis covering `[min, max]` with a small margin; `zero` forces 0 into the range.
    fn linear(min: f64, max: f64, zero: bool, axis: &'static str) -> Result<Self, PlotError> {
        let (mut lo, mut hi) = (min, max);
        if zero {
            lo = lo.min(0.0);
            hi = hi.max(0.0);
        }
        let magnitude = lo.abs().max(hi.abs());
        let span = hi - lo;
        if !span.is_finite() {
            return Err(PlotError::RangeTooLarge { axis });
        }
        if span <= magnitude * 1e-9 || span == 0.0 {
            let pad = if magnitude > 0.0 {
                magnitude * 0.1
            } else {
                1.0
            };
            lo -= pad;
            hi += pad;
        } else {
            if !(zero && lo == 0.0) {
                lo -= span * 0.05;
            }
            if !(zero && hi == 0.0) {
                hi += span * 0.05;
            }
        }
        if !(lo.is_finite() && hi.is_finite() && (hi - lo).is_finite()) {
            return Err(PlotError::RangeTooLarge { axis });
        }
        Ok(ValueAxis { lo, hi, log: false })
    }

    /// A log axis over `[min, max]` (both positive), padded by a tenth of a decade.
    fn logarithmic(min: f64, max: f64) -> Self {
        let (mut lo, mut hi) = (min.log10(), max.log10());
        if hi - lo < 1e-9 {
            lo -= 0.5;
            hi += 0.5;
        } else {
            lo -= 0.1;
            hi += 0.1;
        }
        ValueAxis { lo, hi, log: true }
    }

    fn position(&self, value: f64) -> f64 {
        if self.log {
            value.log10()
        } else {
            value
        }
    }
}

/// Tick values `k * step` inside `[lo, hi]` with a 1-2-5 step giving at most `max` ticks.
fn nice_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    if max == 0 || hi.is_nan() || lo.is_nan() || hi <= lo || !(hi - lo).is_finite() {
        return Vec::new();
    }
    let raw = (hi - lo) / max.max(1) as f64;
    let base = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * base)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * base);
    if step.is_nan() || step <= 0.0 || !step.is_finite() {
        return Vec::new();
    }
    let first = (lo / step).ceil();
    let last = (hi / step).floor();
    if !(first.is_finite() && last.is_finite()) || last - first > 1000.0 {
        return Vec::new();
    }
    let mut ticks = Vec::new();
    let mut k = first;
    while k <= last {
        ticks.push(k * step + 0.0);
        k += 1.0;
    }
    ticks
}

impl Ranged for ValueAxis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = (self.position(*value) - self.lo) / (self.hi - self.lo);
        let pixel = f64::from(limit.0) + t * f64::from(limit.1 - limit.0);
        // `as` saturates, and NaN maps to 0: never a panic.
        pixel.round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            return Vec::new();
        }
        let max = hint.max_num_points();
        if !self.log {
            return nice_ticks(self.lo, self.hi, max);
        }
        let (first, last) = (self.lo.ceil(), self.hi.floor());
        let decades = (last - first + 1.0).max(0.0);
        let mut ticks = Vec::new();
        if decades < 4.0 {
            // Few decades: 1, 2 and 5 times each power of ten.
            let mut exponent = self.lo.floor();
            while exponent <= self.hi.ceil() {
                for multiple in [1.0, 2.0, 5.0] {
                    let value = multiple * 10f64.powf(exponent);
                    let at = value.log10();
                    if at >= self.lo && at <= self.hi {
                        ticks.push(value);
                    }
                }
                exponent += 1.0;
            }
            if ticks.len() < 2 {
                return nice_ticks(10f64.powf(self.lo), 10f64.powf(self.hi), max);
            }
        } else {
            let stride = (decades / max.max(1) as f64).ceil().max(1.0);
            let mut exponent = first;
            while exponent <= last {
                ticks.push(10f64.powf(exponent));
                exponent += stride;
            }
        }
        ticks
    }

    fn range(&self) -> Range<f64> {
        if self.log {
            10f64.powf(self.lo)..10f64.powf(self.hi)
        } else {
            self.lo..self.hi
        }
    }
}

impl ValueFormatter<f64> for ValueAxis {
    fn format(value: &f64) -> String {
        format_number(*value)
    }

    fn format_ext(&self, value: &f64) -> String {
        format_number(*value)
    }
}

/// `count` categories centred on 0, 1, 2, ... over `[-0.5, count - 0.5]`; no ticks of its own
/// (the labels are drawn separately so that long ones can be turned).
#[derive(Debug, Clone, Copy)]
struct CategoryAxis {
    count: usize,
}

impl Ranged for CategoryAxis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let t = (value + 0.5) / self.count.max(1) as f64;
        (f64::from(limit.0) + t * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        Vec::new()
    }

    fn range(&self) -> Range<f64> {
        -0.5..self.count.max(1) as f64 - 0.5
    }
}

impl ValueFormatter<f64> for CategoryAxis {
    fn format(_value: &f64) -> String {
        String::new()
    }

    fn format_ext(&self, _value: &f64) -> String {
        String::new()
    }
}

// ---------------------------------------------------------------------------------------------
// Canvas, title, legend

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Draws into a fresh white SVG canvas and returns the document.
fn render<F>(size: (u32, u32), draw: F) -> Result<String, PlotError>
where
    F: for<'a> FnOnce(&Area<'a>) -> Result<(), PlotError>,
{
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(drawing)?;
        draw(&root)?;
        root.present().map_err(drawing)?;
    }
    Ok(svg)
}

/// A chart that only says why there is nothing to show.
fn empty_chart(title: &str, note: &str) -> Result<String, PlotError> {
    render((640, 240), |root| {
        let area = root
            .titled(&shorten_to(title, LONGEST_TITLE), (FONT, TITLE_SIZE))
            .map_err(drawing)?;
        let (width, height) = area.dim_in_pixel();
        let style = TextStyle::from((FONT, AXIS_DESC_SIZE).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Center, VPos::Center));
        area.draw(&Text::new(
            note.to_string(),
            (width as i32 / 2, height as i32 / 2),
            style,
        ))
        .map_err(drawing)
    })
}

/// How a legend entry's sample is drawn.
enum Swatch {
    Line { color: RGBColor, style: SeriesStyle },
    Fill { color: RGBColor, style: SeriesStyle },
}

fn legend_width(labels: impl Iterator<Item = usize>) -> u32 {
    let longest = labels.max().unwrap_or(0).min(LONGEST_LABEL) as u32;
    (longest * CHAR_WIDTH + 64).clamp(120, 340)
}

/// Draws legend entries top to bottom at the left of `area`.
fn draw_legend(area: &Area<'_>, entries: &[(String, Swatch)]) -> Result<(), PlotError> {
    let text = TextStyle::from((FONT, LABEL_SIZE).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (index, (label, swatch)) in entries.iter().enumerate() {
        let y = 30 + 22 * index as i32;
        match *swatch {
            Swatch::Line { color, style } => {
                let stroke = color.stroke_width(2);
                match style {
                    SeriesStyle::Ours => {
                        area.draw(&PathElement::new(vec![(8, y), (40, y)], stroke))
                            .map_err(drawing)?;
                    }
                    SeriesStyle::Paper => {
                        area.draw(&DashedPathElement::new(vec![(8, y), (40, y)], 7, 4, stroke))
                            .map_err(drawing)?;
                    }
                }
                draw_marker(area, (24, y), color, style)?;
            }
            Swatch::Fill { color, style } => {
                draw_bar_rect(area, ((10, y - 7), (38, y + 7)), color, style)?;
            }
        }
        area.draw(&Text::new(shorten(label), (48, y), text.clone()))
            .map_err(drawing)?;
    }
    Ok(())
}

/// Ours: filled circle. Paper: hollow square with a white inside.
fn draw_marker(
    area: &Area<'_>,
    at: (i32, i32),
    color: RGBColor,
    style: SeriesStyle,
) -> Result<(), PlotError> {
    match style {
        SeriesStyle::Ours => area
            .draw(&Circle::new(at, 4, color.filled()))
            .map_err(drawing),
        SeriesStyle::Paper => {
            let corners = [(at.0 - 4, at.1 - 4), (at.0 + 4, at.1 + 4)];
            area.draw(&Rectangle::new(corners, WHITE.filled()))
                .map_err(drawing)?;
            area.draw(&Rectangle::new(corners, color.stroke_width(2)))
                .map_err(drawing)
        }
    }
}

/// A bar in pixel coordinates: ours solid; the paper's lighter, hatched and outlined.
fn draw_bar_rect(
    area: &Area<'_>,
    corners: ((i32, i32), (i32, i32)),
    color: RGBColor,
    style: SeriesStyle,
) -> Result<(), PlotError> {
    let ((x0, y0), (x1, y1)) = corners;
    let (left, right) = (x0.min(x1), x0.max(x1));
    let (top, bottom) = (y0.min(y1), y0.max(y1));
    let rect = [(left, top), (right, bottom)];
    match style {
        SeriesStyle::Ours => area
            .draw(&Rectangle::new(rect, color.filled()))
            .map_err(drawing),
        SeriesStyle::Paper => {
            area.draw(&Rectangle::new(rect, lighten(color, 0.65).filled()))
                .map_err(drawing)?;
            // Diagonal hatching: lines x + y = c, clipped to the rectangle.
            let hatch = color.stroke_width(1);
            let mut c = i64::from(left) + i64::from(top) + 6;
            let end = i64::from(right) + i64::from(bottom);
            let (l, r, t, b) = (
                i64::from(left),
                i64::from(right),
                i64::from(top),
                i64::from(bottom),
            );
            let mut drawn = 0;
            while c < end && drawn < 2000 {
                let xa = l.max(c - b);
                let xb = r.min(c - t);
                if xa < xb {
                    let from = (xa as i32, (c - xa) as i32);
                    let to = (xb as i32, (c - xb) as i32);
                    area.draw(&PathElement::new(vec![from, to], hatch))
                        .map_err(drawing)?;
                }
                c += 6;
                drawn += 1;
            }
            area.draw(&Rectangle::new(rect, color.stroke_width(1)))
                .map_err(drawing)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Line chart

/// Draws a line chart: our series solid with filled circles, the paper's dashed with hollow
/// squares, a legend at the right.
pub fn line_chart(spec: &LineChart) -> Result<String, PlotError> {
    let mut x_values = Vec::new();
    let mut y_values = Vec::new();
    for series in &spec.series {
        for (index, &(x, y)) in series.points.iter().enumerate() {
            let what = |coordinate: &str| {
                format!(
                    "series `{}`, point {}, {coordinate}",
                    series.name,
                    index + 1
                )
            };
            if !x.is_finite() {
                return Err(PlotError::NonFinite { what: what("x") });
            }
            if !y.is_finite() {
                return Err(PlotError::NonFinite { what: what("y") });
            }
            if spec.log_y && y <= 0.0 {
                return Err(PlotError::NonPositiveOnLogScale {
                    what: what("y"),
                    value: format_number(y),
                });
            }
            x_values.push(x);
            y_values.push(y);
        }
    }
    if x_values.is_empty() {
        return empty_chart(&spec.title, "no data");
    }
    let (x_min, x_max) = min_max(&x_values);
    let (y_min, y_max) = min_max(&y_values);
    let x_axis = ValueAxis::linear(x_min, x_max, false, "x")?;
    let y_axis = if spec.log_y {
        ValueAxis::logarithmic(y_min, y_max)
    } else {
        ValueAxis::linear(y_min, y_max, false, "y")?
    };

    let legend = legend_width(spec.series.iter().map(|s| s.name.chars().count()));
    let size = (760 + legend, 480);
    render(size, |root| {
        let area = root
            .titled(&shorten_to(&spec.title, LONGEST_TITLE), (FONT, TITLE_SIZE))
            .map_err(drawing)?;
        let (plot_area, legend_area) = area.split_horizontally(size.0 - legend);
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(12)
            .x_label_area_size(48)
            .y_label_area_size(76)
            .build_cartesian_2d(x_axis, y_axis)
            .map_err(drawing)?;
        chart
            .configure_mesh()
            .x_desc(spec.x_label.as_str())
            .y_desc(spec.y_label.as_str())
            .x_labels(10)
            .y_labels(10)
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, AXIS_DESC_SIZE))
            .bold_line_style(RGBColor(225, 225, 225))
            .draw()
            .map_err(drawing)?;

        let mut entries = Vec::new();
        let (mut ours_seen, mut paper_seen) = (0, 0);
        for series in &spec.series {
            let slot = match series.style {
                SeriesStyle::Ours => &mut ours_seen,
                SeriesStyle::Paper => &mut paper_seen,
            };
            let color = LINE_COLORS[*slot % LINE_COLORS.len()];
            *slot += 1;
            let mut points = series.points.clone();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let stroke = color.stroke_width(2);
            match series.style {
                SeriesStyle::Ours => {
                    chart
                        .draw_series(LineSeries::new(points.iter().copied(), stroke))
                        .map_err(drawing)?;
                }
                SeriesStyle::Paper => {
                    chart
                        .draw_series(DashedLineSeries::new(points.clone(), 8, 5, stroke))
                        .map_err(drawing)?;
                }
            }
            for &point in &points {
                let at = chart.backend_coord(&point);
                draw_marker(root, at, color, series.style)?;
            }
            entries.push((
                series.name.clone(),
                Swatch::Line {
                    color,
                    style: series.style,
                },
            ));
        }
        draw_legend(&legend_area, &entries)
    })
}

fn min_max(values: &[f64]) -> (f64, f64) {
    values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        })
}

// ---------------------------------------------------------------------------------------------
// Bar charts

/// Draws the category labels under bars at `centers` (backend x), turned upright when they do
/// not fit side by side; returns nothing but errors from drawing.
fn draw_category_labels(
    root: &Area<'_>,
    labels: &[String],
    centers: &[i32],
    baseline: i32,
    turned: bool,
) -> Result<(), PlotError> {
    let style = TextStyle::from((FONT, LABEL_SIZE).into_font()).color(&BLACK);
    let style = if turned {
        style
            .transform(FontTransform::Rotate270)
            .pos(Pos::new(HPos::Right, VPos::Center))
    } else {
        style.pos(Pos::new(HPos::Center, VPos::Top))
    };
    for (label, &x) in labels.iter().zip(centers) {
        root.draw(&Text::new(shorten(label), (x, baseline + 8), style.clone()))
            .map_err(drawing)?;
    }
    Ok(())
}

/// Layout shared by the bar charts: canvas width, label area height and whether labels turn.
fn bar_layout(labels: &[String], per_bar: u32, legend: u32) -> (u32, u32, bool) {
    let count = labels.len().max(1) as u32;
    let plot_width = (count.saturating_mul(per_bar)).clamp(360, 3600);
    let slot = plot_width / count;
    let longest = labels
        .iter()
        .map(|l| text_width(&shorten(l)))
        .max()
        .unwrap_or(0);
    let turned = longest + 6 > slot;
    let label_height = if turned {
        (longest + 20).clamp(40, 300)
    } else {
        40
    };
    (plot_width + 100 + legend, label_height, turned)
}

/// Draws stacked bars on a 0–100 % axis (extended if a bar sums past 100), one fixed colour per
/// category in order, the paper's bars lighter and hatched, with a legend.
pub fn stacked_bars(spec: &StackedBars) -> Result<String, PlotError> {
    let categories = spec.categories.len();
    let mut top: f64 = 100.0;
    for bar in &spec.bars {
        if bar.values.len() != categories {
            return Err(PlotError::WrongSegmentCount {
                bar: bar.label.clone(),
                expected: categories,
                found: bar.values.len(),
            });
        }
        let mut sum = 0.0;
        for (value, category) in bar.values.iter().zip(&spec.categories) {
            let what = || format!("bar `{}`, segment `{category}`", bar.label);
            if !value.is_finite() {
                return Err(PlotError::NonFinite { what: what() });
            }
            if *value < 0.0 {
                return Err(PlotError::NegativeSegment {
                    what: what(),
                    value: format_number(*value),
                });
            }
            sum += value;
        }
        if !sum.is_finite() {
            return Err(PlotError::RangeTooLarge { axis: "y" });
        }
        top = top.max(sum);
    }
    if spec.bars.is_empty() || categories == 0 {
        return empty_chart(&spec.title, "no data");
    }
    let y_axis = if top > 100.0 {
        ValueAxis::linear(0.0, top, true, "y")?
    } else {
        ValueAxis {
            lo: 0.0,
            hi: 100.0,
            log: false,
        }
    };
    let labels: Vec<String> = spec.bars.iter().map(|b| b.label.clone()).collect();
    let mut legend_labels: Vec<String> = spec.categories.clone();
    legend_labels.push("paper: lighter, hatched".to_string());
    let legend = legend_width(legend_labels.iter().map(|l| l.chars().count()));
    let (width, label_height, turned) = bar_layout(&labels, 72, legend);
    let size = (width, 440 + label_height);
    let has_paper = spec.bars.iter().any(|b| b.style == SeriesStyle::Paper);

    render(size, |root| {
        let area = root
            .titled(&shorten_to(&spec.title, LONGEST_TITLE), (FONT, TITLE_SIZE))
            .map_err(drawing)?;
        let (plot_area, legend_area) = area.split_horizontally(size.0 - legend);
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(12)
            .x_label_area_size(label_height)
            .y_label_area_size(76)
            .build_cartesian_2d(
                CategoryAxis {
                    count: spec.bars.len(),
                },
                y_axis,
            )
            .map_err(drawing)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_desc(spec.y_label.as_str())
            .y_labels(11)
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, AXIS_DESC_SIZE))
            .bold_line_style(RGBColor(225, 225, 225))
            .draw()
            .map_err(drawing)?;
        let mut centers = Vec::new();
        for (index, bar) in spec.bars.iter().enumerate() {
            let x = index as f64;
            let mut bottom = 0.0;
            for (slot, value) in bar.values.iter().enumerate() {
                let color = CATEGORY_COLORS[slot % CATEGORY_COLORS.len()];
                let upper = bottom + value;
                if *value > 0.0 {
                    let a = chart.backend_coord(&(x - 0.35, bottom));
                    let b = chart.backend_coord(&(x + 0.35, upper));
                    draw_bar_rect(root, (a, b), color, bar.style)?;
                }
                bottom = upper;
            }
            centers.push(chart.backend_coord(&(x, 0.0)).0);
        }
        let baseline = chart.backend_coord(&(0.0, y_axis.range().start)).1;
        draw_category_labels(root, &labels, &centers, baseline, turned)?;

        let mut entries: Vec<(String, Swatch)> = spec
            .categories
            .iter()
            .enumerate()
            .rev()
            .map(|(slot, name)| {
                let swatch = Swatch::Fill {
                    color: CATEGORY_COLORS[slot % CATEGORY_COLORS.len()],
                    style: SeriesStyle::Ours,
                };
                (name.clone(), swatch)
            })
            .collect();
        if has_paper {
            entries.push((
                "paper: lighter, hatched".to_string(),
                Swatch::Fill {
                    color: RGBColor(110, 110, 110),
                    style: SeriesStyle::Paper,
                },
            ));
        }
        draw_legend(&legend_area, &entries)
    })
}

/// Draws our value and the paper's side by side for each group (the paper's lighter and
/// hatched), with a legend; a missing value leaves its place empty.
pub fn grouped_bars(spec: &GroupedBars) -> Result<String, PlotError> {
    let mut values = Vec::new();
    for group in &spec.groups {
        for (which, value) in [("ours", group.ours), ("paper", group.paper)] {
            if let Some(value) = value {
                if !value.is_finite() {
                    return Err(PlotError::NonFinite {
                        what: format!("group `{}`, {which}", group.label),
                    });
                }
                values.push(value);
            }
        }
    }
    if values.is_empty() {
        return empty_chart(&spec.title, "no data");
    }
    let (min, max) = min_max(&values);
    let y_axis = ValueAxis::linear(min, max, true, "y")?;
    let labels: Vec<String> = spec.groups.iter().map(|g| g.label.clone()).collect();
    let legend = legend_width([4usize, 5].into_iter());
    let (width, label_height, turned) = bar_layout(&labels, 56, legend);
    let size = (width, 440 + label_height);
    let color = LINE_COLORS[0];

    render(size, |root| {
        let area = root
            .titled(&shorten_to(&spec.title, LONGEST_TITLE), (FONT, TITLE_SIZE))
            .map_err(drawing)?;
        let (plot_area, legend_area) = area.split_horizontally(size.0 - legend);
        let mut chart = ChartBuilder::on(&plot_area)
            .margin(12)
            .x_label_area_size(label_height)
            .y_label_area_size(76)
            .build_cartesian_2d(
                CategoryAxis {
                    count: spec.groups.len(),
                },
                y_axis,
            )
            .map_err(drawing)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .y_desc(spec.y_label.as_str())
            .y_labels(10)
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, AXIS_DESC_SIZE))
            .bold_line_style(RGBColor(225, 225, 225))
            .draw()
            .map_err(drawing)?;
        let mut centers = Vec::new();
        for (index, group) in spec.groups.iter().enumerate() {
            let x = index as f64;
            let bars = [
                (group.ours, SeriesStyle::Ours, x - 0.38, x - 0.02),
                (group.paper, SeriesStyle::Paper, x + 0.02, x + 0.38),
            ];
            for (value, style, left, right) in bars {
                if let Some(value) = value {
                    let a = chart.backend_coord(&(left, 0.0));
                    let b = chart.backend_coord(&(right, value));
                    draw_bar_rect(root, (a, b), color, style)?;
                }
            }
            centers.push(chart.backend_coord(&(x, 0.0)).0);
        }
        let baseline = chart.backend_coord(&(0.0, y_axis.range().start)).1;
        draw_category_labels(root, &labels, &centers, baseline, turned)?;
        // A zero line when values go below zero.
        if y_axis.lo < 0.0 {
            let a = chart.backend_coord(&(-0.5, 0.0));
            let b = chart.backend_coord(&(spec.groups.len() as f64 - 0.5, 0.0));
            root.draw(&PathElement::new(vec![a, b], BLACK.stroke_width(1)))
                .map_err(drawing)?;
        }
        let entries = [
            (
                "ours".to_string(),
                Swatch::Fill {
                    color,
                    style: SeriesStyle::Ours,
                },
            ),
            (
                "paper".to_string(),
                Swatch::Fill {
                    color,
                    style: SeriesStyle::Paper,
                },
            ),
        ];
        draw_legend(&legend_area, &entries)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn black_chart() -> LineChart {
        let threads = [3.0, 4.0, 5.0, 6.0, 7.0];
        let paper_handoff = [413.0, 418.0, 417.0, 421.0, 428.0];
        let paper_strong = [897.0, 1215.0, 1434.0, 1825.0, 2130.0];
        let zip = |ys: &[f64]| threads.iter().copied().zip(ys.iter().copied()).collect();
        LineChart {
            title: "Black 1990, Table 2: time per synchronization".into(),
            x_label: "threads".into(),
            y_label: "µs per synchronization".into(),
            log_y: false,
            series: vec![
                Series {
                    name: "handoff (ours)".into(),
                    points: zip(&[400.0, 410.0, 415.0, 430.0, 431.0]),
                    style: SeriesStyle::Ours,
                },
                Series {
                    name: "strong hint (ours)".into(),
                    points: zip(&[900.0, 1200.0, 1500.0, 1800.0, 2100.0]),
                    style: SeriesStyle::Ours,
                },
                Series {
                    name: "handoff (paper)".into(),
                    points: zip(&paper_handoff),
                    style: SeriesStyle::Paper,
                },
                Series {
                    name: "strong hint (paper)".into(),
                    points: zip(&paper_strong),
                    style: SeriesStyle::Paper,
                },
            ],
        }
    }

    fn gupta_bars() -> StackedBars {
        let bar = |label: &str, values: [f64; 6], style| StackedBar {
            label: label.into(),
            values: values.to_vec(),
            style,
        };
        StackedBars {
            title: "Gupta 1991, Figure 3: priority + blocking locks".into(),
            y_label: "% of machine time".into(),
            categories: [
                "useful",
                "cache-miss stall",
                "spin",
                "idle",
                "context switch",
                "kernel",
            ]
            .map(String::from)
            .to_vec(),
            bars: vec![
                bar(
                    "MP3D ours",
                    [61.0, 20.0, 5.0, 8.0, 4.0, 2.0],
                    SeriesStyle::Ours,
                ),
                bar(
                    "MP3D paper",
                    [62.0, 0.0, 0.0, 0.0, 0.0, 0.0],
                    SeriesStyle::Paper,
                ),
                bar(
                    "LU ours",
                    [63.0, 15.0, 6.0, 10.0, 4.0, 2.0],
                    SeriesStyle::Ours,
                ),
            ],
        }
    }

    fn dibella_groups(count: usize) -> GroupedBars {
        GroupedBars {
            title: "DiBella 1992, Table 4: delay".into(),
            y_label: "ms per request".into(),
            groups: (0..count)
                .map(|i| BarGroup {
                    label: format!("Primary/Sequential:Primary/Fixed #{i}"),
                    ours: Some(3.0 + i as f64 * 0.1),
                    paper: if i % 3 == 0 {
                        None
                    } else {
                        Some(2.9 + i as f64 * 0.1)
                    },
                })
                .collect(),
        }
    }

    fn looks_like_svg(svg: &str, names: &[&str]) {
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
        assert!(svg.trim_end().ends_with("</svg>"));
        for name in names {
            assert!(svg.contains(name), "missing {name}");
        }
    }

    #[test]
    fn line_chart_is_svg_with_legend() {
        let svg = line_chart(&black_chart()).unwrap();
        looks_like_svg(
            &svg,
            &[
                "handoff (ours)",
                "strong hint (paper)",
                "threads",
                "Black 1990",
            ],
        );
        assert!(svg.contains("stroke-dasharray") || svg.matches("<polyline").count() > 4);
        assert_eq!(svg, line_chart(&black_chart()).unwrap());
    }

    #[test]
    fn log_scale_line_chart() {
        let mut chart = black_chart();
        chart.log_y = true;
        chart.series[0].points.push((8.0, 1e6));
        let svg = line_chart(&chart).unwrap();
        looks_like_svg(&svg, &["handoff (ours)"]);
        chart.series[0].points.push((9.0, 0.0));
        assert!(matches!(
            line_chart(&chart),
            Err(PlotError::NonPositiveOnLogScale { .. })
        ));
    }

    #[test]
    fn stacked_bars_are_svg_with_categories() {
        let svg = stacked_bars(&gupta_bars()).unwrap();
        looks_like_svg(
            &svg,
            &["MP3D ours", "MP3D paper", "cache-miss stall", "kernel"],
        );
        assert!(
            svg.contains("#009E73") || svg.contains("rgb(0,158,115)") || svg.contains("009E73")
        );
        assert_eq!(svg, stacked_bars(&gupta_bars()).unwrap());
    }

    #[test]
    fn grouped_bars_are_svg_and_turn_long_labels() {
        let svg = grouped_bars(&dibella_groups(30)).unwrap();
        looks_like_svg(
            &svg,
            &["ours", "paper", "Primary/Sequential:Primary/Fixed #29"],
        );
        // The y-axis description is always turned; turned group labels add one each.
        assert_eq!(svg.matches("rotate(270").count(), 31);
        assert_eq!(svg, grouped_bars(&dibella_groups(30)).unwrap());
        let few = grouped_bars(&GroupedBars {
            title: "short".into(),
            y_label: "x".into(),
            groups: vec![BarGroup {
                label: "a".into(),
                ours: Some(-2.0),
                paper: Some(3.0),
            }],
        })
        .unwrap();
        assert_eq!(few.matches("rotate(270").count(), 1);
    }

    #[test]
    fn empty_input_draws_a_note() {
        let mut chart = black_chart();
        chart.series.clear();
        let svg = line_chart(&chart).unwrap();
        looks_like_svg(&svg, &["no data", "Black 1990"]);
        let mut bars = gupta_bars();
        bars.bars.clear();
        looks_like_svg(&stacked_bars(&bars).unwrap(), &["no data"]);
        looks_like_svg(&grouped_bars(&dibella_groups(0)).unwrap(), &["no data"]);
    }

    #[test]
    fn bad_values_are_errors() {
        let mut chart = black_chart();
        chart.series[1].points[2].1 = f64::NAN;
        let err = line_chart(&chart).unwrap_err();
        assert!(err.to_string().contains("strong hint (ours)"), "{err}");
        let mut bars = gupta_bars();
        bars.bars[0].values[1] = -1.0;
        assert!(matches!(
            stacked_bars(&bars),
            Err(PlotError::NegativeSegment { .. })
        ));
        let mut bars = gupta_bars();
        bars.bars[2].values.pop();
        assert!(matches!(
            stacked_bars(&bars),
            Err(PlotError::WrongSegmentCount { .. })
        ));
        let mut groups = dibella_groups(2);
        groups.groups[1].ours = Some(f64::INFINITY);
        assert!(matches!(
            grouped_bars(&groups),
            Err(PlotError::NonFinite { .. })
        ));
    }

    #[test]
    fn huge_and_degenerate_ranges_do_not_panic() {
        let one = |points: Vec<(f64, f64)>, log_y| LineChart {
            title: "t".into(),
            x_label: "x".into(),
            y_label: "y".into(),
            log_y,
            series: vec![Series {
                name: "s".into(),
                points,
                style: SeriesStyle::Paper,
            }],
        };
        assert!(matches!(
            line_chart(&one(vec![(0.0, -f64::MAX), (1.0, f64::MAX)], false)),
            Err(PlotError::RangeTooLarge { .. })
        ));
        for points in [
            vec![(1.0, 1.0)],
            vec![(0.0, 0.0), (0.0, 0.0)],
            vec![(0.0, 1e300), (1.0, 1e300 * (1.0 + 1e-15))],
            vec![(-1e300, 1e-300), (1e300, 1e300)],
            vec![(1e-300, 5.0), (2e-300, 6.0)],
        ] {
            line_chart(&one(points.clone(), false)).unwrap();
            if points.iter().all(|p| p.1 > 0.0) {
                line_chart(&one(points, true)).unwrap();
            }
        }
        line_chart(&one(vec![(0.0, 1e-300), (1.0, 1e300)], true)).unwrap();
        grouped_bars(&GroupedBars {
            title: "t".into(),
            y_label: "y".into(),
            groups: vec![BarGroup {
                label: "a".into(),
                ours: Some(1e300),
                paper: Some(-1e300),
            }],
        })
        .unwrap();
    }

    #[test]
    fn ticks_are_nice() {
        assert_eq!(
            nice_ticks(0.0, 100.0, 11),
            (0..=10).map(|i| i as f64 * 10.0).collect::<Vec<_>>()
        );
        assert_eq!(nice_ticks(0.0, 1.0, 0), Vec::<f64>::new());
        assert_eq!(nice_ticks(1.0, 1.0, 10), Vec::<f64>::new());
        assert!(nice_ticks(-3.3, 7.9, 10).contains(&0.0));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn arbitrary_line_data_never_panics(
            points in prop::collection::vec((any::<f64>(), any::<f64>()), 0..6),
            log_y in any::<bool>(),
        ) {
            let chart = LineChart {
                title: "p".into(),
                x_label: "x".into(),
                y_label: "y".into(),
                log_y,
                series: vec![Series { name: "s".into(), points, style: SeriesStyle::Ours }],
            };
            let _ = line_chart(&chart);
        }

        #[test]
        fn arbitrary_bar_data_never_panics(
            values in prop::collection::vec(prop::option::of(any::<f64>()), 0..6),
        ) {
            let groups = GroupedBars {
                title: "p".into(),
                y_label: "y".into(),
                groups: values.chunks(2).map(|pair| BarGroup {
                    label: "g".into(),
                    ours: pair[0],
                    paper: pair.get(1).copied().flatten(),
                }).collect(),
            };
            let _ = grouped_bars(&groups);
            let stacked = StackedBars {
                title: "p".into(),
                y_label: "y".into(),
                categories: vec!["a".into(), "b".into()],
                bars: values.chunks(2).map(|pair| StackedBar {
                    label: "g".into(),
                    values: pair.iter().map(|v| v.unwrap_or(0.0)).collect(),
                    style: SeriesStyle::Paper,
                }).collect(),
            };
            let _ = stacked_bars(&stacked);
        }
    }
}
