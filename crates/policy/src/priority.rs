//! Priority with usage decay: Gupta, Tucker and Urushibara 1991, section 4.
//!
//! A process's priority is inverse to its recent processor usage. Usage grows by the cycles a
//! process runs and is multiplied by a decay factor (0.66 in the paper) at a fixed interval
//! (6.25 million cycles, a quarter second at 25 MHz), as in 4.3BSD Unix.

/// Default decay factor applied to recent usage at every decay interval (Gupta: 0.66).
pub const DEFAULT_DECAY: f64 = 0.66;

/// Default interval between two decays, in cycles (Gupta: 6.25 million).
pub const DEFAULT_DECAY_INTERVAL: u64 = 6_250_000;

/// Recent usage after one decay step. Rounds down so that usage never grows by decaying.
#[inline]
pub fn decay_usage(usage: u64, factor: f64) -> u64 {
    debug_assert!((0.0..=1.0).contains(&factor));
    (usage as f64 * factor) as u64
}

/// Whether a waiting thread with recent usage `waiting` should take the processor from a running
/// thread with recent usage `running` at the end of the runner's quantum: lower usage is higher
/// priority, and equal priorities share the processor round-robin.
#[inline]
pub fn should_preempt_at_quantum(waiting: u64, running: u64) -> bool {
    waiting <= running
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decay_shrinks_and_never_grows() {
        assert_eq!(decay_usage(1_000_000, 0.66), 660_000);
        assert_eq!(decay_usage(0, 0.66), 0);
        assert_eq!(decay_usage(7, 1.0), 7);
        assert_eq!(decay_usage(7, 0.0), 0);
    }

    #[test]
    fn equal_usage_round_robins_and_heavier_runner_yields() {
        assert!(should_preempt_at_quantum(10, 10));
        assert!(should_preempt_at_quantum(5, 10));
        assert!(!should_preempt_at_quantum(11, 10));
    }

    proptest::proptest! {
        #[test]
        fn decay_is_monotone(a in 0u64..1u64 << 50, b in 0u64..1u64 << 50, f in 0.0f64..1.0) {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            proptest::prop_assert!(decay_usage(lo, f) <= decay_usage(hi, f));
            proptest::prop_assert!(decay_usage(hi, f) <= hi);
        }
    }
}
