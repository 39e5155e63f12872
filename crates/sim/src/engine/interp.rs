//! The operation interpreter: a thread current on a processor runs its program's operations
//! ([`Op`]) until one takes time (a segment starts) or the thread leaves the processor. Each
//! operation's effect is applied here; the decisions (which thread next, who is woken) belong to
//! the policy and to `sync`.
//!
//! Invariants: the program is asked for its next operation only when the previous one is done
//! (no compute left, no memory walk, no wait under way); the quantum is checked only while work
//! is under way; a thread may perform at most `MAX_ZERO_TIME_STEPS` operations at one instant.

use super::segment::{Seg, Step};
use super::{SimError, Simulation, MAX_ZERO_TIME_STEPS};
use crate::ids::{Cycles, ProcId, ThreadId};
use crate::memory::{AccessKind, BulkAccess, Placement};
use crate::metrics::Category;
use crate::outcome::Outcome;
use crate::program::{Hint, Op, Spawner, ThreadCtx};
use crate::sched::{Enqueue, QuantumEnd, Stop, ThreadState};
use crate::sync::{SyncId, SyncKind};
use crate::thread::{ThreadAttrs, ThreadSlot, Waiting};

impl Simulation {
    /// Lets thread `t`, current on `p`, run its operations until it starts a segment or leaves.
    pub(super) fn step_thread(&mut self, p: usize, t: ThreadId) -> Result<Step, SimError> {
        let pid = ProcId(p as u32);
        let ti = t.index();
        let mut zero = 0u32;
        loop {
            if self.procs[p].need_resched {
                self.procs[p].need_resched = false;
                self.preempt(p, t);
                return Ok(left(t, 0, None));
            }
            // The quantum is checked only while the thread has work under way (computing,
            // walking memory, waiting): a thread whose work ended exactly at the quantum's end
            // first asks its program for the next operation, so one that exits or blocks then
            // leaves at once instead of being requeued with nothing to do. An
            // operation that takes time waits for the next quantum; an atomic or a
            // synchronization access begun at the boundary completes first, as an instruction
            // in flight would.
            if self.cx.now >= self.procs[p].quantum_end && self.cx.threads[ti].under_way() {
                if let Some(step) = self.quantum_ends(p, t) {
                    return Ok(step);
                }
            }
            if let Some(w) = self.wait_of(ti) {
                match self.wait_step(p, t, w)? {
                    None => {}
                    Some(step) => return Ok(step),
                }
                continue;
            }
            let rem = self.cx.threads[ti].exec.remaining;
            if rem > 0 {
                // Never `Cycles::MAX` (a segment without an end): a saturated end is past every bound.
                let end = self
                    .after(rem)
                    .min(self.procs[p].quantum_end)
                    .min(Cycles::MAX - 1);
                self.start_seg(p, Seg::Compute, end);
                return Ok(Step::Busy);
            }
            if let Some(acc) = self.cx.threads[ti]
                .info
                .walking
                .then(|| self.cx.cold[ti].mem.as_deref_mut())
                .flatten()
            {
                // One chunk, ending no later than the quantum (at least one element is made).
                let budget = (self.procs[p].quantum_end.saturating_sub(self.cx.now))
                    .min(self.cx.machine.memory.chunk_cycles)
                    .max(1);
                let charge = self.memory.run(pid, self.cx.now, acc, budget);
                if charge.done {
                    self.set_mem(ti, None);
                }
                if charge.total() > 0 {
                    return Ok(self.start_mem(p, t, charge));
                }
                continue;
            }
            zero += 1;
            if zero > MAX_ZERO_TIME_STEPS {
                return Err(SimError::NoProgress(t));
            }
            if self.cx.threads[ti].exec.polling {
                if let Some(step) = self.poll_step(p, t) {
                    return Ok(step);
                }
                continue;
            }
            match self.next_op(pid, t) {
                Op::Compute(n) => self.cx.threads[ti].exec.remaining = n,
                op => {
                    if let Some(step) = self.operate(p, t, op)? {
                        return Ok(step);
                    }
                }
            }
        }
    }

    /// Thread `t`'s quantum on `p` ended with work under way: the policy preempts it (it
    /// leaves after the timer interrupt's handler) or grants a fresh quantum, charging the
    /// handler as a kernel segment. `None` when the thread goes on at once.
    #[inline]
    fn quantum_ends(&mut self, p: usize, t: ThreadId) -> Option<Step> {
        // The timer interrupt that ends the quantum costs the kernel its handler.
        let timer = self.cx.machine.kernel.timer;
        if self.sched.quantum_expired(t, ProcId(p as u32), &self.cx) == QuantumEnd::Preempt {
            self.preempt(p, t);
            return Some(left(t, timer, None));
        }
        let q = self.sched.shape.slice;
        self.procs[p].quantum_end = q.map_or(Cycles::MAX, |q| self.after(q.max(1)));
        if timer == 0 {
            return None;
        }
        let seg = Seg::fixed(&[(Category::Kernel, timer)]);
        self.start_seg(p, seg, self.after(timer));
        Some(Step::Busy)
    }

    /// Starts (`Some`) or ends (`None`) thread `ti`'s bulk memory access.
    #[inline]
    pub(super) fn set_mem(&mut self, ti: usize, m: Option<Box<crate::memory::BulkAccess>>) {
        self.cx.threads[ti].info.walking = m.is_some();
        self.cx.cold[ti].mem = m;
    }

    /// Asks thread `t`'s program, current on processor `pid`, for its next operation, handing
    /// it the outcome of its last one and any notice to its application it has not seen.
    #[inline]
    fn next_op(&mut self, pid: ProcId, t: ThreadId) -> Op {
        let ti = t.index();
        let ThreadSlot { info, exec } = &mut self.cx.threads[ti];
        let notice = if self.notices_sent {
            let (generation, latest) = self.notices[info.task.index()];
            let cold = &mut self.cx.cold[ti];
            let fresh = generation != cold.notices_seen;
            cold.notices_seen = generation;
            latest.filter(|_| fresh)
        } else {
            None
        };
        // The outcome is lent where it lies rather than moved into the context: moved, it was
        // written in pieces of 4, 16 and 4 bytes and read back at once by the program's `take`
        // in pieces of 16 and 8, loads that a store buffer cannot forward (`perf` put a fifth of
        // a DiBella client's samples just after them; docs/performance.md).
        let outcome = if info.has_outcome {
            info.has_outcome = false;
            &mut self.cx.cold[ti].outcome
        } else {
            &mut self.no_outcome
        };
        let mut ctx = ThreadCtx {
            thread: t,
            task: info.task,
            rank: info.rank,
            processor: pid,
            now: self.cx.now,
            rng: &mut self.rngs[ti],
            outcome,
            notice,
        };
        exec.program.next(&mut ctx)
    }

    /// Applies operation `op` of thread `t`, current on `p` (every operation but a compute,
    /// which the hot loop applies itself): the step it ends with, or `None` when the thread
    /// goes on to its next operation at once. Kept out of line so that the interpreter's loop
    /// stays small; each operation that does more than a line of work has its own method.
    #[inline(never)]
    fn operate(&mut self, p: usize, t: ThreadId, op: Op) -> Result<Option<Step>, SimError> {
        let pid = ProcId(p as u32);
        let ti = t.index();
        match op {
            Op::Compute(n) => self.cx.threads[ti].exec.remaining = n,
            Op::Mem(acc) => {
                if !acc.is_done() {
                    self.check_address(t, acc.base)?;
                    self.check_address(t, acc.base.saturating_add(acc.len - 1))?;
                    self.set_mem(ti, Some(Box::new(acc)));
                }
            }
            Op::Atomic { addr, kind } => {
                self.check_address(t, addr)?;
                let charge = self.memory.atomic(pid, self.cx.now, addr, kind);
                return Ok(Some(self.start_word(p, t, charge)));
            }
            Op::Word { addr, op } => {
                self.check_address(t, addr)?;
                let charge = self.word(p, t, addr, op);
                return Ok(Some(self.start_word(p, t, charge)));
            }
            Op::Poll {
                addr,
                pause,
                pauses,
            } => {
                self.check_address(t, addr)?;
                self.start_poll(ti, addr, pause, pauses);
            }
            Op::Spawn(spawner) => return self.spawn_op(p, t, &spawner),
            Op::Record { name, value } => {
                let task = self.cx.threads[ti].info.task.index();
                self.apps[task].recorded.entry(name).or_default().add(value);
            }
            Op::Kernel(req) => return Ok(self.kernel_request(p, t, req)),
            Op::Sleep(n) => {
                self.sleep(p, t, n);
                return Ok(Some(left(t, 0, None)));
            }
            Op::Yield => return Ok(self.hint_op(p, t, Hint::Mild)),
            Op::Hint(hint) => return Ok(self.hint_op(p, t, hint)),
            Op::Wait(obj) => {
                self.check_sync(t, obj)?;
                self.set_wait(
                    ti,
                    Some(Waiting {
                        obj,
                        arrived: None,
                        since: None,
                        contended: false,
                    }),
                );
            }
            Op::Signal(obj) => return self.signal_op(p, t, obj),
            Op::Clear(obj) => {
                self.check_sync(t, obj)?;
                self.sync[obj.0 as usize]
                    .clear()
                    .map_err(|m| misuse(t, obj, m))?;
            }
            Op::Exit => return Ok(Some(self.exit_op(p, t))),
        }
        Ok(None)
    }

    /// An error unless `addr` lies in memory thread `t`'s program allocated.
    fn check_address(&self, t: ThreadId, addr: u64) -> Result<(), SimError> {
        if self.memory.is_allocated(addr) {
            Ok(())
        } else {
            Err(SimError::BadAddress { thread: t, addr })
        }
    }

    /// Thread `t`, current on `p`, creates a thread of its application that runs `program`,
    /// with `t`'s mask and base priority, paying the kernel's spawn and the new thread's memory.
    fn spawn_op(
        &mut self,
        p: usize,
        t: ThreadId,
        spawner: &Spawner,
    ) -> Result<Option<Step>, SimError> {
        let ti = t.index();
        let task = self.cx.threads[ti].info.task;
        let attrs = ThreadAttrs {
            mask: self.cx.cold[ti].mask.clone(),
            base_priority: self.cx.cold[ti].base_priority,
        };
        self.reserve_thread(task)?;
        let child = self.create_thread(task, (spawner.0)(), attrs);
        self.set_outcome(ti, Outcome::Spawned(child));
        let cost = self
            .cx
            .machine
            .kernel
            .spawn
            .saturating_add(self.thread_memory(ProcId(p as u32)));
        if cost == 0 {
            return Ok(None);
        }
        self.start_seg(p, Seg::fixed(&[(Category::Kernel, cost)]), self.after(cost));
        Ok(Some(Step::Busy))
    }

    /// Thread `t`, current on `p`, gives the scheduler a hint (section 5 of Black 1990): a
    /// yield is mild discouragement; strong discouragement also depresses its priority until
    /// `timeout`; absolute discouragement sleeps; a handoff names the thread to run next, when
    /// that thread is ready. `None` for a cancelled depression, which takes no time.
    fn hint_op(&mut self, p: usize, t: ThreadId, hint: Hint) -> Option<Step> {
        let (yield_call, depress) = (
            self.cx.machine.kernel.yield_call,
            self.cx.machine.kernel.depress,
        );
        let (cost, handoff) = match hint {
            Hint::Cancel => {
                self.sched.depress(t, None, &self.cx);
                return None;
            }
            Hint::Absolute(n) => {
                self.sleep(p, t, n);
                return Some(left(t, yield_call, None));
            }
            Hint::Mild => (yield_call, None),
            Hint::Strong { timeout } => {
                let cost = yield_call + depress;
                self.sched.depress(t, Some(self.after(timeout)), &self.cx);
                (cost, None)
            }
            Hint::Handoff(to) => {
                let target = (to != t
                    && to.index() < self.cx.threads.len()
                    && self.cx.threads[to.index()].info.state == ThreadState::Ready)
                    .then_some(to);
                (yield_call, target)
            }
        };
        self.leave(p, t);
        self.make_ready(t, Enqueue::Yielded);
        Some(left(t, cost, handoff))
    }

    /// Thread `t`, current on `p`, signals `obj`: the releasing write (which invalidates the
    /// spinners' copies) and a port's message cost, then the waiters released; a handoff to
    /// the one woken leaves the processor to it.
    fn signal_op(&mut self, p: usize, t: ThreadId, obj: SyncId) -> Result<Option<Step>, SimError> {
        self.check_sync(t, obj)?;
        let o = &mut self.sync[obj.0 as usize];
        o.signal(t).map_err(|m| misuse(t, obj, m))?;
        let msg = if matches!(o.kind, SyncKind::Port { .. }) {
            self.cx.machine.kernel.message
        } else {
            0
        };
        let c = self.sync_access(p, t, obj, self.cx.now, true);
        let (wake_cost, handoff) = self.release_waiters(obj, true);
        if let Some(r) = handoff {
            self.leave(p, t);
            self.make_ready(t, Enqueue::Yielded);
            return Ok(Some(left(t, msg, Some(r))));
        }
        if c.total() + msg + wake_cost > 0 {
            return Ok(Some(self.start_charge(p, c, msg + wake_cost)));
        }
        Ok(None)
    }

    /// Thread `t`, current on `p`, exits: its application completes with its last thread (and
    /// ends the run when it is the one the run waits for), and the policy is told.
    fn exit_op(&mut self, p: usize, t: ThreadId) -> Step {
        let ti = t.index();
        self.leave(p, t);
        self.cx.threads[ti].info.state = ThreadState::Exited;
        let cost = self.cx.machine.kernel.exit;
        if cost == 0 {
            self.finish_exit(t);
        }
        // With a cost, the thread has exited once the kernel has torn it down: the processor's
        // departure finishes the exit at the end of that work ([`Simulation::finish_exit`]), so
        // that a job's exit follows all the time it held and the last exit's cost is in the run.
        left(t, cost, None)
    }

    /// The end of thread `t`'s exit (after its `kernel.exit` cycles, when there are any): its
    /// exit time, its application's count of live threads (and completion), the run's, and the
    /// policy's hearing of it.
    pub(super) fn finish_exit(&mut self, t: ThreadId) {
        let ti = t.index();
        self.cx.cold[ti].exited = self.cx.now;
        let task = self.cx.threads[ti].info.task.index();
        self.cx.tasks[task].live -= 1;
        if self.cx.tasks[task].live == 0 {
            self.apps[task].completion = self.cx.now;
            if self.end_task.is_some_and(|e| e.index() == task) {
                // Checked off the hot path, at the loop's next bound check.
                self.ending = true;
                self.next_check = self.events;
            }
        }
        self.live -= 1;
        self.sched.stopped(t, Stop::Exited, &self.cx);
        if self.cx.tasks[task].live == 0 || self.sched.shape.exit_offers_all {
            // An application finished: a policy may now divide or rotate the processors (a
            // partition, a gang), so every idle one is asked (for some policies after every
            // exit: an idle processor that pulls may find work now).
            self.offer_all_idle();
        }
    }

    /// Writes a new thread's kernel memory (`kernel.thread_bytes` of fresh address space: its
    /// stack and control block) from processor `pid`, through the memory model, and returns the
    /// cycles it took; the kernel's own charge, for the user / kernel split.
    fn thread_memory(&mut self, pid: ProcId) -> Cycles {
        let bytes = self.cx.machine.kernel.thread_bytes;
        if bytes == 0 || !self.cx.machine.memory.enabled {
            return 0;
        }
        let region = self.memory.alloc(bytes, Placement::Uma, None);
        let line = self.memory.line_bytes();
        let mut walk = BulkAccess::over(region, line, AccessKind::Write, 1);
        let charge = self.memory.run(pid, self.cx.now, &mut walk, Cycles::MAX);
        self.kernel_mem += charge;
        charge.total()
    }

    pub(super) fn check_sync(&self, t: ThreadId, obj: SyncId) -> Result<(), SimError> {
        if (obj.0 as usize) < self.sync.len() {
            Ok(())
        } else {
            Err(SimError::Misuse {
                thread: t,
                object: obj.0,
                what: "no such object".into(),
            })
        }
    }
}

/// Thread `t` leaves its processor after `cost` cycles of kernel work, handing it to `handoff`.
#[inline]
fn left(t: ThreadId, cost: Cycles, handoff: Option<ThreadId>) -> Step {
    Step::Left {
        prev: t,
        cost,
        handoff,
    }
}

/// Thread `t` misused synchronization object `obj` as `what` says.
fn misuse(t: ThreadId, obj: SyncId, what: impl std::fmt::Debug) -> SimError {
    SimError::Misuse {
        thread: t,
        object: obj.0,
        what: format!("{what:?}"),
    }
}
