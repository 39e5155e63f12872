//! The affinity priority of Gupta, Tucker and Urushibara 1991, section 5.2: priority scheduling
//! that favours running a thread where it ran last, so its cache is warm.
//!
//! priority = 1 / (T + c * l / ldfactor), where T is the thread's recent usage, l the time since
//! it last ran on this processor (capped at 20 slices: a cache is cold by then), ldfactor the
//! average number of runnable threads per processor, and c a weight. A smaller denominator is
//! a higher priority, so the functions here return the denominator (the *cost*) and lower wins.

/// Slices after which a processor's cache is taken to hold nothing of a thread (the cap on l).
pub const CAP_SLICES: u64 = 20;

/// The cost of running a thread with recent usage `usage` on a processor where it last ran
/// `since` cycles ago (`None`: never, taken as the cap), under `load` runnable threads per
/// processor: `usage + c * min(since, 20 slices) / load`. Lower is more important.
#[inline]
pub fn cost(usage: u64, since: Option<u64>, slice: u64, c: f64, load: f64) -> f64 {
    let cap = CAP_SLICES.saturating_mul(slice);
    let l = since.map_or(cap, |s| s.min(cap));
    usage as f64 + c * l as f64 / load.max(1e-9)
}

/// The load factor: runnable threads per processor (at least a tiny positive number, so that
/// an idle machine does not divide by zero).
#[inline]
pub fn load_factor(runnable: usize, processors: usize) -> f64 {
    (runnable as f64 / processors.max(1) as f64).max(1e-9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_processors_cost_less_and_the_gap_grows_with_c() {
        let slice = 250_000;
        let warm = |c| cost(1_000_000, Some(slice), slice, c, 2.0);
        let cold = |c| cost(1_000_000, None, slice, c, 2.0);
        assert_eq!(cost(5, Some(0), slice, 0.5, 1.0), 5.0);
        assert!(warm(0.5) < cold(0.5));
        assert!(cold(0.5) - warm(0.5) > cold(0.1) - warm(0.1));
        // c = 0 is plain priority by usage.
        assert_eq!(warm(0.0), cold(0.0));
    }

    #[test]
    fn time_away_is_capped_at_twenty_slices() {
        let slice = 100;
        assert_eq!(
            cost(0, Some(10_000), slice, 1.0, 1.0),
            cost(0, Some(2_000), slice, 1.0, 1.0)
        );
        assert_eq!(cost(0, None, slice, 1.0, 1.0), 2_000.0);
        assert!(cost(0, Some(1_999), slice, 1.0, 1.0) < 2_000.0);
    }

    #[test]
    fn one_common_unit_orders_threads_as_cycles_do() {
        // Section 5.2 gives no unit for T and l: counting both in slices instead of cycles
        // scales every cost by the same factor, so no choice between threads changes.
        let slice = 250_000u64;
        let threads = [
            (3 * slice, Some(slice / 2)),
            (3 * slice + slice / 3, None),
            (2 * slice, Some(19 * slice)),
            (4 * slice, Some(0)),
        ];
        for c in [0.1, 0.5, 3.0] {
            let in_cycles: Vec<f64> = threads
                .iter()
                .map(|&(t, l)| cost(t, l, slice, c, 4.0))
                .collect();
            let in_slices: Vec<f64> = threads
                .iter()
                .map(|&(t, l)| {
                    let s = slice as f64;
                    let l = l.map_or(CAP_SLICES as f64, |l| (l as f64 / s).min(20.0));
                    t as f64 / s + c * l / 4.0
                })
                .collect();
            for i in 0..threads.len() {
                for j in 0..threads.len() {
                    let a = in_cycles[i] < in_cycles[j];
                    assert_eq!(a, in_slices[i] < in_slices[j], "c {c}, threads {i} {j}");
                }
            }
        }
    }

    #[test]
    fn heavier_load_weighs_affinity_less() {
        let slice = 100;
        assert!(cost(0, None, slice, 1.0, 4.0) < cost(0, None, slice, 1.0, 1.0));
        assert_eq!(load_factor(24, 12), 2.0);
    }
}
