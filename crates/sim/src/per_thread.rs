//! Per-thread measures, the figures scx_simulator's users read of each task: how often the
//! thread was dispatched, how long it ran, and the wake-to-run latency of every wake-up (from
//! the wake-up to the moment it runs again, after the dispatch's kernel and switch cycles),
//! as mean, median and 99th percentile (from a bounded histogram, [`crate::hist`]: the mean
//! exact, the percentiles within 1/256). Kept only for the tasks that ask
//! ([`Simulation::measure_threads`](crate::Simulation::measure_threads)), so that other runs
//! neither pay for them nor show them.

use serde::{Deserialize, Serialize};

use crate::hist::LogHistogram;
use crate::ids::Cycles;
use crate::recorded::Recorded;

/// What the engine gathers for one measured thread while it runs.
#[derive(Clone, Debug, Default)]
pub(crate) struct ThreadLedger {
    /// When its pending wake-up happened (`None`: not woken since it last ran).
    pub(crate) woken_at: Option<Cycles>,
    /// A wake-up whose dispatch has not yet been seen to run: when it woke, and when its
    /// dispatch's kernel work and switch end. It counts once the thread runs past that; a
    /// thread preempted at the end of its switch has not run, and its wake-up stays pending.
    pub(crate) starting: Option<(Cycles, Cycles)>,
    /// Times it was put on a processor.
    pub(crate) dispatches: u64,
    /// The wake-to-run latency of each wake-up, cycles, in a bounded log-bucket histogram
    /// (percentiles within [`crate::hist::RELATIVE_ERROR`], count, sum, min and max exact).
    pub(crate) latencies: LogHistogram,
}

impl ThreadLedger {
    /// The thread runs from `at`: a dispatch, and a wake-up's latency if one is pending,
    /// counted once it is seen to run ([`ThreadLedger::left`]). A dispatch of the thread again
    /// without its leaving shows the last one ran.
    #[inline]
    pub(crate) fn ran(&mut self, at: Cycles) {
        self.dispatches += 1;
        if let Some((w, from)) = self.starting.take() {
            self.latencies.record(from.saturating_sub(w));
        }
        if let Some(w) = self.woken_at.take() {
            self.starting = Some((w, at));
        }
    }

    /// The thread is preempted at `now` (or the run ends): a dispatch cut short before its
    /// switch ended did not run it, so its wake-up stays pending for the next dispatch.
    #[inline]
    pub(crate) fn preempted(&mut self, now: Cycles) {
        if let Some((w, from)) = self.starting {
            if now <= from {
                self.starting = None;
                self.woken_at = Some(w);
            }
        }
    }

    /// The thread leaves its processor (preempted after it ran, blocking, yielding, exiting:
    /// each an operation it ran, however short): its wake-up counts.
    #[inline]
    pub(crate) fn left(&mut self) {
        if let Some((w, from)) = self.starting.take() {
            self.latencies.record(from.saturating_sub(w));
        }
    }
}

/// One measured thread's figures in a run's results.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadReport {
    /// Its index within its application, in creation order (an rt-app task's instances in
    /// turn, tasks in the file's order).
    pub rank: u32,
    /// Times it was put on a processor.
    pub dispatches: u64,
    /// Cycles it held a processor (its runtime).
    pub runtime_cycles: Cycles,
    /// Wake-ups it had (each one's latency is counted below).
    pub wakeups: u64,
    /// Mean wake-to-run latency, microseconds (0 with no wake-up).
    pub wake_lat_mean_us: f64,
    /// Median wake-to-run latency, microseconds.
    pub wake_lat_p50_us: f64,
    /// 99th percentile of the wake-to-run latency, microseconds.
    pub wake_lat_p99_us: f64,
}

/// The index of the `q` quantile (0 to 1) among `n` sorted values, nearest rank.
fn rank(n: usize, q: f64) -> usize {
    ((q * n as f64).ceil() as usize).clamp(1, n) - 1
}

/// The `q` quantile (0 to 1) of sorted `v`, nearest rank (0 for none).
pub fn quantile(sorted: &[Cycles], q: f64) -> Cycles {
    if sorted.is_empty() {
        return 0;
    }
    sorted[rank(sorted.len(), q)]
}

/// The mean of a histogram's values in microseconds (`us` turns cycles into them; 0 for none).
fn mean_us(h: &LogHistogram, us: impl Fn(Cycles) -> f64) -> f64 {
    if h.count() == 0 {
        return 0.0;
    }
    // The exact sum in microseconds: cycles to microseconds is linear.
    let sum = h.sum();
    let whole = us(u64::try_from(sum).unwrap_or(u64::MAX));
    whole / h.count() as f64
}

/// The report of one thread from its ledger; `us` turns cycles into microseconds.
pub(crate) fn report(
    rank: u32,
    ledger: &ThreadLedger,
    runtime: Cycles,
    us: impl Fn(Cycles) -> f64,
) -> ThreadReport {
    let h = &ledger.latencies;
    ThreadReport {
        rank,
        dispatches: ledger.dispatches,
        runtime_cycles: runtime,
        wakeups: h.count(),
        wake_lat_mean_us: mean_us(h, &us),
        wake_lat_p50_us: us(h.quantile(0.5)),
        wake_lat_p99_us: us(h.quantile(0.99)),
    }
}

/// Every wake-up of an application's measured threads (`all`, the threads' histograms merged)
/// as one recorded measure (`wake_lat_us`, microseconds), with its median and 99th percentile
/// (within [`crate::hist::RELATIVE_ERROR`]); `None` without wake-ups.
pub(crate) fn app_latency(all: &LogHistogram, us: impl Fn(Cycles) -> f64) -> Option<Recorded> {
    if all.count() == 0 {
        return None;
    }
    Some(Recorded {
        count: all.count(),
        sum: mean_us(all, &us) * all.count() as f64,
        min: us(all.min()),
        max: us(all.max()),
        p50: Some(us(all.quantile(0.5))),
        p99: Some(us(all.quantile(0.99))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        let v: Vec<Cycles> = (1..=100).collect();
        assert_eq!(quantile(&v, 0.5), 50);
        assert_eq!(quantile(&v, 0.99), 99);
        assert_eq!(quantile(&v, 1.0), 100);
        assert_eq!(quantile(&[7], 0.99), 7);
        assert_eq!(quantile(&[], 0.5), 0);
    }

    #[test]
    fn a_ledger_counts_dispatches_and_only_woken_latencies() {
        let mut l = ThreadLedger::default();
        l.ran(10); // first dispatch: no wake-up pending
        l.woken_at = Some(100);
        l.ran(130);
        l.ran(200); // a preempted thread's return: no latency
        l.woken_at = Some(300);
        l.ran(310);
        l.woken_at = Some(400);
        l.ran(400 + (1 << 33)); // longer than 2^32 cycles: its bucket's midpoint, at most max
        l.left(); // it ran: its wake-up counts
        let r = report(3, &l, 77, |c| c as f64);
        assert_eq!(
            (r.rank, r.dispatches, r.wakeups, r.runtime_cycles),
            (3, 5, 3, 77)
        );
        assert_eq!(r.wake_lat_mean_us, (40 + (1u64 << 33)) as f64 / 3.0);
        assert_eq!(
            (r.wake_lat_p50_us, r.wake_lat_p99_us),
            (30.0, (1u64 << 33) as f64)
        );
        let all = app_latency(&l.latencies, |c| c as f64).unwrap();
        assert_eq!(
            (all.count, all.min, all.max),
            (3, 10.0, (1u64 << 33) as f64)
        );
        assert_eq!(all.p50, Some(30.0));
    }

    #[test]
    fn a_wake_up_counts_when_its_thread_runs_not_when_a_switch_to_it_is_cut_short() {
        let mut l = ThreadLedger {
            woken_at: Some(100),
            ..ThreadLedger::default()
        };
        l.ran(150); // dispatched: its switch ends at 150
        l.preempted(150); // preempted at the end of the switch: it never ran
        l.left();
        assert_eq!(l.latencies.count(), 0);
        assert_eq!(l.woken_at, Some(100), "the wake-up is still pending");
        l.ran(900);
        l.left(); // it blocked at once, in no time: it ran its operation, and counts
        assert_eq!((l.latencies.count(), l.latencies.sum()), (1, 800));
        assert_eq!(l.dispatches, 2);
        l.woken_at = Some(2000);
        l.ran(2100);
        l.preempted(2500); // preempted after it ran: counts
        l.left();
        assert_eq!(l.latencies.count(), 2);
    }
}
