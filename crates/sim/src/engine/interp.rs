//! The operation interpreter: a thread current on a processor runs its program's operations
//! ([`Op`]) until one takes time (a segment starts) or the thread leaves the processor. Each
//! operation's effect is applied here; the decisions (which thread next, who is woken) belong to
//! the policy and to `sync`.
//!
//! Invariants: the program is asked for its next operation only when the previous one is done
//! (no compute left, no memory walk, no wait under way); the quantum is checked only while work
//! is under way; a thread may perform at most `MAX_ZERO_TIME_STEPS` operations at one instant.

use super::processor::{Seg, Step};
use super::{SimError, Simulation, MAX_ZERO_TIME_STEPS};
use crate::ids::{Cycles, ProcId, ThreadId};
use crate::metrics::Category;
use crate::outcome::Outcome;
use crate::program::{Hint, Op, ThreadCtx};
use crate::sched::{Enqueue, QuantumEnd, SchedCtx, Stop, ThreadState};
use crate::sync::{SyncId, SyncKind};
use crate::thread::{ThreadAttrs, ThreadSlot, Waiting};

impl Simulation {
    /// Lets thread `t`, current on `p`, run its operations until it starts a segment or leaves.
    pub(super) fn step_thread(&mut self, p: usize, t: ThreadId) -> Result<Step, SimError> {
        let pid = ProcId(p as u32);
        let ti = t.index();
        let mut zero = 0u32;
        let left = |cost: Cycles, handoff: Option<ThreadId>| Step::Left {
            prev: t,
            cost,
            handoff,
        };
        loop {
            if self.procs[p].need_resched {
                self.procs[p].need_resched = false;
                self.preempt(p, t);
                return Ok(left(0, None));
            }
            // The quantum is checked only while the thread has work under way (computing,
            // walking memory, waiting): a thread whose work ended exactly at the quantum's end
            // first asks its program for the next operation, so one that exits or blocks then
            // leaves at once instead of being requeued with nothing to do (issue 10). An
            // operation that takes time waits for the next quantum; an atomic or a
            // synchronization access begun at the boundary completes first, as an instruction
            // in flight would.
            let under_way = |e: &crate::thread::ThreadExec| {
                e.remaining > 0 || e.mem.is_some() || e.wait.is_some()
            };
            if self.now >= self.procs[p].quantum_end && under_way(&self.threads[ti].exec) {
                if self.sched.quantum_expired(t, pid, &cx!(self)) == QuantumEnd::Preempt {
                    self.preempt(p, t);
                    return Ok(left(0, None));
                }
                let q = self.sched.quantum(t, pid, &cx!(self));
                self.procs[p].quantum_end = q.map_or(Cycles::MAX, |q| self.after(q.max(1)));
            }
            if let Some(w) = self.threads[ti].exec.wait {
                match self.wait_step(p, t, w)? {
                    None => {}
                    Some(step) => return Ok(step),
                }
                continue;
            }
            let rem = self.threads[ti].exec.remaining;
            if rem > 0 {
                // Never `Cycles::MAX` (a segment without an end): a saturated end is past every bound.
                let end = self
                    .after(rem)
                    .min(self.procs[p].quantum_end)
                    .min(Cycles::MAX - 1);
                self.start_seg(p, Seg::Compute, end);
                return Ok(Step::Busy);
            }
            if let Some(acc) = self.threads[ti].exec.mem.as_deref_mut() {
                // One chunk, ending no later than the quantum (at least one element is made).
                let budget = (self.procs[p].quantum_end.saturating_sub(self.now))
                    .min(self.machine.memory.chunk_cycles)
                    .max(1);
                let charge = self.memory.run(pid, self.now, acc, budget);
                if charge.done {
                    self.threads[ti].exec.mem = None;
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
            let k = self.machine.kernel;
            let ThreadSlot { info, exec } = &mut self.threads[ti];
            let notice = if self.notices_sent {
                let (generation, latest) = self.notices[info.task.index()];
                let cold = &mut self.cold[ti];
                let fresh = generation != cold.notices_seen;
                cold.notices_seen = generation;
                latest.filter(|_| fresh)
            } else {
                None
            };
            let outcome = if exec.has_outcome {
                exec.has_outcome = false;
                self.cold[ti].outcome.take()
            } else {
                None
            };
            let mut ctx = ThreadCtx {
                thread: t,
                task: info.task,
                rank: info.rank,
                processor: pid,
                now: self.now,
                rng: &mut self.rngs[ti],
                outcome,
                notice,
            };
            match exec.program.next(&mut ctx) {
                Op::Compute(n) => exec.remaining = n,
                Op::Mem(acc) => {
                    if !acc.is_done() {
                        for addr in [acc.base, acc.base.saturating_add(acc.len - 1)] {
                            if !self.memory.is_allocated(addr) {
                                return Err(SimError::BadAddress { thread: t, addr });
                            }
                        }
                        self.threads[ti].exec.mem = Some(Box::new(acc));
                    }
                }
                Op::Atomic { addr, kind } => {
                    if !self.memory.is_allocated(addr) {
                        return Err(SimError::BadAddress { thread: t, addr });
                    }
                    let charge = self.memory.atomic(pid, self.now, addr, kind);
                    return Ok(self.start_mem(p, t, charge));
                }
                Op::Word { addr, op } => {
                    if !self.memory.is_allocated(addr) {
                        return Err(SimError::BadAddress { thread: t, addr });
                    }
                    let charge = self.word(p, t, addr, op);
                    return Ok(self.start_mem(p, t, charge));
                }
                Op::Spawn(spawner) => {
                    let info = &self.threads[ti].info;
                    let (task, attrs) = (
                        info.task,
                        ThreadAttrs {
                            mask: self.cold[ti].mask.clone(),
                            base_priority: self.cold[ti].base_priority,
                        },
                    );
                    self.reserve_thread(task)?;
                    let child = self.create_thread(task, (spawner.0)(), attrs);
                    self.set_outcome(ti, Outcome::Spawned(child));
                    let cost = self.machine.kernel.spawn;
                    if cost > 0 {
                        self.start_seg(
                            p,
                            Seg::fixed(&[(Category::Kernel, cost)]),
                            self.after(cost),
                        );
                        return Ok(Step::Busy);
                    }
                }
                Op::Record { name, value } => {
                    let task = self.threads[ti].info.task.index();
                    self.apps[task].recorded.entry(name).or_default().add(value);
                }
                Op::Kernel(req) => {
                    if let Some(step) = self.kernel_request(p, t, req) {
                        return Ok(step);
                    }
                }
                Op::Sleep(n) => {
                    self.sleep(p, t, n);
                    return Ok(left(0, None));
                }
                Op::Yield | Op::Hint(Hint::Mild) => {
                    let cost = k.yield_call;
                    self.leave(p, t);
                    self.make_ready(t, Enqueue::Yielded);
                    return Ok(left(cost, None));
                }
                Op::Hint(Hint::Strong { timeout }) => {
                    let cost = k.yield_call + k.depress;
                    self.sched.depress(t, self.after(timeout), &cx!(self));
                    self.leave(p, t);
                    self.make_ready(t, Enqueue::Yielded);
                    return Ok(left(cost, None));
                }
                Op::Hint(Hint::Cancel) => self.sched.undepress(t, &cx!(self)),
                Op::Hint(Hint::Absolute(n)) => {
                    let cost = k.yield_call;
                    self.sleep(p, t, n);
                    return Ok(left(cost, None));
                }
                Op::Hint(Hint::Handoff(to)) => {
                    let cost = k.yield_call;
                    let target = (to != t
                        && to.index() < self.threads.len()
                        && self.threads[to.index()].info.state == ThreadState::Ready)
                        .then_some(to);
                    self.leave(p, t);
                    self.make_ready(t, Enqueue::Yielded);
                    return Ok(left(cost, target));
                }
                Op::Wait(obj) => {
                    self.check_sync(t, obj)?;
                    self.threads[ti].exec.wait = Some(Waiting {
                        obj,
                        arrived: None,
                        since: None,
                        contended: false,
                    });
                }
                Op::Signal(obj) => {
                    self.check_sync(t, obj)?;
                    let o = &mut self.sync[obj.0 as usize];
                    o.signal(t).map_err(|m| SimError::Misuse {
                        thread: t,
                        object: obj.0,
                        what: format!("{m:?}"),
                    })?;
                    let msg = if matches!(o.kind, SyncKind::Port { .. }) {
                        self.machine.kernel.message
                    } else {
                        0
                    };
                    // The releasing write comes first: it invalidates the spinners' copies.
                    let c = self.sync_access(p, t, obj, self.now, true);
                    let (wake_cost, handoff) = self.release_waiters(obj, true);
                    if let Some(r) = handoff {
                        self.leave(p, t);
                        self.make_ready(t, Enqueue::Yielded);
                        return Ok(left(msg, Some(r)));
                    }
                    if c.total() + msg + wake_cost > 0 {
                        return Ok(self.start_charge(p, c, msg + wake_cost));
                    }
                }
                Op::Clear(obj) => {
                    self.check_sync(t, obj)?;
                    self.sync[obj.0 as usize]
                        .clear()
                        .map_err(|m| SimError::Misuse {
                            thread: t,
                            object: obj.0,
                            what: format!("{m:?}"),
                        })?;
                }
                Op::Exit => {
                    self.leave(p, t);
                    self.threads[ti].info.state = ThreadState::Exited;
                    self.cold[ti].exited = self.now;
                    let task = self.threads[ti].info.task.index();
                    self.tasks[task].live -= 1;
                    if self.tasks[task].live == 0 {
                        self.apps[task].completion = self.now;
                    }
                    self.live -= 1;
                    self.sched.stopped(t, Stop::Exited, &cx!(self));
                    self.poll_idle = true;
                    return Ok(left(0, None));
                }
            }
        }
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
