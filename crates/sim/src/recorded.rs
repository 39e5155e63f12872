//! What a program recorded of one measure ([`Op::Record`](crate::Op::Record)): count, sum,
//! smallest and largest, and for a measure the engine keeps in a histogram its median and 99th
//! percentile. Both the run's measures ([`crate::metrics`]) and the per-thread ones
//! ([`crate::per_thread`]) report it, so it sits below both.

use serde::{Deserialize, Serialize};

/// A measure a program recorded ([`Op::Record`](crate::Op::Record)): how many values, their
/// sum, smallest and largest.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Recorded {
    /// Values recorded.
    pub count: u64,
    /// Their sum.
    pub sum: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
    /// The median, for a measure the engine keeps whole (`wake_lat_us`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p50: Option<f64>,
    /// The 99th percentile, as `p50`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p99: Option<f64>,
}

impl Recorded {
    /// Adds one value.
    pub fn add(&mut self, v: f64) {
        self.count += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
    }

    /// The mean of the values (NaN with none).
    pub fn mean(&self) -> f64 {
        self.sum / self.count as f64
    }
}

impl Default for Recorded {
    fn default() -> Self {
        Recorded {
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            p50: None,
            p99: None,
        }
    }
}
