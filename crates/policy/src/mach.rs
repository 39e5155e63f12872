//! Mach's timesharing arithmetic (Black 1990, section 3): 32 run-queue levels, priority as a
//! base plus an offset from recent usage, usage accumulated weighted by the overload factor and
//! aged by 5/8 once a second, the overload factor (runnable threads per processor, at least 1)
//! exponentially averaged.
//!
//! Levels follow Mach: 0 is the most important, 31 the least. Usage and load are plain
//! integers; the load factor is fixed point with [`LOAD_ONE`] standing for 1.

/// Run-queue levels (Mach's `NRQS`).
pub const LEVELS: usize = 32;

/// The least important level.
pub const LOWEST: usize = LEVELS - 1;

/// The level of an ordinary user thread with no usage (Unix's 50, four Unix priorities to a
/// Mach level: 50 / 4).
pub const USER_BASE: usize = 12;

/// Fixed-point one for load factors.
pub const LOAD_ONE: u64 = 256;

/// Seconds of aging after which any usage has decayed to nothing ((5/8)^64 < 2^-43).
const AGE_LIMIT: u64 = 64;

/// Usage after `seconds` agings, each a multiplication by 5/8 done as two shifts and an add,
/// as Mach does it (rounds down, so usage never grows by aging).
#[inline]
pub fn age(usage: u64, seconds: u64) -> u64 {
    let mut u = usage;
    for _ in 0..seconds.min(AGE_LIMIT) {
        if u == 0 {
            break;
        }
        u = (u >> 1) + (u >> 3);
    }
    if seconds >= AGE_LIMIT {
        0
    } else {
        u
    }
}

/// The overload factor of one moment: runnable threads per processor, at least 1, in
/// [`LOAD_ONE`] units.
#[inline]
pub fn overload(runnable: u64, processors: u64) -> u64 {
    (runnable.saturating_mul(LOAD_ONE) / processors.max(1)).max(LOAD_ONE)
}

/// The exponential average of the overload factor after one more sample: half the old
/// average, half the sample (smoothing abrupt load changes).
#[inline]
pub fn average_load(average: u64, sample: u64) -> u64 {
    (average + sample) / 2
}

/// Usage charged for `cycles` of processor time at load factor `load` (the overload-factor
/// technique: usage accumulates faster under load, so priorities stay in range).
#[inline]
pub fn weighted_usage(cycles: u64, load: u64) -> u64 {
    ((u128::from(cycles) * u128::from(load)) / u128::from(LOAD_ONE)).min(u128::from(u64::MAX))
        as u64
}

/// A thread's level: its base level plus one level per `usage_per_level` of (weighted) usage,
/// never past [`LOWEST`].
#[inline]
pub fn level(base: usize, usage: u64, usage_per_level: u64) -> usize {
    let offset = usage / usage_per_level.max(1);
    (base as u64).saturating_add(offset).min(LOWEST as u64) as usize
}

/// The base level of a thread whose base priority is `priority` (larger is more important, 0
/// an ordinary user thread): [`USER_BASE`] less the priority, within the levels.
#[inline]
pub fn base_level(priority: i32) -> usize {
    (USER_BASE as i64 - i64::from(priority)).clamp(0, LOWEST as i64) as usize
}

/// Whether a running thread at `running` level gives its processor to the best waiting thread
/// at `waiting` level when its quantum ends: when that thread is of equal or higher priority.
#[inline]
pub fn yields_at_quantum(waiting: usize, running: usize) -> bool {
    waiting <= running
}

/// Whether a thread made ready at `woken` level should preempt one running at `running` level
/// (strictly more important).
#[inline]
pub fn preempts(woken: usize, running: usize) -> bool {
    woken < running
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aging_is_five_eighths_a_second() {
        assert_eq!(age(800, 1), 500);
        assert_eq!(age(800, 2), 312); // 500 * 5/8 = 312.5, rounded down by the shifts
        assert_eq!(age(800, 0), 800);
        assert_eq!(age(u64::MAX, 64), 0);
        assert_eq!(age(1 << 40, 10), {
            let mut u: u64 = 1 << 40;
            for _ in 0..10 {
                u = (u >> 1) + (u >> 3);
            }
            u
        });
    }

    #[test]
    fn overload_is_runnable_per_processor_at_least_one() {
        assert_eq!(overload(0, 4), LOAD_ONE);
        assert_eq!(overload(4, 4), LOAD_ONE);
        assert_eq!(overload(12, 4), 3 * LOAD_ONE);
        assert_eq!(overload(6, 4), LOAD_ONE * 3 / 2);
        assert_eq!(average_load(LOAD_ONE, 3 * LOAD_ONE), 2 * LOAD_ONE);
    }

    #[test]
    fn levels_are_base_plus_usage_within_range() {
        assert_eq!(level(USER_BASE, 0, 100), USER_BASE);
        assert_eq!(level(USER_BASE, 250, 100), USER_BASE + 2);
        assert_eq!(level(USER_BASE, u64::MAX, 1), LOWEST);
        assert_eq!(base_level(0), USER_BASE);
        assert_eq!(base_level(5), USER_BASE - 5);
        assert_eq!(base_level(100), 0);
        assert_eq!(base_level(-100), LOWEST);
        assert_eq!(weighted_usage(1000, 2 * LOAD_ONE), 2000);
        assert!(yields_at_quantum(12, 12) && !yields_at_quantum(13, 12));
        assert!(preempts(11, 12) && !preempts(12, 12));
    }

    proptest::proptest! {
        #[test]
        fn aging_never_grows_and_is_monotone(a in 0u64..1 << 60, b in 0u64..1 << 60, s in 0u64..80) {
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            proptest::prop_assert!(age(hi, s) <= hi);
            proptest::prop_assert!(age(lo, s) <= age(hi, s));
            proptest::prop_assert!(age(hi, s + 1) <= age(hi, s));
        }
    }
}
