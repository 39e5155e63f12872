//! A client process of DiBella et al. 1992 (section 2.3): it generates requests, places each in
//! the queue its policy chooses ([`client_queue`]) with the structure's post protocol, and
//! services the interrupt of each reply signal, collecting the reply from the OUT-box.
//!
//! The Primary policies read the primary queue's bitmap (one load, no lock) and count its set
//! bits, a loop over its MaxReqs bits (`count_ms` each), to learn its length against the cutoff
//! capacity. A post that finds every mailbox in use pauses, services the replies whose signals
//! have arrived (collecting a reply frees its mailbox, section 2.1) and chooses again (a Static
//! client chooses the same queue); with `sigpause`, an asynchronous client with a request
//! outstanding instead waits for its next reply signal, services it and chooses again. Once
//! every request is generated, a client still collects its outstanding replies before it exits.
//! Asynchronously, a reply's interrupt is serviced at the client's next step after the signal
//! arrives; synchronously the client blocks until the signal arrives, then services it and
//! posts its next request (section 4.2).

use std::cell::RefCell;
use std::rc::Rc;

use rand::Rng;
use smpsched_policy::dibella::{client_primary, client_queue, ClientPolicy};
use smpsched_sim::readyq::fcfs::FcfsPost;
use smpsched_sim::readyq::multi_access::CollectReply;
use smpsched_sim::readyq::multi_access_post::Post;
use smpsched_sim::readyq::Step;
use smpsched_sim::{Cycles, Op, Outcome, Program, ThreadCtx, WordOp};

use super::{Costs, Req, ServiceDist, Shared, Structure};
use crate::dist::Dist;

enum Active {
    None,
    Post(Post, usize, usize),
    FcfsPost(FcfsPost, usize, usize),
    Collect(CollectReply),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Top,
    /// The interrupt of the reply in (queue, mailbox) is being serviced: collect it.
    Collect(usize, usize),
    /// The part of request `id`'s composing before its generation stamp is done: stamp it
    /// and compose the rest (cycles).
    Stamp(usize, Cycles),
    /// Request `id` is composed: choose its queue.
    Choose(usize),
    /// The primary queue's bitmap was read for request `id`.
    Length(usize),
    /// Post request `id` in queue `q`.
    Post(usize, usize),
    /// Request `id` is posted.
    Posted,
    /// Every mailbox of the chosen queue was in use for request `id`: service the replies
    /// that arrived (freeing their mailboxes), then choose again.
    Retry(usize),
    /// Every mailbox of the chosen queue was in use for request `id`, and the client waits in
    /// sigpause for a reply signal (`sigpause`).
    Paused(usize),
    /// Woken in sigpause for request `id` by a reply's signal being sent.
    PauseWoken(usize),
    /// Blocked for the reply signal (synchronous).
    Waiting,
    /// The reply signal was sent: wait for it to arrive, then service it.
    Delivered,
}

/// A client process.
pub(crate) struct Client {
    me: usize,
    queues: usize,
    policy: ClientPolicy,
    /// Mean wait between requests (cycles); `None`: synchronous.
    gap: Option<f64>,
    service: (Cycles, ServiceDist),
    structure: Structure,
    costs: Costs,
    shared: Rc<RefCell<Shared>>,
    active: Active,
    phase: Phase,
    sequence: u64,
    waited: bool,
    /// The mailbox last used in each queue.
    last: Vec<usize>,
    full: u64,
    /// Requests posted whose replies are not yet collected.
    outstanding: u64,
    /// Where the client goes once a reply is collected.
    after_collect: Phase,
}

impl Client {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        me: usize,
        queues: usize,
        policy: ClientPolicy,
        gap: Option<f64>,
        service: (Cycles, ServiceDist),
        structure: Structure,
        costs: Costs,
        shared: &Rc<RefCell<Shared>>,
    ) -> Self {
        let mailboxes = structure.mailboxes();
        Client {
            me,
            queues,
            policy,
            gap,
            service,
            structure,
            costs,
            shared: shared.clone(),
            active: Active::None,
            phase: Phase::Top,
            sequence: 0,
            waited: false,
            last: vec![mailboxes - 1; queues],
            full: 0,
            outstanding: 0,
            after_collect: Phase::Top,
        }
    }

    /// The record of the time from a request's generation to the end of its post (composing,
    /// choosing, lock waits, retries of full queues), in ms.
    fn post_record(&self, now: Cycles, generated: Cycles) -> Op {
        Op::Record {
            name: "post",
            value: now.saturating_sub(generated) as f64 / self.costs.cycles_per_ms,
        }
    }

    fn event(&self) -> Option<smpsched_sim::SyncId> {
        self.shared.borrow().events.get(self.me).copied()
    }

    /// The reply (its queue and mailbox) whose signal has arrived by `now`, taken off the
    /// client's list; only asynchronously (a synchronous client waits for its one reply).
    fn due_reply(&mut self, now: Cycles) -> Option<(usize, usize)> {
        self.reply_by(now)
    }

    /// [`Client::due_reply`] for a client spinning on a full queue: a signal that arrived is
    /// delivered only once a clock interrupt has come since (with `tick_signals`; else at once).
    fn delivered_spinning(&mut self, now: Cycles) -> Option<(usize, usize)> {
        let by = match self.costs.tick {
            0 => now,
            tick => (now / tick).saturating_mul(tick),
        };
        self.reply_by(by)
    }

    /// The first reply whose signal arrived by `by`, taken off the client's list.
    fn reply_by(&mut self, by: Cycles) -> Option<(usize, usize)> {
        self.gap?;
        let mut sh = self.shared.borrow_mut();
        match sh.replies[self.me].front() {
            Some(&(at, q, i)) if at <= by => {
                sh.replies[self.me].pop_front();
                self.outstanding -= 1;
                Some((q, i))
            }
            _ => None,
        }
    }

    /// Once every request is generated, a multi-access client still collects its replies,
    /// so that no mailbox stays in use for a client that has gone: the operation that waits
    /// for or services the next one, `None` when none is left.
    fn drain(&mut self, now: Cycles) -> Option<Op> {
        if self.outstanding == 0 || !matches!(self.structure, Structure::MultiAccess(_)) {
            return None;
        }
        if let Some((q, i)) = self.due_reply(now) {
            self.phase = Phase::Collect(q, i);
            return Some(Op::Compute(self.costs.interrupt.max(1)));
        }
        let front = self.shared.borrow().replies[self.me].front().copied();
        Some(match front {
            Some((at, _, _)) => Op::Sleep(at.saturating_sub(now).max(1)),
            None => Op::Sleep(self.costs.interrupt.max(1)),
        })
    }

    /// The queue for the next request, given the primary's length; with the random draw's cost.
    fn choose(&mut self, cx: &mut ThreadCtx<'_>, primary_len: usize) -> (usize, Cycles) {
        let draw: u64 = cx.rng.random();
        let queues = match self.structure {
            Structure::Fcfs(l) => l.queues(),
            Structure::MultiAccess(_) => self.queues,
        };
        let q = client_queue(
            self.policy,
            self.me,
            self.sequence,
            queues,
            primary_len,
            draw,
        );
        let drew = match self.policy {
            ClientPolicy::Random | ClientPolicy::RandomFcfs => true,
            ClientPolicy::PrimaryRandom { .. } => q != client_primary(self.me, queues),
            _ => false,
        };
        (q, if drew { self.costs.random } else { 0 })
    }
}

impl Client {
    /// Resumes the protocol in progress with `outcome`: the operation it asks for next, or
    /// `None` once it is finished (its result already taken into the client's phase).
    fn resume_active(&mut self, now: Cycles, outcome: Option<&Outcome>) -> Option<Op> {
        // The protocol in progress, resumed in place (it is large: moving it out and back at
        // every step would copy it twice per operation).
        match &mut self.active {
            Active::None => None,
            Active::Post(p, id, q) => match p.resume(outcome) {
                Step::Op(op) => Some(op),
                Step::Done(Some(i)) => {
                    let (id, q) = (*id, *q);
                    self.last[q] = i;
                    Some(self.posted(now, id, (q, i)))
                }
                Step::Done(None) => {
                    let id = *id;
                    if self.costs.sigpause && self.gap.is_some() && self.outstanding > 0 {
                        self.active = Active::None;
                        self.full += 1;
                        self.phase = Phase::Paused(id);
                        return None;
                    }
                    Some(self.found_full(Phase::Retry(id)))
                }
            },
            Active::FcfsPost(p, id, q) => match p.resume(outcome) {
                Step::Op(op) => Some(op),
                Step::Done(true) => {
                    let (id, q) = (*id, *q);
                    Some(self.posted(now, id, (q, 0)))
                }
                Step::Done(false) => {
                    let id = *id;
                    Some(self.found_full(Phase::Choose(id)))
                }
            },
            Active::Collect(c) => match c.resume(outcome) {
                Step::Op(op) => Some(op),
                Step::Done(_) => {
                    self.active = Active::None;
                    None
                }
            },
        }
    }

    /// Request `id` is in `mailbox`: note it and record the post's time.
    fn posted(&mut self, now: Cycles, id: usize, mailbox: (usize, usize)) -> Op {
        self.active = Active::None;
        let mut sh = self.shared.borrow_mut();
        sh.reqs[id].posted_after = sh.serviced;
        sh.reqs[id].mailbox = mailbox;
        self.phase = Phase::Posted;
        self.post_record(now, sh.reqs[id].generated)
    }

    /// Every mailbox of the chosen queue was in use: pause, then go on at `then`.
    fn found_full(&mut self, then: Phase) -> Op {
        self.active = Active::None;
        self.full += 1;
        self.phase = then;
        Op::Compute(self.costs.pause.cycles.saturating_mul(25).max(1))
    }

    /// In sigpause for request `id` (its queue was full): service a reply whose signal has
    /// arrived and then post again, or sleep until the next one sent arrives, or wait for one
    /// to be sent (the scheduler that sends it sets the client's event).
    fn sigpaused(&mut self, now: Cycles, id: usize) -> Op {
        if let Some((q, i)) = self.due_reply(now) {
            self.after_collect = Phase::Retry(id);
            self.phase = Phase::Collect(q, i);
            return Op::Compute(self.costs.interrupt.max(1));
        }
        let mut sh = self.shared.borrow_mut();
        if let Some(&(at, _, _)) = sh.replies[self.me].front() {
            return Op::Sleep(at.saturating_sub(now).max(1));
        }
        sh.paused[self.me] = true;
        let event = sh.events[self.me];
        self.phase = Phase::PauseWoken(id);
        Op::Wait(event)
    }

    /// At the top of the cycle: service a reply that arrived, finish once every request is
    /// generated, or wait (slow clients), then generate the next request and compose it.
    fn top(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        if let Some((q, i)) = self.due_reply(cx.now) {
            self.phase = Phase::Collect(q, i);
            return Op::Compute(self.costs.interrupt.max(1));
        }
        if self.generated_all() {
            return self.finish(cx.now);
        }
        if let Some(mean) = self.gap {
            if !self.waited && mean > 0.0 {
                self.waited = true;
                let wait = Dist::Exponential { mean }.sample(cx.rng);
                if wait > 0 {
                    return Op::Compute(wait);
                }
            }
        }
        self.waited = false;
        self.compose(cx)
    }

    fn generated_all(&self) -> bool {
        let sh = self.shared.borrow();
        sh.reqs.len() as u64 >= sh.total
    }

    /// Every request is generated: collect the outstanding replies, record the full queues
    /// found, exit.
    fn finish(&mut self, now: Cycles) -> Op {
        if let Some(op) = self.drain(now) {
            return op;
        }
        if self.full > 0 {
            let v = self.full as f64;
            self.full = 0;
            return Op::Record {
                name: "full",
                value: v,
            };
        }
        Op::Exit
    }

    /// Takes the next request (its service time drawn as the file says) and composes it: the
    /// share `post_before` of its composing time before the request is generated (stamped),
    /// the rest after. The request is counted at once, so that no other client takes one
    /// more than the run's total while this one composes.
    fn compose(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        let service = self.service.1.draw(self.service.0, cx.rng);
        let id = {
            let mut sh = self.shared.borrow_mut();
            sh.reqs.push(Req {
                client: self.me as u32,
                generated: cx.now,
                service,
                serviced: 0,
                mailbox: (0, 0),
                posted_after: 0,
                serviced_after: 0,
                by: u32::MAX,
            });
            sh.reqs.len() - 1
        };
        let post = self.costs.post_dist.draw(self.costs.post, cx.rng);
        let before = (post as f64 * self.costs.post_before).round() as Cycles;
        if before == 0 {
            return self.generate(cx.now, id, post);
        }
        self.phase = Phase::Stamp(id, post - before);
        Op::Compute(before)
    }

    /// Request `id` is generated at `now`: stamp it, then compose for `post` cycles.
    fn generate(&mut self, now: Cycles, id: usize, post: Cycles) -> Op {
        let mut sh = self.shared.borrow_mut();
        sh.reqs[id].generated = now;
        sh.first_generated = sh.first_generated.min(now);
        sh.last_generated = now;
        self.phase = Phase::Choose(id);
        Op::Compute(post.max(1))
    }

    /// Request `id` is composed: read the primary's bitmap (Primary policies), or choose its
    /// queue and pay the draw.
    fn choose_step(&mut self, cx: &mut ThreadCtx<'_>, id: usize) -> Option<Op> {
        let primary_read = matches!(
            self.policy,
            ClientPolicy::PrimaryRandom { .. } | ClientPolicy::PrimaryFixed { .. }
        );
        if let (true, Structure::MultiAccess(l)) = (primary_read, self.structure) {
            self.phase = Phase::Length(id);
            return Some(Op::Word {
                addr: l.bitmap(client_primary(self.me, self.queues)),
                op: WordOp::Load,
            });
        }
        let (q, cost) = self.choose(cx, 0);
        self.phase = Phase::Post(id, q);
        (cost > 0).then_some(Op::Compute(cost))
    }

    /// The primary's bitmap was read for request `id`: count its bits, choose the queue.
    fn length_step(
        &mut self,
        cx: &mut ThreadCtx<'_>,
        id: usize,
        outcome: Option<Outcome>,
    ) -> Option<Op> {
        let bm = match outcome {
            Some(Outcome::Word { old, .. }) => old,
            _ => 0,
        };
        let (q, draw) = self.choose(cx, bm.count_ones() as usize);
        // Counting the primary's bits is a loop over its MaxReqs mailboxes.
        let bits = self.structure.mailboxes() as Cycles;
        let cost = draw + self.costs.count.saturating_mul(bits);
        self.phase = Phase::Post(id, q);
        (cost > 0).then_some(Op::Compute(cost))
    }

    /// Starts posting request `id` in queue `q` with the structure's protocol.
    fn start_post(&mut self, id: usize, q: usize) {
        let value = id as u64 + 1;
        self.active = match self.structure {
            Structure::MultiAccess(l) => Active::Post(
                Post::new(l, q, value, self.last[q], self.costs.pause)
                    .holding(self.costs.fill)
                    .searching(self.costs.free_search),
                id,
                q,
            ),
            Structure::Fcfs(l) => {
                let post = FcfsPost::new(l, q, value, self.costs.pause).holding(self.costs.fill);
                Active::FcfsPost(post, id, q)
            }
        };
    }

    /// Request posted: asynchronously back to the top; synchronously wait for its reply.
    fn after_post(&mut self) -> Option<Op> {
        self.sequence += 1;
        self.outstanding += 1;
        self.phase = Phase::Top;
        if self.gap.is_none() {
            if let Some(e) = self.event() {
                self.phase = Phase::Waiting;
                return Some(Op::Wait(e));
            }
        }
        None
    }

    /// Synchronously, the reply signal was sent: wait for it to arrive, then service it.
    fn delivered(&mut self, now: Cycles) -> Option<Op> {
        let front = self.shared.borrow().replies[self.me].front().copied();
        match front {
            Some((at, _, _)) if at > now => Some(Op::Sleep(at - now)),
            Some((_, q, i)) => {
                self.shared.borrow_mut().replies[self.me].pop_front();
                self.outstanding -= 1;
                self.phase = Phase::Collect(q, i);
                Some(Op::Compute(self.costs.interrupt.max(1)))
            }
            None => {
                // Woken without a reply (cannot happen): wait again.
                self.phase = Phase::Posted;
                self.sequence -= 1;
                None
            }
        }
    }

    /// One step of the client's cycle in its current phase: the operation to issue, or
    /// `None` to go on at once with the phase it moved to.
    fn phase_step(&mut self, cx: &mut ThreadCtx<'_>, outcome: Option<Outcome>) -> Option<Op> {
        match self.phase {
            Phase::Top => Some(self.top(cx)),
            Phase::Stamp(id, rest) => Some(self.generate(cx.now, id, rest)),
            Phase::Retry(id) => {
                self.phase = Phase::Choose(id);
                let (q, i) = self.delivered_spinning(cx.now)?;
                self.after_collect = Phase::Retry(id);
                self.phase = Phase::Collect(q, i);
                Some(Op::Compute(self.costs.interrupt.max(1)))
            }
            Phase::Collect(q, i) => {
                self.phase = std::mem::replace(&mut self.after_collect, Phase::Top);
                if let Structure::MultiAccess(l) = self.structure {
                    self.active = Active::Collect(CollectReply::new(&l, q, i, self.costs.pause));
                }
                None
            }
            Phase::Choose(id) => self.choose_step(cx, id),
            Phase::Length(id) => self.length_step(cx, id, outcome),
            Phase::Post(id, q) => {
                self.start_post(id, q);
                None
            }
            Phase::Posted => self.after_post(),
            Phase::Paused(id) => Some(self.sigpaused(cx.now, id)),
            Phase::PauseWoken(id) => {
                self.phase = Phase::Paused(id);
                self.event().map(Op::Clear)
            }
            Phase::Waiting => {
                self.phase = Phase::Delivered;
                self.event().map(Op::Clear)
            }
            Phase::Delivered => self.delivered(cx.now),
        }
    }
}

impl Program for Client {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        loop {
            let outcome = cx.take_outcome();
            if let Some(op) = self.resume_active(cx.now, outcome.as_ref()) {
                return op;
            }
            if let Some(op) = self.phase_step(cx, outcome) {
                return op;
            }
        }
    }
}
