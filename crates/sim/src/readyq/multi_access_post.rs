//! A client's post to DiBella et al. 1992's multi-access queue (section 2.1), on the layout of
//! [`super::multi_access`]: it reads the bitmap, finds a mailbox whose bit is clear and whose
//! IN-box is empty (read without the lock, as the schedulers read the bitmap; with
//! [`Post::searching`], paying for each bit examined), fills the IN-box under its lock (its
//! other words copied under that lock, [`struct@Copy`], and, where asked, processing the request
//! before letting the lock go), then sets the bit under the bitmap lock.

use smpsched_policy::dibella::{bits_examined, next_mailbox, Direction};

use super::copy::Copy;
use super::multi_access::Layout;
use super::spin::{release, word, word_outcome, Acquire, Locked, Pause, Step, Write};
use crate::ids::Cycles;
use crate::outcome::{Outcome, WordOp};

#[derive(Clone, Debug)]
enum PostState {
    Start,
    Scanned,
    /// The bits up to the next free mailbox (or all) were paid for.
    Searched(Option<usize>),
    Peeked(usize),
    InboxLocking(Locked, usize),
    Filled(usize),
    BitmapLocking(Acquire, usize),
    Set(usize),
    Unlock(usize),
    Released(usize),
}

/// A client posts the request word `value` (not 0) in queue `q`: it reads the bitmap, tries the
/// mailboxes whose bits are clear from just after its remembered mailbox `last`, reading each
/// IN-box without its lock, and fills the first it finds empty under the IN-box lock (if it is
/// still empty there); then it sets that mailbox's bit under the bitmap lock. [`Step::Done`] with
/// the mailbox, or `None` when every mailbox was in use.
#[derive(Clone, Debug)]
pub struct Post {
    layout: Layout,
    q: usize,
    value: u64,
    last: usize,
    pause: Pause,
    free: u64,
    tried: usize,
    state: PostState,
    /// Failed test-and-sets on this post's locks.
    pub lock_failures: u32,
    /// Cycles the request is processed under the IN-box lock after the fill.
    hold: Cycles,
    /// Cycles per bitmap bit examined looking for a free mailbox ([`Post::searching`]).
    per_bit: Cycles,
}

impl Post {
    /// Posting `value` in queue `q`, trying mailboxes after `last` first.
    pub fn new(layout: Layout, q: usize, value: u64, last: usize, pause: impl Into<Pause>) -> Self {
        let pause = pause.into();
        debug_assert!(value != 0, "0 is the empty IN-box");
        Post {
            layout,
            q,
            value,
            last,
            pause,
            free: 0,
            tried: 0,
            state: PostState::Start,
            lock_failures: 0,
            hold: 0,
            per_bit: 0,
        }
    }

    /// The same post, paying `per_bit` cycles a bitmap bit examined looking for a clear one,
    /// from the bit after `last` (a full bitmap: every bit), as a scheduler's search does
    /// ([`super::multi_access::Poll::searching`]).
    pub fn searching(self, per_bit: Cycles) -> Self {
        Post { per_bit, ..self }
    }

    /// The same post, processing the request for `hold` cycles after filling the IN-box and
    /// before letting its lock go (section 2.1: "the remainder of the request information is
    /// processed while a process has sole access to an IN-box or OUT-box lock").
    pub fn holding(self, hold: Cycles) -> Self {
        Post { hold, ..self }
    }

    /// Reads the IN-box of the next mailbox whose bit was clear, without its lock (optimistic,
    /// as the schedulers read the bitmap): only one found empty is then locked and re-checked.
    fn try_next(&mut self) -> Step<Option<usize>> {
        let found = next_mailbox(&[self.free], self.last, Direction::LeftToRight)
            .filter(|_| self.tried < self.layout.mailboxes);
        if self.per_bit > 0 {
            let n = self.layout.mailboxes;
            let examined = bits_examined(n, self.last, found, Direction::LeftToRight);
            self.state = PostState::Searched(found);
            return Step::Op(crate::Op::Compute(self.per_bit * examined as Cycles));
        }
        self.peek(found)
    }

    /// Reads mailbox `found`'s IN-box, or ends the post when no mailbox is free.
    fn peek(&mut self, found: Option<usize>) -> Step<Option<usize>> {
        match found {
            Some(i) => {
                self.tried += 1;
                self.free &= !(1u64 << i);
                self.last = i;
                self.state = PostState::Peeked(i);
                Step::Op(word(self.layout.inbox(self.q, i), WordOp::Load))
            }
            _ => Step::Done(None),
        }
    }

    /// Locks mailbox `i`'s IN-box and fills it if it is still empty.
    fn fill(&mut self, i: usize) -> Step<Option<usize>> {
        let inbox = self.layout.inbox(self.q, i);
        let mut l = Locked::new(
            self.layout.inbox_lock(self.q, i),
            self.pause,
            Some(inbox),
            Write::IfEmpty(inbox, self.value),
        );
        if self.layout.words > 0 {
            let body = self.layout.inbox_body(self.q, i);
            l = l.copying(Copy::store(body, self.layout.words));
        }
        if self.hold > 0 {
            l = l.holding(self.hold);
        }
        let op = match l.resume(None) {
            Step::Op(op) => op,
            Step::Done(_) => unreachable!("a locked access starts with a test-and-set"),
        };
        self.state = PostState::InboxLocking(l, i);
        Step::Op(op)
    }

    /// The next step, given the outcome of the operation issued last.
    #[inline]
    pub fn resume(&mut self, outcome: Option<&Outcome>) -> Step<Option<usize>> {
        match &mut self.state {
            PostState::Start => {
                self.state = PostState::Scanned;
                Step::Op(word(self.layout.bitmap(self.q), WordOp::Load))
            }
            PostState::Scanned => {
                self.free = !word_outcome(outcome).0 & self.layout.valid_bits();
                self.try_next()
            }
            PostState::Searched(found) => {
                let found = *found;
                self.peek(found)
            }
            PostState::Peeked(i) => {
                let i = *i;
                if word_outcome(outcome).0 != 0 {
                    // In use: not worth its lock.
                    return self.try_next();
                }
                self.fill(i)
            }
            PostState::InboxLocking(l, i) => {
                let i = *i;
                match l.resume(outcome) {
                    Step::Op(op) => Step::Op(op),
                    Step::Done((v, failed)) => {
                        self.lock_failures += failed;
                        if v != 0 {
                            // In use (its request taken from the bitmap but not yet from the
                            // IN-box, or not yet marked): try the next one.
                            return self.try_next();
                        }
                        self.state = PostState::Filled(i);
                        self.resume(None)
                    }
                }
            }
            PostState::Filled(i) => {
                let i = *i;
                let mut acq = Acquire::new(self.layout.bitmap_lock(self.q), self.pause);
                let op = match acq.resume(None) {
                    Step::Op(op) => op,
                    Step::Done(()) => unreachable!("an acquisition starts with a test-and-set"),
                };
                self.state = PostState::BitmapLocking(acq, i);
                Step::Op(op)
            }
            PostState::BitmapLocking(acq, i) => {
                let i = *i;
                match acq.resume(outcome) {
                    Step::Op(op) => Step::Op(op),
                    Step::Done(()) => {
                        self.lock_failures += acq.failed;
                        self.state = PostState::Set(i);
                        Step::Op(word(self.layout.bitmap(self.q), WordOp::Load))
                    }
                }
            }
            PostState::Set(i) => {
                let i = *i;
                let bm = word_outcome(outcome).0;
                self.state = PostState::Unlock(i);
                Step::Op(word(
                    self.layout.bitmap(self.q),
                    WordOp::Store(bm | 1u64 << i),
                ))
            }
            PostState::Unlock(i) => {
                let i = *i;
                self.state = PostState::Released(i);
                Step::Op(release(self.layout.bitmap_lock(self.q)))
            }
            PostState::Released(i) => Step::Done(Some(*i)),
        }
    }
}
