//! The axes: a value axis (linear or log, with nice ticks, whole numbers only on an axis of
//! whole numbers, written compactly) and a category axis.

use super::*;

/// A numeric axis, linear or base-10 logarithmic, with "nice" tick values (1, 2, 5 × 10^k).
#[derive(Debug, Clone, Copy)]
pub(super) struct ValueAxis {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) log: bool,
    /// Ticks at whole numbers only (the values are counts, seeds, threads).
    pub(super) integer: bool,
}

/// Whether every value is a whole number (an axis of counts), with at least one value.
pub(super) fn all_integers(values: &[f64]) -> bool {
    !values.is_empty() && values.iter().all(|v| v.fract() == 0.0 && v.abs() < 1e15)
}

/// Whether `values` need a log axis: none negative (nor zero unless `zeros` may be marked
/// apart), and the positive ones spanning more than [`WIDE_SPAN`] to one.
pub(super) fn wants_log(values: &[f64], zeros: bool) -> bool {
    if values.iter().any(|v| *v < 0.0 || (*v == 0.0 && !zeros)) {
        return false;
    }
    let positive: Vec<f64> = values.iter().copied().filter(|v| *v > 0.0).collect();
    let (lo, hi) = min_max(&positive);
    positive.len() >= 2 && hi / lo > WIDE_SPAN
}

/// The axis description with " (log scale)" added on a log axis.
pub(super) fn axis_title(label: &str, axis: &ValueAxis) -> String {
    if axis.log {
        format!("{label} (log scale)")
    } else {
        label.to_string()
    }
}

/// The width the tick labels of `axis` take with at most `count` ticks, plus room for the
/// axis description beside them.
pub(super) fn label_area(axis: &ValueAxis, count: usize) -> u32 {
    let widest = axis
        .key_points(BoldPoints(count))
        .iter()
        .map(|v| text_width(&axis.format_ext(v)))
        .max()
        .unwrap_or(0);
    widest + 42
}

/// A tick's text: thousands grouped from 1,000 up; from a million up (the axis's `magnitude`,
/// its largest value, decides) in millions, billions or trillions: `2.5G`.
pub(super) fn tick_text(value: f64, magnitude: f64) -> String {
    const UNITS: [(f64, &str); 3] = [(1e12, "T"), (1e9, "G"), (1e6, "M")];
    if value == 0.0 {
        return "0".to_string();
    }
    if magnitude < 1e15 {
        for (unit, suffix) in UNITS {
            if magnitude >= unit {
                return format!("{}{suffix}", format_number(value / unit));
            }
        }
    }
    let text = format_number(value);
    let digits = text.trim_start_matches('-');
    if digits.len() == 4 && digits.chars().all(|c| c.is_ascii_digit()) {
        let sign = &text[..text.len() - digits.len()];
        format!("{sign}{},{}", &digits[..1], &digits[1..])
    } else {
        text
    }
}

impl ValueAxis {
    /// An axis covering `[min, max]` with a small margin; `zero` forces 0 into the range.
    pub(super) fn linear(
        min: f64,
        max: f64,
        zero: bool,
        axis: &'static str,
    ) -> Result<Self, PlotError> {
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
        Ok(ValueAxis {
            lo,
            hi,
            log: false,
            integer: false,
        })
    }

    /// The same axis with ticks at whole numbers only when `integer`.
    pub(super) fn integer(self, integer: bool) -> Self {
        ValueAxis { integer, ..self }
    }

    /// A log axis over `[min, max]` (both positive), padded by a tenth of a decade.
    pub(super) fn logarithmic(min: f64, max: f64) -> Self {
        let (mut lo, mut hi) = (min.log10(), max.log10());
        if hi - lo < 1e-9 {
            lo -= 0.5;
            hi += 0.5;
        } else {
            lo -= 0.1;
            hi += 0.1;
        }
        ValueAxis {
            lo,
            hi,
            log: true,
            integer: false,
        }
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
pub(super) fn nice_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    nice_ticks_from(lo, hi, max, 0.0)
}

/// [`nice_ticks`] with a step of at least `least` (1 on an axis of whole numbers).
pub(super) fn nice_ticks_from(lo: f64, hi: f64, max: usize, least: f64) -> Vec<f64> {
    if max == 0 || hi.is_nan() || lo.is_nan() || hi <= lo || !(hi - lo).is_finite() {
        return Vec::new();
    }
    let raw = (hi - lo) / max.max(1) as f64;
    let base = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * base)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * base)
        .max(least);
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
        if self.log {
            log_ticks(self.lo, self.hi, max)
        } else {
            nice_ticks_from(self.lo, self.hi, max, if self.integer { 1.0 } else { 0.0 })
        }
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
        tick_text(*value, value.abs())
    }

    fn format_ext(&self, value: &f64) -> String {
        // A linear axis writes every tick in the unit its largest one needs; a log axis each in
        // its own.
        let magnitude = if self.log {
            value.abs()
        } else {
            self.lo.abs().max(self.hi.abs())
        };
        tick_text(*value, magnitude)
    }
}

/// Ticks of a log axis over `[lo, hi]` (in decades): the densest of 1-9, 1-2-3-4-5-6-8,
/// 1-2-3-5, 1-2-5, 1-3 and 1 times the powers of ten whose ticks stay apart (at most `max`,
/// each at least half a `max`-th of the axis from the next), or every few powers of ten over
/// many decades.
fn log_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    const SETS: [&[f64]; 6] = [
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
        &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0],
        &[1.0, 2.0, 3.0, 5.0],
        &[1.0, 2.0, 5.0],
        &[1.0, 3.0],
        &[1.0],
    ];
    let span = hi - lo;
    if !(span > 0.0 && span.is_finite()) || max == 0 {
        return Vec::new();
    }
    let gap = span / (2.0 * max as f64);
    if span <= 4.0 {
        for set in SETS {
            let mut ticks: Vec<f64> = Vec::new();
            let mut exponent = lo.floor();
            while exponent <= hi.ceil() {
                for multiple in set {
                    let value = multiple * 10f64.powf(exponent);
                    let at = value.log10();
                    if at >= lo && at <= hi {
                        ticks.push(value);
                    }
                }
                exponent += 1.0;
            }
            let apart = ticks.windows(2).all(|w| w[1].log10() - w[0].log10() >= gap);
            if ticks.len() >= 2 && ticks.len() <= max && apart {
                return ticks;
            }
        }
        return nice_ticks(10f64.powf(lo), 10f64.powf(hi), max);
    }
    let (first, last) = (lo.ceil(), hi.floor());
    let decades = (last - first + 1.0).max(0.0);
    let stride = (decades / max.max(1) as f64).ceil().max(1.0);
    let mut ticks = Vec::new();
    let mut exponent = first;
    while exponent <= last {
        ticks.push(10f64.powf(exponent));
        exponent += stride;
    }
    ticks
}

/// `count` categories centred on 0, 1, 2, ... over `[-0.5, count - 0.5]`; no ticks of its own
/// (the labels are drawn separately so that long ones can be turned).
#[derive(Debug, Clone, Copy)]
pub(super) struct CategoryAxis {
    pub(super) count: usize,
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
