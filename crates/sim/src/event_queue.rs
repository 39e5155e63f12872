//! The engine's pending events: a hierarchical timing wheel (Varghese and Lauck 1987) used as a
//! radix-64 heap over event times. Events come out earliest first and, at the same cycle, in
//! the order they were scheduled: the engine's determinism rule, Tango's lowest-time-first
//! (Gupta et al. 1991, section 2).
//!
//! An event sits on level `k` when its time first differs from the time of the last event taken
//! (`last`) in base-64 digit `k`, in the slot named by its digit there; level 0 holds only
//! events in `last`'s block of 64 cycles, one exact time per slot. A push is a `leading_zeros`,
//! a shift and an append. A pop takes the front of the lowest non-empty level-0 slot; when
//! level 0 is empty it looks at the lowest non-empty slot of the lowest non-empty level, takes
//! a lone event there directly, and otherwise *spreads* that slot over the (empty) levels below
//! it. An event moves at most once per level, and fewer than twice in all at the spreads of
//! time a simulation makes; no siblings are compared, so a pop has neither a binary heap's
//! unpredictable branches nor its chain of dependent loads, and its cost does not grow with the
//! number of events queued (see `benches/event_queue.rs`).
//!
//! Order within a slot is push order, and that is all the tie-breaking needed: a slot is only
//! ever appended to by a push (the newest event) or filled, while empty, by spreading a slot
//! that was itself in push order; so every slot stays in push order, and events of one time
//! leave level 0 first-scheduled first. No sequence numbers are kept.
//!
//! An event pushed with [`EventQueue::push_next`] (one likely to be the next to happen: the end
//! of a one-word memory access while the other processors are busy for longer) is held out of the wheel until the next push or pop. A pop returns it at once, with
//! no placing and no spreading, when it lies before the wheel's lowest occupied slot: then it
//! is the one earliest event. Otherwise it goes into the wheel as the newest event, where a
//! push would have put it, and the pop goes on as above. The held event leaves `last` as it is,
//! so every event in the wheel stays placed against the same `last`.

use crate::ids::Cycles;

/// Bits per level.
const BITS: u32 = 6;
/// Slots per level.
const SLOTS: usize = 1 << BITS;
/// Levels needed for 64-bit times.
const LEVELS: usize = 64_usize.div_ceil(BITS as usize);
/// Levels stored: a power of two, so that an index masked to it needs no bounds check.
const STORED: usize = LEVELS.next_power_of_two();

/// The index of slot `digit` of `level` in [`EventQueue::slots`], masked to its length.
#[inline(always)]
fn at(level: usize, digit: usize) -> usize {
    (level * SLOTS + digit) & (STORED * SLOTS - 1)
}

/// `level` as an index of [`EventQueue::occupied`], masked to its length.
#[inline(always)]
fn lv(level: usize) -> usize {
    level & (STORED - 1)
}

/// The level of each highest differing bit.
const LEVEL_OF_BIT: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut b = 0;
    while b < 64 {
        t[b] = (b as u32 / BITS) as u8;
        b += 1;
    }
    t
};

/// A first-in first-out list that only ever empties completely: appends at the back, takes
/// from `head`, and rewinds when the last is taken (cheaper than a ring buffer).
#[derive(Default)]
struct Slot {
    events: Vec<(Cycles, u64)>,
    head: usize,
}

impl Slot {
    #[inline]
    fn len(&self) -> usize {
        self.events.len() - self.head
    }

    #[inline]
    fn take_front(&mut self) -> (Cycles, u64) {
        let e = self.events[self.head];
        self.head += 1;
        if self.head == self.events.len() {
            self.events.clear();
            self.head = 0;
        }
        e
    }
}

/// A min-priority queue of `(time, payload)` pairs, earliest first, ties in push order, whose
/// pushes never go before the last time popped.
pub struct EventQueue {
    /// `slots[at(level, digit)]`: the events on `level` whose digit there is `digit` (levels
    /// past `LEVELS` are never used: they make the length a power of two).
    slots: Box<[Slot; STORED * SLOTS]>,
    /// Per level, bit `d` set when slot `d` is non-empty.
    occupied: [u64; STORED],
    /// Time of the last event popped from the wheel (0 before the first): where its events are
    /// placed against.
    last: Cycles,
    /// Time of the last event popped, from the wheel or held (no push may go before it).
    floor: Cycles,
    /// The newest event, pushed with `push_next` and not yet in the wheel, when `holding`.
    held: (Cycles, u64),
    holding: bool,
    len: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            slots: Box::new(std::array::from_fn(|_| Slot::default())),
            occupied: [0; STORED],
            last: 0,
            floor: 0,
            held: (0, 0),
            holding: false,
            len: 0,
        }
    }
}

/// The level and slot of an event at `time` (at or after `last`).
#[inline]
fn place(last: Cycles, time: Cycles) -> (usize, usize) {
    let diff = time ^ last;
    let level = LEVEL_OF_BIT[(63 - (diff | 1).leading_zeros()) as usize] as usize;
    let digit = ((time >> (BITS as usize * level)) as usize) & (SLOTS - 1);
    (level, digit)
}

impl EventQueue {
    /// Number of events queued.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no event is queued.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Queues `payload` to fire at `time`, after everything already queued for `time`.
    ///
    /// # Panics
    /// If `time` is before the last event popped (the engine never schedules into its past).
    #[inline(always)]
    pub fn push(&mut self, time: Cycles, payload: u64) {
        assert!(
            time >= self.floor,
            "event at {time} scheduled before {}",
            self.floor
        );
        self.release_held();
        self.put(time, payload);
        self.len += 1;
    }

    /// [`Self::push`] for an event likely to be the next to happen: it is held out of the
    /// wheel, and the next pop takes it without placing it if it is the earliest.
    ///
    /// # Panics
    /// If `time` is before the last event popped.
    #[inline]
    pub fn push_next(&mut self, time: Cycles, payload: u64) {
        assert!(
            time >= self.floor,
            "event at {time} scheduled before {}",
            self.floor
        );
        self.release_held();
        self.held = (time, payload);
        self.holding = true;
        self.len += 1;
    }

    /// Puts the held event, if any, into the wheel (before a push that must follow it there).
    #[inline(always)]
    fn release_held(&mut self) {
        if self.holding {
            self.holding = false;
            self.put(self.held.0, self.held.1);
        }
    }

    /// The held event, if it lies before every slot of the wheel (the earliest event); else
    /// it goes into the wheel.
    #[inline]
    fn take_held(&mut self, e: (Cycles, u64)) -> Option<(Cycles, u64)> {
        let at = place(self.last, e.0);
        // (level, digit) order is time order across slots: an event's level is the highest
        // digit where its time differs from `last`.
        match self.lowest() {
            Some(low) if low <= at => {
                self.put_at(at, e);
                None
            }
            _ => {
                self.floor = e.0;
                self.len -= 1;
                Some(e)
            }
        }
    }

    /// Queues `payload` to fire at `time` as if it had been queued earlier: before the first
    /// event already queued for `time` whose payload `later` says was queued after it (after
    /// every event of `time` otherwise). For an event whose scheduling was deferred (a parked
    /// poller's), so that it keeps its place among simultaneous events.
    ///
    /// # Panics
    /// If `time` is before the last event popped.
    pub fn push_before(&mut self, time: Cycles, payload: u64, later: impl Fn(u64) -> bool) {
        assert!(
            time >= self.floor,
            "event at {time} scheduled before {}",
            self.floor
        );
        self.release_held();
        let (level, digit) = place(self.last, time);
        let slot = &mut self.slots[at(level, digit)];
        let pos = (slot.head..slot.events.len())
            .find(|&i| slot.events[i].0 == time && later(slot.events[i].1))
            .unwrap_or(slot.events.len());
        slot.events.insert(pos, (time, payload));
        self.occupied[lv(level)] |= 1 << digit;
        self.len += 1;
    }

    #[inline]
    fn put(&mut self, time: Cycles, payload: u64) {
        self.put_at(place(self.last, time), (time, payload));
    }

    /// Appends event `e` to slot `(level, digit)`, its place.
    #[inline(always)]
    fn put_at(&mut self, (level, digit): (usize, usize), e: (Cycles, u64)) {
        self.slots[at(level, digit)].events.push(e);
        self.occupied[lv(level)] |= 1 << digit;
    }

    /// The lowest occupied slot, as (level, digit).
    #[inline(always)]
    fn lowest(&self) -> Option<(usize, usize)> {
        if self.occupied[0] != 0 {
            return Some((0, self.occupied[0].trailing_zeros() as usize));
        }
        let (level, bits) = self.occupied.iter().enumerate().find(|&(_, &b)| b != 0)?;
        Some((level, bits.trailing_zeros() as usize))
    }

    /// The payloads of the events likely to come out next and after it, without moving
    /// anything: the front of the lowest occupied slot and what follows it there, or the front
    /// of the next occupied slot of the same level. A hint for fetching their records ahead
    /// (a held event, or one a spread would reorder, is not seen).
    #[inline]
    pub fn peek_two(&self) -> [Option<u64>; 2] {
        let Some((level, digit)) = self.lowest() else {
            return [None, None];
        };
        let slot = &self.slots[at(level, digit)];
        let first = slot.events.get(slot.head).map(|e| e.1);
        let second = match slot.events.get(slot.head + 1) {
            Some(e) => Some(e.1),
            None => {
                let later = self.occupied[lv(level)] & (u64::MAX << digit) & !(1u64 << digit);
                (later != 0)
                    .then(|| {
                        let next = &self.slots[at(level, later.trailing_zeros() as usize)];
                        next.events.get(next.head).map(|e| e.1)
                    })
                    .flatten()
            }
        };
        [first, second]
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Cycles, u64)> {
        if self.holding {
            self.holding = false;
            if let Some(e) = self.take_held(self.held) {
                return Some(e);
            }
        }
        let (level, digit) = match self.lowest()? {
            (0, digit) => (0, digit),
            (level, digit) if self.slots[at(level, digit)].len() > 1 => {
                self.spread(level, digit);
                (0, self.occupied[0].trailing_zeros() as usize)
            }
            // A lone event in the lowest slot is the earliest: take it where it lies.
            low => low,
        };
        let slot = &mut self.slots[at(level, digit)];
        let e = slot.take_front();
        if slot.len() == 0 {
            self.occupied[lv(level)] &= !(1 << digit);
        }
        self.last = e.0;
        self.floor = e.0;
        self.len -= 1;
        Some(e)
    }

    /// Moves slot `digit` of `level` (the lowest non-empty slot of the lowest non-empty level)
    /// down: `last` becomes its earliest time, and each of its events goes, in order, to its
    /// place below.
    fn spread(&mut self, level: usize, digit: usize) {
        self.occupied[lv(level)] &= !(1 << digit);
        let idx = at(level, digit);
        let events = &self.slots[idx].events[self.slots[idx].head..];
        let (min, max) = events
            .iter()
            .fold((Cycles::MAX, 0), |(lo, hi), e| (lo.min(e.0), hi.max(e.0)));
        self.last = min;
        if min == max {
            // Simultaneous events (identical threads): the whole slot becomes the level-0 slot
            // of their time, which is empty, by swapping the two lists.
            let to = (min as usize) & (SLOTS - 1);
            self.slots.swap(idx, to);
            self.occupied[0] |= 1 << to;
            return;
        }
        let mut moving = std::mem::take(&mut self.slots[idx]);
        for &(time, payload) in &moving.events[moving.head..] {
            self.put(time, payload);
        }
        // Keep the emptied slot's allocation for its next use.
        moving.events.clear();
        moving.head = 0;
        self.slots[idx] = moving;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    fn drain(q: &mut EventQueue) -> Vec<(Cycles, u64)> {
        std::iter::from_fn(|| q.pop()).collect()
    }

    #[test]
    fn ties_in_time_pop_in_push_order() {
        let mut q = EventQueue::default();
        for payload in 1..=3 {
            q.push(100, payload);
        }
        q.push(50, 4);
        q.push(100, 5);
        q.push(100, 6);
        assert_eq!(q.len(), 6);
        let order: Vec<u64> = drain(&mut q).into_iter().map(|e| e.1).collect();
        assert_eq!(order, [4, 1, 2, 3, 5, 6]);
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn a_deferred_event_goes_before_the_later_ones_of_its_cycle() {
        let mut q = EventQueue::default();
        // Payloads 10 and up stand for events scheduled after the deferred one.
        for payload in [1, 11, 2, 12] {
            q.push(100, payload);
        }
        q.push(5000, 13);
        q.push_before(100, 7, |e| e >= 10);
        q.push_before(5000, 8, |e| e >= 10);
        q.push_before(300, 9, |e| e >= 10);
        let order: Vec<u64> = drain(&mut q).into_iter().map(|e| e.1).collect();
        assert_eq!(order, [1, 7, 11, 2, 12, 9, 8, 13]);
        assert_eq!(q.len(), 0);
    }

    #[test]
    fn a_run_drained_and_restarted_keeps_order() {
        let mut q = EventQueue::default();
        q.push(10, 1);
        q.push(10, 2);
        assert_eq!(q.pop(), Some((10, 1)));
        assert_eq!(q.pop(), Some((10, 2)));
        assert_eq!(q.pop(), None);
        q.push(10, 3);
        q.push(20, 4);
        q.push(10, 5);
        assert_eq!(drain(&mut q), [(10, 3), (10, 5), (20, 4)]);
    }

    #[test]
    fn a_held_event_is_taken_first_only_when_it_is_the_earliest() {
        let mut q = EventQueue::default();
        q.push(1000, 1);
        q.push_next(10, 2);
        assert_eq!(
            q.pop(),
            Some((10, 2)),
            "earlier than the wheel: taken as it is"
        );
        q.push_next(1000, 3);
        q.push_next(5000, 4); // releases 3 into the wheel behind 1
        q.push_before(1000, 5, |e| e >= 3);
        assert_eq!(q.len(), 4);
        assert_eq!(drain(&mut q), [(1000, 1), (1000, 5), (1000, 3), (5000, 4)]);
    }

    #[test]
    #[should_panic(expected = "scheduled before")]
    fn a_held_event_taken_still_bars_the_past() {
        let mut q = EventQueue::default();
        q.push(1000, 1);
        q.push_next(100, 2);
        q.pop();
        q.push(99, 3);
    }

    #[test]
    #[should_panic(expected = "scheduled before")]
    fn a_push_into_the_past_is_refused() {
        let mut q = EventQueue::default();
        q.push(100, 1);
        q.pop();
        q.push(99, 2);
    }

    #[test]
    fn a_peek_names_the_next_two_events_when_each_lies_alone() {
        let mut q = EventQueue::default();
        assert_eq!(q.peek_two(), [None, None]);
        // Far apart (alone in their slots, as random demands leave them) and two at one time.
        for (time, payload) in [(90_000, 1), (5_000, 2), (40_000, 3), (7, 4), (7, 5)] {
            q.push(time, payload);
        }
        let mut order = Vec::new();
        while !q.is_empty() {
            let peeked = q.peek_two();
            let e = q.pop().unwrap();
            assert_eq!(peeked[0], Some(e.1), "the first peeked is the next popped");
            order.push((e.1, peeked[1]));
        }
        assert_eq!(
            order,
            [
                (4, Some(5)),
                (5, None),
                (2, Some(3)),
                (3, Some(1)),
                (1, None)
            ],
            "the second peeked is the one after, when it lies in a later slot of the same level"
        );
    }

    #[test]
    fn extreme_times_are_ordered() {
        let mut q = EventQueue::default();
        q.push(u64::MAX, 1);
        q.push(0, 2);
        q.push(1 << 63, 3);
        let order: Vec<u64> = drain(&mut q).into_iter().map(|e| e.0).collect();
        assert_eq!(order, [0, 1 << 63, u64::MAX]);
    }

    proptest! {
        /// Interleaved pushes (never into the past, with many ties; some held with `push_next`)
        /// and pops agree, event for event, with a binary heap ordered by (time, push number).
        #[test]
        fn agrees_with_a_binary_heap(
            ops in proptest::collection::vec((0u64..3, 0u64..1_000_000, 0u32..4), 1..400)
        ) {
            let mut q = EventQueue::default();
            let mut h = BinaryHeap::new();
            let (mut now, mut n) = (0u64, 0u64);
            for (pops, delay, pushes) in ops {
                for _ in 0..pushes {
                    n += 1;
                    // Ties (zero and repeated delays), near and far events, so every level and
                    // the lone-event shortcut are exercised.
                    let time = now + match delay % 5 {
                        0 => 0,
                        1 => delay % 64,
                        2 => delay / 5 % 3 * 1000,
                        3 => delay * 1000,
                        _ => delay << 24,
                    };
                    if delay % 3 == 0 {
                        q.push_next(time, n);
                    } else {
                        q.push(time, n);
                    }
                    h.push(Reverse((time, n)));
                }
                for _ in 0..pops {
                    let a = q.pop();
                    let b = h.pop().map(|Reverse(e)| e);
                    prop_assert_eq!(a, b);
                    if let Some((time, _)) = a {
                        now = time;
                    }
                }
                prop_assert_eq!(q.len(), h.len());
            }
        }
    }
}
