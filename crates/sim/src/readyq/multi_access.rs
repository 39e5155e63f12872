//! DiBella et al. 1992's multi-access distributed ready queue (section 2.1) laid out in simulated
//! memory, and the protocols client and scheduler programs drive on it.
//!
//! There is one queue per processor. A queue is `mailboxes` mailboxes (MaxReqs: 32 in the paper,
//! at most 64 here) and a bitmap with one bit per mailbox, guarded by the queue's one bitmap
//! lock. A mailbox is an IN-box (the request) and an OUT-box (the reply), each with its own
//! lock. Every lock is a test-and-test-and-set spin lock on a word ([`Acquire`]); every lock,
//! bitmap and mailbox access is an [`Op::Word`](crate::Op::Word) on the [`Layout`]'s addresses, so contention is
//! measured by the memory model, not assumed.
//!
//! Protocols (each a [`Step`] machine):
//! * [`Poll`] — a scheduler's optimistic search of one queue: read the bitmap *without* the
//!   lock, pick the first set bit after its remembered last-serviced mailbox in its search
//!   direction ([`next_mailbox`]), take the bitmap lock, re-check the bit, reset it if still set
//!   (the mailbox is now reserved for this scheduler) and release; if another scheduler reset it
//!   first, release at once, count a lost re-check and keep searching.
//! * [`TakeRequest`] — the reserving scheduler takes the request from the IN-box under its lock
//!   (its other words copied out under that lock), leaving it [`TAKEN`] (and, where asked, processes the request's information before letting
//!   the lock go).
//! * `Post` (its own module, `multi_access_post`) — a client finds a free IN-box (its bit clear
//!   and the IN-box read empty without the lock, then checked again under the IN-box lock),
//!   writes the request, then sets the bit under the bitmap lock.
//! * [`PutReply`] / [`CollectReply`] — the OUT-box written by the scheduler, read by the client,
//!   who then empties the IN-box: the mailbox is in use from the post until the reply is
//!   collected (section 2.1: the OUT-box is reserved for the reply).
//!
//! Invariants: a bit is set only by the client that filled its IN-box and reset only under the
//! bitmap lock by a scheduler that saw it set under that lock, so each posted request is
//! reserved by exactly one scheduler; a mailbox is reused only after its client collected the
//! reply, so an OUT-box never holds two replies. Request words are never 0 (an empty box) nor
//! [`TAKEN`].

use smpsched_policy::dibella::{bits_examined, next_mailbox, Direction};

use super::copy::{body_bytes, Copy};
use super::spin::{release, word, word_outcome, Acquire, Locked, Pause, Step, Write};

use crate::ids::Cycles;
use crate::outcome::{Outcome, WordOp};

/// The most mailboxes a queue may have (one bitmap word).
pub const MAX_MAILBOXES: usize = 64;

/// What a scheduler leaves in an IN-box it took the request from: the mailbox stays in use,
/// its OUT-box reserved for the reply (section 2.1: "Once a client has successfully posted a
/// request in an IN-box, the OUT-box is implicitly reserved for the reply to that request"),
/// until the client collects the reply and empties the IN-box.
pub const TAKEN: u64 = u64::MAX;

/// Where each queue's bitmap lock, bitmap and mailboxes lie in simulated memory. Every lock and
/// its data share a block of `stride` bytes (at least 16, one cache line when lines are 16
/// bytes or more): the word at the block's start is the lock, the next one the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    base: u64,
    queues: usize,
    pub(super) mailboxes: usize,
    stride: u64,
    /// Words of a request beyond its IN-box word, copied under the IN-box lock.
    pub(super) words: u32,
}

impl Layout {
    /// The layout of `queues` queues of `mailboxes` mailboxes (1 to [`MAX_MAILBOXES`]) starting
    /// at `base`, one block per cache line of `line_bytes`.
    pub fn new(base: u64, queues: usize, mailboxes: usize, line_bytes: u64) -> Self {
        assert!((1..=MAX_MAILBOXES).contains(&mailboxes) && queues > 0);
        Layout {
            base,
            queues,
            mailboxes,
            stride: line_bytes.max(16),
            words: 0,
        }
    }

    /// The same layout with requests of `words` words beyond the IN-box word, each mailbox's
    /// body in whole lines after every queue's blocks: the poster stores them and the taker
    /// loads them under the IN-box lock ([`Copy`](struct@Copy)).
    pub fn with_request_words(self, words: u32) -> Self {
        Layout { words, ..self }
    }

    /// Bytes the layout of `queues` queues of `mailboxes` mailboxes with requests of `words`
    /// words beyond the IN-box word occupies.
    pub fn bytes(queues: usize, mailboxes: usize, line_bytes: u64, words: u32) -> u64 {
        let stride = line_bytes.max(16);
        let bodies = queues as u64 * mailboxes as u64 * body_bytes(words, stride);
        queues as u64 * (1 + 2 * mailboxes as u64) * stride + bodies
    }

    /// Words of a request beyond its IN-box word.
    pub fn request_words(&self) -> u32 {
        self.words
    }

    /// The first of the request words of mailbox `i`'s IN-box in queue `q`.
    pub fn inbox_body(&self, q: usize, i: usize) -> u64 {
        debug_assert!(q < self.queues && i < self.mailboxes);
        let blocks = self.queues as u64 * (1 + 2 * self.mailboxes as u64) * self.stride;
        let k = (q * self.mailboxes + i) as u64;
        self.base + blocks + k * body_bytes(self.words, self.stride)
    }

    /// Queues.
    pub fn queues(&self) -> usize {
        self.queues
    }

    /// Mailboxes per queue (MaxReqs).
    pub fn mailboxes(&self) -> usize {
        self.mailboxes
    }

    fn block(&self, q: usize, k: u64) -> u64 {
        debug_assert!(q < self.queues);
        self.base + (q as u64 * (1 + 2 * self.mailboxes as u64) + k) * self.stride
    }

    /// The bitmap lock of queue `q`.
    pub fn bitmap_lock(&self, q: usize) -> u64 {
        self.block(q, 0)
    }

    /// The bitmap of queue `q` (bit `i` set: mailbox `i` holds a request).
    pub fn bitmap(&self, q: usize) -> u64 {
        self.block(q, 0) + 8
    }

    /// The lock of mailbox `i`'s IN-box in queue `q`.
    pub fn inbox_lock(&self, q: usize, i: usize) -> u64 {
        debug_assert!(i < self.mailboxes);
        self.block(q, 1 + 2 * i as u64)
    }

    /// Mailbox `i`'s IN-box in queue `q` (the request word; 0 when empty).
    pub fn inbox(&self, q: usize, i: usize) -> u64 {
        self.inbox_lock(q, i) + 8
    }

    /// The lock of mailbox `i`'s OUT-box in queue `q`.
    pub fn outbox_lock(&self, q: usize, i: usize) -> u64 {
        self.block(q, 2 + 2 * i as u64)
    }

    /// Mailbox `i`'s OUT-box in queue `q` (the reply word).
    pub fn outbox(&self, q: usize, i: usize) -> u64 {
        self.outbox_lock(q, i) + 8
    }

    /// The bits a bitmap of this queue may hold.
    pub fn valid_bits(&self) -> u64 {
        if self.mailboxes == 64 {
            u64::MAX
        } else {
            (1u64 << self.mailboxes) - 1
        }
    }
}

#[derive(Clone, Debug)]
enum PollState {
    Start,
    Scanned,
    Locking(Acquire, usize),
    Recheck(usize),
    Reset(usize),
    Released(Option<usize>, u64),
    Searched(Option<usize>),
}

/// A scheduler's optimistic search of queue `q` from its remembered mailbox `last` in direction
/// `dir`: [`Step::Done`] with the mailbox it reserved (its bit now reset), or `None` when the
/// queue held no request it could reserve.
#[derive(Clone, Debug)]
pub struct Poll {
    layout: Layout,
    q: usize,
    last: usize,
    dir: Direction,
    pause: Pause,
    state: PollState,
    /// Re-checks under the bitmap lock that found the bit already reset by another scheduler.
    pub lost: u32,
    /// Failed test-and-sets on the bitmap lock.
    pub lock_failures: u32,
    /// Cycles per bit examined ([`Poll::searching`]).
    per_bit: Cycles,
}

impl Poll {
    /// The same search, paying `per_bit` cycles for each bit it examines before it takes the
    /// bitmap lock (or gives up): section 2.2, the scheduler "increments its mailbox index by one
    /// and sequentially searches the queue", so finding mailbox `i` examines the bits from the
    /// one after `last` to `i` in the search's direction, and an empty bitmap every bit.
    pub fn searching(self, per_bit: Cycles) -> Self {
        Poll { per_bit, ..self }
    }

    /// Searching queue `q` of `layout` after mailbox `last` in direction `dir`, pausing `pause`
    /// cycles between reads of a held lock.
    pub fn new(
        layout: Layout,
        q: usize,
        last: usize,
        dir: Direction,
        pause: impl Into<Pause>,
    ) -> Self {
        let pause = pause.into();
        Poll {
            layout,
            q,
            last,
            dir,
            pause,
            state: PollState::Start,
            lost: 0,
            lock_failures: 0,
            per_bit: 0,
        }
    }

    fn pick(&mut self, bitmap: u64) -> Step<Option<usize>> {
        let bits = bitmap & self.layout.valid_bits();
        let found = next_mailbox(&[bits], self.last, self.dir);
        if self.per_bit > 0 {
            let examined = bits_examined(self.layout.mailboxes, self.last, found, self.dir);
            self.state = PollState::Searched(found);
            return Step::Op(crate::Op::Compute(self.per_bit * examined as Cycles));
        }
        self.lock(found)
    }

    /// Takes the bitmap lock to reserve mailbox `found`, or ends the search when there is none.
    fn lock(&mut self, found: Option<usize>) -> Step<Option<usize>> {
        match found {
            None => Step::Done(None),
            Some(i) => {
                let mut acq = Acquire::new(self.layout.bitmap_lock(self.q), self.pause);
                let op = match acq.resume(None) {
                    Step::Op(op) => op,
                    Step::Done(()) => unreachable!("an acquisition starts with a test-and-set"),
                };
                self.state = PollState::Locking(acq, i);
                Step::Op(op)
            }
        }
    }

    /// The next step, given the outcome of the operation issued last.
    #[inline]
    pub fn resume(&mut self, outcome: Option<&Outcome>) -> Step<Option<usize>> {
        match &mut self.state {
            PollState::Start => {
                self.state = PollState::Scanned;
                Step::Op(word(self.layout.bitmap(self.q), WordOp::Load))
            }
            PollState::Scanned => {
                let bm = word_outcome(outcome).0;
                self.pick(bm)
            }
            PollState::Locking(acq, i) => {
                let i = *i;
                match acq.resume(outcome) {
                    Step::Op(op) => Step::Op(op),
                    Step::Done(()) => {
                        self.lock_failures += acq.failed;
                        self.state = PollState::Recheck(i);
                        Step::Op(word(self.layout.bitmap(self.q), WordOp::Load))
                    }
                }
            }
            PollState::Recheck(i) => {
                let i = *i;
                let bm = word_outcome(outcome).0;
                if bm >> i & 1 == 1 {
                    self.state = PollState::Reset(i);
                    Step::Op(word(
                        self.layout.bitmap(self.q),
                        WordOp::Store(bm & !(1u64 << i)),
                    ))
                } else {
                    // Another scheduler reset it first: let go at once and search on.
                    self.lost += 1;
                    self.last = i;
                    self.state = PollState::Released(None, bm);
                    Step::Op(release(self.layout.bitmap_lock(self.q)))
                }
            }
            PollState::Reset(i) => {
                let i = *i;
                self.state = PollState::Released(Some(i), 0);
                Step::Op(release(self.layout.bitmap_lock(self.q)))
            }
            PollState::Searched(found) => {
                let found = *found;
                self.lock(found)
            }
            PollState::Released(found, bm) => match *found {
                Some(i) => Step::Done(Some(i)),
                None => {
                    let bm = *bm;
                    self.pick(bm)
                }
            },
        }
    }
}

/// A scheduler empties mailbox `i`'s IN-box (reserved by its [`Poll`]) under the IN-box lock:
/// [`Step::Done`] with the request word.
#[derive(Clone, Debug)]
pub struct TakeRequest(Locked);

impl TakeRequest {
    /// Taking the request of mailbox `i` of queue `q`.
    pub fn new(layout: &Layout, q: usize, i: usize, pause: impl Into<Pause>) -> Self {
        let pause = pause.into();
        let inbox = layout.inbox(q, i);
        let locked = Locked::new(
            layout.inbox_lock(q, i),
            pause,
            Some(inbox),
            Write::Always(inbox, TAKEN),
        );
        TakeRequest(match layout.words {
            0 => locked,
            w => locked.copying(Copy::load(layout.inbox_body(q, i), w)),
        })
    }

    /// The same take, processing the request for `hold` cycles before it lets the IN-box lock
    /// go (section 2.1: "the remainder of the request information is processed while a process
    /// has sole access to an IN-box or OUT-box lock").
    pub fn holding(self, hold: Cycles) -> Self {
        TakeRequest(self.0.holding(hold))
    }

    /// The next step; done with the request word (0 if the IN-box was empty: a broken
    /// invariant).
    #[inline]
    pub fn resume(&mut self, outcome: Option<&Outcome>) -> Step<u64> {
        match self.0.resume(outcome) {
            Step::Op(op) => Step::Op(op),
            Step::Done((v, _)) => Step::Done(v),
        }
    }
}

/// A scheduler writes the reply `value` into mailbox `i`'s OUT-box under its lock.
#[derive(Clone, Debug)]
pub struct PutReply(Locked);

impl PutReply {
    /// Writing `value` into the OUT-box of mailbox `i` of queue `q`.
    pub fn new(layout: &Layout, q: usize, i: usize, value: u64, pause: impl Into<Pause>) -> Self {
        let pause = pause.into();
        PutReply(Locked::new(
            layout.outbox_lock(q, i),
            pause,
            None,
            Write::Always(layout.outbox(q, i), value),
        ))
    }

    /// The next step.
    #[inline]
    pub fn resume(&mut self, outcome: Option<&Outcome>) -> Step<()> {
        match self.0.resume(outcome) {
            Step::Op(op) => Step::Op(op),
            Step::Done(_) => Step::Done(()),
        }
    }
}

/// A client reads (and empties) mailbox `i`'s OUT-box under its lock, then frees the mailbox
/// (empties its IN-box, which its scheduler left [`TAKEN`]): done with the reply word.
#[derive(Clone, Debug)]
pub struct CollectReply {
    locked: Locked,
    inbox: u64,
    reply: Option<u64>,
}

impl CollectReply {
    /// Collecting the reply in mailbox `i` of queue `q`.
    pub fn new(layout: &Layout, q: usize, i: usize, pause: impl Into<Pause>) -> Self {
        let pause = pause.into();
        let outbox = layout.outbox(q, i);
        CollectReply {
            locked: Locked::new(
                layout.outbox_lock(q, i),
                pause,
                Some(outbox),
                Write::Always(outbox, 0),
            ),
            inbox: layout.inbox(q, i),
            reply: None,
        }
    }

    /// The next step; done with the reply word.
    #[inline]
    pub fn resume(&mut self, outcome: Option<&Outcome>) -> Step<u64> {
        if let Some(v) = self.reply {
            return Step::Done(v);
        }
        match self.locked.resume(outcome) {
            Step::Op(op) => Step::Op(op),
            Step::Done((v, _)) => {
                self.reply = Some(v);
                Step::Op(word(self.inbox, WordOp::Store(0)))
            }
        }
    }
}
