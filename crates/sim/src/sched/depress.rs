//! Priority depression for strong discouragement (Black 1990, section 5.1), shared by the
//! policies that support it: a depressed thread runs only when nothing else is ready, until its
//! timeout passes or it cancels the depression.

use std::collections::VecDeque;

use crate::ids::{Cycles, ThreadId};

/// Depression deadlines per thread and the ready threads parked because they are depressed.
#[derive(Debug, Default)]
pub struct Depressed {
    until: Vec<Cycles>,
    parked: VecDeque<ThreadId>,
}

impl Depressed {
    /// Depresses `t` until `until`.
    pub fn set(&mut self, t: ThreadId, until: Cycles) {
        if self.until.len() <= t.index() {
            self.until.resize(t.index() + 1, 0);
        }
        self.until[t.index()] = until;
    }

    /// Cancels `t`'s depression; `true` if `t` was parked (the caller queues it normally).
    pub fn cancel(&mut self, t: ThreadId) -> bool {
        if let Some(u) = self.until.get_mut(t.index()) {
            *u = 0;
        }
        self.remove(t)
    }

    /// Whether `t` is depressed at `now`.
    pub fn is_depressed(&self, t: ThreadId, now: Cycles) -> bool {
        self.until.get(t.index()).is_some_and(|&u| u > now)
    }

    /// Parks ready thread `t`, which is depressed.
    pub fn park(&mut self, t: ThreadId) {
        self.parked.push_back(t);
    }

    /// Parked threads whose depression has ended by `now`, in parking order, removed.
    pub fn expire(&mut self, now: Cycles) -> Vec<ThreadId> {
        let until = &self.until;
        let mut out = Vec::new();
        self.parked.retain(|&t| {
            let keep = until.get(t.index()).is_some_and(|&u| u > now);
            if !keep {
                out.push(t);
            }
            keep
        });
        out
    }

    /// The longest-parked thread, removed.
    pub fn pop(&mut self) -> Option<ThreadId> {
        self.parked.pop_front()
    }

    /// The longest-parked thread that `allowed` accepts (its mask allows the processor),
    /// removed.
    pub fn pop_where(&mut self, allowed: impl Fn(ThreadId) -> bool) -> Option<ThreadId> {
        let i = self.parked.iter().position(|&t| allowed(t))?;
        self.parked.remove(i)
    }

    /// Removes `t` from the parked threads; `true` if it was there.
    pub fn remove(&mut self, t: ThreadId) -> bool {
        match self.parked.iter().position(|&x| x == t) {
            Some(i) => {
                self.parked.remove(i);
                true
            }
            None => false,
        }
    }

    /// Whether no thread is parked.
    pub fn is_empty(&self) -> bool {
        self.parked.is_empty()
    }
}
