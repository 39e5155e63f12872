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
//! # Invariants
//!
//! - Every item in queue q allows worker q (posts place it so), and an item is only ever taken
//!   by its queue's owner or by a puller whose bit is in its mask: masks are never violated.
//! - `eligible` of a queue is a superset of the union of the masks of its items: bits are added
//!   under the lock before the item is visible and cleared only when the queue is empty.
//! - `count` is the queue's length, updated under its lock; a run-next batch's `count` is its
//!   length, updated under its own lock (taken inside the queue's lock, never the reverse).
//! - A run-next batch holds only items from its worker's own queue, which all allow it.

use std::collections::VecDeque;

use crossbeam_utils::CachePadded;
use smpsched_policy::migration::{pull_batch, pull_victim};

use crate::sync::{lock, try_lock, AtomicU64, AtomicUsize, Mutex, MutexGuard, Ordering};
use crate::{check_workers, nth_set_bit, Client, Post, PostError, ReadyQueue, Take, Wake};

struct Lane<T> {
    queue: Mutex<VecDeque<(T, u64)>>,
    count: AtomicUsize,
    eligible: AtomicU64,
}

/// Per-worker FIFOs; idle workers pull from the tail of the busiest queue they may serve.
pub struct PerCore<T> {
    lanes: Box<[CachePadded<Lane<T>>]>,
    /// Each worker's run-next batch: items it moved off the front of its own queue in one lock
    /// acquisition, served before the queue (only ever touched by that worker).
    next: Box<[CachePadded<Next<T>>]>,
}

struct Next<T> {
    batch: Mutex<VecDeque<T>>,
    count: AtomicUsize,
}

/// The most items a worker moves from its own queue into its run-next batch at once.
pub const RUN_NEXT: usize = 8;

impl<T> PerCore<T> {
    /// Per-core queues for `workers` workers.
    pub fn new(workers: usize) -> PerCore<T> {
        check_workers(workers);
        PerCore {
            lanes: (0..workers)
                .map(|_| {
                    CachePadded::new(Lane {
                        queue: Mutex::new(VecDeque::new()),
                        count: AtomicUsize::new(0),
                        eligible: AtomicU64::new(0),
                    })
                })
                .collect(),
            next: (0..workers)
                .map(|_| {
                    CachePadded::new(Next {
                        batch: Mutex::new(VecDeque::new()),
                        count: AtomicUsize::new(0),
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
        let item = g.pop_front().map(|(t, _)| t);
        let more = (g.len() / 2).min(RUN_NEXT);
        if more == 0 {
            Self::settle(lane, &g);
            return item;
        }
        let mut b = lock(&next.batch);
        b.extend(g.drain(..more).map(|(t, _)| t));
        next.count.store(b.len(), Ordering::Release);
        drop(b);
        Self::settle(lane, &g);
        item
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

    /// Locks the first queue from `first` on (cyclically, among those in `mask`) whose lock is
    /// free, or waits for `first`'s if all are taken.
    fn lock_some(&self, first: usize, mask: u64) -> (usize, MutexGuard<'_, VecDeque<(T, u64)>>) {
        let n = self.lanes.len();
        for k in 0..n {
            let q = (first + k) % n;
            if mask >> q & 1 == 1 {
                if let Some(g) = try_lock(&self.lanes[q].queue) {
                    return (q, g);
                }
            }
        }
        (first, lock(&self.lanes[first].queue))
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
        let first = match client.home() {
            Some(h) if h < n && mask >> h & 1 == 1 => h,
            _ => nth_set_bit(mask, client.draw()),
        };
        let (q, mut g) = self.lock_some(first, mask);
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
        if let Some(t) = self.pop_own(worker) {
            return Take::Item(t);
        }
        let n = self.lanes.len();
        let mut eligible = self.victims_mask(worker);
        let mut lengths = [0usize; crate::MAX_WORKERS];
        for (l, lane) in lengths.iter_mut().zip(self.lanes.iter()) {
            *l = lane.count.load(Ordering::Acquire);
        }
        let mut busy = false;
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
            .chain(self.next.iter().map(|n| n.count.load(Ordering::Acquire)))
            .sum()
    }

    fn honours_affinity(&self) -> bool {
        true
    }

    fn has_work_for(&self, worker: usize) -> bool {
        self.next[worker].count.load(Ordering::SeqCst) > 0
            || self.lanes[worker].count.load(Ordering::SeqCst) > 0
            || self.victims_mask(worker) != 0
    }
}
