//! A bounded log-bucket histogram of cycle counts (HdrHistogram's layout), for the per-thread
//! wake-to-run latencies of [`crate::per_thread`] (the percentiles scx_simulator's
//! users read, kept in memory that does not grow with the number of wake-ups).
//!
//! Values under 2^[`PRECISION_BITS`] have a bucket each; above, each power of two is split into
//! 2^(PRECISION_BITS - 1) equal buckets, so a bucket is at most 2^(1 - PRECISION_BITS) of its
//! values wide. A quantile is its bucket's midpoint, clamped to the exact minimum and maximum:
//! within [`RELATIVE_ERROR`] (1/256, 0.39%) of the exact nearest-rank quantile. The count, sum,
//! minimum and maximum are exact. Buckets are kept sparse (a sorted list of the occupied ones):
//! at most [`BUCKETS`] entries whatever the number of values, a few dozen in practice.

use crate::ids::Cycles;

/// Significant bits kept of each value: values below 2^8 are exact.
pub const PRECISION_BITS: u32 = 8;

/// The largest relative error of a quantile: 2^-PRECISION_BITS.
pub const RELATIVE_ERROR: f64 = 1.0 / (1u64 << PRECISION_BITS) as f64;

/// The half-bucket count of a power of two, 2^(PRECISION_BITS - 1).
const HALF: u64 = 1 << (PRECISION_BITS - 1);

/// How many buckets cover every `u64` (the sparse list never holds more).
pub const BUCKETS: usize = ((66 - PRECISION_BITS as u64) * HALF) as usize;

/// The bucket of `v`: `v` itself below 2^PRECISION_BITS, otherwise the power of two's rank
/// and the value's top PRECISION_BITS bits.
#[inline]
fn bucket(v: Cycles) -> u16 {
    if v < 2 * HALF {
        return v as u16;
    }
    let shift = 63 - v.leading_zeros() - (PRECISION_BITS - 1);
    (u64::from(shift) * HALF + (v >> shift)) as u16
}

/// The smallest and largest value of bucket `b`.
fn bounds(b: u16) -> (Cycles, Cycles) {
    let b = u64::from(b);
    if b < 2 * HALF {
        return (b, b);
    }
    let shift = b / HALF - 1;
    let lo = (b - shift * HALF) << shift;
    (lo, lo + ((1u64 << shift) - 1))
}

/// A log-bucket histogram of cycle counts, with their exact count, sum, minimum and maximum.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LogHistogram {
    /// The occupied buckets and their counts, in bucket (value) order.
    buckets: Vec<(u16, u32)>,
    /// Values recorded.
    count: u64,
    /// Their exact sum.
    sum: u128,
    /// The smallest (`Cycles::MAX` with none).
    min: Cycles,
    /// The largest.
    max: Cycles,
}

impl LogHistogram {
    /// Records one value.
    #[inline]
    pub fn record(&mut self, v: Cycles) {
        if self.count == 0 {
            self.min = v;
        }
        self.count += 1;
        self.sum += u128::from(v);
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.add_to(bucket(v), 1);
    }

    /// Adds `n` to bucket `b`'s count (a bucket's count saturates at `u32::MAX`; the exact
    /// count above does not).
    fn add_to(&mut self, b: u16, n: u32) {
        match self.buckets.binary_search_by_key(&b, |&(k, _)| k) {
            Ok(i) => self.buckets[i].1 = self.buckets[i].1.saturating_add(n),
            Err(i) => self.buckets.insert(i, (b, n)),
        }
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &LogHistogram) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            self.min = other.min;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        for &(b, n) in &other.buckets {
            self.add_to(b, n);
        }
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Their exact sum.
    pub fn sum(&self) -> u128 {
        self.sum
    }

    /// The smallest value (0 with none).
    pub fn min(&self) -> Cycles {
        if self.count == 0 {
            0
        } else {
            self.min
        }
    }

    /// The largest value (0 with none).
    pub fn max(&self) -> Cycles {
        self.max
    }

    /// Occupied buckets (the memory it holds, 8 bytes each).
    pub fn occupied(&self) -> usize {
        self.buckets.len()
    }

    /// The `q` quantile (0 to 1), nearest rank, within [`RELATIVE_ERROR`] of the exact one
    /// (0 with no value): the midpoint of the bucket holding the rank, within the exact
    /// minimum and maximum.
    pub fn quantile(&self, q: f64) -> Cycles {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0u64;
        for &(b, n) in &self.buckets {
            seen += u64::from(n);
            if seen >= rank {
                let (lo, hi) = bounds(b);
                return (lo + (hi - lo) / 2).clamp(self.min, self.max);
            }
        }
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::per_thread::quantile;
    use rand::{Rng, SeedableRng};

    #[test]
    fn buckets_are_contiguous_and_hold_their_values() {
        let mut last = (0, 0);
        for b in 1..BUCKETS as u16 {
            let (lo, hi) = bounds(b);
            assert_eq!(lo, last.1 + 1, "bucket {b}");
            assert!(hi >= lo);
            assert_eq!((bucket(lo), bucket(hi)), (b, b));
            // At most 2^(1 - PRECISION_BITS) of its values wide.
            assert!(hi - lo <= lo >> (PRECISION_BITS - 1), "{b}");
            last = (lo, hi);
        }
        assert_eq!(last.1, u64::MAX);
        assert_eq!(bucket(u64::MAX) as usize, BUCKETS - 1);
    }

    #[test]
    fn quantiles_are_within_the_stated_error_of_the_exact_ones() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(26);
        for round in 0..200 {
            let n = rng.random_range(1..3_000);
            // Log-uniform values from 0 to about 2^(8 + round % 40).
            let top = 8 + round % 40;
            let mut v: Vec<Cycles> = (0..n)
                .map(|_| {
                    let bits = rng.random_range(1..=top);
                    rng.random_range(0..(1u64 << bits))
                })
                .collect();
            let mut h = LogHistogram::default();
            v.iter().for_each(|&x| h.record(x));
            v.sort_unstable();
            for q in [0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0] {
                let exact = quantile(&v, q);
                let got = h.quantile(q);
                let err = (got as f64 - exact as f64).abs();
                assert!(
                    err <= RELATIVE_ERROR * exact as f64,
                    "round {round} q {q}: {got} against {exact}"
                );
            }
            assert_eq!(h.count(), n as u64);
            assert_eq!(h.sum(), v.iter().map(|&x| u128::from(x)).sum::<u128>());
            assert_eq!((h.min(), h.max()), (v[0], v[v.len() - 1]));
            assert!(h.occupied() <= BUCKETS);
        }
    }

    #[test]
    fn small_values_are_exact_and_merging_equals_recording_together() {
        let mut a = LogHistogram::default();
        let mut b = LogHistogram::default();
        let mut both = LogHistogram::default();
        for x in 0..255u64 {
            let h = if x % 3 == 0 { &mut a } else { &mut b };
            h.record(x * 1_000 % 255);
            both.record(x * 1_000 % 255);
        }
        a.merge(&b);
        assert_eq!(a, both);
        let v: Vec<Cycles> = {
            let mut v: Vec<Cycles> = (0..255u64).map(|x| x * 1_000 % 255).collect();
            v.sort_unstable();
            v
        };
        for q in [0.1, 0.5, 0.99] {
            assert_eq!(a.quantile(q), quantile(&v, q));
        }
        assert_eq!(LogHistogram::default().quantile(0.5), 0);
    }

    #[test]
    fn a_million_values_take_few_buckets() {
        let mut h = LogHistogram::default();
        for i in 0..1_000_000u64 {
            h.record(500 + i % 20_000);
        }
        assert!(h.occupied() < 1_000, "{}", h.occupied());
        assert_eq!(h.count(), 1_000_000);
    }
}
