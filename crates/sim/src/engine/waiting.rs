//! Synchronization mechanics: a thread's attempts to pass a lock, semaphore, event, barrier or
//! port, spinning (its probes serialize on the variable's line in the memory model), blocking,
//! and the release that grants the object to a spinner or wakes blocked waiters, with Mach's
//! handoff (Black 1990, section 5). What to do — who is granted, how many wake — is decided by
//! the pure functions of `crate::sync`; this module applies it and charges its time.
//!
//! Invariant: a waiting thread has its wait set ([`Simulation::set_wait`]) until it passes; a
//! spinner is listed on its object exactly while it spins on a processor.

use super::segment::{Seg, Step};
use super::{SimError, Simulation};
use crate::ids::{Cycles, ProcId, ThreadId};
use crate::memory::{AccessKind, AtomicKind, Charge};
use crate::metrics::Category;
use crate::sched::{Enqueue, ThreadState};
use crate::sync::{
    first_prober, port_hands_off, to_wake, AfterSpin, Attempt, Spin, Spinner, SyncId, SyncKind,
};
use crate::thread::Waiting;
use crate::trace::Mark;

impl Simulation {
    /// Thread `ti`'s wait in progress, if any (its flag is read first: the wait itself lies in
    /// the thread's cold record).
    #[inline]
    pub(super) fn wait_of(&self, ti: usize) -> Option<Waiting> {
        if self.cx.threads[ti].info.waiting {
            self.cx.cold[ti].wait
        } else {
            None
        }
    }

    /// Thread `ti`'s wait in progress, to change, if any.
    #[inline]
    pub(super) fn wait_of_mut(&mut self, ti: usize) -> Option<&mut Waiting> {
        if self.cx.threads[ti].info.waiting {
            self.cx.cold[ti].wait.as_mut()
        } else {
            None
        }
    }

    /// Starts (`Some`) or ends (`None`) thread `ti`'s wait.
    #[inline]
    pub(super) fn set_wait(&mut self, ti: usize, w: Option<Waiting>) {
        self.cx.threads[ti].info.waiting = w.is_some();
        self.cx.cold[ti].wait = w;
    }

    /// The cost to `t` on `p` of touching `obj`'s variable at `at`: an atomic test-and-set to
    /// acquire (a read for events and barriers), a write to release. Without the memory model it
    /// is the fixed `kernel.sync_op`.
    pub(super) fn sync_access(
        &mut self,
        p: usize,
        t: ThreadId,
        obj: SyncId,
        at: Cycles,
        release: bool,
    ) -> Charge {
        let o = &self.sync[obj.0 as usize];
        let Some(line) = o.line else {
            return Charge {
                useful: self.cx.machine.kernel.sync_op,
                ..Charge::default()
            };
        };
        let pid = ProcId(p as u32);
        let c = if release {
            self.memory.access(pid, at, line, AccessKind::Write)
        } else if o.wakes_all() {
            self.memory.access(pid, at, line, AccessKind::Read)
        } else {
            self.memory.atomic(pid, at, line, AtomicKind::TestAndSet)
        };
        let task = self.cx.threads[t.index()].info.task.index();
        self.apps[task].mem += c;
        c
    }

    /// One attempt of thread `t` on `p` to pass the object it waits on. Returns `None` when it
    /// passed at no cost (the thread goes on), or the step taken (a charge, a spin, blocking).
    pub(super) fn wait_step(
        &mut self,
        p: usize,
        t: ThreadId,
        w: Waiting,
    ) -> Result<Option<Step>, SimError> {
        let attempt = self.sync[w.obj.0 as usize].try_pass(t, w.arrived);
        match attempt {
            Attempt::Pass | Attempt::PassAndRelease => {
                Ok(self.passed(p, t, w, attempt == Attempt::PassAndRelease))
            }
            Attempt::Wait(arrived) => Ok(Some(self.must_wait(p, t, w, arrived))),
        }
    }

    /// Thread `t` on `p` passed the object it waited on (`release`: and its passing releases
    /// the others waiting): the access, a port's message and the wake-ups are charged to it.
    fn passed(&mut self, p: usize, t: ThreadId, w: Waiting, release: bool) -> Option<Step> {
        let o = &mut self.sync[w.obj.0 as usize];
        if !w.contended {
            o.stats.immediate += 1;
        }
        let msg = if matches!(o.kind, SyncKind::Port { .. }) {
            self.cx.machine.kernel.message
        } else {
            0
        };
        self.set_wait(t.index(), None);
        let wake_cost = if release {
            self.release_waiters(w.obj, false).0
        } else {
            0
        };
        let c = self.sync_access(p, t, w.obj, self.cx.now, false);
        if c.total() + msg + wake_cost == 0 {
            return None;
        }
        Some(self.start_charge(p, c, msg + wake_cost))
    }

    /// Thread `t` on `p` must wait for its object (`arrived`: its arrival, at a barrier): it
    /// spins until the object's spin limit or its quantum ends, then blocks on the object's
    /// queue, handing off to the holder when the policy says so.
    fn must_wait(&mut self, p: usize, t: ThreadId, w: Waiting, arrived: Option<u64>) -> Step {
        let ti = t.index();
        let oi = w.obj.0 as usize;
        let policy = self.sync[oi].policy;
        let since = w.since.unwrap_or(self.cx.now);
        if !w.contended {
            self.sync[oi].stats.contended += 1;
            if let Some(tr) = self.trace.as_deref_mut() {
                let at = self.cx.now;
                tr.mark(
                    at,
                    t,
                    Some(ProcId(p as u32)),
                    Mark::Waits { object: w.obj.0 },
                );
            }
        }
        self.set_wait(
            ti,
            Some(Waiting {
                obj: w.obj,
                arrived,
                since: Some(since),
                contended: true,
            }),
        );
        let deadline = match policy.spin {
            Spin::Forever => Cycles::MAX,
            Spin::Limit(s) => since.saturating_add(s),
        };
        if self.cx.now < deadline {
            let o = &mut self.sync[oi];
            if !o.spinners.iter().any(|s| s.thread == t) {
                o.spinners.push(Spinner {
                    thread: t,
                    proc: ProcId(p as u32),
                    since,
                });
            }
            let end = deadline.min(self.procs[p].quantum_end);
            self.start_seg(p, Seg::Spin, end);
            return Step::Busy;
        }
        // Spinning is over: block on the object's queue.
        let o = &mut self.sync[oi];
        o.remove_spinner(t);
        o.blocked.push_back(t);
        o.stats.blocks += 1;
        let handoff = match policy.after {
            // To the holder if it is ready and not running, whatever its application (in
            // Gupta's applications, 5.1, locks and events are the application's own).
            AfterSpin::HandoffToHolder => o
                .holder()
                .filter(|h| self.cx.threads[h.index()].info.state == ThreadState::Ready),
            AfterSpin::Block => None,
        };
        if let Some(Waiting { since, .. }) = self.wait_of_mut(ti) {
            *since = None;
        }
        self.block(p, t);
        Step::Left {
            prev: t,
            cost: self.cx.machine.kernel.block,
            handoff,
        }
    }

    /// After a signal (or the last arrival at a barrier) on `obj`: grants spinners first, else
    /// wakes blocked waiters. Returns the kernel cost of the wake-ups, charged to the signaller,
    /// and a blocked receiver the signaller should hand its processor to (ports with handoff,
    /// when `may_handoff`).
    pub(super) fn release_waiters(
        &mut self,
        obj: SyncId,
        may_handoff: bool,
    ) -> (Cycles, Option<ThreadId>) {
        let oi = obj.0 as usize;
        let all = self.sync[oi].wakes_all();
        let probe = self.sync[oi].policy.probe;
        let mut granted = false;
        while !self.sync[oi].spinners.is_empty() {
            let (i, at, failed) = first_prober(&self.sync[oi].spinners, probe, self.cx.now)
                .expect("spinners is not empty");
            let s = self.sync[oi].spinners[i];
            let arrived = self.wait_of(s.thread.index()).and_then(|w| w.arrived);
            match self.sync[oi].try_pass(s.thread, arrived) {
                Attempt::Wait(_) => break,
                Attempt::Pass | Attempt::PassAndRelease => {}
            }
            let o = &mut self.sync[oi];
            o.spinners.remove(i);
            o.stats.spin_grants += 1;
            o.stats.backoffs += failed;
            o.stats.max_backoffs = o.stats.max_backoffs.max(failed);
            let msg = if matches!(o.kind, SyncKind::Port { .. }) {
                self.cx.machine.kernel.message
            } else {
                0
            };
            self.grant_spinner(obj, s, at, msg);
            granted = true;
            if !all {
                break;
            }
        }
        if granted && !all {
            return (0, None);
        }
        // A processor still finishing a departed thread is about to look for work: handing off
        // to a receiver it could run would only move the sender off its processor.
        let no_idle = self.no_idle_processor() && self.procs.iter().all(|p| p.departing.is_none());
        let o = &mut self.sync[oi];
        if port_hands_off(&o.kind, o.blocked.len(), may_handoff, no_idle) {
            let r = o.blocked.pop_front().expect("not empty");
            o.stats.wakeups += 1;
            if let Some(w) = self.wait_of_mut(r.index()) {
                w.since = None;
            }
            return (0, Some(r));
        }
        let n = to_wake(all, o.blocked.len());
        let woken: Vec<ThreadId> = o.blocked.drain(..n).collect();
        o.stats.wakeups += n as u64;
        for &r in &woken {
            self.make_ready(r, Enqueue::Woken);
        }
        (n as Cycles * self.cx.machine.kernel.wake, None)
    }

    /// A spinner was granted `obj`: it probes at `at`, pays for the variable's line (with the
    /// memory model: behind the other spinners' re-reads of the invalidated line, which is the
    /// hot spot of a contended lock), and goes on with its program. Waiting, including that
    /// stall, is spin time.
    pub(super) fn grant_spinner(
        &mut self,
        obj: SyncId,
        s: Spinner,
        at: Cycles,
        extra_kernel: Cycles,
    ) {
        let p = s.proc.index();
        debug_assert_eq!(self.procs[p].thread, Some(s.thread));
        self.settle(p);
        self.set_wait(s.thread.index(), None);
        let oi = obj.0 as usize;
        let c = match self.sync[oi].line {
            None => Charge {
                useful: self.cx.machine.kernel.sync_op,
                stall: self.cx.machine.kernel.spin_notice,
                ..Charge::default()
            },
            Some(line) => {
                let probe = self.sync[oi].policy.probe;
                if !matches!(probe, crate::sync::Probe::Backoff { .. }) {
                    // At a release every spinner probes the invalidated line at once: a re-read
                    // (test-and-test-and-set) or an atomic (test-and-set); they serialize on it.
                    let others: Vec<Spinner> = self.sync[oi].spinners.clone();
                    for o in others {
                        let mut c = if probe == crate::sync::Probe::TestAndSet {
                            self.memory
                                .atomic(o.proc, self.cx.now, line, AtomicKind::TestAndSet)
                        } else {
                            self.memory
                                .access(o.proc, self.cx.now, line, AccessKind::Read)
                        };
                        // The re-read's stall overlaps the spinning already charged.
                        c.stall = 0;
                        let task = self.cx.threads[o.thread.index()].info.task.index();
                        self.apps[task].mem += c;
                    }
                }
                self.sync_access(p, s.thread, obj, at, false)
            }
        };
        // Without the memory model the notice delay is spinning, not a charged miss.
        let (notice, stall) = match self.sync[oi].line {
            None => (c.stall, 0),
            Some(_) => (0, c.stall),
        };
        let wait = (at - self.cx.now).saturating_add(notice);
        self.start_seg(
            p,
            Seg::fixed(&[
                (Category::Spin, wait),
                (Category::Stall, stall),
                (Category::Useful, c.useful),
                (Category::Kernel, extra_kernel),
            ]),
            self.after(
                wait.saturating_add(stall)
                    .saturating_add(c.useful)
                    .saturating_add(extra_kernel),
            ),
        );
    }
}
