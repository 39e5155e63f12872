//! The run loop's periodic check (`crate::limits`): a policy's fault, the end of the
//! application the run waits for, the bounds on events and on memory references, and the
//! observer's turn, all behind one comparison of the event count per event.

use super::{SimError, Simulation};
use crate::limits::{Bound, Limits, Progress};

/// What the engine's periodic check found: go on, end the run (its application is done),
/// or stop it with a fault or at a bound.
pub(super) enum Checked {
    Go,
    End,
    Fault(SimError),
    Bound(Bound),
}

impl Simulation {
    /// Sets the first check before the run: one comparison per event covers the event bound, a
    /// policy's fault, the reference bound and the observer (every `every` events). The
    /// references are summed over the processors, so at most once every `processors` events.
    pub(super) fn start_checks(&mut self, every: u64) {
        if self.limits.references < u64::MAX && self.memory.enabled() {
            self.refs_every = Limits::REFERENCE_CHECK_EVENTS.max(self.procs.len() as u64);
        }
        self.next_observe = every;
        self.next_check = every.min(self.refs_every).min(self.limits.events);
    }

    /// The check made every `every` events and at the event bound: a policy's fault, the end
    /// of the application the run waits for, the bound, or the observer's turn. Off the hot path.
    #[cold]
    pub(super) fn check(&mut self, every: u64, observe: &mut dyn FnMut(Progress)) -> Checked {
        if let Some(fault) = self.fault.take() {
            return Checked::Fault(fault);
        }
        if self.ending {
            return Checked::End;
        }
        if self.events >= self.limits.events {
            return Checked::Bound(Bound::Events(self.limits.events));
        }
        if self.refs_every < u64::MAX {
            self.refs_seen = self.memory.total_refs();
            if self.refs_seen >= self.limits.references {
                return Checked::Bound(Bound::References(self.limits.references));
            }
        }
        if self.events >= self.next_observe {
            observe(Progress {
                now: self.cx.now,
                events: self.events,
                live: self.live,
                references: self.refs_seen,
                limits: self.limits,
            });
            self.next_observe = self.events.saturating_add(every);
        }
        self.next_check = self
            .next_observe
            .min(self.events.saturating_add(self.refs_every))
            .min(self.limits.events);
        Checked::Go
    }
}
