//! The framework between the engine and a policy: the engine holds a `Policy`, which calls
//! the policy's hooks and does the work every policy would otherwise repeat — the shape asked
//! once, depression parking for the policies that leave it to the framework (Black 1990,
//! section 5.1), the shared-queue shortcut until a thread with a mask is queued, and the
//! collection of the processors a policy kicks (sched_ext's `scx_bpf_kick_cpu`).

use super::depress::Depressed;
use super::{
    Actions, Depression, Enqueue, Handoff, Kick, QuantumEnd, SchedCtx, Scheduler, Shape, Stop,
    Target, Touch,
};
use crate::config::MachineConfig;
use crate::ids::{Cycles, ProcId, ThreadId};
use crate::outcome::{Reply, Request};

/// A policy as the engine drives it: its hooks, its shape, and the framework's own state.
pub(crate) struct Policy {
    inner: Box<dyn Scheduler>,
    /// What the policy declared, asked once.
    pub(crate) shape: Shape,
    /// Depressed ready threads, parked off the policy's queues ([`Depression::Parked`]).
    parked: Depressed,
    /// Whether any thread was queued after some thread had an affinity mask.
    masked: bool,
    /// Processors the policy kicked, for the engine to apply ([`Shape::kicks`]).
    pub(crate) kicks: Vec<Kick>,
}

impl Policy {
    /// Wraps `inner` for a run on `machine`.
    pub(crate) fn new(inner: Box<dyn Scheduler>, machine: &MachineConfig) -> Self {
        let shape = inner.shape(machine);
        Policy {
            inner,
            shape,
            parked: Depressed::default(),
            masked: false,
            kicks: Vec::new(),
        }
    }

    /// Collects the processors the policy kicked since last asked (for a policy whose shape
    /// says it kicks): `true` if some wait in `kicks` for the engine.
    pub(crate) fn collect_kicks(&mut self) -> bool {
        self.inner.take_kicks(&mut self.kicks);
        !self.kicks.is_empty()
    }

    fn parks(&self) -> bool {
        self.shape.depression == Depression::Parked
    }

    /// Lays out the policy's structures ([`Scheduler::layout`]).
    pub(crate) fn layout(&mut self, alloc: &mut dyn FnMut(u64) -> u64) {
        self.inner.layout(alloc);
    }

    /// Whether `pick_next` returning `None` on one idle processor means it would on all.
    pub(crate) fn single_queue(&self) -> bool {
        self.shape.shared_queue && !self.masked
    }

    /// Whether no thread with an affinity mask was ever queued: then `pick_next` returning
    /// `None` on one processor of a [`Target::Within`] range means it would on all of them.
    pub(crate) fn unmasked(&self) -> bool {
        !self.masked
    }

    /// Queues `t` (or parks it, if depressed).
    #[inline]
    pub(crate) fn enqueue(&mut self, t: ThreadId, why: Enqueue, cx: &SchedCtx) -> Target {
        self.masked |= cx.any_masked();
        if self.parks() && self.parked.is_depressed(t, cx.now) {
            self.parked.park(t);
            return Target::Any;
        }
        self.inner.enqueue(t, why, cx)
    }

    /// Gives the policy back the parked threads whose depression has ended.
    fn expire(&mut self, cx: &SchedCtx) {
        if self.parks() && !self.parked.is_empty() {
            for t in self.parked.expire(cx.now) {
                let _ = self.inner.enqueue(t, Enqueue::Woken, cx);
            }
        }
    }

    /// The policy's pick for `p`, else the longest-parked depressed thread allowed there.
    /// With nothing parked (nearly always) it is the policy's pick alone.
    #[inline]
    pub(crate) fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        if self.parked.is_empty() {
            return self.inner.pick_next(p, cx);
        }
        self.pick_with_parked(p, cx)
    }

    /// [`Policy::pick_next`] while some thread is parked: those whose depression has ended go
    /// back to the policy first.
    #[inline(never)]
    fn pick_with_parked(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        self.expire(cx);
        let t = self.inner.pick_next(p, cx);
        if t.is_some() || self.parked.is_empty() {
            return t;
        }
        self.parked.pop_where(|t| cx.allowed(t, p))
    }

    /// [`Scheduler::nothing_waiting`], no thread parked either.
    #[inline]
    pub(crate) fn nothing_waiting(&self) -> bool {
        self.parked.is_empty() && self.inner.nothing_waiting()
    }

    /// [`Scheduler::next_picks`].
    #[inline]
    pub(crate) fn next_picks(&self, p: ProcId, cx: &SchedCtx) -> [Option<ThreadId>; 2] {
        self.inner.next_picks(p, cx)
    }

    /// Takes ready `t` off the queues (the policy's or the parked ones) for a handoff.
    pub(crate) fn dequeue(&mut self, t: ThreadId, cx: &SchedCtx) -> Handoff {
        match self.inner.dequeue(t, cx) {
            Handoff::Refused if self.parks() => Handoff::taken_if(self.parked.remove(t)),
            h => h,
        }
    }

    /// The policy's decision at the end of `t`'s quantum; a depressed runner also yields to a
    /// parked thread.
    pub(crate) fn quantum_expired(&mut self, t: ThreadId, p: ProcId, cx: &SchedCtx) -> QuantumEnd {
        self.expire(cx);
        match self.inner.quantum_expired(t, p, cx) {
            QuantumEnd::Renew
                if self.parks()
                    && !self.parked.is_empty()
                    && self.parked.is_depressed(t, cx.now) =>
            {
                QuantumEnd::Preempt
            }
            end => end,
        }
    }

    /// Depresses `t` until `until` (or cancels, with `None`), as the shape says.
    pub(crate) fn depress(&mut self, t: ThreadId, until: Option<Cycles>, cx: &SchedCtx) {
        match (self.shape.depression, until) {
            (Depression::Ignored, _) => {}
            (Depression::Own, _) => self.inner.depress(t, until, cx),
            (Depression::Parked, Some(u)) => self.parked.set(t, u),
            (Depression::Parked, None) => {
                if self.parked.cancel(t) {
                    let _ = self.inner.enqueue(t, Enqueue::Woken, cx);
                }
            }
        }
    }

    /// Usage accounting ([`Scheduler::charge`]); the engine calls it only when the shape says.
    #[inline]
    pub(crate) fn charge(&mut self, t: ThreadId, cycles: Cycles) {
        self.inner.charge(t, cycles);
    }

    /// [`Scheduler::stopped`].
    pub(crate) fn stopped(&mut self, t: ThreadId, why: Stop, cx: &SchedCtx) {
        self.inner.stopped(t, why, cx);
    }

    /// [`Scheduler::tick`].
    pub(crate) fn tick(&mut self, cx: &SchedCtx, out: &mut Actions) {
        self.inner.tick(cx, out);
    }

    /// [`Scheduler::request`].
    pub(crate) fn request(
        &mut self,
        t: ThreadId,
        req: &Request,
        cx: &SchedCtx,
        out: &mut Actions,
    ) -> (Reply, Cycles) {
        self.inner.request(t, req, cx, out)
    }

    /// [`Scheduler::preempt_for`].
    pub(crate) fn preempt_for(&mut self, t: ThreadId, cx: &SchedCtx) -> Option<ProcId> {
        self.inner.preempt_for(t, cx)
    }

    /// [`Scheduler::dispatch_touches`].
    pub(crate) fn dispatch_touches(&self, p: ProcId, cx: &SchedCtx, out: &mut Vec<Touch>) {
        self.inner.dispatch_touches(p, cx, out);
    }
}
