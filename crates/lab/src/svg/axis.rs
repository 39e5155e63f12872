//! The axes: a value axis (linear or log, with nice ticks) and a category axis.

use super::*;

/// A numeric axis, linear or base-10 logarithmic, with "nice" tick values (1, 2, 5 × 10^k).
#[derive(Debug, Clone, Copy)]
pub(super) struct ValueAxis {
    pub(super) lo: f64,
    pub(super) hi: f64,
    pub(super) log: bool,
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
        Ok(ValueAxis { lo, hi, log: false })
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
pub(super) fn nice_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
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
