//! The per-core queues' injection lanes: where work posted from outside the workers, for any
//! worker, waits (the parent module's "Injection lanes"; Java ForkJoinPool's external
//! submission queues, Go's global run queue in lanes).
//!
//! Each lane is a bounded ring ([`Ring`]) with a locked overflow queue beside it. A client posts to
//! its own lane's ring; when that ring is full (its takers are behind), its next posts, as many as
//! the ring has slots, go without a look at the ring in runs of [`SPILL_RUN`] items to the lanes'
//! overflow queues in turn, so that a backlog costs a lock per post only while it lasts and the
//! producer does not meet the workers emptying the lane it spilled into before (the blocks of a
//! segmented queue). A take serves a lane's overflow before its ring, so that spilled items, older
//! than the ring's newest, are not left behind a ring its producer keeps refilling. A bitmap with a
//! bit per lane says which lanes have been posted to; a bit, once set, stays set (see
//! [`Injection::post`]).

use std::collections::VecDeque;

use crossbeam_utils::CachePadded;
use smpsched_ring::Ring;

use super::{Batch, RUN_NEXT};
use crate::sync::{lock, AtomicU64, AtomicUsize, Mutex, Ordering};
use crate::{first_set_from, Client};

/// How many items in a row a client whose ring is full posts to one overflow queue before moving
/// to the next lane's.
pub const SPILL_RUN: u64 = 8;

/// The injection lanes and their bitmap.
pub(super) struct Injection<T> {
    lanes: Box<[Lane<T>]>,
    /// Bit i: lane i has been posted to.
    bits: CachePadded<AtomicU64>,
}

struct Lane<T> {
    ring: Ring<T>,
    /// Items posted while the ring was full, and every item after them until they are taken.
    overflow: CachePadded<Overflow<T>>,
}

struct Overflow<T> {
    queue: Mutex<VecDeque<T>>,
    /// The queue's length, updated under its lock.
    count: AtomicUsize,
}

/// What a worker keeps of its looks at the lanes.
pub(super) struct Cursor {
    /// The lane the worker looks at first: the one it served last while that lane holds
    /// something, then the next (so every non-empty lane is reached within one sweep).
    lane: AtomicUsize,
}

impl Cursor {
    /// The cursor of worker `w` among `lanes` lanes.
    pub(super) fn new(w: usize, lanes: usize) -> Cursor {
        Cursor {
            lane: AtomicUsize::new(w % lanes),
        }
    }
}

impl<T> Injection<T> {
    /// `lanes` lanes (1 to 64) of `slots` slots each.
    pub(super) fn new(lanes: usize, slots: usize) -> Injection<T> {
        Injection {
            lanes: (0..lanes)
                .map(|_| Lane {
                    ring: Ring::new(slots),
                    overflow: CachePadded::new(Overflow {
                        queue: Mutex::new(VecDeque::new()),
                        count: AtomicUsize::new(0),
                    }),
                })
                .collect(),
            bits: CachePadded::new(AtomicU64::new(0)),
        }
    }

    /// Posts `client`'s `item` to its lane's ring or, when that is full, to an overflow queue
    /// (see the module doc), and sets the lane's bit if it is clear.
    ///
    /// Bits are never cleared. Clearing the bit of a lane found empty would race a post to it,
    /// and closing that race takes a store-load fence in every post (Dekker's pattern: the post
    /// publishes and then reads the bit, the clearing clears and then reads the lane), which
    /// makes a producer wait for its slot's line to reach it before it can post again, where
    /// the idle workers polling that slot keep taking the line away. A stale bit costs an idle
    /// worker one look at an empty ring (at most 64 lanes); `has_work_for` looks at the rings
    /// themselves, so stale bits keep no worker from parking.
    pub(super) fn post(&self, client: &mut Client, item: T) {
        let k = self.lanes.len();
        let home = client.id() % k;
        let ring = &self.lanes[home].ring;
        let spilled = if *client.spill() > 0 {
            *client.spill() -= 1;
            Some(item)
        } else {
            match ring.push(item) {
                Ok(()) => None,
                Err(item) => {
                    *client.spill() = ring.slots() as u32;
                    Some(item)
                }
            }
        };
        let i = match spilled {
            None => home,
            Some(item) => {
                let i = (home as u64 + client.next_sequence() / SPILL_RUN) % k as u64;
                let o = &self.lanes[i as usize].overflow;
                let mut q = lock(&o.queue);
                q.push_back(item);
                o.count.store(q.len(), Ordering::Release);
                i as usize
            }
        };
        if self.bits.load(Ordering::Relaxed) >> i & 1 == 0 {
            self.bits.fetch_or(1 << i, Ordering::Release);
        }
    }

    /// Serves a worker from the first lane from its cursor on that holds something: the lane's
    /// oldest item, and up to half of those behind it (at most [`RUN_NEXT`]) into `batch`.
    pub(super) fn take(&self, cursor: &Cursor, mut batch: Batch<'_, T>) -> Option<T> {
        let bits = self.bits.load(Ordering::Acquire);
        if bits == 0 {
            return None;
        }
        let mut left = bits;
        while let Some(i) = first_set_from(left, cursor.lane.load(Ordering::Relaxed)) {
            left &= !(1 << i);
            let lane = &self.lanes[i];
            let Some(item) = lane.serve(&mut batch) else {
                continue;
            };
            let next = if lane.has_ready() {
                i
            } else {
                (i + 1) % self.lanes.len()
            };
            cursor.lane.store(next, Ordering::Relaxed);
            return Some(item);
        }
        None
    }

    /// Whether any lane holds an item a take would find.
    pub(super) fn has_ready(&self) -> bool {
        self.lanes.iter().any(Lane::has_ready)
    }

    /// The items in the lanes (a hint).
    pub(super) fn items(&self) -> usize {
        self.lanes
            .iter()
            .map(|l| l.ring.len() + l.overflow.count.load(Ordering::Acquire))
            .sum()
    }

    /// The bitmap (for tests).
    #[cfg(all(test, not(loom)))]
    pub(super) fn bits(&self) -> u64 {
        self.bits.load(Ordering::SeqCst)
    }

    /// Lane `i`'s items in its ring and in its overflow (for tests).
    #[cfg(all(test, not(loom)))]
    pub(super) fn lengths(&self, i: usize) -> (usize, usize) {
        let l = &self.lanes[i];
        (l.ring.len(), l.overflow.count.load(Ordering::SeqCst))
    }
}

impl<T> Lane<T> {
    /// The overflow's oldest item and up to half of those behind it into `batch`; else, when
    /// the overflow is empty, the ring's likewise.
    fn serve(&self, batch: &mut Batch<'_, T>) -> Option<T> {
        if self.overflow.count.load(Ordering::Acquire) > 0 {
            let mut q = lock(&self.overflow.queue);
            let item = batch.take_front(&mut q, |t| t);
            self.overflow.count.store(q.len(), Ordering::Release);
            if item.is_some() {
                return item;
            }
        }
        let claim = self.ring.claim(RUN_NEXT)?;
        Some(if claim.k() == 1 {
            self.ring.take(claim, &mut Vec::new()) // nothing for the batch: leave its lock be
        } else {
            self.ring.take(claim, batch)
        })
    }

    fn has_ready(&self) -> bool {
        self.ring.has_ready() || self.overflow.count.load(Ordering::Acquire) > 0
    }
}
