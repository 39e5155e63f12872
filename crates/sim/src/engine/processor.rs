//! Processors, dispatch and preemption: which thread a processor runs and how it changes. Every
//! thread a processor starts comes from a dispatch here: a named handoff target, else the
//! policy's `pick_next`; a thread leaves by exiting, sleeping, blocking or being preempted, and
//! becomes ready again through [`Simulation::make_ready`]. How the processor's time is charged
//! meanwhile is `segment`'s.
//!
//! Invariants: `running[p]` and `procs[p].thread` agree; the idle bitmap holds exactly the idle
//! processors.

use super::segment::{Seg, Step};
use super::{EventKind, SimError, Simulation, MAX_ZERO_TIME_STEPS};
use crate::ids::{Cycles, ProcId, ThreadId};
use crate::memory::{AccessKind, AtomicKind};
use crate::metrics::{Category, TimeSplit};
use crate::sched::{Enqueue, Handoff, Stop, ThreadState, Touch};
use crate::trace::Mark;

/// A processor: its thread, its current segment and what it has spent.
pub(super) struct Proc {
    pub(super) thread: Option<ThreadId>,
    /// The thread whose application is charged for the current segment.
    pub(super) charge_to: Option<ThreadId>,
    /// Set while the kernel finishes with a thread that left (a departure charge).
    pub(super) departing: Option<Departure>,
    pub(super) seg: Seg,
    pub(super) seg_start: Cycles,
    /// When the current segment's end event was scheduled.
    pub(super) pushed: Cycles,
    pub(super) quantum_end: Cycles,
    pub(super) epoch: u32,
    pub(super) time: TimeSplit,
    pub(super) need_resched: bool,
    /// Threads dispatched here so far.
    pub(super) dispatches: u32,
}

impl Proc {
    /// A processor with nothing to run, at the start of a run.
    pub(super) fn idle() -> Self {
        Proc {
            thread: None,
            charge_to: None,
            departing: None,
            seg: Seg::Idle,
            seg_start: 0,
            pushed: 0,
            quantum_end: Cycles::MAX,
            epoch: 0,
            time: TimeSplit::default(),
            need_resched: false,
            dispatches: 0,
        }
    }
}

/// What a processor does once the kernel work for a departed thread is charged.
#[derive(Clone, Copy, Debug)]
pub(super) struct Departure {
    pub(super) prev: ThreadId,
    pub(super) handoff: Option<ThreadId>,
}

/// What happened when a processor asked for a thread.
pub(super) enum Dispatch {
    /// It went idle.
    Idle,
    /// A thread starts after a charged overhead (an event is scheduled).
    Overhead,
    /// A thread starts at once.
    Immediate,
}

impl Simulation {
    pub(super) fn set_idle(&mut self, p: usize) {
        if let Some(tr) = self.trace.as_deref_mut() {
            tr.depart(ProcId(p as u32), self.cx.now);
        }
        let proc = &mut self.procs[p];
        proc.thread = None;
        proc.charge_to = None;
        proc.departing = None;
        proc.seg = Seg::Idle;
        proc.seg_start = self.cx.now;
        proc.epoch = proc.epoch.wrapping_add(1);
        proc.quantum_end = Cycles::MAX;
        proc.need_resched = false;
        self.cx.set_running(p, None);
        self.idle.insert(p);
    }

    /// Gives processor `p`, which was running `prev` (or nothing), its next thread: `handoff` if
    /// that thread can be taken, else the policy's choice.
    pub(super) fn dispatch(
        &mut self,
        p: usize,
        prev: Option<ThreadId>,
        handoff: Option<ThreadId>,
    ) -> Dispatch {
        if let Some(h) = handoff {
            let hi = h.index();
            let taken = match self.cx.threads[hi].info.state {
                ThreadState::Ready => self.sched.dequeue(h, &self.cx) == Handoff::Taken,
                // A blocked receiver handed a message (Black, Table 3): woken by the handoff.
                ThreadState::Blocked => {
                    self.cx.threads[hi].exec.epoch = self.cx.threads[hi].exec.epoch.wrapping_add(1);
                    true
                }
                _ => false,
            };
            if taken {
                let kernel = self.cx.machine.kernel.handoff;
                return self.start_thread(p, h, prev, kernel, true);
            }
        }
        let Some(t) = self.sched.pick_next(ProcId(p as u32), &self.cx) else {
            self.set_idle(p);
            if self.policy_touches {
                // A look that found nothing still took the locks it took (a pull scan).
                let cost = self.charge_touches(p, None, 0);
                if cost > 0 {
                    self.start_seg(p, Seg::fixed(&[(Category::Kernel, cost)]), self.after(cost));
                }
            }
            return Dispatch::Idle;
        };
        self.fetch_next_picks(p);
        let kernel = self.cx.machine.sched_op_cycles;
        if !self.policy_touches {
            return self.start_thread(p, t, prev, kernel, false);
        }
        let kernel = self.charge_touches(p, Some(t), kernel);
        self.start_thread(p, t, prev, kernel, false)
    }

    /// Makes the references the policy's last pick on `p` made to its own structures (run-queue
    /// locks), after `kernel` cycles of kernel work, through the memory model; returns `kernel`
    /// plus their cycles. `t` is the thread picked, if any (named in a fault).
    fn charge_touches(&mut self, p: usize, t: Option<ThreadId>, mut kernel: Cycles) -> Cycles {
        let pid = ProcId(p as u32);
        let mut touches = std::mem::take(&mut self.touches);
        touches.clear();
        self.sched.dispatch_touches(pid, &self.cx, &mut touches);
        let mut holding = false;
        for &touch in &touches {
            let at = self.after(kernel);
            let c = match touch {
                Touch::Read(a) | Touch::Write(a) | Touch::Atomic(a)
                    if !self.memory.is_allocated(a) =>
                {
                    self.fault.get_or_insert(SimError::BadAddress {
                        thread: t.unwrap_or(ThreadId(0)),
                        addr: a,
                    });
                    self.next_check = 0;
                    continue;
                }
                Touch::Read(a) => self.memory.access(pid, at, a, AccessKind::Read),
                Touch::Write(a) => self.memory.access(pid, at, a, AccessKind::Write),
                Touch::Atomic(a) => self.memory.atomic(pid, at, a, AtomicKind::TestAndSet),
            };
            kernel = kernel.saturating_add(c.total());
            self.kernel_mem += c;
            // Lock accounting: an atomic acquires, the references after it are made holding
            // the lock, a write releases it.
            let lock = &mut self.runq_lock;
            match touch {
                Touch::Atomic(_) => {
                    lock.acquires += 1;
                    lock.wait_cycles += c.stall;
                    holding = true;
                }
                Touch::Read(_) if holding => lock.hold_cycles += c.total(),
                Touch::Write(_) if holding => {
                    lock.hold_cycles += c.total();
                    holding = false;
                }
                Touch::Read(_) | Touch::Write(_) => {}
            }
        }
        self.touches = touches;
        kernel
    }

    /// Starts thread `t` on processor `p` after `kernel` cycles of kernel work and, if `t` is not
    /// `prev`, a context switch. A handed-off thread keeps the rest of the current slice.
    pub(super) fn start_thread(
        &mut self,
        p: usize,
        t: ThreadId,
        prev: Option<ThreadId>,
        kernel: Cycles,
        rest_of_slice: bool,
    ) -> Dispatch {
        debug_assert_ne!(
            self.cx.threads[t.index()].info.state,
            ThreadState::Exited,
            "dispatching exited {t}"
        );
        self.idle.remove(p);
        let switched = prev != Some(t);
        let measured = self.count_dispatch(p, t, switched);
        let switch = if switched {
            self.cx.machine.context_switch_cycles
        } else {
            0
        };
        self.cx.set_running(p, Some(t));
        let quantum = self.sched.shape.slice;
        let overhead = kernel.saturating_add(switch);
        let started = self.after(overhead);
        if measured {
            self.note_ran(t.index(), started);
        }
        let fresh = match quantum {
            Some(q) => started.saturating_add(q.max(1)),
            None => Cycles::MAX,
        };
        let proc = &mut self.procs[p];
        proc.thread = Some(t);
        proc.charge_to = Some(t);
        proc.departing = None;
        proc.need_resched = false;
        if !(rest_of_slice && proc.quantum_end > started) {
            proc.quantum_end = fresh;
        }
        if overhead > 0 {
            self.start_seg(
                p,
                Seg::fixed(&[(Category::Kernel, kernel), (Category::Switch, switch)]),
                self.after(overhead),
            );
            Dispatch::Overhead
        } else {
            let proc = &mut self.procs[p];
            proc.seg = Seg::Compute;
            proc.seg_start = self.cx.now;
            proc.epoch = proc.epoch.wrapping_add(1);
            Dispatch::Immediate
        }
    }

    /// Marks thread `t` running on `p` and counts the dispatch: the trace's marks, where it ran
    /// last (same processor, with the dispatches between, or a migration; Gupta 1991's affinity
    /// measures), its first run, a context switch when `switched`, and a fault when its mask
    /// forbids `p`. True when its application keeps per-thread measures.
    #[inline(always)]
    fn count_dispatch(&mut self, p: usize, t: ThreadId, switched: bool) -> bool {
        let ti = t.index();
        let pid = ProcId(p as u32);
        let info = &mut self.cx.threads[ti].info;
        info.state = ThreadState::Running(pid);
        let app = &mut self.apps[info.task.index()];
        if let Some(tr) = self.trace.as_deref_mut() {
            if let Some(from) = info.last_proc.filter(|&l| l != pid) {
                tr.mark(self.cx.now, t, Some(pid), Mark::Migrated { from });
            }
            tr.dispatch(pid, t, info.task, self.cx.now);
        }
        let dispatches = self.procs[p].dispatches.wrapping_add(1);
        self.procs[p].dispatches = dispatches;
        if let Some(last) = info.last_proc {
            app.redispatches += 1;
            if last == pid {
                app.same_proc += 1;
                let between = dispatches.wrapping_sub(info.last_dispatch).wrapping_sub(1);
                app.intervening.add(u64::from(between));
            } else {
                app.migrations += 1;
            }
        }
        info.last_dispatch = dispatches;
        if info.last_proc.is_none() {
            self.cx.cold[ti].first_run = self.cx.now;
        }
        info.last_proc = Some(pid);
        if switched {
            app.switches += 1;
        }
        if info.masked
            && self.cx.cold[ti]
                .mask
                .as_ref()
                .is_some_and(|m| !m.allows(pid))
            && self.fault.is_none()
        {
            self.fault = Some(SimError::MaskViolated {
                thread: t,
                processor: pid,
            });
            self.next_check = 0;
        }
        app.per_thread
    }

    /// Runs processor `p` from the end of its last segment until it starts a new one.
    pub(super) fn advance(&mut self, p: usize) -> Result<(), SimError> {
        let mut steps = 0u32;
        loop {
            steps += 1;
            if let Some(dep) = self.procs[p].departing.take() {
                let prev = dep.prev.index();
                if self.cx.threads[prev].info.state == ThreadState::Exited
                    && self.cx.cold[prev].exited == Cycles::MAX
                {
                    // The kernel's work of an exit is done: the thread has now exited.
                    self.finish_exit(dep.prev);
                }
                match self.dispatch(p, Some(dep.prev), dep.handoff) {
                    Dispatch::Idle | Dispatch::Overhead => return Ok(()),
                    Dispatch::Immediate => continue,
                }
            }
            let Some(t) = self.procs[p].thread else {
                // An idle processor's segment never ends by itself; one that ends is the kernel
                // work of a look that found nothing, after which the processor is idle.
                self.procs[p].seg = Seg::Idle;
                return Ok(());
            };
            if steps > MAX_ZERO_TIME_STEPS {
                return Err(SimError::NoProgress(t));
            }
            match self.step_thread(p, t)? {
                Step::Busy => return Ok(()),
                Step::Left {
                    prev,
                    cost,
                    handoff,
                } => {
                    if cost > 0 {
                        let proc = &mut self.procs[p];
                        proc.departing = Some(Departure { prev, handoff });
                        proc.charge_to = Some(prev);
                        self.start_seg(
                            p,
                            Seg::fixed(&[(Category::Kernel, cost)]),
                            self.after(cost),
                        );
                        return Ok(());
                    }
                    match self.dispatch(p, Some(prev), handoff) {
                        Dispatch::Idle | Dispatch::Overhead => return Ok(()),
                        Dispatch::Immediate => continue,
                    }
                }
            }
        }
    }

    /// A measured thread runs from `at` ([`crate::per_thread`]); out of the dispatch path.
    #[cold]
    #[inline(never)]
    fn note_ran(&mut self, ti: usize, at: Cycles) {
        if let Some(l) = self.cx.cold[ti].ledger.as_deref_mut() {
            l.ran(at);
        }
    }

    /// Takes `t` off processor `p` (the caller decides where it goes).
    pub(super) fn leave(&mut self, p: usize, t: ThreadId) {
        debug_assert_eq!(self.procs[p].thread, Some(t));
        if self.measured {
            if let Some(l) = self.cx.cold[t.index()].ledger.as_deref_mut() {
                l.left();
            }
        }
        self.procs[p].thread = None;
        self.cx.set_running(p, None);
        if let Some(w) = self.wait_of(t.index()) {
            self.sync[w.obj.0 as usize].remove_spinner(t);
        }
    }

    pub(super) fn sleep(&mut self, p: usize, t: ThreadId, n: Cycles) {
        self.block(p, t);
        let epoch = self.cx.threads[t.index()].exec.epoch;
        self.push(self.after(n), EventKind::Wake { t: t.0, epoch });
    }

    pub(super) fn block(&mut self, p: usize, t: ThreadId) {
        if let Some(tr) = self.trace.as_deref_mut() {
            tr.mark(self.cx.now, t, Some(ProcId(p as u32)), Mark::Blocked);
        }
        self.leave(p, t);
        let ti = t.index();
        self.cx.threads[ti].info.state = ThreadState::Blocked;
        self.cx.threads[ti].exec.epoch = self.cx.threads[ti].exec.epoch.wrapping_add(1);
        self.sched.stopped(t, Stop::Blocked, &self.cx);
    }

    pub(super) fn preempt(&mut self, p: usize, t: ThreadId) {
        if let Some(tr) = self.trace.as_deref_mut() {
            tr.mark(self.cx.now, t, Some(ProcId(p as u32)), Mark::Preempted);
        }
        if self.measured {
            if let Some(l) = self.cx.cold[t.index()].ledger.as_deref_mut() {
                l.preempted(self.cx.now);
            }
        }
        self.leave(p, t);
        self.make_ready(t, Enqueue::Preempted);
    }

    pub(super) fn make_ready(&mut self, t: ThreadId, why: Enqueue) {
        self.cx.threads[t.index()].info.state = ThreadState::Ready;
        if why == Enqueue::Woken {
            if self.measured {
                if let Some(l) = self.cx.cold[t.index()].ledger.as_deref_mut() {
                    l.woken_at = Some(self.cx.now);
                }
            }
            if let Some(tr) = self.trace.as_deref_mut() {
                tr.mark(self.cx.now, t, None, Mark::Woken);
            }
        }
        if self.idle_handoff && matches!(why, Enqueue::Woken | Enqueue::New) {
            if let Some(p) = self.next_idle(0) {
                // Black 3.1: the idle processor picks the thread up without a run-queue search.
                self.settle(p);
                self.cx.threads[t.index()].exec.epoch =
                    self.cx.threads[t.index()].exec.epoch.wrapping_add(1);
                if let Dispatch::Immediate = self.start_thread(p, t, None, 0, false) {
                    self.start_seg(p, Seg::fixed(&[]), self.cx.now);
                }
                return;
            }
        }
        let target = self.sched.enqueue(t, why, &self.cx);
        self.place(target);
        if why == Enqueue::Woken {
            self.preempt_for_ready(t);
        }
    }

    /// A thread woken or created (an arrival, a spawn) with no idle processor to take it may
    /// preempt a running one, if the policy says so.
    pub(super) fn preempt_for_ready(&mut self, t: ThreadId) {
        if self.no_idle_processor() {
            if let Some(p) = self.sched.preempt_for(t, &self.cx) {
                self.interrupt(p.index());
            }
        }
    }
}
