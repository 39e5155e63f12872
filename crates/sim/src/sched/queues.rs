//! Run-queue helpers the policies compose instead of repeating them: a FIFO that honours
//! affinity masks and a set of such queues, one per processor (or per task). Mach's 32
//! priority levels are [`crate::readyq::RunQueue`].

use std::collections::VecDeque;

use super::SchedCtx;
use crate::ids::{ProcId, ThreadId};

/// A first-come first-served run queue whose pick skips threads whose mask excludes the
/// processor asking (and checks nothing while no thread has a mask).
#[derive(Clone, Debug, Default)]
pub struct Fifo(VecDeque<ThreadId>);

impl Fifo {
    /// Queues `t` at the tail.
    #[inline]
    pub fn push(&mut self, t: ThreadId) {
        self.0.push_back(t);
    }

    /// The first thread allowed on `p`, removed. Inlined for the common case of no masks (the
    /// front); the search past masked threads is out of line, so that a policy's `pick_next`
    /// does not pay its register saves on every dispatch.
    #[inline(always)]
    pub fn pop_for(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        if !cx.any_masked() {
            return self.0.pop_front();
        }
        self.pop_allowed(p, cx)
    }

    /// The first thread allowed on `p`, removed, searching past those whose mask excludes it.
    #[inline(never)]
    fn pop_allowed(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        let i = self.0.iter().position(|&t| cx.allowed(t, p))?;
        self.0.remove(i)
    }

    /// The first two threads queued (the next picks when no thread has a mask).
    #[inline]
    pub fn heads(&self) -> [Option<ThreadId>; 2] {
        [self.0.front().copied(), self.0.get(1).copied()]
    }

    /// Whether some queued thread may run on `p`.
    pub fn has_for(&self, p: ProcId, cx: &SchedCtx) -> bool {
        self.0.iter().any(|&t| cx.allowed(t, p))
    }

    /// Removes `t`; `true` if it was queued.
    pub fn remove(&mut self, t: ThreadId) -> bool {
        match self.0.iter().position(|&x| x == t) {
            Some(i) => self.0.remove(i).is_some(),
            None => false,
        }
    }

    /// Whether no thread is queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many threads are queued.
    pub fn len(&self) -> usize {
        self.0.len()
    }
}

/// One [`Fifo`] per index (a processor, or a task), grown on first use.
#[derive(Clone, Debug, Default)]
pub struct PerCpu(Vec<Fifo>);

impl PerCpu {
    /// The queue of index `i`, created empty if new.
    pub fn at(&mut self, i: usize) -> &mut Fifo {
        if self.0.len() <= i {
            self.0.resize_with(i + 1, Fifo::default);
        }
        &mut self.0[i]
    }

    /// The queue of index `i`, if it was ever used.
    pub fn get(&self, i: usize) -> Option<&Fifo> {
        self.0.get(i)
    }

    /// Removes `t` from whichever queue holds it; `true` if one did.
    pub fn remove(&mut self, t: ThreadId) -> bool {
        self.0.iter_mut().any(|q| q.remove(t))
    }
}
