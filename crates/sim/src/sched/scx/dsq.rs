//! sched_ext's dispatch queues (DSQs): the global one (`SCX_DSQ_GLOBAL`), one local queue per
//! processor (`SCX_DSQ_LOCAL`, what the processor runs next) and custom ones a policy creates by
//! id; each is first-in first-out or ordered by virtual time (`scx_bpf_dsq_insert_vtime`), never
//! both, as in the kernel's `ext.c`.

use std::collections::{BTreeMap, VecDeque};

use crate::ids::{ProcId, ThreadId};
use crate::procset::ProcSet;
use crate::sched::SchedCtx;

use super::vtime::VtimeQueue;

/// Which dispatch queue an insertion or a move names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DsqId {
    /// `SCX_DSQ_GLOBAL`: one FIFO every processor consumes when its local queue is empty.
    Global,
    /// `SCX_DSQ_LOCAL`: the local queue of the processor the operation runs on (in
    /// `select_cpu`, the processor it returns).
    Local,
    /// `SCX_DSQ_LOCAL_ON | cpu`: the local queue of `cpu`.
    LocalOn(ProcId),
    /// A queue the policy created with this id.
    Custom(u64),
}

/// One dispatch queue: FIFO, or ordered by virtual time (ties in insertion order).
#[derive(Clone, Debug, Default)]
pub struct Dsq {
    fifo: VecDeque<ThreadId>,
    /// By (vtime, insertion number), smallest first ([`VtimeQueue`]).
    vtime: VtimeQueue,
    seq: u64,
}

impl Dsq {
    /// Queues `t` at the tail (FIFO order).
    pub fn push(&mut self, t: ThreadId) {
        debug_assert!(self.vtime.is_empty(), "a DSQ is FIFO or vtime-ordered");
        self.fifo.push_back(t);
    }

    /// Queues `t` at the head (`SCX_ENQ_HEAD`).
    pub fn push_head(&mut self, t: ThreadId) {
        debug_assert!(self.vtime.is_empty(), "a DSQ is FIFO or vtime-ordered");
        self.fifo.push_front(t);
    }

    /// Queues `t` in virtual-time order at `vtime`.
    pub fn push_vtime(&mut self, t: ThreadId, vtime: u64) {
        debug_assert!(self.fifo.is_empty(), "a DSQ is FIFO or vtime-ordered");
        self.seq += 1;
        self.vtime.push((vtime, self.seq), t);
    }

    /// The first thread (by order) that may run on `p`, removed.
    #[inline(always)]
    pub fn pop_for(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        if self.vtime.is_empty() {
            // FIFO (or empty): the common case, inline.
            if self.fifo.is_empty() {
                return None;
            }
            if !cx.any_masked() {
                return self.fifo.pop_front();
            }
            let i = self.fifo.iter().position(|&t| cx.allowed(t, p))?;
            return self.fifo.remove(i);
        }
        self.pop_vtime_for(p, cx)
    }

    /// [`Self::pop_for`] on a queue ordered by virtual time, not empty (so its FIFO is).
    fn pop_vtime_for(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        if !cx.any_masked() {
            return self.vtime.pop();
        }
        self.vtime.pop_first(|t| cx.allowed(t, p))
    }

    /// The first thread in order, removed, whatever its mask.
    pub fn pop(&mut self) -> Option<ThreadId> {
        self.fifo.pop_front().or_else(|| self.vtime.pop())
    }

    /// Whether some queued thread may run on `p`.
    pub fn has_for(&self, p: ProcId, cx: &SchedCtx) -> bool {
        if !cx.any_masked() {
            return !self.is_empty();
        }
        self.fifo.iter().any(|&t| cx.allowed(t, p)) || self.vtime.any(|t| cx.allowed(t, p))
    }

    /// Removes `t`; `true` if it was queued here.
    pub fn remove(&mut self, t: ThreadId) -> bool {
        if let Some(i) = self.fifo.iter().position(|&x| x == t) {
            return self.fifo.remove(i).is_some();
        }
        self.vtime.remove(t)
    }

    /// How many threads are queued (`scx_bpf_dsq_nr_queued`).
    pub fn len(&self) -> usize {
        self.fifo.len() + self.vtime.len()
    }

    /// Whether no thread is queued.
    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty() && self.vtime.is_empty()
    }
}

/// Every dispatch queue of a run: global, local per processor, custom by id.
#[derive(Clone, Debug, Default)]
pub struct Dsqs {
    /// `SCX_DSQ_GLOBAL`.
    pub global: Dsq,
    /// One local queue per processor, indexed by `ProcId`. Whoever changes one settles its
    /// claim ([`Dsqs::settle_claim`]).
    pub(crate) local: Vec<Dsq>,
    /// The policy's own queues by id (`scx_bpf_create_dsq`), in id order.
    pub custom: BTreeMap<u64, Dsq>,
    /// The processors whose local queue holds a thread (claimed: not idle for `select_cpu`
    /// even while nothing runs there), so that the idle-CPU pick skips them 64 at a time.
    pub(crate) claimed: ProcSet,
}

impl Dsqs {
    /// Sizes the local queues for `processors`.
    pub fn size(&mut self, processors: usize) {
        if self.local.len() < processors {
            self.local.resize_with(processors, Dsq::default);
            let mut claimed = ProcSet::none(processors);
            for (p, q) in self.local.iter().enumerate() {
                if !q.is_empty() {
                    claimed.insert(p);
                }
            }
            self.claimed = claimed;
        }
    }

    /// Brings processor `p`'s claim in step with its local queue, after a change to it.
    #[inline]
    pub(crate) fn settle_claim(&mut self, p: usize) {
        match self.local.get(p) {
            Some(q) if !q.is_empty() => self.claimed.insert(p),
            Some(_) => self.claimed.remove(p),
            None => {}
        }
    }

    /// Settles the claim of the local queue `id` names seen from `here`, if it names one.
    pub(crate) fn settle_claim_of(&mut self, id: DsqId, here: ProcId) {
        match id {
            DsqId::Local => self.settle_claim(here.index()),
            DsqId::LocalOn(p) => self.settle_claim(p.index()),
            DsqId::Global | DsqId::Custom(_) => {}
        }
    }

    /// Whether every claim matches its local queue (checked in debug builds).
    pub(crate) fn claims_in_step(&self) -> bool {
        self.local
            .iter()
            .enumerate()
            .all(|(p, q)| q.is_empty() != self.claimed.contains(p))
    }

    /// The queue `id` names, seen from processor `here` (`None`: a custom id never created).
    pub fn get_mut(&mut self, id: DsqId, here: ProcId) -> Option<&mut Dsq> {
        match id {
            DsqId::Global => Some(&mut self.global),
            DsqId::Local => self.local.get_mut(here.index()),
            DsqId::LocalOn(p) => self.local.get_mut(p.index()),
            DsqId::Custom(n) => self.custom.get_mut(&n),
        }
    }

    /// The queue `id` names, read-only.
    pub fn get(&self, id: DsqId, here: ProcId) -> Option<&Dsq> {
        match id {
            DsqId::Global => Some(&self.global),
            DsqId::Local => self.local.get(here.index()),
            DsqId::LocalOn(p) => self.local.get(p.index()),
            DsqId::Custom(n) => self.custom.get(&n),
        }
    }

    /// Takes `t` off whichever queue holds it; `true` if one did.
    pub fn remove(&mut self, t: ThreadId) -> bool {
        if self.global.remove(t) {
            return true;
        }
        if let Some(p) = self.local.iter_mut().position(|q| q.remove(t)) {
            self.settle_claim(p);
            return true;
        }
        self.custom.values_mut().any(|q| q.remove(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vtime_queue_pops_smallest_first_ties_in_insertion_order() {
        let mut q = Dsq::default();
        for (t, v) in [(1, 50), (2, 10), (3, 50), (4, 5), (5, 10), (6, 70)] {
            q.push_vtime(ThreadId(t), v);
        }
        assert!(q.remove(ThreadId(3)));
        assert!(!q.remove(ThreadId(3)));
        assert_eq!(q.len(), 5);
        let order: Vec<u32> = std::iter::from_fn(|| q.pop()).map(|t| t.0).collect();
        assert_eq!(order, [4, 2, 5, 1, 6]);
        assert!(q.is_empty());
    }
}
