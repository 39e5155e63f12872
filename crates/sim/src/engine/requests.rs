//! Word operations with outcomes and kernel requests: the mechanisms behind [`Op::Word`] and
//! [`Op::Kernel`](crate::Op::Kernel). A word operation is charged like any reference or atomic
//! in the memory model and its effect applied at the instant it issues (processors act in
//! virtual-time order, and atomics on one line serialize, so completions keep that order); its
//! outcome reaches the program when the charge has elapsed. A request is answered by the policy
//! ([`Scheduler::request`](crate::sched::Scheduler::request)); the engine applies attribute
//! changes it grants.
//!
//! [`Op::Word`]: crate::Op::Word

use super::segment::Step;
use super::Simulation;
use crate::ids::{ProcId, ThreadId};
use crate::memory::{AccessKind, AtomicKind, Charge};
use crate::metrics::Category;
use crate::outcome::{Outcome, Reply, Request, WordOp};
use crate::sched::Enqueue;

use super::segment::Seg;

impl Simulation {
    /// Hands `outcome` to thread `ti`'s program at its next operation.
    pub(super) fn set_outcome(&mut self, ti: usize, outcome: Outcome) {
        self.cx.cold[ti].outcome = Some(outcome);
        self.cx.threads[ti].info.has_outcome = true;
    }

    /// Applies `op` to the word at `addr` for `t` on `p`, records its outcome for the program,
    /// and returns what it costs.
    pub(super) fn word(&mut self, p: usize, t: ThreadId, addr: u64, op: WordOp) -> Charge {
        let pid = ProcId(p as u32);
        let charge = match op {
            WordOp::Load => self.memory.access(pid, self.cx.now, addr, AccessKind::Read),
            WordOp::Store(_) => self
                .memory
                .access(pid, self.cx.now, addr, AccessKind::Write),
            WordOp::TestAndSet => {
                self.memory
                    .atomic(pid, self.cx.now, addr, AtomicKind::TestAndSet)
            }
            WordOp::FetchAdd(_) => self
                .memory
                .atomic(pid, self.cx.now, addr, AtomicKind::FetchAdd),
            WordOp::Swap(_) => self.memory.atomic(pid, self.cx.now, addr, AtomicKind::Swap),
            WordOp::CompareAndSwap { .. } => {
                self.memory
                    .atomic(pid, self.cx.now, addr, AtomicKind::CompareSwap)
            }
        };
        let old = self.words.get(&addr).copied().unwrap_or(0);
        let (new, success) = op.apply(old);
        if new != old {
            self.words.insert(addr, new);
        }
        self.set_outcome(t.index(), Outcome::Word { old, success });
        charge
    }

    /// Answers `t`'s request `req` on `p`: the policy replies, the engine applies what it
    /// granted and charges the cost as kernel time. `None` when the thread goes on at once.
    pub(super) fn kernel_request(&mut self, p: usize, t: ThreadId, req: Request) -> Option<Step> {
        let mut out = std::mem::take(&mut self.tick_actions);
        out.preempt.clear();
        out.offer_idle = false;
        let (mut reply, cost) = self.sched.request(t, &req, &self.cx, &mut out);
        for &q in &out.preempt {
            // Interrupted at once: each processor's next event notices `need_resched` (the
            // requester's own, once its request is charged).
            self.interrupt(q.index());
        }
        if out.offer_idle {
            self.offer_all_idle();
        }
        self.post_notices(&mut out);
        self.tick_actions = out;
        let mut moves = false;
        if reply == Reply::Done {
            let n = self.cx.machine.processors;
            let info = &mut self.cx.threads[t.index()].info;
            match req {
                Request::SetMask(m) if !(0..n).any(|q| m.allows(ProcId(q))) => {
                    reply = Reply::Refused("the mask holds no processor of this machine");
                }
                Request::SetMask(m) => {
                    moves = !m.allows(ProcId(p as u32));
                    info.masked = true;
                    self.cx.any_masked = true;
                    self.cx.cold[t.index()].mask = Some(m);
                }
                Request::SetBasePriority(v) => self.cx.cold[t.index()].base_priority = v,
                Request::Processors | Request::ProcessorSet(_) => {}
            }
        }
        self.set_outcome(t.index(), Outcome::Kernel(reply));
        if moves {
            // Its processor left its mask: it goes back to the policy to be placed.
            self.leave(p, t);
            self.make_ready(t, Enqueue::Yielded);
            return Some(Step::Left {
                prev: t,
                cost,
                handoff: None,
            });
        }
        if cost == 0 {
            return None;
        }
        self.start_seg(p, Seg::fixed(&[(Category::Kernel, cost)]), self.after(cost));
        Some(Step::Busy)
    }
}
