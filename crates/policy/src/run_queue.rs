//! Mach's run queue (Black 1990, section 3.1, Figure 1), one implementation for the simulator's
//! Mach scheduler and the real `MachRunQueue`: an array of 32 first-in first-out queues, one per
//! priority level (0 most important), with a *hint* and a *count*.
//!
//! Invariants: every level more important than the hint is empty, so a search starts at the
//! hint and moves it to the level it found ([`LEVELS`] when the queue is known empty); the count
//! is the number of queued items, so emptiness is a comparison, not a search (in Mach, made
//! without the run queue's lock). The structure is plain data: callers supply the locking.

use std::collections::VecDeque;

use crate::mach::{LEVELS, LOWEST};

/// A Mach run queue of items `T`: 32 levels with a hint and a count.
#[derive(Debug)]
pub struct RunQueue<T> {
    levels: [VecDeque<T>; LEVELS],
    hint: usize,
    count: usize,
}

impl<T> Default for RunQueue<T> {
    fn default() -> Self {
        RunQueue {
            levels: std::array::from_fn(|_| VecDeque::new()),
            hint: LEVELS,
            count: 0,
        }
    }
}

impl<T> RunQueue<T> {
    /// Number of items queued (the count).
    #[inline]
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether nothing is queued: one comparison of the count, no search.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The hint: no level more important than this holds an item ([`LEVELS`] when the queue
    /// is known empty).
    pub fn hint(&self) -> usize {
        self.hint
    }

    /// Queues `item` at the tail of `level` (levels past the least important share it),
    /// lowering the hint if needed.
    pub fn push(&mut self, item: T, level: usize) {
        let level = level.min(LOWEST);
        self.levels[level].push_back(item);
        self.count += 1;
        self.hint = self.hint.min(level);
    }

    /// The most important non-empty level, searched from the hint (which moves to it).
    pub fn best_level(&mut self) -> Option<usize> {
        if self.count == 0 {
            self.hint = LEVELS;
            return None;
        }
        let found = (self.hint..LEVELS).find(|&l| !self.levels[l].is_empty())?;
        self.hint = found;
        Some(found)
    }

    /// Takes the first item of the most important level, with its level.
    pub fn pop(&mut self) -> Option<(T, usize)> {
        let level = self.best_level()?;
        let item = self.levels[level].pop_front()?;
        self.count -= 1;
        Some((item, level))
    }

    /// Takes the first item, most important level first, that `ok` accepts (a processor
    /// skipping threads its mask does not allow), with its level.
    pub fn pop_where(&mut self, mut ok: impl FnMut(&T) -> bool) -> Option<(T, usize)> {
        let start = self.best_level()?;
        for level in start..LEVELS {
            if let Some(i) = self.levels[level].iter().position(&mut ok) {
                let item = self.levels[level].remove(i)?;
                self.count -= 1;
                return Some((item, level));
            }
        }
        None
    }

    /// Every queued item with its level, most important first, taken out (Mach's starvation
    /// scan re-queues them at their aged levels).
    pub fn drain(&mut self) -> Vec<(T, usize)> {
        let mut out = Vec::with_capacity(self.count);
        for (level, q) in self.levels.iter_mut().enumerate() {
            out.extend(q.drain(..).map(|t| (t, level)));
        }
        self.count = 0;
        self.hint = LEVELS;
        out
    }

    /// Whether the invariants hold: no item more important than the hint, and the count is
    /// the number queued (for tests).
    pub fn invariants_hold(&self) -> bool {
        self.levels[..self.hint.min(LEVELS)]
            .iter()
            .all(VecDeque::is_empty)
            && self.levels.iter().map(VecDeque::len).sum::<usize>() == self.count
    }
}

impl<T: PartialEq> RunQueue<T> {
    /// Removes `item`, queued at `level`; `false` if it is not there.
    pub fn remove(&mut self, item: &T, level: usize) -> bool {
        let q = &mut self.levels[level.min(LOWEST)];
        match q.iter().position(|x| x == item) {
            Some(i) => {
                q.remove(i);
                self.count -= 1;
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_most_important_level_comes_first_fifo_within_a_level() {
        let mut q = RunQueue::default();
        assert_eq!(q.hint(), LEVELS, "an empty queue is known empty");
        q.push(1, 20);
        q.push(2, 12);
        q.push(3, 12);
        assert_eq!(q.hint(), 12);
        assert_eq!(q.pop(), Some((2, 12)));
        assert_eq!(q.pop(), Some((3, 12)));
        assert_eq!(q.pop(), Some((1, 20)));
        assert_eq!(q.hint(), 20, "the search moved the hint down");
        assert!(q.is_empty() && q.pop().is_none());
        assert_eq!(q.hint(), LEVELS);
        q.push(4, 99);
        assert_eq!(q.pop(), Some((4, LOWEST)), "levels past the last share it");
    }

    #[test]
    fn pop_where_skips_refused_items_and_drain_empties_in_level_order() {
        let mut q = RunQueue::default();
        for (item, level) in [(1, 5), (2, 5), (3, 7), (4, 2)] {
            q.push(item, level);
        }
        assert_eq!(q.pop_where(|&t| t % 2 == 1), Some((1, 5)));
        assert_eq!(q.drain(), vec![(4, 2), (2, 5), (3, 7)]);
        assert!(q.is_empty() && q.invariants_hold());
    }

    proptest! {
        #[test]
        fn hint_and_count_stay_correct(ops in proptest::collection::vec((0u8..4, 0usize..40), 1..200)) {
            let mut q = RunQueue::default();
            let mut model: Vec<(usize, u32)> = Vec::new(); // (level, order): the item is its order
            let mut next = 0u32;
            for (op, level) in ops {
                match op {
                    0 | 1 => {
                        next += 1;
                        q.push(next, level);
                        model.push((level.min(LOWEST), next));
                    }
                    2 => {
                        model.sort();
                        let want = (!model.is_empty()).then(|| model.remove(0));
                        prop_assert_eq!(q.pop(), want.map(|(l, o)| (o, l)));
                    }
                    _ => {
                        if let Some(&(l, o)) = model.iter().find(|e| e.1 % 3 == 0) {
                            prop_assert!(q.remove(&o, l));
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
