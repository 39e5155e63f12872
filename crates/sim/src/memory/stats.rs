//! What the memory model reports: the [`Charge`] of one call (cycles split into useful work and
//! stall, as in the utilization breakdowns of Gupta et al. 1991, Figure 1) and the running
//! [`MemoryStats`] per processor (the references / misses columns of their Table 1).

use std::ops::AddAssign;

use serde::{Deserialize, Serialize};

use crate::ids::Cycles;

/// The cost of one memory call. Every reference contributes `hit_cycles` to `useful`; a miss adds
/// its latency beyond a hit, plus any wait for a busy line or bus, to `stall`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Charge {
    /// Cycles of useful work (`hit_cycles` per reference).
    pub useful: Cycles,
    /// Cycles stalled on misses, busy lines, the bus and atomics.
    pub stall: Cycles,
    /// References made.
    pub refs: u64,
    /// References that missed (including ownership upgrades of Shared lines).
    pub misses: u64,
    /// Copies in other caches this call invalidated.
    pub invalidations: u64,
    /// Misses served by a remote NUMA node.
    pub remote: u64,
    /// Misses that missed the shared second level too (0 without one).
    pub l2_misses: u64,
    /// Whether the access is complete (always true for single references and atomics).
    pub done: bool,
}

impl Charge {
    /// Total cycles charged: `useful + stall`.
    pub fn total(&self) -> Cycles {
        self.useful + self.stall
    }
}

impl AddAssign for Charge {
    /// Accumulates counts and cycles; `done` becomes the later charge's `done`.
    fn add_assign(&mut self, rhs: Charge) {
        self.useful += rhs.useful;
        self.stall += rhs.stall;
        self.refs += rhs.refs;
        self.misses += rhs.misses;
        self.invalidations += rhs.invalidations;
        self.remote += rhs.remote;
        self.l2_misses += rhs.l2_misses;
        self.done = rhs.done;
    }
}

/// Running memory statistics of one processor (or of the whole machine, summed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryStats {
    /// References made (atomics included; a read-modify-write element counts two).
    pub refs: u64,
    /// References that missed.
    pub misses: u64,
    /// Copies in other caches this processor's writes and atomics invalidated.
    pub invalidations: u64,
    /// Lines this processor's cache lost to other processors' writes.
    pub invalidated: u64,
    /// Misses served by a remote NUMA node.
    pub remote: u64,
    /// Misses that missed the shared second level too (absent from results without one).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub l2_misses: u64,
    /// Cycles stalled (miss latency beyond a hit, waits, atomic hold time).
    pub stall_cycles: Cycles,
    /// Atomic read-modify-writes made.
    pub atomics: u64,
    /// Cycles atomics waited for their line to be free (part of `stall_cycles`).
    pub atomic_wait_cycles: Cycles,
}

/// Whether a counter is zero (kept out of serialized results, so that machines without a second
/// level write what they always wrote).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl MemoryStats {
    /// Misses per reference (0 when there were no references).
    pub fn miss_rate(&self) -> f64 {
        if self.refs == 0 {
            0.0
        } else {
            self.misses as f64 / self.refs as f64
        }
    }

    /// Adds the counts of `charge`.
    pub(crate) fn record(&mut self, charge: &Charge) {
        self.refs += charge.refs;
        self.misses += charge.misses;
        self.invalidations += charge.invalidations;
        self.remote += charge.remote;
        self.l2_misses += charge.l2_misses;
        self.stall_cycles += charge.stall;
    }
}

impl AddAssign for MemoryStats {
    /// Sums every counter.
    fn add_assign(&mut self, rhs: MemoryStats) {
        self.refs += rhs.refs;
        self.misses += rhs.misses;
        self.invalidations += rhs.invalidations;
        self.invalidated += rhs.invalidated;
        self.remote += rhs.remote;
        self.l2_misses += rhs.l2_misses;
        self.stall_cycles += rhs.stall_cycles;
        self.atomics += rhs.atomics;
        self.atomic_wait_cycles += rhs.atomic_wait_cycles;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn miss_rate_and_sums() {
        assert_eq!(MemoryStats::default().miss_rate(), 0.0);
        let mut s = MemoryStats::default();
        s.record(&Charge {
            useful: 4,
            stall: 19,
            refs: 4,
            misses: 1,
            invalidations: 2,
            remote: 1,
            l2_misses: 0,
            done: true,
        });
        assert_eq!(s.miss_rate(), 0.25);
        let mut t = s;
        t += s;
        assert_eq!(
            (t.refs, t.misses, t.stall_cycles, t.invalidations),
            (8, 2, 38, 4)
        );
        let mut c = Charge::default();
        c += Charge {
            useful: 3,
            stall: 2,
            done: true,
            ..Charge::default()
        };
        assert_eq!((c.total(), c.done), (5, true));
    }
}
