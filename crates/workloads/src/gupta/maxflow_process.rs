//! One Maxflow process (Gupta, Tucker and Urushibara 1991, section 3.3): the loop of the
//! parallel push-relabel program that `maxflow` installs, as a [`Program`] planning its
//! simulated operations. It fetches an active node from its local queue (the global queue when
//! that is empty), locks it, discharges it along admissible arcs (each push locking the head,
//! in node order), relabels it when no arc is admissible (with the gap heuristic), and
//! requeues or deactivates it; the last deactivation ends the solution. The network and the
//! queues it shares with the other processes are `maxflow_shared`'s.

use std::cell::RefCell;
use std::rc::Rc;

use smpsched_sim::memory::{AccessKind, AtomicKind, BulkAccess};
use smpsched_sim::{Op, Program, ThreadCtx};

use super::maxflow::Maxflow;
use super::maxflow_shared::{Layout, Shared, Successors, WorkWait, RECORD};
use super::Plan;

/// Bytes of a record's field (a record is four 4-byte words: a node's excess, height and lock,
/// an arc's head, reverse and capacity).
pub(super) const FIELD: u64 = 4;

/// Where a process is in its loop.
#[derive(Clone, Copy, Debug)]
enum State {
    /// Needs a node.
    Fetch,
    /// Holds a unit of the work semaphore: take a node from the global queue (or exit).
    FetchGlobal,
    /// Has node v; lock it.
    Lock(u32),
    /// Holds v's lock.
    Locked(u32),
    /// Discharging v: look at arcs from index `a`.
    Push { v: u32, a: usize },
    /// Holds the locks of v and of arc `a`'s head.
    PushLocked { v: u32, a: usize },
    /// Exiting.
    Exit,
}

/// One Maxflow process.
pub(super) struct Process {
    rank: usize,
    at: Layout,
    private: u64,
    cfg: Maxflow,
    state: State,
    plan: Plan,
    shared: Rc<RefCell<Shared>>,
}

impl Process {
    /// Process `rank` of `cfg`'s run, its locals at `private`, starting with a node to fetch.
    pub(super) fn new(
        rank: usize,
        at: Layout,
        private: u64,
        cfg: Maxflow,
        shared: Rc<RefCell<Shared>>,
    ) -> Self {
        Process {
            rank,
            at,
            private,
            cfg,
            state: State::Fetch,
            plan: Plan::default(),
            shared,
        }
    }

    /// Plans queue `q`'s lock, its head line and the release.
    fn queue_op(&mut self, q: usize) {
        self.plan.push(Op::Wait(self.at.queue_lock(q)));
        let refs = self.plan.sweep_by(
            self.at.queue(q),
            RECORD,
            FIELD,
            AccessKind::ReadModifyWrite,
            1,
        );
        self.plan.compute(refs, self.cfg.compute_per_ref);
        self.plan.push(Op::Signal(self.at.queue_lock(q)));
    }

    /// Puts an active node on a queue: the global one when it is empty, so that a process whose
    /// own queue is empty finds work, else the process's local one (section 3.3: a process
    /// needs the global queue only when its local queue is empty); with `successors = global`, a
    /// node a push made active (`pushed`) always goes to the global queue. Looking costs a read
    /// of the global queue's head line, without its lock.
    fn enqueue(&mut self, s: &mut Shared, v: u32, pushed: bool) {
        let global = s.local.len();
        let refs = self
            .plan
            .sweep_by(self.at.queue(global), FIELD, FIELD, AccessKind::Read, 1);
        self.plan.compute(refs, self.cfg.compute_per_ref);
        let share = pushed && self.cfg.successors == Successors::Global;
        if s.global.is_empty() || share {
            self.put_global(s, v);
        } else {
            s.local[self.rank].push_back(v);
            self.queue_op(self.rank);
        }
    }

    /// Puts v on the global queue and tells the processes waiting for work: a semaphore is
    /// signalled once per node, an event set when the queue stops being empty.
    fn put_global(&mut self, s: &mut Shared, v: u32) {
        let was_empty = s.global.is_empty();
        s.global.push_back(v);
        self.queue_op(s.local.len());
        if was_empty || self.cfg.work_wait == WorkWait::Semaphore {
            self.plan.push(Op::Signal(self.at.work));
        }
    }

    /// Takes a node from the global queue once the wait for work has passed, or waits again: an
    /// event's waiters may find the queue emptied by another, and the one that finds it empty
    /// clears the event before it looks (the clear is issued at the moment of the finding, and
    /// every set follows its node's arrival, so no arrival is missed).
    fn fetch_global(&mut self, s: &mut Shared) -> State {
        if s.done {
            return State::Exit;
        }
        let global = s.local.len();
        match s.global.pop_front() {
            Some(v) => {
                self.queue_op(global);
                State::Lock(v)
            }
            None if self.cfg.work_wait == WorkWait::Event => {
                self.plan.push(Op::Clear(self.at.work));
                self.queue_op(global);
                self.plan.push(Op::Wait(self.at.work));
                State::FetchGlobal
            }
            None => State::Exit,
        }
    }

    /// Takes the next step of the loop, planning its operations; returns the new state.
    fn step(&mut self, s: &mut Shared) -> State {
        match self.state {
            State::Exit => State::Exit,
            State::Fetch => {
                // A task boundary: obey process control first, handing local work to the
                // global queue before suspending.
                if s.control.should_suspend(self.rank, !s.done) {
                    while let Some(v) = s.local[self.rank].pop_front() {
                        self.put_global(s, v);
                    }
                    for op in s.control.suspend(self.rank) {
                        self.plan.push(op);
                    }
                    return State::Fetch;
                }
                if let Some(op) = s.control.resume_one(!s.done) {
                    self.plan.push(op);
                    return State::Fetch;
                }
                if let Some(v) = s.local[self.rank].pop_front() {
                    self.queue_op(self.rank);
                    return State::Lock(v);
                }
                if s.done {
                    return State::Exit;
                }
                self.plan.push(Op::Wait(self.at.work));
                State::FetchGlobal
            }
            State::FetchGlobal => self.fetch_global(s),
            State::Lock(v) => {
                self.plan.push(Op::Wait(self.at.node_lock(v)));
                State::Locked(v)
            }
            State::Locked(v) => {
                let arcs = s.g.arcs_of(v);
                let mut refs =
                    self.plan
                        .sweep_by(self.at.node(v), RECORD, FIELD, AccessKind::Read, 1);
                refs += self.plan.sweep_by(
                    self.at.arc(arcs.start),
                    arcs.len() as u64 * RECORD,
                    FIELD,
                    AccessKind::Read,
                    1,
                );
                // Each private word is read and written: private_refs references.
                refs += self.plan.sweep_by(
                    self.private,
                    u64::from(self.cfg.private_refs) * FIELD / 2,
                    FIELD,
                    AccessKind::ReadModifyWrite,
                    1,
                );
                self.plan.compute(refs, self.cfg.compute_per_ref);
                s.discharges += 1;
                State::Push { v, a: arcs.start }
            }
            State::Push { v, a } => self.next_push(s, v, a),
            State::PushLocked { v, a } => {
                let w = s.g.arcs[a].to;
                let hv = s.height.h[v as usize];
                if s.g.arcs[a].cap > 0 && hv == s.height.h[w as usize] + 1 {
                    self.push_flow(s, v, a);
                }
                self.plan.push(Op::Signal(self.at.node_lock(w)));
                if s.excess[v as usize] == 0 {
                    return self.finish(s, v);
                }
                State::Push { v, a: a + 1 }
            }
        }
    }

    /// Looks for the next admissible arc of v from `a` and locks its head (in node order, so
    /// that no two processes wait for each other: a lower head is locked after releasing v and
    /// v taken again); with none left, relabels v and requeues it.
    fn next_push(&mut self, s: &mut Shared, v: u32, a: usize) -> State {
        let end = s.g.arcs_of(v).end;
        let hv = s.height.h[v as usize];
        let found = (a..end).find(|&i| {
            let arc = s.g.arcs[i];
            arc.cap > 0 && hv == s.height.h[arc.to as usize] + 1
        });
        if let Some(i) = found {
            let w = s.g.arcs[i].to;
            let refs = self
                .plan
                .sweep_by(self.at.node(w), RECORD, FIELD, AccessKind::Read, 1);
            self.plan.compute(refs, self.cfg.compute_per_ref);
            if w < v {
                self.plan.push(Op::Signal(self.at.node_lock(v)));
                self.plan.push(Op::Wait(self.at.node_lock(w)));
                self.plan.push(Op::Wait(self.at.node_lock(v)));
            } else {
                self.plan.push(Op::Wait(self.at.node_lock(w)));
            }
            return State::PushLocked { v, a: i };
        }
        // No admissible arc: relabel to one above the lowest residual neighbour.
        let mut low = u32::MAX;
        let mut refs = 0;
        for i in s.g.arcs_of(v) {
            let arc = s.g.arcs[i];
            if arc.cap > 0 {
                low = low.min(s.height.h[arc.to as usize]);
                refs +=
                    self.plan
                        .sweep_by(self.at.node(arc.to), RECORD, FIELD, AccessKind::Read, 1);
            }
        }
        refs += self
            .plan
            .sweep_by(self.at.node(v), RECORD, FIELD, AccessKind::Write, 1);
        if s.height.relabel(v, low.saturating_add(1)) > 0 {
            // A gap: the heights of every node are read and some rewritten.
            let all = u64::from(s.g.n) * RECORD;
            let sweep = BulkAccess::new(self.at.nodes, all, RECORD, AccessKind::Read, 1);
            refs += sweep.total_refs();
            self.plan.push(Op::Mem(sweep));
        }
        self.plan.compute(refs, self.cfg.compute_per_ref);
        self.finish(s, v)
    }

    /// Pushes as much of v's excess as arc `a` takes (both locks held).
    fn push_flow(&mut self, s: &mut Shared, v: u32, a: usize) {
        let arc = s.g.arcs[a];
        let (w, r) = (arc.to, arc.rev as usize);
        let delta = arc.cap.min(s.excess[v as usize]);
        s.g.arcs[a].cap -= delta;
        s.g.arcs[r].cap += delta;
        s.excess[v as usize] -= delta;
        let was = s.excess[w as usize];
        s.excess[w as usize] += delta;
        let rmw = AccessKind::ReadModifyWrite;
        let refs = self.plan.sweep_by(self.at.arc(a), RECORD, FIELD, rmw, 1)
            + self.plan.sweep_by(self.at.arc(r), RECORD, FIELD, rmw, 1)
            + self.plan.sweep_by(self.at.node(w), RECORD, FIELD, rmw, 1);
        self.plan.compute(refs, self.cfg.compute_per_ref);
        let (s_node, t_node) = (0, s.g.n - 1);
        // A node being discharged (locked, out of every queue) is never enqueued twice: it had
        // excess, so `was` is not 0.
        if was == 0 && delta > 0 && w != s_node && w != t_node {
            s.active += 1;
            self.plan.push(Op::Atomic {
                addr: self.at.counter,
                kind: AtomicKind::FetchAdd,
            });
            self.enqueue(s, w, true);
        }
    }

    /// Unlocks v; requeues it while it has excess, else deactivates it (and, if it was the last
    /// active node, ends the computation and releases every process waiting for work).
    fn finish(&mut self, s: &mut Shared, v: u32) -> State {
        self.plan.push(Op::Signal(self.at.node_lock(v)));
        if s.excess[v as usize] > 0 {
            self.enqueue(s, v, false);
            return State::Fetch;
        }
        s.active -= 1;
        self.plan.push(Op::Atomic {
            addr: self.at.counter,
            kind: AtomicKind::FetchAdd,
        });
        if s.active == 0 {
            if s.solves_left > 0 {
                self.next_solution(s);
                return State::Fetch;
            }
            s.done = true;
            let sink = s.g.n as usize - 1;
            self.plan.push(Op::Record {
                name: "flow",
                value: s.excess[sink] as f64,
            });
            self.plan.push(Op::Record {
                name: "discharges",
                value: s.discharges as f64,
            });
            let waiters = match self.cfg.work_wait {
                WorkWait::Semaphore => self.cfg.processes,
                WorkWait::Event => 1,
            };
            for _ in 0..waiters {
                self.plan.push(Op::Signal(self.at.work));
            }
        }
        State::Fetch
    }
}

impl Process {
    /// Starts the next solution and releases one waiting process per newly active node. Every
    /// record carries the number of the solution that last wrote it (a field of its line), and a
    /// record of an earlier solution reads as its initial value, so restoring the network costs
    /// no pass over it: the records are reset as the next solution first touches them.
    fn next_solution(&mut self, s: &mut Shared) {
        s.solves_left -= 1;
        let sink = s.g.n as usize - 1;
        self.plan.push(Op::Record {
            name: "solution_flow",
            value: s.excess[sink] as f64,
        });
        let woken = match (s.restore(), self.cfg.work_wait) {
            (0, _) => 0,
            (n, WorkWait::Semaphore) => n,
            (_, WorkWait::Event) => 1,
        };
        let global = s.local.len();
        self.queue_op(global);
        for _ in 0..woken {
            self.plan.push(Op::Signal(self.at.work));
        }
    }
}

impl Program for Process {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        let shared = self.shared.clone();
        let mut s = shared.borrow_mut();
        s.control.notice(cx.notice);
        loop {
            if let Some(op) = self.plan.pop() {
                return op;
            }
            if let State::Exit = self.state {
                return Op::Exit;
            }
            self.state = self.step(&mut s);
        }
    }
}
