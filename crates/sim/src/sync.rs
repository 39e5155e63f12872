//! Synchronization objects of the simulated machine: locks, semaphores, events, barriers and
//! message ports, each with a waiting policy (spin, block, or spin-then-block).
//!
//! Sources: Gupta et al. 1991 section 5 (blocking locks that spin 500 cycles before blocking,
//! semaphore vs event wake-up, handoff to a preempted lock holder); Black 1990 section 5 (message
//! passing with handoff); George 1990 section 2 (test-and-set with exponential backoff, counting
//! backoffs).
//!
//! # Model
//!
//! A thread *waits* on an object ([`Op::Wait`](crate::Op::Wait)) and another *signals* it
//! ([`Op::Signal`](crate::Op::Signal)). What waiting and signalling mean depends on the kind:
//!
//! | kind | wait passes when | signal |
//! |---|---|---|
//! | lock | it is free (the waiter becomes the holder) | release (holder only) |
//! | semaphore | its count is positive (and takes one) | count += 1 |
//! | event | it is set | set (wakes everyone); `Clear` resets |
//! | barrier | all `parties` have arrived (arriving is the wait) | — |
//! | port | a message is queued (and takes it) | send one message |
//!
//! A waiter that cannot pass *spins* on its processor for up to `spin` cycles (charged as `spin`
//! time, and preemptible at the end of its quantum), then *blocks* on the object's queue. A
//! signal first grants spinners, which notice after `spin_notice` cycles; if none can take it,
//! it wakes blocked waiters (one for locks, semaphores and ports; all for events and barriers),
//! which retry when they next run. Woken threads may lose the race to a newcomer, as with real
//! Unix semaphores. This module keeps the state and makes the decisions; the engine moves threads
//! and charges time.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::ids::{Cycles, ProcId, ThreadId};

/// Identifies a synchronization object of a simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SyncId(pub u32);

/// How a waiter spins before (possibly) blocking: Gupta's three lock flavours are
/// `Spin::Forever` (busy-wait), `Spin::Limit(0)` (blocking) and `Spin::Limit(500)`
/// (spin-then-block).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Spin {
    /// Busy-wait until the object can be passed; never block.
    Forever,
    /// Spin at most this many cycles, then block (0: block at once).
    Limit(Cycles),
}

/// How a spinning waiter probes the variable (George 1990: test-and-set with exponential
/// backoff is the baseline whose backoff counts are reported).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Probe {
    /// Spin on a cached copy and race when it changes (test-and-test-and-set).
    Continuous,
    /// Spin with atomic test-and-set on the variable itself: every probe is a read-modify-write
    /// of the line, so at a release the spinners' atomics, not reads, serialize on it.
    TestAndSet,
    /// Test-and-set with exponential backoff: probe after `base`, then double the wait up to
    /// `cap` cycles between probes. Failed probes are counted as backoffs.
    Backoff {
        /// First backoff, in cycles.
        base: Cycles,
        /// Largest backoff, in cycles.
        cap: Cycles,
    },
}

/// What a waiter does once its spinning is over.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AfterSpin {
    /// Block on the object's queue.
    Block,
    /// If the lock's holder (or the object's named owner: the thread that will set an event) is
    /// ready but not running, hand the processor to it (Gupta 5.1, Black 5); otherwise block.
    HandoffToHolder,
}

/// The waiting policy of an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WaitPolicy {
    /// How long to spin.
    pub spin: Spin,
    /// How to probe while spinning.
    pub probe: Probe,
    /// What to do after spinning.
    pub after: AfterSpin,
}

impl WaitPolicy {
    /// Pure busy-waiting.
    pub const SPIN: WaitPolicy = WaitPolicy {
        spin: Spin::Forever,
        probe: Probe::Continuous,
        after: AfterSpin::Block,
    };
    /// Block at once.
    pub const BLOCK: WaitPolicy = WaitPolicy {
        spin: Spin::Limit(0),
        probe: Probe::Continuous,
        after: AfterSpin::Block,
    };

    /// Spin up to `cycles`, then block.
    pub fn spin_then_block(cycles: Cycles) -> Self {
        WaitPolicy {
            spin: Spin::Limit(cycles),
            probe: Probe::Continuous,
            after: AfterSpin::Block,
        }
    }
}

/// The kind of a synchronization object and its state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SyncKind {
    /// A mutual-exclusion lock.
    Lock {
        /// The thread holding it.
        holder: Option<ThreadId>,
    },
    /// A counting semaphore.
    Semaphore {
        /// Units available.
        count: u64,
    },
    /// An event (a flag waiters wait to see set).
    Event {
        /// Whether it is set.
        set: bool,
    },
    /// A barrier for `parties` threads, reusable: each completion starts a new generation.
    Barrier {
        /// Threads per episode.
        parties: u32,
        /// Threads arrived in the current generation.
        arrived: u32,
        /// Completed episodes.
        generation: u64,
    },
    /// A message port.
    Port {
        /// Messages queued.
        messages: u64,
        /// Senders hand their processor to a blocked receiver when no processor is idle
        /// (Black 1990, Table 3).
        handoff: bool,
    },
}

/// A spinning waiter: on a processor, waiting since `since`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spinner {
    /// The waiting thread.
    pub thread: ThreadId,
    /// Its processor.
    pub proc: ProcId,
    /// When it started spinning.
    pub since: Cycles,
}

/// Counters of one object.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyncStats {
    /// Waits that passed at once.
    pub immediate: u64,
    /// Waits that had to spin or block.
    pub contended: u64,
    /// Waiters granted while spinning.
    pub spin_grants: u64,
    /// Times a waiter blocked.
    pub blocks: u64,
    /// Blocked waiters woken.
    pub wakeups: u64,
    /// Failed probes of backoff spinners (George's backoff count).
    pub backoffs: u64,
    /// Most failed probes in one wait.
    pub max_backoffs: u64,
}

impl SyncStats {
    /// Adds another object's counters (taking the larger `max_backoffs`).
    pub fn merge(&mut self, o: &SyncStats) {
        self.immediate += o.immediate;
        self.contended += o.contended;
        self.spin_grants += o.spin_grants;
        self.blocks += o.blocks;
        self.wakeups += o.wakeups;
        self.backoffs += o.backoffs;
        self.max_backoffs = self.max_backoffs.max(o.max_backoffs);
    }
}

/// One synchronization object.
#[derive(Clone, Debug)]
pub struct SyncObject {
    /// Kind and state.
    pub kind: SyncKind,
    /// How its waiters wait.
    pub policy: WaitPolicy,
    /// Waiters spinning on a processor, in arrival order.
    pub spinners: Vec<Spinner>,
    /// Waiters blocked, in arrival order.
    pub blocked: VecDeque<ThreadId>,
    /// Counters.
    pub stats: SyncStats,
    /// Address of the object's synchronization variable when the memory model is on: acquiring
    /// is an atomic test-and-set on its line, releasing a write, so contention on the line and
    /// the invalidations of spinners' copies come from the memory model.
    pub line: Option<u64>,
    /// The thread expected to signal the object (the owner of an event, such as the process
    /// that finishes an LU column), named by the program for handoff (Gupta 5.1); a lock's
    /// holder is known without it.
    pub owner: Option<ThreadId>,
}

/// Why a signal is invalid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Misuse {
    /// A lock released by a thread that does not hold it.
    NotHolder,
    /// Signal on a barrier (threads arrive by waiting).
    SignalBarrier,
    /// Clear on something other than an event.
    ClearNonEvent,
}

impl SyncObject {
    /// A new object of this kind and policy.
    pub fn new(kind: SyncKind, policy: WaitPolicy) -> Self {
        SyncObject {
            kind,
            policy,
            spinners: Vec::new(),
            blocked: VecDeque::new(),
            stats: SyncStats::default(),
            line: None,
            owner: None,
        }
    }

    /// Whether waking one waiter is enough after a signal (locks, semaphores, ports) or every
    /// waiter must be released (events, barriers).
    pub fn wakes_all(&self) -> bool {
        matches!(self.kind, SyncKind::Event { .. } | SyncKind::Barrier { .. })
    }

    /// Thread `t` tries to pass. `gen` is the barrier generation `t` arrived in, if it already
    /// arrived. Returns `Pass` or `Wait(generation)`.
    pub fn try_pass(&mut self, t: ThreadId, arrived_gen: Option<u64>) -> Attempt {
        match &mut self.kind {
            SyncKind::Lock { holder } => {
                if holder.is_none() {
                    *holder = Some(t);
                    Attempt::Pass
                } else {
                    Attempt::Wait(None)
                }
            }
            SyncKind::Semaphore { count }
            | SyncKind::Port {
                messages: count, ..
            } => {
                if *count > 0 {
                    *count -= 1;
                    Attempt::Pass
                } else {
                    Attempt::Wait(None)
                }
            }
            SyncKind::Event { set } => {
                if *set {
                    Attempt::Pass
                } else {
                    Attempt::Wait(None)
                }
            }
            SyncKind::Barrier {
                parties,
                arrived,
                generation,
            } => match arrived_gen {
                Some(g) if g != *generation => Attempt::Pass,
                Some(g) => Attempt::Wait(Some(g)),
                None => {
                    *arrived += 1;
                    if *arrived >= *parties {
                        *arrived = 0;
                        *generation += 1;
                        Attempt::PassAndRelease
                    } else {
                        Attempt::Wait(Some(*generation))
                    }
                }
            },
        }
    }

    /// Applies a signal by `t`.
    pub fn signal(&mut self, t: ThreadId) -> Result<(), Misuse> {
        match &mut self.kind {
            SyncKind::Lock { holder } => {
                if *holder != Some(t) {
                    return Err(Misuse::NotHolder);
                }
                *holder = None;
            }
            SyncKind::Semaphore { count }
            | SyncKind::Port {
                messages: count, ..
            } => *count += 1,
            SyncKind::Event { set } => *set = true,
            SyncKind::Barrier { .. } => return Err(Misuse::SignalBarrier),
        }
        Ok(())
    }

    /// Resets an event.
    pub fn clear(&mut self) -> Result<(), Misuse> {
        match &mut self.kind {
            SyncKind::Event { set } => {
                *set = false;
                Ok(())
            }
            _ => Err(Misuse::ClearNonEvent),
        }
    }

    /// The thread to hand the processor to: a lock's holder, else the named owner.
    pub fn holder(&self) -> Option<ThreadId> {
        match self.kind {
            SyncKind::Lock { holder } => holder,
            _ => self.owner,
        }
    }

    /// Removes `t` from the spinners, if it is one.
    pub fn remove_spinner(&mut self, t: ThreadId) -> Option<Spinner> {
        let i = self.spinners.iter().position(|s| s.thread == t)?;
        Some(self.spinners.remove(i))
    }
}

/// The outcome of [`SyncObject::try_pass`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attempt {
    /// The waiter passes.
    Pass,
    /// The waiter was the last to arrive at a barrier: it passes and releases the others.
    PassAndRelease,
    /// The waiter must wait (with the barrier generation it arrived in).
    Wait(Option<u64>),
}

/// Which spinner a released object goes to: the one whose next probe at or after `now` comes
/// first (ties: the one spinning longest, then the lowest thread id). Returns its index, when it
/// probes and how many of its probes failed before. `None` with no spinner.
pub fn first_prober(
    spinners: &[Spinner],
    probe: Probe,
    now: Cycles,
) -> Option<(usize, Cycles, u64)> {
    spinners
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (at, failed) = next_probe(probe, s.since, now);
            (i, at, failed)
        })
        .min_by_key(|&(i, at, _)| (at, spinners[i].since, spinners[i].thread))
}

/// Whether a signal on a port hands the signaller's processor to a blocked receiver (Mach's
/// message handoff, Black 1990 Table 3): a handoff port with a receiver waiting, when the
/// signaller may hand off and no processor is idle to take the receiver instead.
pub fn port_hands_off(kind: &SyncKind, receivers: usize, may_handoff: bool, no_idle: bool) -> bool {
    matches!(kind, SyncKind::Port { handoff: true, .. }) && may_handoff && receivers > 0 && no_idle
}

/// How many of `blocked` waiters a release wakes: every one for an object that wakes all
/// (events, barriers), else one.
pub fn to_wake(wakes_all: bool, blocked: usize) -> usize {
    if wakes_all {
        blocked
    } else {
        blocked.min(1)
    }
}

/// When a spinner that started at `since` with this probe policy next probes at or after `t`,
/// and how many probes failed before then. Pure arithmetic, so backoff costs no events.
pub fn next_probe(probe: Probe, since: Cycles, t: Cycles) -> (Cycles, u64) {
    match probe {
        Probe::Continuous | Probe::TestAndSet => (t, 0),
        Probe::Backoff { base, cap } => {
            let base = base.max(1);
            let cap = cap.max(base);
            // Probes at since + base, + 2 base, + 4 base, ... until the gap reaches cap.
            let mut at = since;
            let mut gap = base;
            let mut failed = 0u64;
            loop {
                at += gap;
                if at >= t {
                    return (at, failed);
                }
                failed += 1;
                if gap >= cap {
                    // Constant gap from here: jump arithmetically.
                    let k = (t - at).div_ceil(cap);
                    return (at + k * cap, failed + k - 1);
                }
                gap = (gap * 2).min(cap);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ids::ProcId;

    fn spinner(t: u32, since: Cycles) -> Spinner {
        Spinner {
            thread: ThreadId(t),
            proc: ProcId(t),
            since,
        }
    }

    #[test]
    fn the_first_prober_gets_the_object() {
        assert_eq!(first_prober(&[], Probe::Continuous, 10), None);
        // Continuous spinners all probe now: the one spinning longest wins, then the lowest id.
        let s = [spinner(3, 50), spinner(1, 20), spinner(2, 20)];
        assert_eq!(first_prober(&s, Probe::Continuous, 100), Some((1, 100, 0)));
        // With backoff, the one whose next probe comes first wins, whatever it waited.
        let b = Probe::Backoff {
            base: 10,
            cap: 1000,
        };
        let s = [spinner(1, 0), spinner(2, 95)];
        // Thread 1 probes at 10, 30, 70, 150: next at 150 after 3 failures; thread 2 at 105.
        assert_eq!(first_prober(&s, b, 100), Some((1, 105, 0)));
    }

    #[test]
    fn ports_hand_off_only_when_no_processor_is_idle() {
        let port = |handoff| SyncKind::Port {
            messages: 0,
            handoff,
        };
        assert!(port_hands_off(&port(true), 1, true, true));
        assert!(!port_hands_off(&port(true), 1, true, false));
        assert!(!port_hands_off(&port(true), 0, true, true));
        assert!(!port_hands_off(&port(true), 1, false, true));
        assert!(!port_hands_off(&port(false), 1, true, true));
        assert_eq!(to_wake(true, 5), 5);
        assert_eq!(to_wake(false, 5), 1);
        assert_eq!(to_wake(false, 0), 0);
    }

    use super::*;

    #[test]
    fn lock_passes_once_and_only_holder_releases() {
        let mut l = SyncObject::new(SyncKind::Lock { holder: None }, WaitPolicy::SPIN);
        assert_eq!(l.try_pass(ThreadId(1), None), Attempt::Pass);
        assert_eq!(l.try_pass(ThreadId(2), None), Attempt::Wait(None));
        assert_eq!(l.signal(ThreadId(2)), Err(Misuse::NotHolder));
        assert_eq!(l.signal(ThreadId(1)), Ok(()));
        assert_eq!(l.try_pass(ThreadId(2), None), Attempt::Pass);
    }

    #[test]
    fn barrier_releases_on_last_arrival_and_is_reusable() {
        let mut b = SyncObject::new(
            SyncKind::Barrier {
                parties: 3,
                arrived: 0,
                generation: 0,
            },
            WaitPolicy::BLOCK,
        );
        assert_eq!(b.try_pass(ThreadId(0), None), Attempt::Wait(Some(0)));
        assert_eq!(b.try_pass(ThreadId(1), None), Attempt::Wait(Some(0)));
        assert_eq!(b.try_pass(ThreadId(0), Some(0)), Attempt::Wait(Some(0)));
        assert_eq!(b.try_pass(ThreadId(2), None), Attempt::PassAndRelease);
        assert_eq!(b.try_pass(ThreadId(0), Some(0)), Attempt::Pass);
        assert_eq!(b.try_pass(ThreadId(0), None), Attempt::Wait(Some(1)));
    }

    #[test]
    fn backoff_probes_double_then_stay_at_cap() {
        let p = Probe::Backoff { base: 10, cap: 40 };
        // Probes at 10, 30, 70, 110, 150, ...
        assert_eq!(next_probe(p, 0, 5), (10, 0));
        assert_eq!(next_probe(p, 0, 10), (10, 0));
        assert_eq!(next_probe(p, 0, 11), (30, 1));
        assert_eq!(next_probe(p, 0, 31), (70, 2));
        assert_eq!(next_probe(p, 0, 71), (110, 3));
        assert_eq!(next_probe(p, 0, 1000), (1030, 26));
        assert_eq!(next_probe(Probe::Continuous, 0, 77), (77, 0));
    }
}
