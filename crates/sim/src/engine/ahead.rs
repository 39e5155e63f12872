//! Fetching ahead the records the engine will touch next: a hint to the host's
//! caches that changes no simulated result.
//!
//! With hundreds of thousands of simulated threads on thousands of processors, each thread is
//! dispatched once in hundreds of thousands of events, so its records (its slot, its program)
//! and the records of the processors the next events concern come from host memory: at 4,096
//! processors with 100 threads each that was most of the growth of the cost per event with the
//! machine's size (docs/performance.md). Two hints say what comes next: a policy names the
//! head of its run queue ([`Scheduler::next_picks`](crate::sched::Scheduler::next_picks)),
//! and the event queue the events likely to come out next
//! ([`EventQueue::peek_two`](crate::event_queue::EventQueue::peek_two)). The engine has the
//! host fetch their records while it handles what comes before them. A wrong hint costs only
//! time. The prefetch itself is `smpsched_prefetch`, the engine's one `unsafe` block.

use smpsched_prefetch::prefetch;

use super::{EventKind, Simulation};
use crate::ids::{ProcId, ThreadId};
use crate::thread::ThreadSlot;

/// The fewest threads for which the engine fetches ahead: below it their records (72-byte
/// slots and their programs, about 2 MB at this count) mostly stay in the host's second- and
/// third-level caches, and asking the policy costs more than it saves (the engine benchmark's
/// 10,000 threads ran 3-5% slower with it, identical demands; 102,400 threads 20-25% faster).
const FROM_THREADS: usize = 32_768;

/// The fewest processors (with at least [`FROM_THREADS`] threads) for which the engine also
/// fetches the next events' records: what an event touches is about 280 bytes a processor (its
/// 176-byte record, its thread's 72-byte slot and program), so below this the records stay in a
/// host's second-level cache, and peeking cost `engine_scaling` 3% at 1,024 processors where it
/// gave 9% at 4,096.
const FROM_PROCESSORS: usize = 2_048;

impl Simulation {
    /// After `p`'s pick: has the host fetch the policy's next two picks' records, the second's
    /// slot (whose program pointer the next call reads) and the first's program (whose slot the
    /// previous call fetched). Only with [`FROM_THREADS`] threads or more.
    #[inline(always)]
    pub(super) fn fetch_next_picks(&self, p: usize) {
        if self.cx.threads.len() < FROM_THREADS {
            return;
        }
        let [first, second] = self.sched.next_picks(ProcId(p as u32), &self.cx);
        if let Some(t) = second {
            prefetch_slot(&self.cx.threads, t);
        }
        if let Some(t) = first {
            prefetch_program(&self.cx.threads, t);
        }
    }

    /// Before an event: has the host fetch, for the event after next, its processor's record
    /// and the slot of the thread it concerns, and for the next event its thread's program
    /// (whose slot the previous call fetched). Only with [`FROM_PROCESSORS`] processors and
    /// [`FROM_THREADS`] threads or more.
    #[inline(always)]
    pub(super) fn fetch_next_events(&self) {
        if self.procs.len() < FROM_PROCESSORS || self.cx.threads.len() < FROM_THREADS {
            return;
        }
        let [next, after] = self.agenda.peek_two();
        if let Some(x) = after {
            match EventKind::unpack(x) {
                EventKind::Proc { p, .. } => {
                    let pi = p as usize;
                    if let Some(proc) = self.procs.get(pi) {
                        prefetch(proc);
                    }
                    if let Some(t) = self.cx.running.get(pi).copied().flatten() {
                        prefetch_slot(&self.cx.threads, t);
                    }
                }
                EventKind::Wake { t, .. } => prefetch_slot(&self.cx.threads, ThreadId(t)),
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

/// Has the host fetch thread `t`'s slot (nothing for an index out of range).
#[inline(always)]
fn prefetch_slot(threads: &[ThreadSlot], t: ThreadId) {
    if let Some(slot) = threads.get(t.index()) {
        prefetch(slot);
    }
}

/// Has the host fetch thread `t`'s program (its slot is read here: it should be cached).
#[inline(always)]
fn prefetch_program(threads: &[ThreadSlot], t: ThreadId) {
    if let Some(slot) = threads.get(t.index()) {
        prefetch(&*slot.exec.program);
    }
}
