//! A bounded record of what each processor ran, for trace viewers: every stretch a thread held
//! a processor (from its dispatch until the processor takes another thread or goes idle, so
//! the kernel's work for a departing thread stays in its stretch, as it is charged to it) and the moments that explain the schedule (a thread
//! woken, preempted, blocked, migrated, starting to wait on a synchronization object). The lab
//! writes it as a Chrome trace (Perfetto and chrome://tracing open it), one track per
//! processor, so a gang's rows, affinity and migrations are visible at a glance.
//!
//! Bounded: only events inside the time window are kept, at most `max_events` of them; once the
//! budget is spent recording stops and the trace says at which cycle (`truncated_at`), and the
//! stretches under way then are kept cut at that cycle, so that the trace shows what every
//! processor ran up to the stop (at most one such stretch per processor past the budget).

use crate::ids::{Cycles, ProcId, TaskId, ThreadId};

/// What to record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceConfig {
    /// Most events kept (stretches and moments together).
    pub max_events: usize,
    /// Keep only what happens at or after this cycle.
    pub from: Cycles,
    /// ...and before this cycle.
    pub until: Cycles,
}

impl Default for TraceConfig {
    fn default() -> Self {
        TraceConfig {
            max_events: 100_000,
            from: 0,
            until: Cycles::MAX,
        }
    }
}

/// A stretch of time a thread held a processor (dispatch, the thread's work, and the kernel's
/// work when it left).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stretch {
    /// The processor.
    pub processor: ProcId,
    /// The thread.
    pub thread: ThreadId,
    /// Its application.
    pub task: TaskId,
    /// When it was dispatched.
    pub start: Cycles,
    /// When it left.
    pub end: Cycles,
}

/// A moment worth marking.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mark {
    /// The thread became ready after blocking.
    Woken,
    /// The thread was taken off its processor while it could still run.
    Preempted,
    /// The thread blocked.
    Blocked,
    /// The thread was dispatched on another processor than the one it last ran on.
    Migrated {
        /// The processor it ran on before.
        from: ProcId,
    },
    /// The thread started waiting on synchronization object `object`.
    Waits {
        /// The object.
        object: u32,
    },
}

/// A marked moment of a thread (on its processor, if it has one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Moment {
    /// When.
    pub at: Cycles,
    /// The thread.
    pub thread: ThreadId,
    /// The processor it was on or is dispatched to, if any.
    pub processor: Option<ProcId>,
    /// What happened.
    pub mark: Mark,
}

/// The record of one run.
#[derive(Clone, Debug, Default)]
pub struct Trace {
    config: TraceConfig,
    /// Stretches, in the order they ended.
    pub stretches: Vec<Stretch>,
    /// Moments, in time order.
    pub moments: Vec<Moment>,
    /// The cycle at which the event budget ran out, if it did.
    pub truncated_at: Option<Cycles>,
    /// Each thread's rank in its application (creation order, as `threads.csv` numbers it),
    /// by thread id; set at the end of the run.
    pub ranks: Vec<u32>,
    /// The stretch under way on each processor: (thread, task, start).
    open: Vec<Option<(ThreadId, TaskId, Cycles)>>,
}

impl Trace {
    /// An empty trace for `processors` processors.
    pub fn new(config: TraceConfig, processors: usize) -> Trace {
        Trace {
            config,
            open: vec![None; processors],
            ..Trace::default()
        }
    }

    /// The bounds it was recorded under.
    pub fn config(&self) -> TraceConfig {
        self.config
    }

    /// Whether an event at `at` may be kept; when the budget is spent, recording stops there.
    fn room(&mut self, at: Cycles) -> bool {
        if self.truncated_at.is_some() {
            return false;
        }
        if self.stretches.len() + self.moments.len() >= self.config.max_events {
            self.stop(at);
            return false;
        }
        true
    }

    /// The budget is spent at `at`: recording stops, and every stretch under way is kept cut
    /// at `at`, so that no processor looks idle up to the stop when it was not.
    fn stop(&mut self, at: Cycles) {
        self.truncated_at = Some(at);
        for p in 0..self.open.len() {
            if let Some((thread, task, start)) = self.open[p].take() {
                self.keep(ProcId(p as u32), thread, task, start, at);
            }
        }
    }

    /// Keeps the stretch of `thread` on `p` from `start` to `end`, cut to the window, if any of
    /// it lies inside.
    fn keep(&mut self, p: ProcId, thread: ThreadId, task: TaskId, start: Cycles, end: Cycles) {
        let (start, end) = (start.max(self.config.from), end.min(self.config.until));
        if end > start {
            self.stretches.push(Stretch {
                processor: p,
                thread,
                task,
                start,
                end,
            });
        }
    }

    /// Thread `t` of `task` starts on `p` at `at`.
    #[cold]
    #[inline(never)]
    pub(crate) fn dispatch(&mut self, p: ProcId, t: ThreadId, task: TaskId, at: Cycles) {
        if self.truncated_at.is_some() {
            return;
        }
        self.depart(p, at);
        if let Some(slot) = self.open.get_mut(p.index()) {
            *slot = Some((t, task, at));
        }
    }

    /// Whatever ran on `p` leaves it at `at`.
    #[cold]
    #[inline(never)]
    pub(crate) fn depart(&mut self, p: ProcId, at: Cycles) {
        let Some(&Some((_, _, start))) = self.open.get(p.index()) else {
            return;
        };
        let inside = start.max(self.config.from) < at.min(self.config.until);
        // Checked while the stretch is still open, so that a stop here keeps it, cut at `at`.
        if inside && !self.room(at) {
            return;
        }
        if let Some((thread, task, start)) = self.open.get_mut(p.index()).and_then(Option::take) {
            self.keep(p, thread, task, start, at);
        }
    }

    /// Marks a moment.
    #[cold]
    #[inline(never)]
    pub(crate) fn mark(
        &mut self,
        at: Cycles,
        thread: ThreadId,
        processor: Option<ProcId>,
        mark: Mark,
    ) {
        if at >= self.config.from && at < self.config.until && self.room(at) {
            self.moments.push(Moment {
                at,
                thread,
                processor,
                mark,
            });
        }
    }

    /// Closes every stretch under way at the end of the run.
    pub(crate) fn close(&mut self, at: Cycles) {
        for p in 0..self.open.len() {
            self.depart(ProcId(p as u32), at);
        }
    }
}
