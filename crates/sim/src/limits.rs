//! Bounds on a run and progress while it goes: a run stops at a bound on simulated time or on
//! engine events instead of going on forever (a busy-waiting pair under batch scheduling, a
//! one-cycle quantum), and an observer sees the event count and simulated time every so many
//! events, so a long point can say how far it has come.
//!
//! The engine itself is unbounded by default ([`Limits::NONE`]); the lab gives every run of an
//! experiment file a bound ([`Limits::DEFAULT_EVENTS`], [`Limits::DEFAULT_CYCLES`]).

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
}

impl Limits {
    /// No bound at all.
    pub const NONE: Limits = Limits {
        cycles: Cycles::MAX,
        events: u64::MAX,
    };

    /// The lab's default bound on events: a billion, about a minute of one core.
    pub const DEFAULT_EVENTS: u64 = 1_000_000_000;

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
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bound::Cycles(c) => write!(f, "the time limit of {c} cycles"),
            Bound::Events(n) => write!(f, "the event limit of {n} events"),
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
    /// The run's bounds.
    pub limits: Limits,
}

impl Progress {
    /// The fraction of the nearer bound used so far, in [0, 1]: how far the run is from being
    /// stopped (not from finishing, which no one can know in advance).
    pub fn fraction_of_limit(&self) -> f64 {
        let t = self.now as f64 / self.limits.cycles as f64;
        let e = self.events as f64 / self.limits.events as f64;
        t.max(e).clamp(0.0, 1.0)
    }
}
