//! smpsched-ring: a bounded ring of slots, each with a sequence number (Vyukov's bounded MPMC
//! queue; crossbeam's Injector keeps per-slot state the same way), for the injection lanes of
//! smpsched-queues' per-core queues (their outside work).
//!
//! A poster claims the slot at the tail, fills it and publishes it by advancing the slot's
//! sequence; a taker claims a run of published slots at the head with one compare-and-swap and
//! empties them. Posters touch the tail and the slots, takers the head and the slots: one
//! producer feeding many idle consumers never meets them on a lock or on a counter they poll
//! (they poll the next slot's sequence), and many producers on lanes of their own never meet one
//! another.
//!
//! Slot `i` of a ring of `n` holds position `p` (with `p mod n = i`) in three states, read off its
//! sequence `s`: free for `p` when `s = p`, published when `s = p + 1`, and emptied (free for
//! `p + n`) when `s = p + n`. Only the poster that moved the tail past `p` writes the slot's item
//! for `p`, before its Release store of `p + 1`; only the taker that moved the head past `p`
//! reads it, after an Acquire load of `p + 1`, and before its Release store of `p + n`, which the
//! next poster's Acquire load of `p + n` reads.
//!
//! The sequence protocol leaves each item to one thread at a time, so a slot keeps its item in
//! an `UnsafeCell`: a post is the tail's compare-and-swap, a plain write and a Release store (a
//! mutex per slot, which needs no `unsafe`, cost two more atomic operations on the line that the
//! idle takers poll). That `unsafe` lives here, alone, so that Miri (`cargo +nightly miri test
//! -p smpsched-ring`) and loom (`tests/loom.rs` here, whose models fail if any of the protocol's
//! Acquire or Release orderings is weakened, and smpsched-queues' per-core models) check it, both
//! run by `.ci/run`, and smpsched-queues can forbid `unsafe` code.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs, clippy::undocumented_unsafe_blocks)]

use std::marker::PhantomData;
use std::mem::MaybeUninit;

use crossbeam_utils::CachePadded;

#[cfg(loom)]
use loom::{
    cell::UnsafeCell,
    sync::atomic::{AtomicUsize, Ordering},
};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicUsize, Ordering};

/// std's `UnsafeCell` with loom's access API, so that the ring compiles against either.
#[cfg(not(loom))]
struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    fn new(value: T) -> Self {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }

    fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

struct Slot<T> {
    seq: AtomicUsize,
    item: UnsafeCell<MaybeUninit<T>>,
}

/// Published slots a taker has claimed: positions `pos` to `pos + k - 1` of one ring, which
/// the claim borrows. Give it to [`Ring::take`]: a claim dropped without it leaks its items
/// (they are never dropped) and leaves its slots unusable for the ring's life.
#[must_use = "a claim's items leak unless it is given to `Ring::take`"]
pub struct Claim<'r> {
    /// The ring's address, checked by [`Ring::take`].
    ring: usize,
    pos: usize,
    k: usize,
    _ring: PhantomData<&'r ()>,
}

impl Claim<'_> {
    /// How many slots were claimed (at least 1).
    pub fn k(&self) -> usize {
        self.k
    }
}

/// A bounded FIFO ring; see the crate doc.
pub struct Ring<T> {
    head: CachePadded<AtomicUsize>,
    tail: CachePadded<AtomicUsize>,
    /// Each slot on a cache line of its own: a producer filling slot `p` then meets neither the
    /// taker emptying `p - 1` nor, unless it polls there, an idle taker (on 16 cores, one
    /// producer and fifteen takers: 0.77-1.27 of crossbeam's Injector against 0.25-0.56 with
    /// four 16-byte slots a line, docs/queues.md).
    slots: Box<[CachePadded<Slot<T>>]>,
}

// SAFETY: a ring owns its items (moved in by `push`, out by `take` or its drop), so sending the
// ring sends them: `T: Send` suffices.
unsafe impl<T: Send> Send for Ring<T> {}

// SAFETY: through `&Ring` threads only move items in and out whole, one thread per slot at a
// time (the sequence protocol of the crate doc), and never hand out a `&T`: `T: Send` suffices,
// as for std's `Mutex` and crossbeam's `ArrayQueue`.
unsafe impl<T: Send> Sync for Ring<T> {}

impl<T> Ring<T> {
    /// A ring of `slots` slots (a power of two, at least 2: with one slot, "published for `p`"
    /// and "free for `p + 1`" would be the same sequence number).
    pub fn new(slots: usize) -> Ring<T> {
        assert!(slots.is_power_of_two() && slots >= 2, "ring slots: {slots}");
        Ring {
            head: CachePadded::new(AtomicUsize::new(0)),
            tail: CachePadded::new(AtomicUsize::new(0)),
            slots: (0..slots)
                .map(|i| {
                    CachePadded::new(Slot {
                        seq: AtomicUsize::new(i),
                        item: UnsafeCell::new(MaybeUninit::uninit()),
                    })
                })
                .collect(),
        }
    }

    /// The ring's address, which its claims carry.
    fn id(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    fn slot(&self, pos: usize) -> &Slot<T> {
        &self.slots[pos & (self.slots.len() - 1)]
    }

    /// Appends `item`, or gives it back when the ring is full.
    pub fn push(&self, item: T) -> Result<(), T> {
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
                        // SAFETY: moving the tail past `pos` made this the one poster of `pos`,
                        // and the Acquire load of `pos` from the slot's sequence saw the Release
                        // store of the taker that emptied it a lap earlier (or the ring's
                        // creation): no one else touches the item until the store below.
                        slot.item
                            .with_mut(|p| unsafe { p.write(MaybeUninit::new(item)) });
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
    pub fn claim(&self, most: usize) -> Option<Claim<'_>> {
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
                Ok(_) => {
                    return Some(Claim {
                        ring: self.id(),
                        pos,
                        k,
                        _ring: PhantomData,
                    });
                }
                Err(now) => pos = now,
            }
        }
    }

    /// Empties the slots of `claim`, which must come from this ring (else it panics): the
    /// oldest item is returned, the others go to `rest`. Should `rest` panic, the items it was
    /// not given leak and their slots stay unusable.
    pub fn take(&self, claim: Claim<'_>, rest: &mut impl Extend<T>) -> T {
        assert!(claim.ring == self.id(), "a claim of another ring");
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
        // SAFETY: `pos` comes from a claim of this ring (checked by `take`), taken once (`take`
        // consumes it): moving the head past `pos` made the caller its one taker, after an
        // Acquire load of `pos + 1` from the slot's sequence that saw the poster's Release store,
        // so the item is written; no one else touches it until the store below frees the slot,
        // and the read moves it out.
        let item = slot.item.with_mut(|p| unsafe { p.read().assume_init() });
        slot.seq
            .store(pos.wrapping_add(self.slots.len()), Ordering::Release);
        item
    }

    /// Whether the head's slot is published.
    pub fn has_ready(&self) -> bool {
        let pos = self.head.load(Ordering::Acquire);
        self.slot(pos).seq.load(Ordering::Acquire) == pos.wrapping_add(1)
    }

    /// How many slots the ring has.
    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// The items in the ring, claimed or not yet published ones included (a hint).
    #[allow(clippy::len_without_is_empty)] // `has_ready` is the emptiness test takers use
    pub fn len(&self) -> usize {
        let tail = self.tail.load(Ordering::Acquire);
        let head = self.head.load(Ordering::Acquire);
        tail.wrapping_sub(head).min(self.slots.len())
    }
}

impl<T> Drop for Ring<T> {
    /// Drops the published items not yet claimed: positions from the head to the tail whose slot
    /// says published (with `&mut self` no post or take is under way, so all of them are).
    fn drop(&mut self) {
        if !std::mem::needs_drop::<T>() {
            return;
        }
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Relaxed);
        for j in 0..tail.wrapping_sub(head).min(self.slots.len()) {
            let pos = head.wrapping_add(j);
            let slot = self.slot(pos);
            if slot.seq.load(Ordering::Relaxed) == pos.wrapping_add(1) {
                // SAFETY: the slot is published for `pos` and, being at or past the head, not
                // claimed, so it holds an item no one else owns (`&mut self`); it is dropped once,
                // as the ring goes.
                slot.item.with_mut(|p| unsafe { (*p).assume_init_drop() });
            }
        }
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
        let n: u32 = if cfg!(miri) { 200 } else { 20_000 };
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

    #[test]
    fn items_left_in_the_ring_are_dropped_once() {
        use std::cell::RefCell;
        struct Noisy<'a>(u32, &'a RefCell<Vec<u32>>);
        impl Drop for Noisy<'_> {
            fn drop(&mut self) {
                self.1.borrow_mut().push(self.0);
            }
        }
        let dropped = RefCell::new(Vec::new());
        let r = Ring::new(4);
        for i in 0..3 {
            assert!(r.push(Noisy(i, &dropped)).is_ok());
        }
        drop(pop_batch(&r, 1, &mut Vec::new())); // 0, and 1 with its batch
        for i in 3..6 {
            assert!(r.push(Noisy(i, &dropped)).is_ok(), "across the wrap");
        }
        assert!(r.push(Noisy(6, &dropped)).is_err(), "full: given back");
        let two = pop_batch(&r, 0, &mut Vec::new()).map(|x| x.0);
        assert_eq!(two, Some(2), "its slot emptied");
        assert_eq!(*dropped.borrow(), [0, 1, 6, 2]);
        drop(r); // 3, 4 and 5; not the emptied slot's 2 again
        let mut all = dropped.into_inner();
        all.sort_unstable();
        assert_eq!(all, (0..7).collect::<Vec<_>>(), "each item dropped once");
    }

    #[test]
    #[should_panic(expected = "a claim of another ring")]
    fn a_claim_is_taken_from_its_own_ring_only() {
        let (a, b) = (Ring::new(2), Ring::new(2));
        a.push(1u32).unwrap();
        b.push(2u32).unwrap();
        let claim = a.claim(0).unwrap();
        b.take(claim, &mut Vec::new());
    }
}
