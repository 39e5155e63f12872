//! Fetching ahead the records of the threads a policy will dispatch next (issue 29): a hint to
//! the host's caches that changes no simulated result.
//!
//! With hundreds of thousands of simulated threads, each is dispatched once in hundreds of
//! thousands of events, so its records (its slot, its program) come from host memory at each
//! dispatch: at 4,096 processors with 100 threads each, that was most of the growth of the cost
//! per event with the machine's size (docs/performance.md). A policy that knows the head of
//! its run queue says so ([`Scheduler::next_picks`](crate::sched::Scheduler::next_picks)), and
//! at each dispatch the engine has the host fetch those records while it handles the events
//! before their turn. A wrong hint costs only time.

use crate::ids::ThreadId;
use crate::thread::ThreadSlot;
use smpsched_prefetch::prefetch;

/// The fewest threads for which the engine fetches ahead: below it their records (72-byte
/// slots and their programs, about 2 MB at this count) mostly stay in the host's second- and
/// third-level caches, and asking the policy costs more than it saves (the engine benchmark's
/// 10,000 threads ran 2-5% slower with it, identical demands; 102,400 threads 20-25% faster).
pub(crate) const AHEAD_FROM_THREADS: usize = 32_768;

/// Fetches ahead the records of a policy's next two picks (`picks`, the likelier first): the
/// second's slot, whose program pointer the next call reads, and the first's program, whose
/// slot the previous call fetched. Thread indexes out of range are ignored.
#[inline]
pub(crate) fn next_picks(threads: &[ThreadSlot], picks: [Option<ThreadId>; 2]) {
    if let Some(slot) = picks[1].and_then(|t| threads.get(t.index())) {
        prefetch(slot);
    }
    if let Some(slot) = picks[0].and_then(|t| threads.get(t.index())) {
        prefetch(&*slot.exec.program);
    }
}

/// Has the host fetch the record `r` (nothing when `None`).
#[inline(always)]
pub(crate) fn prefetch_record<T>(r: Option<&T>) {
    if let Some(r) = r {
        prefetch(r);
    }
}

/// Has the host fetch thread `t`'s program (its slot should be cached: it is read here).
#[inline(always)]
pub(crate) fn prefetch_program(threads: &[ThreadSlot], t: ThreadId) {
    if let Some(slot) = threads.get(t.index()) {
        prefetch(&*slot.exec.program);
    }
}
