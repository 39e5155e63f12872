//! A dispatch queue's virtual-time order (`scx_bpf_dsq_insert_vtime`): threads by (vtime,
//! insertion number), smallest first. Short queues, the common case (`scx-simple`'s shared
//! queue holds about thirty threads on an 80%-loaded machine), are a sorted ring: an insertion
//! is a binary search and a short shift, a pop takes the front. Long ones are a binary heap,
//! O(log n) either way, so that no insertion shifts more than `SORTED_MAX` entries. Keys are
//! distinct (the insertion number), so both forms give the same order.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::ids::ThreadId;

/// A queued thread's key: (vtime, insertion number).
type Key = (u64, u64);

/// The longest queue kept sorted; past it the queue becomes a heap.
const SORTED_MAX: usize = 128;

/// The length at or below which a heap becomes sorted again (lower than [`SORTED_MAX`], so a
/// queue near the boundary does not change form at every insertion).
const SORTED_AGAIN: usize = 32;

/// Threads in virtual-time order.
#[derive(Clone, Debug)]
pub enum VtimeQueue {
    /// Ascending by key.
    Sorted(VecDeque<(Key, ThreadId)>),
    /// Smallest key on top.
    Heap(BinaryHeap<Reverse<(Key, ThreadId)>>),
}

impl Default for VtimeQueue {
    fn default() -> Self {
        VtimeQueue::Sorted(VecDeque::new())
    }
}

impl VtimeQueue {
    /// Queues `t` at `key` (distinct from every key queued).
    pub fn push(&mut self, key: Key, t: ThreadId) {
        match self {
            VtimeQueue::Sorted(q) => {
                if q.len() < SORTED_MAX {
                    // A waking thread's vtime is most often the largest queued (every insertion
                    // of the 80%-loaded periodic loads of benches/peers): append it then.
                    if q.back().is_none_or(|&(k, _)| k < key) {
                        q.push_back((key, t));
                        return;
                    }
                    let at = q.partition_point(|&(k, _)| k < key);
                    q.insert(at, (key, t));
                    return;
                }
                let mut heap: BinaryHeap<_> = q.drain(..).map(Reverse).collect();
                heap.push(Reverse((key, t)));
                *self = VtimeQueue::Heap(heap);
            }
            VtimeQueue::Heap(h) => h.push(Reverse((key, t))),
        }
    }

    /// The first thread in order, removed.
    pub fn pop(&mut self) -> Option<ThreadId> {
        match self {
            VtimeQueue::Sorted(q) => q.pop_front().map(|(_, t)| t),
            VtimeQueue::Heap(h) => {
                let t = h.pop().map(|Reverse((_, t))| t);
                self.settle();
                t
            }
        }
    }

    /// The first thread in order for which `ok` holds, removed; the others keep their places.
    pub fn pop_first(&mut self, ok: impl Fn(ThreadId) -> bool) -> Option<ThreadId> {
        let found = match self {
            VtimeQueue::Sorted(q) => {
                let i = q.iter().position(|&(_, t)| ok(t))?;
                q.remove(i).map(|(_, t)| t)
            }
            VtimeQueue::Heap(h) => {
                // Pop past the others and put them back.
                let mut passed = Vec::new();
                let mut found = None;
                while let Some(Reverse(e)) = h.pop() {
                    if ok(e.1) {
                        found = Some(e.1);
                        break;
                    }
                    passed.push(Reverse(e));
                }
                h.extend(passed);
                found
            }
        };
        self.settle();
        found
    }

    /// Whether some queued thread satisfies `ok`.
    pub fn any(&self, ok: impl Fn(ThreadId) -> bool) -> bool {
        match self {
            VtimeQueue::Sorted(q) => q.iter().any(|&(_, t)| ok(t)),
            VtimeQueue::Heap(h) => h.iter().any(|&Reverse((_, t))| ok(t)),
        }
    }

    /// Removes `t`; `true` if it was queued.
    pub fn remove(&mut self, t: ThreadId) -> bool {
        let before = self.len();
        match self {
            VtimeQueue::Sorted(q) => q.retain(|&(_, x)| x != t),
            VtimeQueue::Heap(h) => h.retain(|&Reverse((_, x))| x != t),
        }
        let removed = self.len() != before;
        self.settle();
        removed
    }

    /// How many threads are queued.
    pub fn len(&self) -> usize {
        match self {
            VtimeQueue::Sorted(q) => q.len(),
            VtimeQueue::Heap(h) => h.len(),
        }
    }

    /// Whether no thread is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A heap that has become short is sorted again.
    fn settle(&mut self) {
        if let VtimeQueue::Heap(h) = self {
            if h.len() <= SORTED_AGAIN {
                let mut v: Vec<(Key, ThreadId)> =
                    std::mem::take(h).into_iter().map(|Reverse(e)| e).collect();
                v.sort_unstable_by_key(|&(k, _)| k);
                *self = VtimeQueue::Sorted(v.into());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What a queue does, against a plain sorted list of the same keys.
    #[derive(Clone, Debug)]
    enum Act {
        Push(u64),
        Pop,
        /// Pop the first thread whose number is divisible by this.
        PopFirst(u32),
        Remove(u32),
    }

    /// Runs of pushes and runs of pops (and masked pops and removals), each up to 199 long, so
    /// that a queue passes [`SORTED_MAX`] and comes back under [`SORTED_AGAIN`] again and again.
    fn acts() -> impl Strategy<Value = Vec<Act>> {
        let pushes = prop::collection::vec((0u64..40).prop_map(Act::Push), 1..200);
        let taking = prop_oneof![
            6 => Just(Act::Pop),
            1 => (1u32..5).prop_map(Act::PopFirst),
            1 => (0u32..400).prop_map(Act::Remove),
        ];
        let takes = prop::collection::vec(taking, 1..200);
        prop::collection::vec(prop_oneof![pushes, takes], 1..16)
            .prop_map(|runs| runs.into_iter().flatten().collect())
    }

    proptest! {
        /// Across the change of form both ways (runs of pushes pass `SORTED_MAX`, pops bring
        /// it back under `SORTED_AGAIN`), every pop, masked pop and removal agrees with a sorted
        /// list of (vtime, insertion number).
        #[test]
        fn both_forms_keep_vtime_then_insertion_order(acts in acts()) {
            let mut q = VtimeQueue::default();
            let mut model: Vec<(Key, ThreadId)> = Vec::new();
            let mut seq = 0u64;
            for a in acts {
                match a {
                    Act::Push(v) => {
                        seq += 1;
                        let t = ThreadId(seq as u32);
                        q.push((v, seq), t);
                        model.push(((v, seq), t));
                        model.sort_by_key(|&(k, _)| k);
                    }
                    Act::Pop => {
                        let want = (!model.is_empty()).then(|| model.remove(0).1);
                        prop_assert_eq!(q.pop(), want);
                    }
                    Act::PopFirst(d) => {
                        let ok = |t: ThreadId| t.0 % d == 0;
                        let want = model.iter().position(|&(_, t)| ok(t)).map(|i| model.remove(i).1);
                        prop_assert_eq!(q.pop_first(ok), want);
                    }
                    Act::Remove(n) => {
                        let t = ThreadId(n);
                        let had = model.iter().any(|&(_, x)| x == t);
                        model.retain(|&(_, x)| x != t);
                        prop_assert_eq!(q.remove(t), had);
                    }
                }
                prop_assert_eq!(q.len(), model.len());
                prop_assert_eq!(q.any(|t| t.0 % 3 == 0), model.iter().any(|&(_, t)| t.0 % 3 == 0));
            }
        }
    }

    #[test]
    fn a_long_queue_becomes_a_heap_and_a_short_one_sorted_again() {
        // Descending vtimes: the last pushed comes out first.
        let mut q = VtimeQueue::default();
        let n = SORTED_MAX as u32 + 1;
        for i in 0..n {
            q.push((1000 - u64::from(i), u64::from(i)), ThreadId(i));
        }
        assert!(matches!(q, VtimeQueue::Heap(_)));
        let mut popped = Vec::new();
        while q.len() > SORTED_AGAIN {
            popped.extend(q.pop());
        }
        assert!(matches!(q, VtimeQueue::Sorted(_)));
        popped.extend(std::iter::from_fn(|| q.pop()));
        let want: Vec<ThreadId> = (0..n).rev().map(ThreadId).collect();
        assert_eq!(popped, want);
    }
}
