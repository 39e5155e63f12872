//! A scheduler process of DiBella et al. 1992 (sections 2.2 and 3.1): pinned to its processor,
//! it polls the queues in the order its policy gives ([`SearchOrder`]), reserves a request with
//! the structure's protocol, services it, writes the reply and signals the client.
//!
//! Multi-access queues: the primary queue is searched left to right from the mailbox last
//! serviced there, secondary queues (right to left under the bidirectional option) from the
//! one remembered secondary index (footnote 3: one index, not one per queue). After servicing a
//! request the scheduler starts again at its primary queue (section 2.2, Sequential); the
//! Sequential policy resumes its walk of the other queues where it last found work; the Random
//! policy, which has no primary, stays on the queue it served until it finds it empty (section
//! 3.1: a scheduler continues to service requests as long as there are requests in the queue). FCFS
//! structures: Global polls the one queue, Distributed FCFS its own queue then the others in
//! turn, each under the queue's lock.

use std::cell::RefCell;
use std::rc::Rc;

use rand::Rng;
use smpsched_policy::dibella::{Direction, SchedulerPolicy, SearchOrder};
use smpsched_sim::readyq::fcfs::FcfsTake;
use smpsched_sim::readyq::multi_access::{Poll, PutReply, TakeRequest};
use smpsched_sim::readyq::Step;
use smpsched_sim::{Op, Program, ThreadCtx};

use super::{load_distribution, throughput, Costs, Shared, Structure, LOAD_NAMES};

/// The protocol under way.
enum Active {
    None,
    Poll(Poll, usize, bool),
    Take(TakeRequest, usize),
    FcfsTake(FcfsTake, usize),
    Reply(PutReply),
}

/// Where the scheduler is between protocols.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Start a round of search.
    Round,
    /// Visit the next queue of the round's order.
    Visit,
    /// The service of request `id` has just ended.
    Served(usize),
    /// The reply to request `id` is written; send the signal.
    Replied(usize),
    /// The signal to request `id`'s client has been sent.
    Signalled(usize),
}

/// A scheduler process.
pub(crate) struct Scheduler {
    me: usize,
    queues: usize,
    policy: SchedulerPolicy,
    bidirectional: bool,
    structure: Structure,
    costs: Costs,
    shared: Rc<RefCell<Shared>>,
    active: Active,
    phase: Phase,
    order: Vec<(usize, Direction)>,
    pos: usize,
    /// The Sequential policy's remembered queue.
    cursor: usize,
    /// The Random policy's queue while it keeps finding requests there (section 3.1).
    staying: Option<usize>,
    /// The last mailbox serviced in the primary queue and in a secondary queue.
    last_primary: usize,
    last_secondary: usize,
    /// Records to emit (end of run), as a stack.
    records: Vec<Op>,
    lost: u64,
    secondary: u64,
}

impl Scheduler {
    pub(crate) fn new(
        me: usize,
        queues: usize,
        policy: SchedulerPolicy,
        bidirectional: bool,
        structure: Structure,
        costs: Costs,
        shared: &Rc<RefCell<Shared>>,
    ) -> Self {
        let mailboxes = structure.mailboxes();
        Scheduler {
            me,
            queues,
            policy,
            bidirectional,
            structure,
            costs,
            shared: shared.clone(),
            active: Active::None,
            phase: Phase::Round,
            order: Vec::with_capacity(queues),
            pos: 0,
            cursor: (me + 1) % queues,
            staying: None,
            // Start so that the first search begins at mailbox 0 (left to right) or at the
            // highest mailbox (right to left).
            last_primary: mailboxes - 1,
            last_secondary: 0,
            records: Vec::new(),
            lost: 0,
            secondary: 0,
        }
    }

    /// Starts a search round: the order of queues to visit, paying for a random draw where the
    /// policy makes one. `None` when the run is over.
    fn round(&mut self, cx: &mut ThreadCtx<'_>) -> Option<Op> {
        // Section 3.1: "a scheduler will continue to service requests as long as there are
        // requests in the queue"; the Random policy draws a queue only once the one it served
        // last is found empty.
        if let Some(q) = self.staying.take() {
            let dir = if self.bidirectional && q != self.me {
                Direction::RightToLeft
            } else {
                Direction::LeftToRight
            };
            self.order.clear();
            self.order.push((q, dir));
            self.pos = 0;
            self.phase = Phase::Visit;
            return None;
        }
        let draws = matches!(
            self.policy,
            SchedulerPolicy::Random | SchedulerPolicy::PrimaryRandom
        );
        let draw = if draws { cx.rng.random::<u64>() } else { 0 };
        let bidir = self.bidirectional;
        self.order.clear();
        match self.structure {
            Structure::Fcfs(l) if l.queues() == 1 => self.order.push((0, Direction::LeftToRight)),
            _ => self.order.extend(SearchOrder::new(
                self.policy,
                self.me,
                self.queues,
                self.cursor,
                draw,
                bidir,
            )),
        }
        self.pos = 0;
        self.phase = Phase::Visit;
        // Primary/Random draws only when its primary queue is empty; charge the draw then.
        let cost = if self.policy == SchedulerPolicy::Random {
            self.costs.random
        } else {
            0
        };
        (cost > 0).then_some(Op::Compute(cost))
    }

    /// Visits the next queue of the round, or pauses and starts another round.
    fn visit(&mut self) -> Op {
        let Some(&(q, dir)) = self.order.get(self.pos) else {
            // Nothing found anywhere: the Sequential walk moves on, and the loop goes round.
            if self.policy == SchedulerPolicy::Sequential {
                self.cursor = (self.cursor + 1) % self.queues;
            }
            self.phase = Phase::Round;
            return Op::Compute(self.costs.visit.max(1));
        };
        self.pos += 1;
        let secondary = q != self.me;
        match self.structure {
            Structure::MultiAccess(l) => {
                let last = if secondary {
                    self.last_secondary
                } else {
                    self.last_primary
                };
                let poll =
                    Poll::new(l, q, last, dir, self.costs.pause).searching(self.costs.search);
                self.active = Active::Poll(poll, q, secondary);
            }
            Structure::Fcfs(l) => {
                self.active = Active::FcfsTake(
                    FcfsTake::new(l, q, self.costs.pause).holding(self.costs.bookkeeping),
                    q,
                );
            }
        }
        let extra = if secondary && self.policy == SchedulerPolicy::PrimaryRandom {
            self.costs.random
        } else {
            0
        };
        Op::Compute(self.costs.visit.max(1) + extra)
    }

    /// The request word `w` was taken from queue `q`: service it.
    fn serve(&mut self, w: u64, q: usize) -> Op {
        let id = (w - 1) as usize;
        let shared_queue = matches!(self.structure, Structure::Fcfs(l) if l.queues() == 1);
        if q != self.me && !shared_queue {
            self.secondary += 1;
            if self.policy == SchedulerPolicy::Sequential {
                self.cursor = q;
            }
        }
        if self.policy == SchedulerPolicy::Random {
            self.staying = Some(q);
        }
        // The bookkeeping part of the service was done under the lock.
        let service = self.shared.borrow().reqs[id].service;
        self.phase = Phase::Served(id);
        Op::Compute(service.saturating_sub(self.costs.bookkeeping).max(1))
    }

    fn finish_records(&mut self, sh: &Shared) {
        let mut recs: Vec<Op> = throughput(sh.total, sh.first_generated, sh.last_generated)
            .map(|per_cycle| Op::Record {
                name: "throughput",
                value: per_cycle * self.costs.cycles_per_ms,
            })
            .into_iter()
            .collect();
        for (k, v) in load_distribution(&sh.per_scheduler).into_iter().enumerate() {
            recs.push(Op::Record {
                name: LOAD_NAMES[k],
                value: v,
            });
        }
        recs.reverse();
        self.records.extend(recs);
    }
}

impl Scheduler {
    /// Resumes the protocol in progress with `outcome`: the operation it asks for next, or
    /// `None` once it is finished and the scheduler goes on with its phase.
    fn resume_active(&mut self, outcome: Option<&smpsched_sim::Outcome>) -> Option<Op> {
        // The protocol in progress, resumed in place (moving it out and back at every step
        // would copy it twice per operation).
        match &mut self.active {
            Active::None => None,
            Active::Poll(p, q, secondary) => match p.resume(outcome) {
                Step::Op(op) => Some(op),
                Step::Done(found) => {
                    let (q, secondary, lost) = (*q, *secondary, p.lost);
                    self.active = Active::None;
                    self.lost += u64::from(lost);
                    if let Some(i) = found {
                        self.reserved(q, i, secondary);
                    }
                    // The take, when a request was reserved, starts at once.
                    self.resume_active(None)
                }
            },
            Active::Take(t, q) => match t.resume(outcome) {
                Step::Op(op) => Some(op),
                Step::Done(w) => {
                    let q = *q;
                    self.active = Active::None;
                    Some(self.serve(w, q))
                }
            },
            Active::FcfsTake(t, q) => match t.resume(outcome) {
                Step::Op(op) => Some(op),
                Step::Done(Some(w)) => {
                    let q = *q;
                    self.active = Active::None;
                    Some(self.serve(w, q))
                }
                Step::Done(None) => {
                    self.active = Active::None;
                    None
                }
            },
            Active::Reply(r) => match r.resume(outcome) {
                Step::Op(op) => Some(op),
                Step::Done(()) => {
                    self.active = Active::None;
                    None
                }
            },
        }
    }

    /// Mailbox `i` of queue `q` was reserved: remember it and start taking its request.
    fn reserved(&mut self, q: usize, i: usize, secondary: bool) {
        if secondary {
            self.last_secondary = i;
        } else {
            self.last_primary = i;
        }
        if let Structure::MultiAccess(l) = self.structure {
            let take = TakeRequest::new(&l, q, i, self.costs.pause).holding(self.costs.bookkeeping);
            self.active = Active::Take(take, q);
        }
    }

    /// At the start of a round: once every request is serviced, the scheduler's records and
    /// exit; otherwise the round's order (and its draw's cost).
    fn round_step(&mut self, cx: &mut ThreadCtx<'_>) -> Option<Op> {
        let done = {
            let sh = self.shared.borrow();
            sh.serviced >= sh.total
        };
        if !done {
            return self.round(cx);
        }
        if self.lost > 0 {
            let v = self.lost as f64;
            self.lost = 0;
            return Some(Op::Record {
                name: "lost_recheck",
                value: v,
            });
        }
        if self.secondary > 0 {
            let v = self.secondary as f64;
            self.secondary = 0;
            return Some(Op::Record {
                name: "secondary",
                value: v,
            });
        }
        Some(Op::Exit)
    }

    /// The service of request `id` ended at `now`: count it, record its delay and write the
    /// reply (multi-access).
    fn served(&mut self, now: smpsched_sim::Cycles, id: usize) -> Op {
        let shared = self.shared.clone();
        let mut sh = shared.borrow_mut();
        let before = sh.serviced;
        let r = &mut sh.reqs[id];
        r.serviced += 1;
        r.serviced_after = before;
        r.by = self.me as u32;
        let delay = now.saturating_sub(r.generated) as f64 / self.costs.cycles_per_ms;
        let (q, i) = r.mailbox;
        sh.serviced += 1;
        sh.per_scheduler[self.me] += 1;
        if sh.serviced == sh.total && !sh.finished {
            sh.finished = true;
            self.finish_records(&sh);
        }
        drop(sh);
        self.phase = Phase::Replied(id);
        if let Structure::MultiAccess(l) = self.structure {
            self.active = Active::Reply(PutReply::new(&l, q, i, id as u64 + 1, self.costs.pause));
        }
        Op::Record {
            name: "delay",
            value: delay,
        }
    }

    /// The reply signal to request `id`'s client is sent: it arrives `signal` later.
    fn signalled(&mut self, now: smpsched_sim::Cycles, id: usize) -> Option<Op> {
        let mut sh = self.shared.borrow_mut();
        let (client, (q, i)) = (sh.reqs[id].client as usize, sh.reqs[id].mailbox);
        let at = now + self.costs.signal;
        sh.replies[client].push_back((at, q, i));
        // Synchronously every reply sets the client's event; with `sigpause`, only a reply to a
        // client waiting in it.
        let wake = match sh.paused.get_mut(client) {
            Some(paused) => std::mem::take(paused),
            None => true,
        };
        let event = sh.events.get(client).copied().filter(|_| wake);
        drop(sh);
        self.phase = Phase::Round;
        event.map(Op::Signal)
    }
}

impl Program for Scheduler {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        loop {
            if let Some(op) = self.records.pop() {
                return op;
            }
            let outcome = cx.take_outcome();
            if let Some(op) = self.resume_active(outcome.as_ref()) {
                return op;
            }
            let op = match self.phase {
                Phase::Round => self.round_step(cx),
                Phase::Visit => Some(self.visit()),
                Phase::Served(id) => Some(self.served(cx.now, id)),
                Phase::Replied(id) => {
                    self.phase = Phase::Signalled(id);
                    let send = self.costs.send_dist.draw(self.costs.send, cx.rng);
                    Some(Op::Compute(send.max(1)))
                }
                Phase::Signalled(id) => self.signalled(cx.now, id),
            };
            if let Some(op) = op {
                return op;
            }
        }
    }
}
