//! Mach's processor sets as kernel requests (Black 1990, section 6 and Table 4): creating a
//! set, assigning processors, threads and tasks to sets, and the processor count of a thread's
//! set. The run queues that make a processor run only its set's threads are in `mach`.
//!
//! Invariant: the default set (0) always keeps at least one processor.

use super::Mach;
use crate::ids::{Cycles, ProcId, ThreadId};
use crate::outcome::{ProcessorSetCall, Reply, Request};
use crate::readyq::RunQueue;
use crate::sched::{Actions, SchedCtx, ThreadState};

impl Mach {
    /// The processors of set `set`.
    fn members(&self, set: usize) -> usize {
        self.proc_set.iter().filter(|&&s| s == set).count()
    }

    /// Moves thread `u` to set `set`: re-queued there if ready, its processor preempted if it
    /// runs outside the set.
    fn move_thread(&mut self, u: ThreadId, set: usize, cx: &SchedCtx, out: &mut Actions) {
        self.grow(u, cx);
        self.thread_set[u.index()] = set;
        match cx.thread(u).state {
            ThreadState::Ready => {
                if let Some(q) = self.queued[u.index()].filter(|q| q.local.is_none()) {
                    if self.global[q.set].remove(&u, q.level) {
                        self.waiting -= 1;
                        let _ = self.queue(u, cx);
                    }
                }
            }
            ThreadState::Running(p) if self.proc_set.get(p.index()) != Some(&set) => {
                out.preempt.push(p);
            }
            _ => {}
        }
        out.offer_idle = true;
    }

    /// Answers thread `t`'s request `req` (see [`Scheduler::request`](crate::sched::Scheduler)).
    pub(super) fn answer(
        &mut self,
        t: ThreadId,
        req: &Request,
        cx: &SchedCtx,
        out: &mut Actions,
    ) -> (Reply, Cycles) {
        let us = |us: f64| cx.machine.ms(us / 1000.0);
        let call = cx.machine.kernel.yield_call;
        self.grow(t, cx);
        let sets = self.global.len();
        let bad_set = |set: u32| (set as usize) >= sets;
        match *req {
            Request::Processors => {
                let n = self.members(self.thread_set[t.index()]);
                (Reply::Processors(n as u32), call)
            }
            Request::SetMask(_) | Request::SetBasePriority(_) => (Reply::Done, call),
            Request::ProcessorSet(ProcessorSetCall::Create) => {
                self.global.push(RunQueue::default());
                (
                    Reply::ProcessorSet((self.global.len() - 1) as u32),
                    us(self.params.create_set_us),
                )
            }
            Request::ProcessorSet(ProcessorSetCall::AssignProcessor { set, .. }) | Request::ProcessorSet(ProcessorSetCall::AssignThread { set, .. })
                if bad_set(set) =>
            {
                (Reply::Refused("no such processor set"), call)
            }
            Request::ProcessorSet(ProcessorSetCall::AssignTask { set }) if bad_set(set) => {
                (Reply::Refused("no such processor set"), call)
            }
            Request::ProcessorSet(ProcessorSetCall::AssignProcessor { set, processor }) => {
                match self.assign_processor(set as usize, processor.index(), cx, out) {
                    Ok(()) => (Reply::Done, us(self.params.assign_processor_us)),
                    Err(why) => (Reply::Refused(why), call),
                }
            }
            Request::ProcessorSet(ProcessorSetCall::AssignThread { set, thread }) => {
                let u = thread.unwrap_or(t);
                if u.index() >= cx.thread_count() {
                    return (Reply::Refused("no such thread"), call);
                }
                self.move_thread(u, set as usize, cx, out);
                let cost = if u == t {
                    self.params.assign_thread_self_us
                } else {
                    self.params.assign_thread_other_us
                };
                (Reply::Done, us(cost))
            }
            Request::ProcessorSet(ProcessorSetCall::AssignTask { set }) => {
                self.assign_task(t, set as usize, cx, out);
                (Reply::Done, us(self.params.assign_thread_other_us))
            }
        }
    }

    /// Moves processor `p` to processor set `set` (section 6 of Black 1990), preempting a
    /// thread it runs that does not belong there; the default set keeps at least one processor.
    fn assign_processor(
        &mut self,
        set: usize,
        p: usize,
        cx: &SchedCtx,
        out: &mut Actions,
    ) -> Result<(), &'static str> {
        if p >= self.proc_set.len() {
            return Err("no such processor");
        }
        if self.proc_set[p] == 0 && set != 0 && self.members(0) == 1 {
            return Err("the default processor set keeps at least one processor");
        }
        self.proc_set[p] = set;
        if let Some(r) = cx.running[p] {
            if self.thread_set.get(r.index()) != Some(&set) {
                out.preempt.push(ProcId(p as u32));
            }
        }
        out.offer_idle = true;
        Ok(())
    }

    /// Moves thread `t`'s task, and every live thread of it, to processor set `set`.
    fn assign_task(&mut self, t: ThreadId, set: usize, cx: &SchedCtx, out: &mut Actions) {
        let task = cx.thread(t).task;
        if self.task_set.len() <= task.index() {
            self.task_set.resize(task.index() + 1, 0);
        }
        self.task_set[task.index()] = set;
        for u in (0..cx.thread_count() as u32).map(ThreadId) {
            let info = cx.thread(u);
            if info.task == task && info.state != ThreadState::Exited {
                self.move_thread(u, set, cx, out);
            }
        }
    }
}
