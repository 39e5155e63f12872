//! The record of one run (point, repetition, seed, the simulator's report) and of a run stopped
//! at a bound: what the runner returns and the measures, results and reports read.

use serde::Serialize;
use smpsched_sim::{Bound, Cycles, RunReport};

/// The outcome of one run: which point and repetition, with which seed, and what was measured.
#[derive(Clone, Debug, Serialize)]
pub struct RunRecord {
    /// The point's label.
    pub point: String,
    /// The values the point sets, as (dotted path, value).
    pub params: Vec<(String, crate::input::param_value::ParamValue)>,
    /// Repetition index, from 0.
    pub repetition: u32,
    /// The seed the run used.
    pub seed: u64,
    /// What the simulator measured (up to the stop, for a stopped run).
    pub report: RunReport,
    /// Set when the run reached a bound before every thread exited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Stopped>,
}

/// The experiment-file fields that bound a run: simulated time, engine events, memory
/// references (in the order of [`Bound`]'s kinds).
pub const LIMIT_FIELDS: [&str; 3] = ["time_limit_cycles", "event_limit", "reference_limit"];

/// A run that reached one of its bounds before every thread exited: its measures cover the run
/// up to the stop only.
#[derive(Clone, Debug, Serialize)]
pub struct Stopped {
    /// The bound reached.
    pub bound: Bound,
    /// The experiment-file field that sets it (`time_limit_cycles`, `event_limit` or
    /// `reference_limit`).
    pub field: &'static str,
    /// Simulated time at the stop.
    pub at_cycle: Cycles,
    /// Events handled.
    pub events: u64,
    /// Threads still live.
    pub live: u64,
}

impl Stopped {
    /// The stop at `bound`, reached at cycle `at_cycle` after `events` events with `live`
    /// threads left; the field to raise follows from the bound.
    pub fn at(bound: Bound, at_cycle: Cycles, events: u64, live: u64) -> Stopped {
        let field = match bound {
            Bound::Cycles(_) => LIMIT_FIELDS[0],
            Bound::Events(_) => LIMIT_FIELDS[1],
            Bound::References(_) => LIMIT_FIELDS[2],
        };
        Stopped {
            bound,
            field,
            at_cycle,
            events,
            live,
        }
    }

    /// Why the run stopped and what to raise, in a line.
    pub fn describe(&self) -> String {
        format!(
            "stopped at {} (cycle {}, {} events) with {} thread(s) still live; raise `{}` to \
             let it finish",
            self.bound, self.at_cycle, self.events, self.live, self.field
        )
    }
}
