//! Bounds on a run and progress while it goes: a run stops at a bound on simulated time, on
//! engine events or on simulated memory references instead of going on forever (a busy-waiting
//! pair under batch scheduling, a one-cycle quantum, passes over a large region), and an
//! observer sees the event count and simulated time every so many events, so a long point can
//! say how far it has come.
//!
//! The engine itself is unbounded by default ([`Limits::NONE`]); the lab gives every run of an
//! experiment file a bound ([`Limits::DEFAULT_EVENTS`], [`Limits::DEFAULT_REFERENCES`],
//! [`Limits::DEFAULT_CYCLES`]).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ids::Cycles;

/// The bounds of one run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The run stops when the next event lies past this cycle.
    pub cycles: Cycles,
    /// The run stops when it has handled this many events.
    pub events: u64,
    /// The run stops once its processors have made this many references through the memory
    /// model (checked every [`Limits::REFERENCE_CHECK_EVENTS`] events, or every `processors`
    /// events on a larger machine, so it may run that many chunks past). A bulk access is one
    /// event of thousands of references, so the event bound alone let a memory-heavy run go on
    /// for half an hour.
    pub references: u64,
}

impl Limits {
    /// No bound at all.
    pub const NONE: Limits = Limits {
        cycles: Cycles::MAX,
        events: u64::MAX,
        references: u64::MAX,
    };

    /// The lab's default bound on events: a billion, about a minute of one core.
    pub const DEFAULT_EVENTS: u64 = 1_000_000_000;

    /// The lab's default bound on memory references: ten billion, about a minute of one core
    /// when every reference misses in a bulk access (150-190 M a second, docs/performance.md);
    /// references charged one by one (a policy's lock traffic on thousands of processors)
    /// reach it in five to eight minutes.
    pub const DEFAULT_REFERENCES: u64 = 10_000_000_000;

    /// How often, in events, the engine compares the references made with
    /// [`Limits::references`] (when that bound is set).
    pub const REFERENCE_CHECK_EVENTS: u64 = 256;

    /// The lab's default bound on simulated time: 10^15 cycles (about 11.6 days at 1 GHz).
    pub const DEFAULT_CYCLES: Cycles = 1_000_000_000_000_000;
}

impl Default for Limits {
    fn default() -> Self {
        Limits::NONE
    }
}

/// Which bound a run reached.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// The bound on simulated time, in cycles.
    Cycles(Cycles),
    /// The bound on engine events.
    Events(u64),
    /// The bound on memory references.
    References(u64),
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::Cycles(c) => write!(f, "the time limit of {c} cycles"),
            Bound::Events(n) => write!(f, "the event limit of {n} events"),
            Bound::References(n) => write!(f, "the reference limit of {n} memory references"),
        }
    }
}

/// How far a run has come, as an observer sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Simulated time.
    pub now: Cycles,
    /// Events handled so far.
    pub events: u64,
    /// Threads not yet exited.
    pub live: u64,
    /// Memory references made so far (counted at each check of [`Limits::references`]; 0
    /// when that bound is not set).
    pub references: u64,
    /// The run's bounds.
    pub limits: Limits,
}

impl Progress {
    /// The fraction of the nearer bound used so far, in [0, 1]: how far the run is from being
    /// stopped (not from finishing, which no one can know in advance).
    pub fn fraction_of_limit(&self) -> f64 {
        let t = self.now as f64 / self.limits.cycles as f64;
        let e = self.events as f64 / self.limits.events as f64;
        let r = self.references as f64 / self.limits.references as f64;
        t.max(e).max(r).clamp(0.0, 1.0)
    }
}
