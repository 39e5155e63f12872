//! The adapter from sched_ext operations ([`ScxOps`]) to the engine's hook table: which hook
//! runs which operation (the table in [`super`]), the kernel's own steps around them (a
//! processor takes its local queue first, then the global queue, then asks `dispatch`; a slice
//! that ends with nothing else to run is refilled, as without `SCX_OPS_ENQ_LAST`), and the
//! kicks handed to the engine.

use super::dsq::Dsqs;
use super::kfuncs::{weight_of, Kfuncs, ScxTask};
use super::ScxOps;
use crate::config::MachineConfig;
use crate::ids::{Cycles, ProcId, ThreadId};
use crate::sched::{
    Actions, Enqueue, Handoff, Kick, QuantumEnd, SchedCtx, Scheduler, Shape, Stop, Target,
};

/// A sched_ext-style policy as the engine sees it: the operations and the kernel's state
/// around them (dispatch queues, per-task fields, kicks).
pub struct Scx<O: ScxOps> {
    ops: O,
    dsqs: Dsqs,
    tasks: Vec<ScxTask>,
    kicks: Vec<Kick>,
    slice: Option<Cycles>,
    ready: bool,
}

impl<O: ScxOps> Scx<O> {
    /// The policy whose operations are `ops`.
    pub fn new(ops: O) -> Self {
        Scx {
            ops,
            dsqs: Dsqs::default(),
            tasks: Vec::new(),
            kicks: Vec::new(),
            slice: None,
            ready: false,
        }
    }

    /// Sizes the queues and task fields, and runs `init` once; at once when that is done.
    #[inline]
    fn prepare(&mut self, cx: &SchedCtx) {
        debug_assert!(
            self.kicks.is_empty() || self.ops.kicks(),
            "a sched_ext policy whose `kicks` is false kicked a processor"
        );
        if self.ready && self.tasks.len() >= cx.thread_count() {
            return;
        }
        self.prepare_slow(cx);
    }

    /// [`Self::prepare`]'s work: the first call, and after threads were created.
    #[cold]
    fn prepare_slow(&mut self, cx: &SchedCtx) {
        self.dsqs.size(cx.machine.processors as usize);
        if self.tasks.len() < cx.thread_count() {
            self.tasks.resize(cx.thread_count(), ScxTask::default());
        }
        if !self.ready {
            self.ready = true;
            self.slice = self.ops.slice(&cx.machine);
            let (ops, mut k) = self.split(cx, ProcId(0));
            ops.init(&mut k);
        }
    }

    /// The operations and the kfuncs bound to processor `cpu`.
    fn split<'a>(&'a mut self, cx: &'a SchedCtx, cpu: ProcId) -> (&'a mut O, Kfuncs<'a>) {
        let k = Kfuncs {
            cx,
            dsqs: &mut self.dsqs,
            tasks: &mut self.tasks,
            kicks: &mut self.kicks,
            cpu,
            slice: self.slice,
            direct: None,
        };
        (&mut self.ops, k)
    }

    /// Where `t` last ran (processor 0 for a thread that never ran).
    fn prev(t: ThreadId, cx: &SchedCtx) -> ProcId {
        cx.thread(t).last_proc.unwrap_or(ProcId(0))
    }

    /// A new or woken thread: `select_cpu`, then `enqueue` unless it dispatched directly.
    fn wake(&mut self, t: ThreadId, why: Enqueue, cx: &SchedCtx) -> Target {
        let prev = Self::prev(t, cx);
        let (ops, mut k) = self.split(cx, prev);
        k.direct = Some(None);
        let cpu = ops.select_cpu(t, prev, &mut k);
        let cpu = if cpu.index() < k.nr_cpus() { cpu } else { prev };
        let direct = k.direct.take().flatten();
        k.cpu = cpu;
        match direct {
            Some(d) if cx.allowed(d, cpu) => {
                k.dsqs.local[cpu.index()].push(d);
                k.dsqs.settle_claim(cpu.index());
            }
            Some(d) => k.dsqs.global.push(d),
            None => ops.enqueue(t, why, &mut k),
        }
        if cx.allowed(t, cpu) {
            self.target(cpu)
        } else {
            Target::Any
        }
    }

    /// Where a thread queued on `cpu`'s behalf is offered: a policy that kicks wakes idle CPUs
    /// itself, so only `cpu` is asked, as a sched_ext wake-up reschedules its target CPU alone;
    /// for one that does not, `cpu` first and then every idle processor.
    fn target(&self, cpu: ProcId) -> Target {
        if self.ops.kicks() {
            Target::only(cpu)
        } else {
            Target::Processor(cpu)
        }
    }

    /// The next thread for `p` from its local queue, else the global queue.
    fn take(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        let local = &mut self.dsqs.local[p.index()];
        if !local.is_empty() {
            if let Some(t) = local.pop_for(p, cx) {
                self.dsqs.settle_claim(p.index());
                return Some(t);
            }
        }
        self.dsqs.global.pop_for(p, cx)
    }

    /// Whether `p` has work waiting in its local queue or the global one.
    fn has_work(&self, p: ProcId, cx: &SchedCtx) -> bool {
        self.dsqs.local[p.index()].has_for(p, cx) || self.dsqs.global.has_for(p, cx)
    }

    /// `t` starts on `p`: its slice begins and `running` is told.
    fn start(&mut self, t: ThreadId, p: ProcId, cx: &SchedCtx) {
        self.tasks[t.index()].started = cx.now;
        let (ops, mut k) = self.split(cx, p);
        ops.running(t, &mut k);
    }
}

impl<O: ScxOps> Scheduler for Scx<O> {
    fn shape(&self, machine: &MachineConfig) -> Shape {
        let dfl = machine.ms(super::SCX_SLICE_DFL_MS).max(1);
        let shape = match self.ops.slice(machine) {
            Some(s) => Shape::new(machine).slice(Some(s)),
            None => Shape::new(machine).unsliced(dfl),
        };
        let shape = if self.ops.shared_queues() {
            shape.shared_queue()
        } else {
            shape
        };
        let shape = shape.tick(self.ops.timer_interval(machine).map(|c| c.max(1)));
        if self.ops.kicks() {
            shape.kicking().quiet_exits()
        } else {
            shape
        }
    }

    fn enqueue(&mut self, t: ThreadId, why: Enqueue, cx: &SchedCtx) -> Target {
        self.prepare(cx);
        let prev = Self::prev(t, cx);
        match why {
            Enqueue::New => {
                self.tasks[t.index()].weight = weight_of(cx.base_priority(t));
                let (ops, mut k) = self.split(cx, prev);
                ops.enable(t, &mut k);
                self.wake(t, why, cx)
            }
            Enqueue::Woken => self.wake(t, why, cx),
            Enqueue::Preempted | Enqueue::Yielded => {
                let (ops, mut k) = self.split(cx, prev);
                ops.stopping(t, true, &mut k);
                ops.enqueue(t, why, &mut k);
                self.target(prev)
            }
        }
    }

    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        self.prepare(cx);
        let t = match self.take(p, cx) {
            Some(t) => t,
            None => {
                let (ops, mut k) = self.split(cx, p);
                ops.dispatch(None, &mut k);
                self.take(p, cx)?
            }
        };
        self.start(t, p, cx);
        Some(t)
    }

    fn dequeue(&mut self, t: ThreadId, cx: &SchedCtx) -> Handoff {
        self.prepare(cx);
        if !self.dsqs.remove(t) {
            let (ops, mut k) = self.split(cx, Self::prev(t, cx));
            if !ops.dequeue(t, &mut k) {
                return Handoff::Refused;
            }
        }
        // The engine runs it on the processor handing off, which is not known here: its last.
        self.start(t, Self::prev(t, cx), cx);
        Handoff::Taken
    }

    fn quantum_expired(&mut self, t: ThreadId, p: ProcId, cx: &SchedCtx) -> QuantumEnd {
        if !self.has_work(p, cx) {
            let (ops, mut k) = self.split(cx, p);
            ops.dispatch(Some(t), &mut k);
        }
        if self.has_work(p, cx) {
            return QuantumEnd::Preempt;
        }
        // Nothing else to run: the kernel keeps `t` with its slice refilled.
        self.tasks[t.index()].started = cx.now;
        QuantumEnd::Renew
    }

    fn stopped(&mut self, t: ThreadId, _why: Stop, cx: &SchedCtx) {
        self.prepare(cx);
        let (ops, mut k) = self.split(cx, Self::prev(t, cx));
        ops.stopping(t, false, &mut k);
    }

    fn tick(&mut self, cx: &SchedCtx, _out: &mut Actions) {
        self.prepare(cx);
        let (ops, mut k) = self.split(cx, ProcId(0));
        ops.timer(&mut k);
    }

    fn take_kicks(&mut self, out: &mut Vec<Kick>) {
        if self.kicks.is_empty() {
            return;
        }
        out.append(&mut self.kicks);
    }
}
