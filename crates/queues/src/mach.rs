//! Mach's run queues (Black 1990, section 3.1): each run queue is an array of 32 FIFO queues,
//! one per priority level (0 the highest), with a *hint* and a *count*, and each processor has a
//! *local* run queue that it examines before the shared *global* one.
//!
//! # Invariants
//!
//! - The hint is never below the highest-priority non-empty level: no item sits at a level
//!   numerically lower than the hint, so a search starts at the hint instead of level 0.
//! - The count is the number of items in the run queue, updated under the run queue's lock and
//!   read without it, so that an empty run queue is recognised without taking its lock.
//! - Local run queues hold items bound to their worker (Mach's bound threads). An item whose
//!   affinity mask is not every worker goes to the local queue of a worker in its mask (the
//!   posting worker's own when it is in the mask), so the mask is never violated; an item for
//!   every worker goes to the global run queue.
//!
//! The levels, hint and count are `smpsched_policy::run_queue::RunQueue`, the same structure the
//! simulator's Mach scheduler holds; here each one sits under its lock beside a count that is
//! read without it.

use crossbeam_utils::CachePadded;
use smpsched_policy::run_queue::RunQueue;

use crate::sync::{lock, AtomicUsize, Mutex, Ordering};
use crate::{check_workers, nth_set_bit, Client, Post, PostError, ReadyQueue, Take, Wake};

/// The number of priority levels (Mach: 32; level 0 is the highest priority).
pub const LEVELS: usize = smpsched_policy::mach::LEVELS;

/// The run queue level of a priority: priorities above 31 share the lowest level.
#[inline]
pub fn level_of(priority: u8) -> usize {
    (priority as usize).min(LEVELS - 1)
}

/// A run queue under its lock, with its count readable without the lock. The levels are boxed
/// so that the lock word and the count share one cache line.
struct Locked<T> {
    levels: Mutex<Box<RunQueue<T>>>,
    count: AtomicUsize,
}

impl<T> Locked<T> {
    fn new() -> Locked<T> {
        Locked {
            levels: Mutex::new(Box::default()),
            count: AtomicUsize::new(0),
        }
    }

    fn push(&self, level: usize, item: T) {
        let mut g = lock(&self.levels);
        g.push(item, level);
        self.count.store(g.len(), Ordering::Release);
    }

    fn pop(&self) -> Option<T> {
        if self.count.load(Ordering::Acquire) == 0 {
            return None;
        }
        let mut g = lock(&self.levels);
        let (item, _) = g.pop()?;
        self.count.store(g.len(), Ordering::Release);
        Some(item)
    }
}

/// Per-worker local run queues before a shared global run queue, each with 32 levels.
pub struct MachRunQueue<T> {
    local: Box<[CachePadded<Locked<T>>]>,
    global: CachePadded<Locked<T>>,
}

impl<T> MachRunQueue<T> {
    /// Run queues for `workers` workers.
    pub fn new(workers: usize) -> MachRunQueue<T> {
        check_workers(workers);
        MachRunQueue {
            local: (0..workers)
                .map(|_| CachePadded::new(Locked::new()))
                .collect(),
            global: CachePadded::new(Locked::new()),
        }
    }

    /// The hint of the global run queue (`LEVELS` when it knows the queue is empty).
    pub fn global_hint(&self) -> usize {
        lock(&self.global.levels).hint()
    }
}

impl<T: Send> ReadyQueue<T> for MachRunQueue<T> {
    fn name(&self) -> &'static str {
        "mach"
    }

    fn workers(&self) -> usize {
        self.local.len()
    }

    fn post(&self, client: &mut Client, item: T, how: Post) -> Result<Wake, PostError<T>> {
        let n = self.local.len();
        let level = level_of(how.priority);
        let mask = how.affinity.within(n);
        if mask == 0 {
            return Err(PostError::Unsupported {
                item,
                structure: "mach",
                what: "an affinity mask with none of its workers",
            });
        }
        if how.affinity.is_any(n) {
            self.global.push(level, item);
            return Ok(Wake::Any);
        }
        let w = match client.home() {
            Some(h) if how.affinity.allows(h) && h < n => h,
            _ => nth_set_bit(mask, client.draw()),
        };
        self.local[w].push(level, item);
        Ok(Wake::Worker(w))
    }

    fn take(&self, worker: usize) -> Take<T> {
        match self.local[worker].pop().or_else(|| self.global.pop()) {
            Some(t) => Take::Item(t),
            None => Take::Empty,
        }
    }

    fn len_hint(&self) -> usize {
        self.global.count.load(Ordering::Acquire)
            + self
                .local
                .iter()
                .map(|q| q.count.load(Ordering::Acquire))
                .sum::<usize>()
    }

    fn honours_affinity(&self) -> bool {
        true
    }

    fn has_work_for(&self, worker: usize) -> bool {
        self.local[worker].count.load(Ordering::SeqCst) > 0
            || self.global.count.load(Ordering::SeqCst) > 0
    }
}
