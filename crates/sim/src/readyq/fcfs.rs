//! The FCFS baselines of DiBella et al. 1992 (section 2.2): Global (one FCFS queue, one lock)
//! and Distributed FCFS (Anderson et al.: one FCFS queue and one lock per processor), laid out
//! in simulated memory, with the post and take protocols client and scheduler programs drive.
//!
//! A queue is a ring of `capacity` request words with a head and a tail counter, all guarded by
//! the queue's one test-and-test-and-set lock: only one process at a time may post to or take
//! from it (single access), and requests leave in the order they were posted. Every access is
//! an [`Op::Word`] on the [`FcfsLayout`]'s addresses, so lock contention comes from the memory
//! model.
//!
//! Invariants: `head <= tail <= head + capacity`; head and tail change only under the lock;
//! slot `k % capacity` holds the `k`-th request posted while `head <= k < tail`.

use super::copy::{body_bytes, Copy};
use super::spin::{release, word, word_outcome, Acquire, Pause, Step};

use crate::ids::Cycles;
use crate::outcome::{Outcome, WordOp};
use crate::program::Op;

/// Where each FCFS queue's lock, head, tail and slots lie. The lock and the head share a block
/// of `stride` bytes (at least 16), the tail has the next block, the slots follow, packed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FcfsLayout {
    base: u64,
    queues: usize,
    capacity: usize,
    stride: u64,
    /// Words of a request beyond its slot word, copied under the queue lock.
    words: u32,
}

impl FcfsLayout {
    /// `queues` queues of `capacity` (at least 1) requests each from `base`.
    pub fn new(base: u64, queues: usize, capacity: usize, line_bytes: u64) -> Self {
        assert!(capacity > 0 && queues > 0);
        FcfsLayout {
            base,
            queues,
            capacity,
            stride: line_bytes.max(16),
            words: 0,
        }
    }

    /// The same layout with requests of `words` words beyond the slot word, each slot's body in
    /// whole lines after every queue: the poster stores them and the taker loads them under the
    /// queue lock ([`Copy`](struct@Copy)).
    pub fn with_request_words(self, words: u32) -> Self {
        FcfsLayout { words, ..self }
    }

    fn per_queue(capacity: usize, stride: u64) -> u64 {
        2 * stride + (8 * capacity as u64).div_ceil(stride) * stride
    }

    /// Bytes `queues` queues of `capacity` requests of `words` words beyond the slot word
    /// occupy.
    pub fn bytes(queues: usize, capacity: usize, line_bytes: u64, words: u32) -> u64 {
        let stride = line_bytes.max(16);
        let bodies = (queues * capacity) as u64 * body_bytes(words, stride);
        queues as u64 * Self::per_queue(capacity, stride) + bodies
    }

    /// Queues.
    pub fn queues(&self) -> usize {
        self.queues
    }

    /// Requests a queue holds at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    fn start(&self, q: usize) -> u64 {
        debug_assert!(q < self.queues);
        self.base + q as u64 * Self::per_queue(self.capacity, self.stride)
    }

    /// The lock of queue `q`.
    pub fn lock(&self, q: usize) -> u64 {
        self.start(q)
    }

    /// The count of requests taken from queue `q`.
    pub fn head(&self, q: usize) -> u64 {
        self.start(q) + 8
    }

    /// The count of requests posted to queue `q`.
    pub fn tail(&self, q: usize) -> u64 {
        self.start(q) + self.stride
    }

    /// Slot `k` (of `capacity`) of queue `q`.
    pub fn slot(&self, q: usize, k: u64) -> u64 {
        self.start(q) + 2 * self.stride + 8 * (k % self.capacity as u64)
    }

    /// The first of the request words of slot `k` of queue `q`.
    pub fn slot_body(&self, q: usize, k: u64) -> u64 {
        let queues = self.queues as u64 * Self::per_queue(self.capacity, self.stride);
        let n = q as u64 * self.capacity as u64 + k % self.capacity as u64;
        self.base + queues + n * body_bytes(self.words, self.stride)
    }

    /// Words of a request beyond its slot word.
    pub fn request_words(&self) -> u32 {
        self.words
    }
}

/// Whether a protocol posts or takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Post(u64),
    Take,
}

/// Posting to or taking from one FCFS queue under its lock.
#[derive(Clone, Debug)]
struct Access {
    layout: FcfsLayout,
    q: usize,
    kind: Kind,
    acq: Acquire,
    copy: Option<Copy>,
    hold: Cycles,
    phase: u8,
    head: u64,
    tail: u64,
    result: Option<u64>,
}

impl Access {
    fn new(layout: FcfsLayout, q: usize, kind: Kind, pause: Pause) -> Self {
        Access {
            layout,
            q,
            kind,
            acq: Acquire::new(layout.lock(q), pause),
            copy: None,
            hold: 0,
            phase: 0,
            head: 0,
            tail: 0,
            result: None,
        }
    }

    #[inline]
    fn resume(&mut self, outcome: Option<&Outcome>) -> Step<Option<u64>> {
        let l = self.layout;
        let q = self.q;
        match self.phase {
            0 => match self.acq.resume(outcome) {
                Step::Op(op) => Step::Op(op),
                Step::Done(()) => {
                    self.phase = 1;
                    Step::Op(word(l.head(q), WordOp::Load))
                }
            },
            1 => {
                self.head = word_outcome(outcome).0;
                self.phase = 2;
                Step::Op(word(l.tail(q), WordOp::Load))
            }
            2 => {
                self.tail = word_outcome(outcome).0;
                match self.kind {
                    Kind::Post(v) => {
                        if self.tail - self.head >= l.capacity as u64 {
                            self.phase = 9; // full
                            return Step::Op(release(l.lock(q)));
                        }
                        self.phase = 3;
                        self.result = Some(v);
                        if l.words > 0 {
                            self.copy = Some(Copy::store(l.slot_body(q, self.tail), l.words));
                        }
                        Step::Op(word(l.slot(q, self.tail), WordOp::Store(v)))
                    }
                    Kind::Take => {
                        if self.tail == self.head {
                            self.phase = 9; // empty
                            return Step::Op(release(l.lock(q)));
                        }
                        self.phase = 5;
                        if l.words > 0 {
                            self.copy = Some(Copy::load(l.slot_body(q, self.head), l.words));
                        }
                        Step::Op(word(l.slot(q, self.head), WordOp::Load))
                    }
                }
            }
            3 => {
                self.phase = 6;
                Step::Op(word(l.tail(q), WordOp::Store(self.tail + 1)))
            }
            5 => {
                self.result = Some(word_outcome(outcome).0);
                self.phase = 6;
                Step::Op(word(l.head(q), WordOp::Store(self.head + 1)))
            }
            6 => {
                // The request's other words, then the bookkeeping, still holding the lock.
                if let Some(op) = self.copy.take().and_then(|c| c.op()) {
                    return Step::Op(op);
                }
                self.phase = 4;
                if self.hold > 0 {
                    return Step::Op(Op::Compute(self.hold));
                }
                self.resume(None)
            }
            4 => {
                self.phase = 9;
                Step::Op(release(l.lock(q)))
            }
            _ => Step::Done(self.result),
        }
    }
}

/// A client posts a request word into FCFS queue `q`: done with `true`, or `false` when the
/// queue was full.
#[derive(Clone, Debug)]
pub struct FcfsPost(Access);

impl FcfsPost {
    /// Posting `value` into queue `q`.
    pub fn new(layout: FcfsLayout, q: usize, value: u64, pause: impl Into<Pause>) -> Self {
        let pause = pause.into();
        FcfsPost(Access::new(layout, q, Kind::Post(value), pause))
    }

    /// The same post, processing the request for `hold` cycles after it is in its slot and
    /// before the queue lock is let go (section 2.1: a request's information is processed
    /// under the lock of a single-access queue).
    pub fn holding(mut self, hold: Cycles) -> Self {
        self.0.hold = hold;
        self
    }

    /// The next step, given the outcome of the operation issued last.
    #[inline]
    pub fn resume(&mut self, outcome: Option<&Outcome>) -> Step<bool> {
        match self.0.resume(outcome) {
            Step::Op(op) => Step::Op(op),
            Step::Done(r) => Step::Done(r.is_some()),
        }
    }

    /// Failed test-and-sets on the queue lock.
    pub fn lock_failures(&self) -> u32 {
        self.0.acq.failed
    }
}

/// A scheduler takes the oldest request of FCFS queue `q`: done with it, or `None` when empty.
#[derive(Clone, Debug)]
pub struct FcfsTake(Access);

impl FcfsTake {
    /// Taking from queue `q`.
    pub fn new(layout: FcfsLayout, q: usize, pause: impl Into<Pause>) -> Self {
        let pause = pause.into();
        FcfsTake(Access::new(layout, q, Kind::Take, pause))
    }

    /// The same take, processing a request it took for `hold` cycles before it lets the queue
    /// lock go (single access: no other process posts to or takes from the queue meanwhile).
    pub fn holding(mut self, hold: Cycles) -> Self {
        self.0.hold = hold;
        self
    }

    /// The next step, given the outcome of the operation issued last.
    #[inline]
    pub fn resume(&mut self, outcome: Option<&Outcome>) -> Step<Option<u64>> {
        self.0.resume(outcome)
    }

    /// Failed test-and-sets on the queue lock.
    pub fn lock_failures(&self) -> u32 {
        self.0.acq.failed
    }
}

#[cfg(test)]
mod tests {
    use super::super::spin::TestMemory;
    use super::*;

    #[test]
    fn fifo_order_and_capacity() {
        let l = FcfsLayout::new(4096, 2, 3, 16);
        let mut m = TestMemory::default();
        for v in 1..=3 {
            let mut p = FcfsPost::new(l, 1, v, 8);
            assert!(m.drive(|o| p.resume(o)).0);
        }
        let mut p = FcfsPost::new(l, 1, 9, 8);
        assert!(!m.drive(|o| p.resume(o)).0, "full at capacity");
        let mut t = FcfsTake::new(l, 0, 8);
        assert_eq!(m.drive(|o| t.resume(o)).0, None, "queue 0 is empty");
        for v in 1..=3 {
            let mut t = FcfsTake::new(l, 1, 8);
            assert_eq!(m.drive(|o| t.resume(o)).0, Some(v));
        }
        assert_eq!(m.get(l.lock(1)), 0, "released");
        assert!(l.slot(1, 2) < l.lock(1) + FcfsLayout::bytes(1, 3, 16, 0));
    }

    #[test]
    fn a_holding_post_keeps_the_queue_lock_while_it_processes_the_request() {
        let l = FcfsLayout::new(4096, 1, 1, 16);
        let mut m = TestMemory::default();
        let mut p = FcfsPost::new(l, 0, 7, 8).holding(300);
        let mut outcome = None;
        let mut computed = Vec::new();
        let posted = loop {
            match p.resume(outcome.as_ref()) {
                Step::Op(Op::Compute(c)) => {
                    computed.push((c, m.get(l.lock(0)), m.get(l.tail(0))));
                    outcome = None;
                }
                Step::Op(op) => outcome = m.apply(&op),
                Step::Done(r) => break r,
            }
        };
        assert!(posted);
        assert_eq!(computed, vec![(300, 1, 1)], "posted, still locked, once");
        assert_eq!(m.get(l.lock(0)), 0, "released");
        // A post that finds the queue full lets the lock go at once.
        let mut p = FcfsPost::new(l, 0, 8, 8).holding(300);
        let (posted, ops) = m.drive(|o| p.resume(o));
        assert!(!posted);
        assert_eq!(ops, 4, "lock, head, tail, release: no hold");
    }

    #[test]
    fn a_holding_take_keeps_the_lock_through_its_bookkeeping() {
        let l = FcfsLayout::new(4096, 1, 2, 16);
        let mut m = TestMemory::default();
        let mut p = FcfsPost::new(l, 0, 7, 8);
        assert!(m.drive(|o| p.resume(o)).0);
        let mut t = FcfsTake::new(l, 0, 8).holding(500);
        let mut outcome = None;
        let mut held_through = false;
        let got = loop {
            match t.resume(outcome.as_ref()) {
                Step::Op(Op::Compute(c)) => {
                    assert_eq!(c, 500);
                    held_through = m.get(l.lock(0)) == 1;
                    // Meanwhile a client's post finds the queue lock held.
                    let mut a = Acquire::new(l.lock(0), 8);
                    let Step::Op(tas) = a.resume(None) else {
                        unreachable!()
                    };
                    assert!(!word_outcome(m.apply(&tas).as_ref()).1);
                    outcome = None;
                }
                Step::Op(op) => outcome = m.apply(&op),
                Step::Done(r) => break r,
            }
        };
        assert_eq!(got, Some(7));
        assert!(held_through, "the bookkeeping runs under the queue lock");
        assert_eq!(m.get(l.lock(0)), 0, "released after it");
        // An empty queue is let go at once: no bookkeeping.
        let mut t = FcfsTake::new(l, 0, 8).holding(500);
        let (r, ops) = m.drive(|o| t.resume(o));
        assert_eq!((r, ops), (None, 4));
    }

    /// Drives a protocol to the end, noting each copy (base, bytes, kind, lock word then).
    fn copies_of<T>(
        m: &mut TestMemory,
        lock: u64,
        mut resume: impl FnMut(Option<&Outcome>) -> Step<T>,
    ) -> Vec<(u64, u64, crate::memory::AccessKind, u64)> {
        let (mut outcome, mut copies) = (None, Vec::new());
        loop {
            match resume(outcome.as_ref()) {
                Step::Done(_) => return copies,
                Step::Op(op) => {
                    if let Op::Mem(b) = &op {
                        copies.push((b.base, b.len, b.kind, m.get(lock)));
                    }
                    outcome = m.apply(&op);
                }
            }
        }
    }

    #[test]
    fn a_request_is_copied_in_and_out_under_the_queue_lock() {
        use crate::memory::AccessKind::{Read, Write};
        let l = FcfsLayout::new(0, 2, 2, 16).with_request_words(3);
        let mut m = TestMemory::default();
        let mut copies = Vec::new();
        for _ in 0..2 {
            let mut post = FcfsPost::new(l, 1, 5, 8);
            copies.extend(copies_of(&mut m, l.lock(1), |o| post.resume(o)));
            let mut take = FcfsTake::new(l, 1, 8);
            copies.extend(copies_of(&mut m, l.lock(1), |o| take.resume(o)));
        }
        let (b0, b1) = (l.slot_body(1, 0), l.slot_body(1, 1));
        assert_eq!(
            copies,
            vec![
                (b0, 24, Write, 1),
                (b0, 24, Read, 1),
                (b1, 24, Write, 1),
                (b1, 24, Read, 1)
            ],
            "stored by the poster, loaded by the taker, each under the lock"
        );
        assert!(l.slot_body(0, 1) + 24 <= b0 && b0 >= l.slot(1, 1) + 8);
        assert!(FcfsLayout::bytes(2, 2, 16, 3) >= l.slot_body(1, 1) + 24);
    }
}
