//! The record of one run (point, repetition, seed, the simulator's report) and of a run stopped
//! at a bound or stuck (a deadlock, a livelock, threads stranded): what the runner returns and
//! the measures, results and reports read.

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
    /// Set when the run reached a bound, or could not go on, before every thread exited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Stopped>,
}

/// The experiment-file fields that bound a run: simulated time, engine events, memory
/// references (in the order of [`Bound`]'s kinds).
pub const LIMIT_FIELDS: [&str; 3] = ["time_limit_cycles", "event_limit", "reference_limit"];

/// A run that reached one of its bounds, or could not go on (a deadlock, a livelock, threads no
/// processor takes), before every thread exited: its measures cover the run up to the stop only.
#[derive(Clone, Debug, Serialize)]
pub struct Stopped {
    /// The bound reached; `None` for a run that could not go on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<Bound>,
    /// The experiment-file field that sets it (`time_limit_cycles`, `event_limit` or
    /// `reference_limit`); empty for a run that could not go on.
    #[serde(skip_serializing_if = "str::is_empty")]
    pub field: &'static str,
    /// Simulated time at the stop.
    pub at_cycle: Cycles,
    /// Events handled.
    pub events: u64,
    /// Threads still live (for a run that could not go on, those stuck).
    pub live: u64,
    /// Why a run could not go on: the simulator's line (`deadlock at cycle ...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stuck: Option<String>,
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
            bound: Some(bound),
            field,
            at_cycle,
            events,
            live,
            stuck: None,
        }
    }

    /// A run that could not go on, `why` (the simulator's line), at cycle `at_cycle` after
    /// `events` events with `live` threads stuck.
    pub fn stuck(why: String, at_cycle: Cycles, events: u64, live: u64) -> Stopped {
        Stopped {
            bound: None,
            field: "",
            at_cycle,
            events,
            live,
            stuck: Some(why),
        }
    }

    /// Why the run stopped and what to raise, in a line.
    pub fn describe(&self) -> String {
        match (&self.bound, &self.stuck) {
            (Some(bound), _) => format!(
                "stopped at {bound} (cycle {}, {} events) with {} thread(s) still live; raise \
                 `{}` to let it finish",
                self.at_cycle, self.events, self.live, self.field
            ),
            (None, why) => format!(
                "could not go on: {}; its measures cover the run up to then ({} events)",
                why.as_deref().unwrap_or("stuck"),
                self.events
            ),
        }
    }
}
