//! Mach's run queue (Black 1990, section 3, Figure 1): an array of 32 first-in first-out
//! queues, one per priority level (0 most important), with a *hint* and a *count*.
//!
//! Invariants: every level below the hint is empty (the most important thread is at the hint
//! or later, never earlier), so a search starts at the hint and moves it down to the level it
//! found; the count is the number of queued threads, so emptiness is tested without a search
//! (in Mach, without the run-queue lock).

use std::collections::VecDeque;

use smpsched_policy::mach::{LEVELS, LOWEST};

use crate::ids::ThreadId;

/// A Mach run queue: 32 levels with a hint and a count.
#[derive(Debug)]
pub struct RunQueue {
    levels: [VecDeque<ThreadId>; LEVELS],
    hint: usize,
    count: usize,
}

impl Default for RunQueue {
    fn default() -> Self {
        RunQueue {
            levels: std::array::from_fn(|_| VecDeque::new()),
            hint: LOWEST,
            count: 0,
        }
    }
}

impl RunQueue {
    /// Number of threads queued (the count).
    #[inline]
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether no thread is queued: one comparison of the count, no search.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The hint: no level more important than this holds a thread.
    pub fn hint(&self) -> usize {
        self.hint
    }

    /// Queues `t` at the tail of `level` (clamped to the levels), lowering the hint if needed.
    pub fn push(&mut self, t: ThreadId, level: usize) {
        let level = level.min(LOWEST);
        self.levels[level].push_back(t);
        self.count += 1;
        self.hint = self.hint.min(level);
    }

    /// The most important non-empty level, searched from the hint (which moves to it).
    pub fn best_level(&mut self) -> Option<usize> {
        if self.count == 0 {
            return None;
        }
        let found = (self.hint..LEVELS).find(|&l| !self.levels[l].is_empty())?;
        self.hint = found;
        Some(found)
    }

    /// Takes the first thread of the most important level, with its level.
    pub fn pop(&mut self) -> Option<(ThreadId, usize)> {
        let level = self.best_level()?;
        let t = self.levels[level].pop_front()?;
        self.count -= 1;
        Some((t, level))
    }

    /// Takes the first thread, most important level first, that `ok` accepts (a processor
    /// skipping threads its mask does not allow), with its level.
    pub fn pop_where(&mut self, mut ok: impl FnMut(ThreadId) -> bool) -> Option<(ThreadId, usize)> {
        let start = self.best_level()?;
        for level in start..LEVELS {
            if let Some(i) = self.levels[level].iter().position(|&t| ok(t)) {
                let t = self.levels[level].remove(i)?;
                self.count -= 1;
                return Some((t, level));
            }
        }
        None
    }

    /// Removes `t`, queued at `level`; `false` if it is not there.
    pub fn remove(&mut self, t: ThreadId, level: usize) -> bool {
        let q = &mut self.levels[level.min(LOWEST)];
        match q.iter().position(|&x| x == t) {
            Some(i) => {
                q.remove(i);
                self.count -= 1;
                true
            }
            None => false,
        }
    }

    /// Every queued thread with its level, most important first, taken out (the starvation
    /// scan re-queues them at their aged levels).
    pub fn drain(&mut self) -> Vec<(ThreadId, usize)> {
        let mut out = Vec::with_capacity(self.count);
        for (level, q) in self.levels.iter_mut().enumerate() {
            out.extend(q.drain(..).map(|t| (t, level)));
        }
        self.count = 0;
        self.hint = LOWEST;
        out
    }

    /// Whether the invariants hold: no thread below the hint, and the count is the number
    /// queued (for tests).
    pub fn invariants_hold(&self) -> bool {
        self.levels[..self.hint].iter().all(VecDeque::is_empty)
            && self.levels.iter().map(VecDeque::len).sum::<usize>() == self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_most_important_level_comes_first_fifo_within_a_level() {
        let mut q = RunQueue::default();
        q.push(ThreadId(1), 20);
        q.push(ThreadId(2), 12);
        q.push(ThreadId(3), 12);
        assert_eq!(q.hint(), 12);
        assert_eq!(q.pop(), Some((ThreadId(2), 12)));
        assert_eq!(q.pop(), Some((ThreadId(3), 12)));
        assert_eq!(q.pop(), Some((ThreadId(1), 20)));
        assert_eq!(q.hint(), 20, "the search moved the hint down");
        assert!(q.is_empty() && q.pop().is_none());
    }

    proptest! {
        #[test]
        fn hint_and_count_stay_correct(ops in proptest::collection::vec((0u8..4, 0usize..40), 1..200)) {
            let mut q = RunQueue::default();
            let mut model: Vec<(usize, u32, ThreadId)> = Vec::new(); // (level, order, thread)
            let mut next = 0u32;
            for (op, level) in ops {
                match op {
                    0 | 1 => {
                        let t = ThreadId(next);
                        next += 1;
                        q.push(t, level);
                        model.push((level.min(LOWEST), next, t));
                    }
                    2 => {
                        model.sort();
                        let want = (!model.is_empty()).then(|| model.remove(0));
                        prop_assert_eq!(q.pop(), want.map(|(l, _, t)| (t, l)));
                    }
                    _ => {
                        if let Some(&(l, o, t)) = model.iter().find(|e| e.1 % 3 == 0) {
                            prop_assert!(q.remove(t, l));
                            model.retain(|e| e.1 != o);
                        }
                    }
                }
                prop_assert!(q.invariants_hold());
                prop_assert_eq!(q.len(), model.len());
            }
        }
    }
}
