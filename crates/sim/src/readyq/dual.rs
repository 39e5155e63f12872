//! George 1990's dual queue (sections 1 and 2.1) laid out in simulated memory: one queue holding
//! either data items (tasks) or the spin locations of waiting processors, never both, guarded by
//! one lock taken with exponential backoff; and the protocols that put an item into it, take an
//! item from it (or enqueue the taker's spin location), and, at a DDQ leaf, use a lazily freed
//! slot (section 2.3).
//!
//! A queue is a header (lock, signed count, head, tail, lazy ascends) and a ring of slots. The
//! count is the number of data items when positive and minus the number of waiting processors
//! when negative. A waiting processor spins on its own word, and an insert that finds it in the
//! queue hands it the item by writing `item + 1` there (section 1.1: "notification involves
//! writing a non-zero value on this location").
//!
//! Invariants: the header and the ring change only under the lock; `head <= tail`; the ring
//! holds the `tail - head` entries of the count's kind, oldest at `head`; data items never
//! exceed `capacity`, waiters never exceed the ring's other entries.

use smpsched_policy::mix::splitmix;

use super::spin::{release, word, word_outcome, Step};
use crate::ids::Cycles;
use crate::outcome::{Outcome, WordOp};
use crate::program::Op;

/// Where one dual queue's words lie: lock, count, head, tail and lazy ascends in the header,
/// then `slots` ring words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DualLayout {
    base: u64,
    capacity: u64,
    slots: u64,
}

impl DualLayout {
    /// A queue at `base` buffering at most `capacity` data items, with a ring of `slots`
    /// (at least `capacity` and at least the processors that may wait in it; at least 1).
    pub fn new(base: u64, capacity: u64, slots: u64) -> Self {
        DualLayout {
            base,
            capacity,
            slots: slots.max(capacity).max(1),
        }
    }

    /// Bytes a queue with a ring of `slots` occupies.
    pub fn bytes(slots: u64) -> u64 {
        48 + 8 * slots.max(1)
    }

    /// Data items the queue may buffer (its D field at a DDQ leaf).
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The lock word.
    pub fn lock(&self) -> u64 {
        self.base
    }

    /// The signed count: data items (> 0) or minus the waiting processors (< 0).
    pub fn count(&self) -> u64 {
        self.base + 8
    }

    /// Entries taken so far.
    pub fn head(&self) -> u64 {
        self.base + 16
    }

    /// Entries put so far.
    pub fn tail(&self) -> u64 {
        self.base + 24
    }

    /// Lazily deferred ascends (section 2.3).
    pub fn lazy(&self) -> u64 {
        self.base + 32
    }

    /// Ring slot of entry `k`.
    pub fn slot(&self, k: u64) -> u64 {
        self.base + 48 + 8 * (k % self.slots)
    }
}

/// Exponential backoff after a failed lock attempt: the `j`-th backoff waits about
/// `base * 2^min(j, max_exp)` cycles, drawn uniformly from 1 to twice that from the waiter's
/// `seed` so that waiters do not fall into lock step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Backoff {
    /// Cycles of the first backoff.
    pub base: Cycles,
    /// Doublings after which the backoff stops growing.
    pub max_exp: u32,
    /// The waiter's stream of draws.
    pub seed: u64,
}

impl Backoff {
    /// The `j`-th backoff of one acquisition (from 0).
    pub fn nth(&self, j: u32) -> Cycles {
        let mean = self.base.max(1) << j.min(self.max_exp).min(32);
        let z = self.seed ^ u64::from(j).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        1 + splitmix(z) % (2 * mean)
    }
}

/// Taking a queue's lock by test-and-set, backing off exponentially after each failure
/// (George section 1); with `once`, a single attempt (an insert that runs its task locally
/// when the lock is busy).
#[derive(Clone, Debug)]
pub struct BackoffLock {
    addr: u64,
    backoff: Backoff,
    once: bool,
    waiting: bool,
    /// Backoffs so far.
    pub backoffs: u32,
}

impl BackoffLock {
    /// Acquiring the lock word at `addr`.
    pub fn new(addr: u64, backoff: Backoff, once: bool) -> Self {
        BackoffLock {
            addr,
            backoff,
            once,
            waiting: false,
            backoffs: 0,
        }
    }

    /// The next step: done with `true` when held, `false` when a single attempt failed.
    pub fn resume(&mut self, outcome: Option<&Outcome>) -> Step<bool> {
        if !self.waiting {
            self.waiting = true;
            return Step::Op(word(self.addr, WordOp::TestAndSet));
        }
        self.waiting = false;
        if word_outcome(outcome).1 {
            return Step::Done(true);
        }
        if self.once {
            return Step::Done(false);
        }
        let c = self.backoff.nth(self.backoffs);
        self.backoffs += 1;
        // The compute's outcome is none: the next resume issues the test-and-set again.
        Step::Op(Op::Compute(c))
    }
}

/// When the ascends a dequeue owes the tree are made (section 2.3).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ascend {
    /// Every remove ascends at once (the basic algorithm of 2.1).
    Eager,
    /// The second alternative (the paper's choice): while data remains the ascend is counted
    /// at the leaf; the remove that takes the last item ascends with the sum.
    #[default]
    LastData,
    /// The first alternative: the first processor to enqueue itself in an empty queue ascends
    /// with the sum.
    FirstWaiter,
}

/// What a put did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Put {
    /// Handed to a waiting processor by writing its spin word.
    Delivered,
    /// Buffered in the ring.
    Buffered,
    /// The queue held `capacity` data items (or, for a local put, had no lazily freed slot).
    Full,
}

/// What a take did, and how much the taker must now add to the N fields on its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Take {
    /// Dequeued this data item.
    Data(u64, u64),
    /// Enqueued the taker's spin word; it must now spin on it.
    Waiting(u64),
}

impl Take {
    /// The increment owed to every N field from the leaf to the root.
    pub fn ascend(&self) -> u64 {
        match *self {
            Take::Data(_, a) | Take::Waiting(a) => a,
        }
    }
}

/// The operations of one locked access, queued and issued in order; reads fill `got`.
#[derive(Clone, Debug)]
enum Kind {
    Put(u64, bool),
    Take(u64, Ascend),
}

/// One locked access to a dual queue: put an item (or use a lazily freed slot), or take one.
#[derive(Clone, Debug)]
pub struct DualAccess {
    q: DualLayout,
    kind: Kind,
    lock: BackoffLock,
    phase: u8,
    count: i64,
    lazy: u64,
    ring: u64,
    result: Option<Put>,
    taken: Option<Take>,
    notify: Option<u64>,
    pending: [(u64, u64); 4],
    issued: usize,
    writes: usize,
}

fn load(addr: u64) -> Step<bool> {
    Step::Op(word(addr, WordOp::Load))
}

impl DualAccess {
    /// Putting `item` into queue `q`; with `local`, only into a slot that a lazy ascend left
    /// unpublished (section 2.3's local-first insert). `once`: a single lock attempt.
    pub fn put(q: DualLayout, item: u64, local: bool, backoff: Backoff, once: bool) -> Self {
        Self::new(
            q,
            Kind::Put(item, local),
            BackoffLock::new(q.lock(), backoff, once),
        )
    }

    /// Taking an item from queue `q`, or enqueuing the spin word at `spin`.
    pub fn take(q: DualLayout, spin: u64, ascend: Ascend, backoff: Backoff) -> Self {
        Self::new(
            q,
            Kind::Take(spin, ascend),
            BackoffLock::new(q.lock(), backoff, false),
        )
    }

    fn new(q: DualLayout, kind: Kind, lock: BackoffLock) -> Self {
        DualAccess {
            q,
            kind,
            lock,
            phase: 0,
            count: 0,
            lazy: 0,
            ring: 0,
            result: None,
            taken: None,
            notify: None,
            pending: [(0, 0); 4],
            issued: 0,
            writes: 0,
        }
    }

    /// Backoffs on the queue's lock.
    pub fn backoffs(&self) -> u32 {
        self.lock.backoffs
    }

    /// What a finished put did (`None` if the single lock attempt failed).
    pub fn put_result(&self) -> Option<Put> {
        self.result
    }

    /// What a finished take did.
    pub fn take_result(&self) -> Option<Take> {
        self.taken
    }

    /// The next step, given the outcome of the operation issued last; done with `false` when a
    /// single lock attempt failed.
    pub fn resume(&mut self, outcome: Option<&Outcome>) -> Step<bool> {
        let q = self.q;
        let v = word_outcome(outcome).0;
        match self.phase {
            0 => match self.lock.resume(outcome) {
                Step::Op(op) => Step::Op(op),
                Step::Done(false) => Step::Done(false),
                Step::Done(true) => {
                    self.phase = 1;
                    Step::Op(word(q.count(), WordOp::Load))
                }
            },
            1 => {
                self.count = v as i64;
                self.phase = 2;
                let needs_lazy = match self.kind {
                    Kind::Put(_, local) => local,
                    Kind::Take(_, ascend) => ascend != Ascend::Eager,
                };
                if needs_lazy {
                    return load(q.lazy());
                }
                self.resume_lazy(0)
            }
            2 => self.resume_lazy(v),
            3 => {
                self.ring = v;
                self.phase = 4;
                match self.kind {
                    Kind::Put(item, local) => self.put_step(item, local),
                    Kind::Take(spin, ascend) => self.take_step(spin, ascend),
                }
            }
            4 => {
                // The slot read of a delivering put or a data take.
                match self.taken {
                    Some(Take::Data(_, a)) => self.taken = Some(Take::Data(v, a)),
                    _ => self.notify = Some(v),
                }
                self.next_write()
            }
            5 => self.next_write(),
            6 => match self.notify.take() {
                Some(spin) => {
                    let Kind::Put(item, _) = self.kind else {
                        unreachable!()
                    };
                    Step::Op(word(spin, WordOp::Store(item + 1)))
                }
                None => Step::Done(true),
            },
            _ => Step::Done(true),
        }
    }

    /// With the lazy count read (0 if not needed), reads the head (to dequeue) or the tail.
    fn resume_lazy(&mut self, lazy: u64) -> Step<bool> {
        self.lazy = lazy;
        self.phase = 3;
        let from_head = match self.kind {
            Kind::Put(_, local) => self.count < 0 && !local,
            Kind::Take(..) => self.count > 0,
        };
        let q = self.q;
        Step::Op(word(
            if from_head { q.head() } else { q.tail() },
            WordOp::Load,
        ))
    }

    /// Decides a put once the header is read; issues its first write or the slot read.
    fn put_step(&mut self, item: u64, local: bool) -> Step<bool> {
        let q = self.q;
        if self.count < 0 && !local {
            self.result = Some(Put::Delivered);
            self.writes(&[
                (q.head(), self.ring + 1),
                (q.count(), (self.count + 1) as u64),
            ]);
            return Step::Op(word(q.slot(self.ring), WordOp::Load));
        }
        let room = self.count >= 0 && (self.count as u64) < q.capacity;
        if !room || (local && self.lazy == 0) {
            self.result = Some(Put::Full);
            self.writes(&[]);
            return self.next_write();
        }
        self.result = Some(Put::Buffered);
        let w = [
            (q.slot(self.ring), item),
            (q.tail(), self.ring + 1),
            (q.count(), (self.count + 1) as u64),
            (q.lazy(), self.lazy.saturating_sub(1)),
        ];
        self.writes(&w[..if local { 4 } else { 3 }]);
        self.next_write()
    }

    /// Decides a take once the header is read.
    fn take_step(&mut self, spin: u64, ascend: Ascend) -> Step<bool> {
        let q = self.q;
        if self.count > 0 {
            let last = self.count == 1;
            let (owed, lazy) = match ascend {
                Ascend::Eager => (1, self.lazy),
                Ascend::LastData if last => (self.lazy + 1, 0),
                Ascend::LastData | Ascend::FirstWaiter => (0, self.lazy + 1),
            };
            self.taken = Some(Take::Data(0, owed));
            let w = [
                (q.head(), self.ring + 1),
                (q.count(), (self.count - 1) as u64),
                (q.lazy(), lazy),
            ];
            self.writes(&w[..if lazy != self.lazy { 3 } else { 2 }]);
            return Step::Op(word(q.slot(self.ring), WordOp::Load));
        }
        // No data: enqueue the spin word; the first waiter flushes any lazy ascends.
        let owed = if self.count == 0 { self.lazy + 1 } else { 1 };
        self.taken = Some(Take::Waiting(owed));
        let w = [
            (q.slot(self.ring), spin),
            (q.tail(), self.ring + 1),
            (q.count(), (self.count - 1) as u64),
            (q.lazy(), 0),
        ];
        self.writes(
            &w[..if self.lazy != 0 && self.count == 0 {
                4
            } else {
                3
            }],
        );
        self.next_write()
    }

    /// The writes to issue in order (then the release).
    fn writes(&mut self, w: &[(u64, u64)]) {
        self.pending[..w.len()].copy_from_slice(w);
        self.writes = w.len();
        self.issued = 0;
    }

    fn next_write(&mut self) -> Step<bool> {
        self.phase = 5;
        if self.issued < self.writes {
            let (a, v) = self.pending[self.issued];
            self.issued += 1;
            return Step::Op(word(a, WordOp::Store(v)));
        }
        self.phase = 6;
        Step::Op(release(self.q.lock()))
    }
}
