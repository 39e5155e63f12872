//! An injection lane: a bounded ring of slots, each with a sequence number (Vyukov's bounded
//! MPMC queue; crossbeam's Injector keeps per-slot state the same way), for the per-core queues'
//! outside work (see the parent module).
//!
//! A poster claims the slot at the tail, fills it and publishes it by advancing the slot's
//! sequence; a taker claims a run of published slots at the head with one compare-and-swap and
//! empties them. Posters touch the tail and the slots, takers the head and the slots: one
//! producer feeding many idle consumers never meets them on a lock or on a counter they poll
//! (they poll the next slot's sequence), and many producers on lanes of their own never meet one
//! another. A slot's item sits in a mutex that the sequence protocol leaves uncontended (the
//! crate has no `unsafe`), so its lock and unlock are two atomic operations on a line its owner
//! already holds.
//!
//! Slot `i` of a ring of `n` holds position `p` (with `p mod n = i`) in three states, read off its
//! sequence `s`: free for `p` when `s = p`, published when `s = p + 1`, and emptied (free for
//! `p + n`) when `s = p + n`.

use crossbeam_utils::CachePadded;

use crate::sync::{lock, AtomicUsize, Mutex, Ordering};

struct Slot<T> {
    seq: AtomicUsize,
    item: Mutex<Option<T>>,
}

/// Published slots a taker has claimed: positions `pos` to `pos + k - 1`.
#[must_use]
pub(super) struct Claim {
    pos: usize,
    /// How many slots were claimed (at least 1).
    pub(super) k: usize,
}

/// A bounded FIFO ring; see the module doc.
pub(super) struct Ring<T> {
    head: CachePadded<AtomicUsize>,
    tail: CachePadded<AtomicUsize>,
    slots: Box<[Slot<T>]>,
}

impl<T> Ring<T> {
    /// A ring of `slots` slots (a power of two, at least 2: with one slot, "published for `p`"
    /// and "free for `p + 1`" would be the same sequence number).
    pub(super) fn new(slots: usize) -> Ring<T> {
        assert!(slots.is_power_of_two() && slots >= 2, "ring slots: {slots}");
        Ring {
            head: CachePadded::new(AtomicUsize::new(0)),
            tail: CachePadded::new(AtomicUsize::new(0)),
            slots: (0..slots)
                .map(|i| Slot {
                    seq: AtomicUsize::new(i),
                    item: Mutex::new(None),
                })
                .collect(),
        }
    }

    fn slot(&self, pos: usize) -> &Slot<T> {
        &self.slots[pos & (self.slots.len() - 1)]
    }

    /// Appends `item`, or gives it back when the ring is full.
    pub(super) fn push(&self, item: T) -> Result<(), T> {
        let mut pos = self.tail.load(Ordering::Relaxed);
        loop {
            let slot = self.slot(pos);
            let seq = slot.seq.load(Ordering::Acquire);
            match seq.wrapping_sub(pos) as isize {
                0 => match self.tail.compare_exchange_weak(
                    pos,
                    pos.wrapping_add(1),
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        *lock(&slot.item) = Some(item);
                        slot.seq.store(pos.wrapping_add(1), Ordering::Release);
                        return Ok(());
                    }
                    Err(now) => pos = now,
                },
                d if d < 0 => return Err(item), // the slot still holds position pos - n
                _ => pos = self.tail.load(Ordering::Relaxed), // another poster took pos
            }
        }
    }

    /// Claims the oldest published item and up to half of the published ones behind it, at
    /// most `most`, with one compare-and-swap; `None` when the head's slot is not published
    /// (the ring is empty, or its next item is still being written). The caller empties the
    /// claimed slots with [`Ring::take`].
    pub(super) fn claim(&self, most: usize) -> Option<Claim> {
        let mut pos = self.head.load(Ordering::Relaxed);
        loop {
            let ready = self.published_from(pos, 1 + 2 * most);
            if ready == 0 {
                let seq = self.slot(pos).seq.load(Ordering::Acquire);
                if seq.wrapping_sub(pos.wrapping_add(1)) as isize <= 0 {
                    return None;
                }
                pos = self.head.load(Ordering::Relaxed); // another taker emptied pos
                continue;
            }
            let k = 1 + ((ready - 1) / 2).min(most);
            match self.head.compare_exchange_weak(
                pos,
                pos.wrapping_add(k),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(Claim { pos, k }),
                Err(now) => pos = now,
            }
        }
    }

    /// Empties the slots of `claim`: the oldest item is returned, the others go to `rest`.
    pub(super) fn take(&self, claim: Claim, rest: &mut impl Extend<T>) -> T {
        let first = self.empty(claim.pos);
        rest.extend((1..claim.k).map(|j| self.empty(claim.pos.wrapping_add(j))));
        first
    }

    /// How many slots from `pos` on are published, counting at most `most`.
    fn published_from(&self, pos: usize, most: usize) -> usize {
        (0..most)
            .take_while(|&j| {
                let p = pos.wrapping_add(j);
                self.slot(p).seq.load(Ordering::Acquire) == p.wrapping_add(1)
            })
            .count()
    }

    /// Empties the published slot of position `pos`, claimed by the caller, and frees it for the
    /// position a lap later.
    fn empty(&self, pos: usize) -> T {
        let slot = self.slot(pos);
        let item = lock(&slot.item)
            .take()
            .expect("a claimed slot holds its item");
        slot.seq
            .store(pos.wrapping_add(self.slots.len()), Ordering::Release);
        item
    }

    /// Whether the head's slot is published.
    pub(super) fn has_ready(&self) -> bool {
        let pos = self.head.load(Ordering::Acquire);
        self.slot(pos).seq.load(Ordering::Acquire) == pos.wrapping_add(1)
    }

    /// How many slots the ring has.
    pub(super) fn slots(&self) -> usize {
        self.slots.len()
    }

    /// The items in the ring, claimed or not yet published ones included (a hint).
    pub(super) fn len(&self) -> usize {
        let tail = self.tail.load(Ordering::Acquire);
        let head = self.head.load(Ordering::Acquire);
        tail.wrapping_sub(head).min(self.slots.len())
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn pop_batch<T>(r: &Ring<T>, most: usize, rest: &mut Vec<T>) -> Option<T> {
        r.claim(most).map(|c| r.take(c, rest))
    }

    #[test]
    fn a_ring_is_fifo_and_gives_items_back_when_full() {
        let r = Ring::new(4);
        for i in 0..4u32 {
            assert_eq!(r.push(i), Ok(()));
        }
        assert_eq!(r.push(9), Err(9), "full");
        assert_eq!(r.len(), 4);
        let mut rest = Vec::new();
        assert_eq!(pop_batch(&r, 8, &mut rest), Some(0));
        assert_eq!(rest, [1], "half of the three behind the oldest");
        assert_eq!(r.push(4), Ok(()), "two slots free again");
        assert_eq!(r.push(5), Ok(()));
        let mut order = Vec::new();
        while let Some(x) = pop_batch(&r, 0, &mut order) {
            order.push(x);
        }
        assert_eq!(order, [2, 3, 4, 5]);
        assert!(!r.has_ready());
        assert_eq!(r.len(), 0);
    }

    #[test]
    fn a_batch_claims_at_most_half_of_those_behind_and_at_most_most() {
        let r = Ring::new(64);
        for i in 0..40u32 {
            r.push(i).unwrap();
        }
        let mut rest = Vec::new();
        assert_eq!(pop_batch(&r, 8, &mut rest), Some(0));
        assert_eq!(
            rest,
            (1..9).collect::<Vec<_>>(),
            "8 of the 16 scanned behind"
        );
        rest.clear();
        assert_eq!(pop_batch(&r, 3, &mut rest), Some(9));
        assert_eq!(rest, [10, 11, 12]);
        assert_eq!(r.len(), 40 - 13);
    }

    #[test]
    fn positions_wrap_around_the_word() {
        let r = Ring::new(2);
        r.head.store(usize::MAX - 1, Ordering::Relaxed);
        r.tail.store(usize::MAX - 1, Ordering::Relaxed);
        r.slots[0].seq.store(usize::MAX - 1, Ordering::Relaxed);
        r.slots[1].seq.store(usize::MAX, Ordering::Relaxed);
        for i in 0..2u32 {
            r.push(i).unwrap();
        }
        assert_eq!(r.push(2), Err(2));
        let mut rest = Vec::new();
        assert_eq!(pop_batch(&r, 1, &mut rest), Some(0));
        r.push(2).unwrap();
        assert_eq!(pop_batch(&r, 0, &mut rest), Some(1));
        assert_eq!(pop_batch(&r, 0, &mut rest), Some(2));
        assert_eq!(pop_batch(&r, 0, &mut rest), None);
    }

    #[test]
    fn every_item_comes_out_once_under_concurrency() {
        use std::sync::atomic::AtomicUsize as Count;
        let r = Ring::new(8);
        let n = 20_000u32;
        let done = Count::new(0);
        let mut all: Vec<u32> = std::thread::scope(|s| {
            for p in 0..2 {
                let r = &r;
                s.spawn(move || {
                    for i in (p..n).step_by(2) {
                        let mut x = i;
                        while let Err(back) = r.push(x) {
                            x = back;
                            std::thread::yield_now();
                        }
                    }
                });
            }
            let takers: Vec<_> = (0..2)
                .map(|_| {
                    let (r, done) = (&r, &done);
                    s.spawn(move || {
                        let mut got = Vec::new();
                        while done.load(Ordering::Acquire) < n as usize {
                            let mut rest = Vec::new();
                            match pop_batch(r, 2, &mut rest) {
                                Some(x) => {
                                    done.fetch_add(1 + rest.len(), Ordering::AcqRel);
                                    got.push(x);
                                    got.extend(rest);
                                }
                                None => std::thread::yield_now(),
                            }
                        }
                        got
                    })
                })
                .collect();
            takers.into_iter().flat_map(|t| t.join().unwrap()).collect()
        });
        all.sort_unstable();
        assert_eq!(all, (0..n).collect::<Vec<_>>(), "each item once");
    }
}
