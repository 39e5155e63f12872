//! What a policy asks of the engine, applied: its tick and the actions it returns (processors
//! to preempt, idle processors to offer work, notices to applications), interrupts of a
//! running processor, placement of a thread made ready, the processors a policy kicked, and the
//! offering of idle processors (those the policy placed threads on or kicked first, then the
//! others lowest number first: all of them, or only the ranges a `Target::Within` named, so
//! that a wake-up under a gang, a partition or a kicking sched_ext policy costs the same on
//! 16 processors as on 16,384).
//!
//! Invariant: an interrupted processor notices `need_resched` at its next event, never inside
//! another processor's step; only the event loop's tick preempts at once.

use super::processor::Dispatch;
use super::segment::Seg;
use super::{EventKind, SimError, Simulation};
use crate::sched::Target;

impl Simulation {
    pub(super) fn tick(&mut self) -> Result<(), SimError> {
        // Bring usage of running threads up to date before the policy looks at it.
        for p in 0..self.procs.len() {
            if self.procs[p].thread.is_some() {
                self.settle(p);
            }
        }
        let mut out = std::mem::take(&mut self.tick_actions);
        out.preempt.clear();
        out.offer_idle = false;
        self.sched.tick(&self.cx, &mut out);
        for &p in &out.preempt {
            self.request_preempt(p.index())?;
        }
        if out.offer_idle {
            self.offer_all_idle();
        }
        self.post_notices(&mut out);
        self.tick_actions = out;
        if let Some(iv) = self.sched.shape.tick {
            self.push(self.after(iv.max(1)), EventKind::Tick);
        }
        Ok(())
    }

    /// Posts the notices a policy sent (each thread of the task sees the latest at its next
    /// operation).
    pub(super) fn post_notices(&mut self, out: &mut crate::sched::Actions) {
        for (task, notice) in out.notify.drain(..) {
            self.notices_sent = true;
            if let Some(n) = self.notices.get_mut(task.index()) {
                *n = (n.0.wrapping_add(1), Some(notice));
            }
        }
    }

    /// Asks processor `p` to reschedule: at once if it computes or spins (its interrupted
    /// segment ends now, and that event notices `need_resched`), else when its current fixed
    /// charge ends. An idle processor has nothing to give up.
    pub(super) fn interrupt(&mut self, p: usize) {
        if p >= self.procs.len() || self.procs[p].thread.is_none() {
            return;
        }
        self.unpark(p);
        self.procs[p].need_resched = true;
        if matches!(self.procs[p].seg, Seg::Compute | Seg::Spin) {
            self.settle(p);
            self.start_seg(p, Seg::fixed(&[]), self.cx.now);
        }
    }

    pub(super) fn no_idle_processor(&self) -> bool {
        self.idle.is_empty()
    }

    pub(super) fn request_preempt(&mut self, p: usize) -> Result<(), SimError> {
        if self.procs[p].thread.is_none() {
            return Ok(());
        }
        self.unpark(p);
        self.procs[p].need_resched = true;
        if matches!(self.procs[p].seg, Seg::Compute | Seg::Spin) {
            self.settle(p);
            let proc = &mut self.procs[p];
            proc.epoch = proc.epoch.wrapping_add(1);
            self.advance(p)?;
        }
        Ok(())
    }

    /// Notes where the policy placed a thread that became runnable: that processor is offered
    /// work first, then every idle one, or only those of the range a [`Target::Within`] names.
    pub(super) fn place(&mut self, target: Target) {
        let n = self.procs.len();
        match target {
            Target::Any => self.offer_all_idle(),
            Target::Processor(p) => {
                if p.index() < n {
                    self.offer_first.push(p.index());
                }
                self.offer_all_idle();
            }
            Target::Within { first, count } => {
                let start = first.index().min(n);
                let end = start.saturating_add(count as usize).min(n);
                if start < end {
                    self.offer_first.push(start);
                    self.offer_within.push((start, end));
                    self.poll_idle = true;
                }
            }
        }
    }

    /// Every idle processor is to be offered work after this event.
    pub(super) fn offer_all_idle(&mut self) {
        self.offer_all = true;
        self.poll_idle = true;
    }

    /// Applies the processors the policy kicked, collected after the event or the dispatch
    /// whose hook kicked ([`Kick`](crate::sched::Kick)): an idle one is
    /// offered work first at the next offering, a running one kicked with `preempt` is
    /// interrupted (it notices at its next event). A processor between threads (a switch under
    /// way) picks anyway when its charge ends, so a kick to it needs nothing.
    ///
    /// Always inlined, with the kicks applied out of line: it runs after every event, and as a
    /// call of its own its prologue and epilogue cost about 17 instructions an event for a
    /// policy that never kicks (2.8% of the engine benchmark's instructions, random demands).
    #[inline(always)]
    pub(super) fn apply_kicks_if_any(&mut self) {
        if self.sched.shape.kicks && self.sched.collect_kicks() {
            self.apply_kicks();
        }
    }

    #[inline(never)]
    fn apply_kicks(&mut self) {
        let mut kicks = std::mem::take(&mut self.sched.kicks);
        for k in kicks.drain(..) {
            let p = k.cpu.index();
            if p >= self.procs.len() {
                continue;
            }
            if self.idle.contains(p) {
                // A kick asks that processor alone, as sched_ext's `scx_bpf_kick_cpu` does.
                self.offer_first.push(p);
                self.poll_idle = true;
            } else if k.preempt {
                self.interrupt(p);
            }
        }
        self.sched.kicks = kicks;
    }

    /// Offers work to idle processors — those the policy placed threads on or kicked first,
    /// then the others lowest number first (all of them, or only the ranges placements named)
    /// — until the policy has none left.
    pub(super) fn poll_idle_processors(&mut self) -> Result<(), SimError> {
        self.apply_kicks_if_any();
        while self.poll_idle {
            self.poll_idle = false;
            let all = std::mem::take(&mut self.offer_all);
            let mut within = std::mem::take(&mut self.offer_within);
            let mut first = std::mem::take(&mut self.offer_first);
            for &p in &first {
                if self.idle.contains(p) {
                    self.offer(p)?;
                }
            }
            // Processors placed or kicked during these offers wait for the next round.
            first.clear();
            first.append(&mut self.offer_first);
            self.offer_first = first;
            if all {
                self.offer_range(0, usize::MAX, self.sched.single_queue())?;
            } else if !within.is_empty() {
                // In processor order, each processor once, as the whole scan would have asked
                // them; each range alone may stop at its first processor finding nothing.
                within.sort_unstable();
                within.dedup();
                let one_queue = self.sched.unmasked();
                let mut covered = 0;
                for &(start, end) in &within {
                    self.offer_range(start.max(covered), end, one_queue)?;
                    covered = covered.max(end);
                }
            }
            within.clear();
            within.append(&mut self.offer_within);
            self.offer_within = within;
        }
        Ok(())
    }

    /// Offers work to idle processor `p`; `true` if it found none.
    fn offer(&mut self, p: usize) -> Result<bool, SimError> {
        self.settle(p);
        let idle = match self.dispatch(p, None, None) {
            Dispatch::Idle => true,
            Dispatch::Overhead => false,
            Dispatch::Immediate => {
                self.advance(p)?;
                false
            }
        };
        self.apply_kicks_if_any();
        Ok(idle)
    }

    /// Offers work to the idle processors of `start..end`, lowest number first; with `single`
    /// (one shared queue) it stops at the first that finds none, as then all would, and it
    /// stops once the policy says that no thread waits for any of them.
    fn offer_range(&mut self, start: usize, end: usize, single: bool) -> Result<(), SimError> {
        let mut from = start;
        while let Some(p) = self.next_idle(from).filter(|&p| p < end) {
            from = p + 1;
            if (self.offer(p)? && single) || self.sched.nothing_waiting() {
                break;
            }
        }
        Ok(())
    }

    /// The lowest-numbered idle processor at or after `from`.
    pub(super) fn next_idle(&self, from: usize) -> Option<usize> {
        self.idle.next_from(from)
    }
}
