//! Distributions of cycle counts (compute bursts, blocking times) for synthetic loads: fixed,
//! uniform and exponential, as DiBella et al. 1992 (section 4) and Weibel vary their loads.

use rand::Rng;
use serde::Deserialize;

/// Largest single duration a distribution may produce or be configured with (about 11 hours at
/// 25 MHz); larger values are rejected as absurd.
pub const MAX_CYCLES: u64 = 1 << 40;

/// A distribution of durations in cycles, written `{ dist = "fixed", value = N }`,
/// `{ dist = "uniform", min = A, max = B }` or `{ dist = "exponential", mean = M }`.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(tag = "dist", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Dist {
    /// Always `value`.
    Fixed {
        /// The duration.
        value: u64,
    },
    /// Uniform over `min..=max`.
    Uniform {
        /// Smallest duration.
        min: u64,
        /// Largest duration.
        max: u64,
    },
    /// Exponential with the given mean (rounded to whole cycles).
    Exponential {
        /// Mean duration.
        mean: f64,
    },
}

impl Dist {
    /// Checks the parameters; the message names the offending one.
    pub fn validate(&self) -> Result<(), String> {
        match *self {
            Dist::Fixed { value } if value > MAX_CYCLES => {
                Err(format!("value {value} exceeds {MAX_CYCLES} cycles"))
            }
            Dist::Uniform { min, max } if min > max => {
                Err(format!("min ({min}) is larger than max ({max})"))
            }
            Dist::Uniform { max, .. } if max > MAX_CYCLES => {
                Err(format!("max {max} exceeds {MAX_CYCLES} cycles"))
            }
            Dist::Exponential { mean }
                if !(mean.is_finite() && mean > 0.0 && mean <= MAX_CYCLES as f64) =>
            {
                Err(format!(
                    "mean must be above 0 and at most {MAX_CYCLES} cycles, got {mean}"
                ))
            }
            _ => Ok(()),
        }
    }

    /// Draws one duration.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        match *self {
            Dist::Fixed { value } => value,
            Dist::Uniform { min, max } => rng.random_range(min..=max),
            Dist::Exponential { mean } => {
                // Inverse transform; 1 - u is in (0, 1], so the logarithm is finite.
                let u: f64 = rng.random();
                let x = -mean * (1.0 - u).ln();
                x.round().min(MAX_CYCLES as f64) as u64
            }
        }
    }

    /// The mean of the distribution, in cycles.
    pub fn mean(&self) -> f64 {
        match *self {
            Dist::Fixed { value } => value as f64,
            Dist::Uniform { min, max } => (min as f64 + max as f64) / 2.0,
            Dist::Exponential { mean } => mean,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn sample_means_are_close() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        for d in [
            Dist::Fixed { value: 500 },
            Dist::Uniform { min: 100, max: 900 },
            Dist::Exponential { mean: 500.0 },
        ] {
            let n = 20_000;
            let s: u64 = (0..n).map(|_| d.sample(&mut rng)).sum();
            let m = s as f64 / n as f64;
            assert!((m - d.mean()).abs() < 0.03 * d.mean(), "{d:?}: {m}");
        }
    }

    #[test]
    fn bad_parameters_are_named() {
        assert!(Dist::Uniform { min: 5, max: 1 }
            .validate()
            .unwrap_err()
            .contains("min"));
        assert!(Dist::Exponential { mean: -1.0 }
            .validate()
            .unwrap_err()
            .contains("mean"));
        let d: Result<Dist, _> = toml::from_str("dist = \"gaussian\"\nmean = 3");
        assert!(d.unwrap_err().to_string().contains("gaussian"));
    }
}
