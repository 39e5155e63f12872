//! Fetching ahead the records the next events will touch (issue 29): with hundreds of
//! thousands of threads on thousands of processors, an event's processor record and its
//! thread's slot and program are misses of the host's caches unless fetched before their turn.
//! A hint to the host only: no simulated result depends on it.

use super::{EventKind, Simulation};
use crate::prefetch::{prefetch_program, prefetch_record};

/// The fewest processors for which the engine fetches the next events' records ahead (with at
/// least [`AHEAD_FROM_THREADS`](crate::prefetch::AHEAD_FROM_THREADS) threads): what an event
/// touches is about 280 bytes a processor (its 176-byte record, its thread's 72-byte slot and
/// program), so below this the records stay in a host's second-level cache, and peeking cost
/// `engine_scaling` 3% at 1,024 processors where it gave 9% at 4,096.
pub(super) const FROM_PROCESSORS: usize = 2_048;

impl Simulation {
    /// Has the host fetch, for the event after next, its processor's record and the slot of
    /// the thread it concerns, and for the next event its thread's program (whose slot the
    /// previous call fetched).
    #[inline]
    pub(super) fn fetch_next_events(&self) {
        let [next, after] = self.agenda.peek_two();
        if let Some(x) = after {
            match EventKind::unpack(x) {
                EventKind::Proc { p, .. } => {
                    let pi = p as usize;
                    prefetch_record(self.procs.get(pi));
                    if let Some(t) = self.cx.running.get(pi).copied().flatten() {
                        prefetch_record(self.cx.threads.get(t.index()));
                    }
                }
                EventKind::Wake { t, .. } => prefetch_record(self.cx.threads.get(t as usize)),
                _ => {}
            }
        }
        if let Some(EventKind::Proc { p, .. }) = next.map(EventKind::unpack) {
            if let Some(t) = self.cx.running.get(p as usize).copied().flatten() {
                prefetch_program(&self.cx.threads, t);
            }
        }
    }
}
