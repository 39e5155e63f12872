//! Per-core run queues with pull migration and affinity masks (Weibel, "Theoretical and
//! Experimental Approach to SMP Scheduling": per-core queues, pull migration, affinity sets).
//!
//! Each worker owns a FIFO behind its own lock. A post goes to a worker allowed by the item's
//! affinity mask (the posting worker itself when allowed, else one drawn from the mask). A worker
//! serves its own queue first; when it is empty it *pulls*: it picks the busiest queue holding
//! something it may run (`policy::migration::pull_victim`) and takes from its tail half the
//! imbalance (`policy::migration::pull_batch`) when the tail's items all allow it, else the
//! newest item whose mask allows it. It runs the oldest item it pulled and keeps the others on
//! its own queue.
//!
//! A worker serving its own queue moves up to half of it (at most `RUN_NEXT` items) into a
//! private run-next batch in the same lock acquisition, so that under load one acquisition
//! serves several items; those items are invisible to pullers until served (a bounded loss of
//! balance for fewer lock round trips, as in Go's per-P run-next slot).
//!
//! Like the lanes of oneTBB's `task_stream`, a poster or a puller that finds a queue's lock
//! taken does not wait for it: a post moves on to the next queue its mask allows, a pull to the
//! next victim. Only a worker serving its own queue waits for its lock.
//!
//! # Injection lanes
//!
//! Work that a client outside the workers posts, and that any worker may run, goes to one of a
//! set of *injection lanes* instead (the external submission queues of Java's ForkJoinPool; Go's
//! global run queue, split into lanes). Each lane is a bounded ring of slots with sequence
//! numbers (`smpsched_ring::Ring`: Vyukov's bounded queue, the per-slot state of crossbeam's
//! Injector), so that posters and takers meet only on the slot being handed over: a poster claims
//! the tail, a taker the head, and neither takes a lock that the other side polls. A client posts
//! to the lane its id names, so producers seldom share a lane; past a full ring, it spills a
//! backlog to the lanes' locked overflow queues (`inject`), which takes serve before the rings.
//! A bitmap with a bit per lane (as DiBella's mailbox bitmaps) says which lanes may hold
//! something, so that a worker finds outside work with one load. A worker whose own queue is
//! empty serves the first lane from its cursor on (cyclically) before pulling from its peers (the
//! cursor starts at the worker's index and stays on a lane until the worker empties it, then
//! moves to the next, so that no lane waits more than one sweep): it claims the lane's oldest
//! item and up to half of the published ones behind it (at most `RUN_NEXT`, into its run-next
//! batch) with one compare-and-swap, so one producer feeds many workers and many producers feed
//! one worker without a lock round trip per item. Once in 61 takes a worker looks at the lanes
//! before its own queue (`policy::migration::injected_first`, Go's rule), so that work it spawns
//! for itself cannot starve outside work. Posts with a narrower mask, and workers' own posts, go
//! to the workers' queues as above.
//!
//! A lane's bit is set by the first post to the lane and never cleared (`inject`: clearing it
//! safely would cost every post a store-load fence), so a worker may look at a lane that is
//! empty; `has_work_for` looks at the rings themselves.
//!
//! # Invariants
//!
//! - Every item in queue q allows worker q (posts place it so), and an item is only ever taken
//!   by its queue's owner or by a puller whose bit is in its mask: masks are never violated.
//! - `eligible` of a queue is a superset of the union of the masks of its items: bits are added
//!   under the lock before the item is visible and cleared only when the queue is empty.
//! - `count` is the queue's length, updated under its lock; a run-next batch's `count` is its
//!   length, updated under its own lock (taken inside the queue's lock, never the reverse).
//! - A run-next batch holds only items its worker may run: from its own queue, or from an
//!   injection lane.
//! - Injection lanes hold only items that every worker may run.
//! - Bit i of the lane bitmap is set once injection lane i has been posted to (by that post,
//!   after its item is in), and stays set.

mod inject;

use std::collections::VecDeque;

use crossbeam_utils::CachePadded;
use smpsched_policy::migration::{injected_first, pull_batch, pull_victim};

use crate::sync::{lock, try_lock, AtomicU64, AtomicUsize, Mutex, MutexGuard, Ordering};
use crate::{
    all_workers, check_workers, nth_set_bit, Client, Post, PostError, ReadyQueue, Take, Wake,
    MAX_WORKERS,
};
use inject::{Cursor, Injection};

struct Lane<T> {
    queue: Mutex<VecDeque<(T, u64)>>,
    count: AtomicUsize,
    eligible: AtomicU64,
}

impl<T> Lane<T> {
    fn padded() -> CachePadded<Lane<T>> {
        CachePadded::new(Lane {
            queue: Mutex::new(VecDeque::new()),
            count: AtomicUsize::new(0),
            eligible: AtomicU64::new(0),
        })
    }
}

/// Per-worker FIFOs; idle workers take outside work from the injection lanes, then pull from the
/// tail of the busiest queue they may serve.
pub struct PerCore<T> {
    lanes: Box<[CachePadded<Lane<T>>]>,
    /// The injection lanes: any-worker posts from clients that are not workers.
    inject: Injection<T>,
    /// Each worker's run-next batch: items it moved off the front of its own queue or of an
    /// injection lane in one lock acquisition, served before the queue (only ever touched by
    /// that worker).
    next: Box<[CachePadded<Next<T>>]>,
}

struct Next<T> {
    batch: Mutex<VecDeque<T>>,
    count: AtomicUsize,
    /// How many takes the worker has made (for [`injected_first`]).
    takes: AtomicU64,
    /// Where the worker looks at the injection lanes.
    cursor: Cursor,
}

/// A worker's run-next batch, as the queues and lanes it serves from fill it.
struct Batch<'a, T> {
    items: &'a Mutex<VecDeque<T>>,
    count: &'a AtomicUsize,
}

impl<T> Batch<'_, T> {
    /// Takes the oldest item of a locked queue and moves up to half of the rest (at most
    /// [`RUN_NEXT`]) into the batch; `item` takes an entry's item out of it.
    fn take_front<U>(&mut self, q: &mut VecDeque<U>, item: impl Fn(U) -> T) -> Option<T> {
        let first = q.pop_front().map(&item);
        let more = (q.len() / 2).min(RUN_NEXT);
        if more > 0 {
            self.extend(q.drain(..more).map(item));
        }
        first
    }
}

impl<T> Extend<T> for Batch<'_, T> {
    /// Appends under the batch's lock.
    fn extend<I: IntoIterator<Item = T>>(&mut self, items: I) {
        let mut b = lock(self.items);
        b.extend(items);
        self.count.store(b.len(), Ordering::Release);
    }
}

/// The most items a worker moves from its own queue into its run-next batch at once.
pub const RUN_NEXT: usize = 8;

/// How many injection lanes [`PerCore::new`] makes: one per bit of the bitmap, so that up to
/// 64 outside producers each have a lane of their own.
pub const INJECTION_LANES: usize = MAX_WORKERS;

/// How many slots each injection lane's ring has (beyond them, posts wait in the lane's locked
/// overflow queue).
pub const INJECTION_SLOTS: usize = 64;

impl<T> PerCore<T> {
    /// Per-core queues for `workers` workers, with [`INJECTION_LANES`] injection lanes.
    pub fn new(workers: usize) -> PerCore<T> {
        PerCore::with_injection_lanes(workers, INJECTION_LANES)
    }

    /// Per-core queues for `workers` workers with `lanes` injection lanes (1 to 64; fewer lanes
    /// than outside producers makes producers share them) of [`INJECTION_SLOTS`] slots.
    pub fn with_injection_lanes(workers: usize, lanes: usize) -> PerCore<T> {
        PerCore::with_injection(workers, lanes, INJECTION_SLOTS)
    }

    /// Per-core queues for `workers` workers with `lanes` injection lanes of `slots` slots each
    /// (a power of two, from 2 to 2^24).
    ///
    /// # Panics
    ///
    /// If a count is out of its range.
    pub fn with_injection(workers: usize, lanes: usize, slots: usize) -> PerCore<T> {
        check_workers(workers);
        assert!(
            (1..=INJECTION_LANES).contains(&lanes),
            "per-core queues need 1 to {INJECTION_LANES} injection lanes, not {lanes}"
        );
        assert!(
            slots.is_power_of_two() && (2..=1 << 24).contains(&slots),
            "an injection lane's slots must be a power of two from 2 to 2^24, not {slots}"
        );
        PerCore {
            lanes: (0..workers).map(|_| Lane::padded()).collect(),
            inject: Injection::new(lanes, slots),
            next: (0..workers)
                .map(|w| {
                    CachePadded::new(Next {
                        batch: Mutex::new(VecDeque::new()),
                        count: AtomicUsize::new(0),
                        takes: AtomicU64::new(0),
                        cursor: Cursor::new(w, lanes),
                    })
                })
                .collect(),
        }
    }

    /// The next item of worker `me`'s own: its run-next batch first, then its queue, from
    /// whose front it takes up to half (at most [`RUN_NEXT`]) in one lock acquisition.
    fn pop_own(&self, me: usize) -> Option<T> {
        let next = &self.next[me];
        if next.count.load(Ordering::Acquire) > 0 {
            let mut b = lock(&next.batch);
            let item = b.pop_front();
            next.count.store(b.len(), Ordering::Release);
            if item.is_some() {
                return item;
            }
        }
        let lane = &self.lanes[me];
        if lane.count.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut g = lock(&lane.queue);
        let item = self.batch(me).take_front(&mut g, |(t, _)| t);
        Self::settle(lane, &g);
        item
    }

    /// Worker `me`'s run-next batch.
    fn batch(&self, me: usize) -> Batch<'_, T> {
        let next = &self.next[me];
        Batch {
            items: &next.batch,
            count: &next.count,
        }
    }

    /// Serves worker `me` from the injection lanes (see the module doc).
    fn take_injected(&self, me: usize) -> Option<T> {
        self.inject.take(&self.next[me].cursor, self.batch(me))
    }

    fn settle(lane: &Lane<T>, g: &VecDeque<(T, u64)>) {
        lane.count.store(g.len(), Ordering::Release);
        if g.is_empty() {
            lane.eligible.store(0, Ordering::Release);
        }
    }

    /// Pulls from the tail of queue `q` (see the module doc); `Err(())` when its lock is taken.
    fn pull_from(&self, q: usize, me: usize) -> Result<Option<T>, ()> {
        let lane = &self.lanes[q];
        let Some(mut g) = try_lock(&lane.queue) else {
            return Err(());
        };
        let len = g.len();
        let k = pull_batch(len, 0);
        if k > 1 && g.iter().skip(len - k).all(|(_, mask)| mask >> me & 1 == 1) {
            let mut batch = g.split_off(len - k);
            Self::settle(lane, &g);
            drop(g);
            let first = batch.pop_front().map(|(t, _)| t);
            let own = &self.lanes[me];
            let mut mine = lock(&own.queue);
            let union = batch.iter().fold(0, |u, (_, m)| u | m);
            own.eligible.fetch_or(union, Ordering::AcqRel);
            mine.append(&mut batch);
            own.count.store(mine.len(), Ordering::Release);
            return Ok(first);
        }
        let Some(pos) = g.iter().rposition(|(_, mask)| mask >> me & 1 == 1) else {
            return Ok(None);
        };
        let item = g.remove(pos).map(|(t, _)| t);
        Self::settle(lane, &g);
        Ok(item)
    }

    fn victims_mask(&self, me: usize) -> u64 {
        let mut m = 0u64;
        for (q, lane) in self.lanes.iter().enumerate() {
            if q != me
                && lane.count.load(Ordering::SeqCst) > 0
                && lane.eligible.load(Ordering::SeqCst) >> me & 1 == 1
            {
                m |= 1 << q;
            }
        }
        m
    }
}

/// Locks the first of `lanes` from `first` on (cyclically, among those in `mask`) whose lock is
/// free, or waits for `first`'s if all are taken.
fn lock_some<T>(
    lanes: &[CachePadded<Lane<T>>],
    first: usize,
    mask: u64,
) -> (usize, MutexGuard<'_, VecDeque<(T, u64)>>) {
    let n = lanes.len();
    for k in 0..n {
        let q = (first + k) % n;
        if mask >> q & 1 == 1 {
            if let Some(g) = try_lock(&lanes[q].queue) {
                return (q, g);
            }
        }
    }
    (first, lock(&lanes[first].queue))
}

impl<T: Send> ReadyQueue<T> for PerCore<T> {
    fn name(&self) -> &'static str {
        "per-core"
    }

    fn workers(&self) -> usize {
        self.lanes.len()
    }

    fn post(&self, client: &mut Client, item: T, how: Post) -> Result<Wake, PostError<T>> {
        let n = self.lanes.len();
        let mask = how.affinity.within(n);
        if mask == 0 {
            return Err(PostError::Unsupported {
                item,
                structure: "per-core",
                what: "an affinity mask with none of its workers",
            });
        }
        if client.home().is_none() && mask == all_workers(n) {
            self.inject.post(client, item);
            return Ok(Wake::Any);
        }
        let first = match client.home() {
            Some(h) if h < n && mask >> h & 1 == 1 => h,
            _ => nth_set_bit(mask, client.draw()),
        };
        let (q, mut g) = lock_some(&self.lanes, first, mask);
        let lane = &self.lanes[q];
        if lane.eligible.load(Ordering::Relaxed) & mask != mask {
            lane.eligible.fetch_or(mask, Ordering::AcqRel);
        }
        g.push_back((item, mask));
        lane.count.store(g.len(), Ordering::Release);
        drop(g);
        Ok(if mask.count_ones() == 1 {
            Wake::Worker(q)
        } else if how.affinity.is_any(n) {
            Wake::Prefer(q)
        } else {
            Wake::Worker(q)
        })
    }

    fn take(&self, worker: usize) -> Take<T> {
        let takes = &self.next[worker].takes;
        let k = takes.load(Ordering::Relaxed);
        takes.store(k.wrapping_add(1), Ordering::Relaxed);
        if injected_first(k) {
            if let Some(t) = self.take_injected(worker) {
                return Take::Item(t);
            }
        }
        if let Some(t) = self.pop_own(worker) {
            return Take::Item(t);
        }
        if let Some(t) = self.take_injected(worker) {
            return Take::Item(t);
        }
        let mut busy = false;
        let n = self.lanes.len();
        let mut eligible = self.victims_mask(worker);
        let mut lengths = [0usize; crate::MAX_WORKERS];
        for (l, lane) in lengths.iter_mut().zip(self.lanes.iter()) {
            *l = lane.count.load(Ordering::Acquire);
        }
        while let Some(q) = pull_victim(&lengths[..n], eligible, worker) {
            match self.pull_from(q, worker) {
                Ok(Some(t)) => return Take::Item(t),
                Ok(None) => {} // its eligible bits were stale
                Err(()) => busy = true,
            }
            eligible &= !(1 << q);
        }
        if busy {
            Take::Retry
        } else {
            Take::Empty
        }
    }

    fn len_hint(&self) -> usize {
        self.lanes
            .iter()
            .map(|l| l.count.load(Ordering::Acquire))
            .chain(std::iter::once(self.inject.items()))
            .chain(self.next.iter().map(|n| n.count.load(Ordering::Acquire)))
            .sum()
    }

    fn honours_affinity(&self) -> bool {
        true
    }

    fn has_work_for(&self, worker: usize) -> bool {
        self.next[worker].count.load(Ordering::SeqCst) > 0
            || self.lanes[worker].count.load(Ordering::SeqCst) > 0
            || self.inject.has_ready()
            || self.victims_mask(worker) != 0
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::{first_set_from, Affinity};

    #[test]
    fn outside_any_worker_posts_go_to_the_clients_injection_lane() {
        let q = PerCore::with_injection_lanes(4, 8);
        let wake = q.post(&mut Client::new(13), 1u32, Post::default()).unwrap();
        assert_eq!(wake, Wake::Any);
        assert_eq!(q.inject.bits(), 1 << 5, "lane 13 % 8");
        assert!((0..4).all(|w| q.has_work_for(w)));
        assert_eq!(q.take(2), Take::Item(1));
        assert!(!q.has_work_for(0), "the lane is empty (its bit stays set)");
    }

    #[test]
    fn a_lanes_bit_stays_set_and_an_idle_take_looks_at_its_empty_ring() {
        let q = PerCore::with_injection_lanes(2, 8);
        let _ = q.post(&mut Client::new(1), 1u32, Post::default()).unwrap();
        let _ = q.post(&mut Client::new(2), 2u32, Post::default()).unwrap();
        assert_eq!(q.take(0), Take::Item(1));
        assert_eq!(q.take(0), Take::Item(2));
        for _ in 0..100 {
            assert!(q.take(1).is_empty());
        }
        assert_eq!(
            q.inject.bits(),
            0b110,
            "set by the first posts, never cleared"
        );
        assert!(!q.has_work_for(0) && !q.has_work_for(1));
        let _ = q.post(&mut Client::new(2), 3u32, Post::default()).unwrap();
        assert!(q.has_work_for(1));
        assert_eq!(q.take(1), Take::Item(3));
    }

    #[test]
    fn past_a_full_ring_a_client_spills_runs_to_the_lanes_overflows_served_first() {
        let q = PerCore::with_injection(2, 4, 4);
        let mut c = Client::new(3);
        for i in 0..22u32 {
            let _ = q.post(&mut c, i, Post::default()).unwrap();
        }
        let lengths: Vec<_> = (0..4).map(|i| q.inject.lengths(i)).collect();
        assert_eq!(
            lengths,
            [(0, 8), (0, 2), (0, 0), (4, 8)],
            "ring 3 full, then runs of 8 on lanes 3, 0, 1"
        );
        assert_eq!(q.inject.bits(), 0b1011);
        assert_eq!(q.len_hint(), 22);
        // Worker 1's cursor starts at lane 1, then moves to lane 3: overflow, then ring.
        let order: Vec<u32> = (0..14).filter_map(|_| q.take(1).item()).collect();
        let lane3: Vec<u32> = (4..12).chain(0..4).collect();
        assert_eq!(order, [&[20, 21][..], &lane3].concat());
        let rest: Vec<u32> = (0..10).filter_map(|_| q.take(0).item()).collect();
        assert_eq!(rest, (12..20).collect::<Vec<_>>());
        assert_eq!(q.len_hint(), 0);
    }

    #[test]
    fn after_a_full_ring_a_clients_next_posts_spill_without_a_look_at_it() {
        let q = PerCore::with_injection(1, 4, 4);
        let mut c = Client::new(3);
        for i in 0..5u32 {
            let _ = q.post(&mut c, i, Post::default()).unwrap();
        }
        assert_eq!(q.inject.lengths(3), (4, 1), "the fifth found the ring full");
        assert_eq!(q.take(0), Take::Item(4), "the overflow first");
        assert_eq!(q.take(0), Take::Item(0));
        assert_eq!(q.inject.lengths(3).0, 2, "the ring has room again");
        for i in 5..9u32 {
            let _ = q.post(&mut c, i, Post::default()).unwrap();
        }
        assert_eq!(
            q.inject.lengths(3),
            (2, 4),
            "the next 4 (the ring's slots) spilled"
        );
        let _ = q.post(&mut c, 9, Post::default()).unwrap();
        assert_eq!(q.inject.lengths(3), (3, 4), "then the ring again");
    }

    #[test]
    fn narrow_masks_and_workers_own_posts_stay_on_the_workers_queues() {
        let q = PerCore::with_injection_lanes(4, 8);
        let narrow = Post::default().affinity(Affinity::only(3));
        assert_eq!(
            q.post(&mut Client::new(0), 1u32, narrow).unwrap(),
            Wake::Worker(3)
        );
        let _ = q.post(&mut Client::worker(1), 2, Post::default()).unwrap();
        assert_eq!(q.inject.bits(), 0);
        assert_eq!(q.lanes[3].count.load(Ordering::SeqCst), 1);
        assert_eq!(q.lanes[1].count.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn one_acquisition_serves_the_oldest_and_batches_half_the_rest() {
        let q = PerCore::with_injection_lanes(2, 1);
        let mut c = Client::new(0);
        for i in 0..11u32 {
            let _ = q.post(&mut c, i, Post::default()).unwrap();
        }
        assert_eq!(q.take(1), Take::Item(0));
        assert_eq!(
            q.next[1].count.load(Ordering::SeqCst),
            5,
            "half of the 10 left"
        );
        assert_eq!(q.inject.lengths(0), (5, 0));
        let order: Vec<u32> = (0..10).filter_map(|_| q.take(1).item()).collect();
        assert_eq!(order, (1..11).collect::<Vec<_>>(), "FIFO for one producer");
    }

    #[test]
    fn a_worker_sweeps_the_lanes_and_returns_to_none_before_the_others() {
        let q = PerCore::with_injection_lanes(1, 4);
        for lane in 0..4u32 {
            let _ = q
                .post(&mut Client::new(lane as usize), lane, Post::default())
                .unwrap();
        }
        assert_eq!(q.take(0), Take::Item(0));
        // Lane 0 fills again at once; lanes 1 to 3 were waiting longer and come first.
        let _ = q.post(&mut Client::new(0), 10, Post::default()).unwrap();
        let order: Vec<u32> = (0..4).filter_map(|_| q.take(0).item()).collect();
        assert_eq!(order, [1, 2, 3, 10]);
    }

    #[test]
    fn outside_work_is_not_starved_by_a_worker_feeding_itself() {
        let q = PerCore::with_injection_lanes(1, 1);
        let _ = q
            .post(&mut Client::new(0), u32::MAX, Post::default())
            .unwrap();
        let mut me = Client::worker(0);
        for i in 0..2 {
            let _ = q.post(&mut me, i, Post::default()).unwrap();
        }
        let mut takes = 0;
        loop {
            takes += 1;
            match q.take(0).item() {
                Some(u32::MAX) => break,
                Some(i) => {
                    let _ = q.post(&mut me, i + 2, Post::default()).unwrap();
                }
                None => panic!("the queue never runs dry here"),
            }
            assert!(
                takes <= 61,
                "outside item still waiting after {takes} takes"
            );
        }
        assert_eq!(takes, 61);
    }

    #[test]
    fn first_set_bit_from_a_start_wraps_around() {
        assert_eq!(first_set_from(0, 3), None);
        assert_eq!(first_set_from(0b1001, 1), Some(3));
        assert_eq!(first_set_from(0b1001, 4), Some(0));
        assert_eq!(first_set_from(1 << 63, 63), Some(63));
        assert_eq!(first_set_from(0b1, 0), Some(0));
    }
}
