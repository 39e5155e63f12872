//! A registered policy wrapped for a test: every call of the scheduling-class interface is
//! forwarded to it, with a look at each pick and at each next-pick hint on the way.

use smpsched_sim::outcome::{Reply, Request};
use smpsched_sim::sched::{
    Actions, Enqueue, Handoff, Kick, QuantumEnd, SchedCtx, Scheduler, Shape, Stop, Target, Touch,
};
use smpsched_sim::{Cycles, MachineConfig, ProcId, ThreadId};

/// What a hint look sees and returns: the processor and the policy's hints.
pub type HintLook = dyn Fn(ProcId, [Option<ThreadId>; 2]) -> [Option<ThreadId>; 2];

/// `inner` with its picks and hints shown to the test.
pub struct Wrapped {
    pub inner: Box<dyn Scheduler>,
    /// Sees each pick: the processor and the thread picked, if any.
    pub on_pick: Box<dyn FnMut(ProcId, Option<ThreadId>)>,
    /// Sees each next-pick hint and returns what the engine is told.
    pub on_hints: Box<HintLook>,
}

impl Wrapped {
    /// `inner`, its picks and hints passed through unseen.
    pub fn new(inner: Box<dyn Scheduler>) -> Self {
        Wrapped {
            inner,
            on_pick: Box::new(|_, _| {}),
            on_hints: Box::new(|_, hints| hints),
        }
    }
}

impl Scheduler for Wrapped {
    fn enqueue(&mut self, t: ThreadId, why: Enqueue, cx: &SchedCtx) -> Target {
        self.inner.enqueue(t, why, cx)
    }
    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        let t = self.inner.pick_next(p, cx);
        (self.on_pick)(p, t);
        t
    }
    fn dequeue(&mut self, t: ThreadId, cx: &SchedCtx) -> Handoff {
        self.inner.dequeue(t, cx)
    }
    fn shape(&self, machine: &MachineConfig) -> Shape {
        self.inner.shape(machine)
    }
    fn quantum_expired(&mut self, t: ThreadId, p: ProcId, cx: &SchedCtx) -> QuantumEnd {
        self.inner.quantum_expired(t, p, cx)
    }
    fn charge(&mut self, t: ThreadId, cycles: Cycles) {
        self.inner.charge(t, cycles)
    }
    fn stopped(&mut self, t: ThreadId, why: Stop, cx: &SchedCtx) {
        self.inner.stopped(t, why, cx)
    }
    fn tick(&mut self, cx: &SchedCtx, out: &mut Actions) {
        self.inner.tick(cx, out)
    }
    fn request(
        &mut self,
        t: ThreadId,
        req: &Request,
        cx: &SchedCtx,
        out: &mut Actions,
    ) -> (Reply, Cycles) {
        self.inner.request(t, req, cx, out)
    }
    fn preempt_for(&mut self, t: ThreadId, cx: &SchedCtx) -> Option<ProcId> {
        self.inner.preempt_for(t, cx)
    }
    fn depress(&mut self, t: ThreadId, until: Option<Cycles>, cx: &SchedCtx) {
        self.inner.depress(t, until, cx)
    }
    fn layout(&mut self, alloc: &mut dyn FnMut(u64) -> u64) {
        self.inner.layout(alloc)
    }
    fn dispatch_touches(&self, p: ProcId, cx: &SchedCtx, out: &mut Vec<Touch>) {
        self.inner.dispatch_touches(p, cx, out)
    }
    fn take_kicks(&mut self, out: &mut Vec<Kick>) {
        self.inner.take_kicks(out)
    }
    fn nothing_waiting(&self) -> bool {
        self.inner.nothing_waiting()
    }
    fn next_picks(&self, p: ProcId, cx: &SchedCtx) -> [Option<ThreadId>; 2] {
        (self.on_hints)(p, self.inner.next_picks(p, cx))
    }
}
