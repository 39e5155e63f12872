//! Protocol steps a program drives one operation at a time, the test-and-test-and-set spin
//! lock every ready-queue lock of DiBella et al. 1992 (section 2.1) is built on, and the
//! lock-read-write-unlock access to a guarded word (a mailbox's IN-box or OUT-box).
//!
//! A ready-queue structure that lives in simulated memory (the multi-access mailboxes, the FCFS
//! queues) is operated by the threads' own programs: each protocol is a small state machine
//! that, resumed with the outcome of the operation it asked for last, answers the next
//! [`Op`] to issue ([`Step::Op`]) or its result ([`Step::Done`]). Every lock and data access is
//! an [`Op::Word`] on an address of the structure's layout, so its cost, its cache misses and
//! its contention come from the memory model, and its outcome from the simulated word at the
//! time the operation completes: two threads really race.
//!
//! Invariants of [`Acquire`]: it returns [`Step::Done`] only right after a test-and-set that
//! found the lock word 0 (so exactly one acquirer wins each release); while the word is held it
//! only reads it (test-and-test-and-set), pausing between reads so that a spin costs a bounded
//! number of events ([`Pause`]).
//!
//! Why a long wait's pauses are drawn at random: every cost in the simulator is exact, so
//! waiters whose loops have fixed lengths can fall into a phase lock in which one of them reads
//! the lock free, or tries its test-and-set, always just after another has taken it, and loses
//! forever (one client against four schedulers polling an empty Global queue does). On a real
//! bus, arbitration and timing noise break such a lock within a few rounds. So after
//! [`STREAK`] pauses in one acquisition a waiter's pauses are drawn uniformly from
//! `1..=2 * cycles` (the same mean) from its own stream: short waits, the usual case, keep
//! their exact cost; a starved waiter gets through.

use super::copy::Copy;

use crate::ids::Cycles;
use crate::outcome::{Outcome, WordOp};
pub use crate::pause::{Pause, Spin, STREAK};
use crate::program::Op;

/// What a protocol answers when resumed: the next operation to issue, or its result.
#[derive(Debug, PartialEq)]
pub enum Step<T> {
    /// Issue this operation, then resume with its outcome.
    Op(Op),
    /// The protocol is finished with this result.
    Done(T),
}

/// The value and success of a word operation's outcome; a missing or non-word outcome reads as
/// a failed operation on an all-ones word (it never happens when the protocol is resumed with
/// the outcome of the operation it issued).
#[inline]
pub fn word_outcome(outcome: Option<&Outcome>) -> (u64, bool) {
    match outcome {
        Some(Outcome::Word { old, success }) => (*old, *success),
        _ => (u64::MAX, false),
    }
}

/// A word operation at `addr`.
#[inline]
pub fn word(addr: u64, op: WordOp) -> Op {
    Op::Word { addr, op }
}

/// The operation that releases a spin lock at `addr` (a store of 0).
#[inline]
pub fn release(addr: u64) -> Op {
    word(addr, WordOp::Store(0))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AcqState {
    Start,
    TestAndSet,
    Pause,
    Poll,
}

/// Acquiring a spin lock on the word at `addr`: a test-and-set; while it fails, pause and either
/// read the word until it is 0 ([`Op::Poll`]), then test-and-set again (test-and-test-and-set),
/// or test-and-set again (test-and-set), as the pause's [`Spin`] says.
#[derive(Clone, Debug)]
pub struct Acquire {
    addr: u64,
    pause: Pause,
    state: AcqState,
    /// Test-and-sets that found the lock held.
    pub failed: u32,
    /// Pauses so far.
    pauses: u32,
}

impl Acquire {
    /// Acquiring the lock at `addr`, pausing between reads as `pause` says.
    pub fn new(addr: u64, pause: impl Into<Pause>) -> Self {
        Acquire {
            addr,
            pause: pause.into(),
            state: AcqState::Start,
            failed: 0,
            pauses: 0,
        }
    }

    fn pause(&mut self) -> Step<()> {
        self.state = AcqState::Pause;
        let c = self.pause.nth(self.pauses);
        self.pauses = self.pauses.saturating_add(1);
        Step::Op(Op::Compute(c))
    }

    /// The next step, given the outcome of the operation issued last.
    #[inline]
    pub fn resume(&mut self, outcome: Option<&Outcome>) -> Step<()> {
        match self.state {
            AcqState::Start => {
                self.state = AcqState::TestAndSet;
                Step::Op(word(self.addr, WordOp::TestAndSet))
            }
            AcqState::TestAndSet => {
                if word_outcome(outcome).1 {
                    return Step::Done(());
                }
                self.failed += 1;
                match self.pause.spin {
                    Spin::TestAndSet => self.pause(),
                    Spin::TestAndTestAndSet => self.poll(),
                }
            }
            AcqState::Pause => {
                self.state = AcqState::TestAndSet;
                Step::Op(word(self.addr, WordOp::TestAndSet))
            }
            AcqState::Poll => {
                let (old, pauses) = match outcome {
                    Some(&Outcome::Polled { old, pauses }) => (old, pauses),
                    _ => (u64::MAX, self.pauses),
                };
                self.pauses = pauses;
                if old == 0 {
                    self.state = AcqState::TestAndSet;
                    Step::Op(word(self.addr, WordOp::TestAndSet))
                } else {
                    self.poll()
                }
            }
        }
    }

    /// Reads the held word, pausing before each read, until it reads 0 (one [`Op::Poll`]).
    fn poll(&mut self) -> Step<()> {
        self.state = AcqState::Poll;
        Step::Op(Op::Poll {
            addr: self.addr,
            pause: self.pause,
            pauses: self.pauses,
        })
    }
}

/// What a [`Locked`] access writes after its read.
#[derive(Clone, Copy, Debug)]
pub(super) enum Write {
    /// Store the value at the address.
    Always(u64, u64),
    /// Store the value at the address if the read found 0.
    IfEmpty(u64, u64),
}

/// Locks `lock`, reads a word (if asked), writes (if asked or if the read found 0), copies the
/// request's other words (if asked, and only if it wrote), computes `hold` cycles still holding
/// the lock (0: none; only if it wrote), unlocks; done with the word read and the failed
/// test-and-sets.
#[derive(Clone, Debug)]
pub(super) struct Locked {
    acq: Acquire,
    lock: u64,
    read: Option<u64>,
    write: Write,
    copy: Option<Copy>,
    hold: Cycles,
    phase: u8,
    value: u64,
}

impl Locked {
    pub(super) fn new(lock: u64, pause: Pause, read: Option<u64>, write: Write) -> Self {
        Locked {
            acq: Acquire::new(lock, pause),
            lock,
            read,
            write,
            copy: None,
            hold: 0,
            phase: 0,
            value: 0,
        }
    }

    /// The same access, copying a request's body (`copy`) after its write, before any hold.
    pub(super) fn copying(self, copy: Copy) -> Self {
        Locked {
            copy: Some(copy),
            ..self
        }
    }

    /// The same access, computing `hold` cycles between its write and its release.
    pub(super) fn holding(self, hold: Cycles) -> Self {
        Locked { hold, ..self }
    }

    #[inline]
    pub(super) fn resume(&mut self, outcome: Option<&Outcome>) -> Step<(u64, u32)> {
        loop {
            match self.phase {
                0 => match self.acq.resume(outcome) {
                    Step::Op(op) => return Step::Op(op),
                    Step::Done(()) => {
                        self.phase = 1;
                        if let Some(a) = self.read {
                            return Step::Op(word(a, WordOp::Load));
                        }
                    }
                },
                1 => {
                    if self.read.is_some() {
                        self.value = word_outcome(outcome).0;
                    }
                    self.phase = 2;
                    match self.write {
                        Write::Always(a, v) => return Step::Op(word(a, WordOp::Store(v))),
                        Write::IfEmpty(a, v) if self.value == 0 => {
                            return Step::Op(word(a, WordOp::Store(v)))
                        }
                        // Nothing written: nothing to copy or process.
                        _ => {
                            self.copy = None;
                            self.hold = 0;
                        }
                    }
                }
                2 => {
                    if let Some(op) = self.copy.take().and_then(|c| c.op()) {
                        return Step::Op(op);
                    }
                    self.phase = 3;
                    if self.hold > 0 {
                        return Step::Op(Op::Compute(self.hold));
                    }
                }
                3 => {
                    self.phase = 4;
                    return Step::Op(release(self.lock));
                }
                _ => return Step::Done((self.value, self.acq.failed)),
            }
        }
    }
}

/// A word memory for driving protocols in tests without a simulation: applies each word
/// operation at once and gives its outcome.
#[derive(Clone, Debug, Default)]
pub struct TestMemory {
    words: std::collections::BTreeMap<u64, u64>,
}

impl TestMemory {
    /// Applies `op` (a word operation; other operations have no outcome) and returns its
    /// outcome.
    pub fn apply(&mut self, op: &Op) -> Option<Outcome> {
        match *op {
            // One pause and one load: the protocol polls again while the word is not 0.
            Op::Poll { addr, pauses, .. } => Some(Outcome::Polled {
                old: self.get(addr),
                pauses: pauses.saturating_add(1),
            }),
            Op::Word { addr, op } => {
                let w = self.words.entry(addr).or_insert(0);
                let (new, success) = op.apply(*w);
                let old = *w;
                *w = new;
                Some(Outcome::Word { old, success })
            }
            _ => None,
        }
    }

    /// The word at `addr`.
    pub fn get(&self, addr: u64) -> u64 {
        self.words.get(&addr).copied().unwrap_or(0)
    }

    /// Runs `resume` to completion, applying every operation it issues; gives its result and
    /// the number of operations issued.
    pub fn drive<T>(&mut self, mut resume: impl FnMut(Option<&Outcome>) -> Step<T>) -> (T, u32) {
        let mut outcome = None;
        let mut ops = 0;
        loop {
            match resume(outcome.as_ref()) {
                Step::Done(t) => return (t, ops),
                Step::Op(op) => {
                    ops += 1;
                    outcome = self.apply(&op);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn acquire_spins_until_released() {
        let mut m = TestMemory::default();
        let mut first = Acquire::new(8, 4);
        let (_, ops) = m.drive(|o| first.resume(o));
        assert_eq!(ops, 1);
        assert_eq!(m.get(8), 1);
        // Held: the acquirer reads with pauses; release it after a few steps by hand.
        let mut a = Acquire::new(8, 4);
        let mut outcome = None;
        let mut steps = 0;
        loop {
            match a.resume(outcome.as_ref()) {
                Step::Done(()) => break,
                Step::Op(op) => {
                    steps += 1;
                    if steps == 6 {
                        m.apply(&release(8));
                    }
                    outcome = m.apply(&op);
                }
            }
        }
        assert_eq!(a.failed, 1);
        assert!(steps > 6);
        assert_eq!(m.get(8), 1);
    }

    #[test]
    fn pauses_are_exact_until_a_wait_is_long_then_drawn_with_the_same_mean() {
        let p = Pause::new(32, 7);
        assert!((0..STREAK).all(|n| p.nth(n) == 32));
        let draws: Vec<Cycles> = (STREAK..STREAK + 10_000).map(|n| p.nth(n)).collect();
        assert!(draws.iter().all(|&c| (1..=64).contains(&c)));
        let mean = draws.iter().sum::<Cycles>() as f64 / draws.len() as f64;
        assert!((mean - 32.5).abs() < 1.0, "mean pause {mean}");
        // Another waiter's stream differs.
        let q = Pause::new(32, 8);
        assert!((STREAK..STREAK + 16).any(|n| p.nth(n) != q.nth(n)));
    }

    #[test]
    fn a_test_and_set_waiter_never_reads_and_counts_every_retry() {
        let mut m = TestMemory::default();
        m.apply(&word(8, WordOp::TestAndSet));
        let mut a = Acquire::new(8, Pause::new(4, 1).with_spin(Spin::TestAndSet));
        let (mut outcome, mut tas) = (None, 0);
        loop {
            match a.resume(outcome.as_ref()) {
                Step::Done(()) => break,
                Step::Op(op) => {
                    assert!(!matches!(
                        op,
                        Op::Word {
                            op: WordOp::Load,
                            ..
                        }
                    ));
                    if matches!(
                        op,
                        Op::Word {
                            op: WordOp::TestAndSet,
                            ..
                        }
                    ) {
                        tas += 1;
                        if tas == 5 {
                            m.apply(&release(8));
                        }
                    }
                    outcome = m.apply(&op);
                }
            }
        }
        assert_eq!((a.failed, tas), (4, 5));
    }
}
