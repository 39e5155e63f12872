//! smpsched-queues: the ready-queue structures of the shared-memory scheduling papers, built for
//! real on std threads and atomics, and a worker pool whose queue structure is a type parameter.
//!
//! # Concepts
//!
//! A *ready queue* ([`ReadyQueue`]) sits between *clients*, which post items (ready threads,
//! requests, tasks), and N *workers* (processors, schedulers), each with an index `0..N`, which
//! take them. A [`Client`] carries the per-client state that client policies need (its id, how
//! many requests it has posted, a random stream); a worker that posts its own work uses
//! [`Client::worker`], which lets per-worker structures keep the work local. A post carries a
//! [`Post`]: a priority (used by [`MachRunQueue`]) and an [`Affinity`] mask (honoured by
//! [`MachRunQueue`] and [`PerCore`]; structures that cannot honour a mask refuse it rather than
//! violate it). A post says whom to wake ([`Wake`]); a take is typed ([`Take`]).
//!
//! | structure | paper | idea |
//! |---|---|---|
//! | [`Global`] | all (baseline) | one FIFO, one lock |
//! | [`DistributedFcfs`] | DiBella 2.2 / Anderson et al. | a FIFO and a lock per worker, sequential search of the others |
//! | [`MultiAccess`] | DiBella 2.1-2.3 | per-worker arrays of mailboxes with a bitmap, optimistic bit claims, client and scheduler policies |
//! | [`Ddq`] | George 2 | a tree of counters (N, D) over dual queues; workers wait in their own slot |
//! | [`MachRunQueue`] | Black 3.1 | 32 priority levels with hint and count, local queues before a global one |
//! | [`PerCore`] | Weibel | per-worker FIFOs, pull migration from the busiest, affinity masks never violated; injection lanes for outside work |
//!
//! [`pool::Pool`] runs closures on worker threads over any of them.
//!
//! # Example
//!
//! ```
//! use smpsched_queues::{Client, Global, Post, ReadyQueue, Take};
//!
//! let q = Global::new(2); // two workers
//! let mut client = Client::new(0);
//! let _wake = q.post(&mut client, "hello", Post::default()).unwrap();
//! match q.take(1) {
//!     Take::Item(s) => assert_eq!(s, "hello"),
//!     Take::Empty | Take::Retry => unreachable!(),
//! }
//! assert!(q.take(0).is_empty());
//! ```
//!
//! # Safety
//!
//! The crate has no `unsafe` code (`#![forbid(unsafe_code)]`): mailboxes and slots are
//! uncontended mutexes beside the atomic bitmaps and counters that carry the papers'
//! protocols. The one exception to mutex-held items, the ring of [`PerCore`]'s injection lanes,
//! comes from the small smpsched-ring crate, whose `unsafe` Miri and loom check there.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod ddq;
pub mod distributed;
pub mod george;
pub mod global;
pub mod mach;
pub mod multi_access;
pub mod percore;
pub mod pool;
pub mod requests;
mod sync;

pub use ddq::{Ddq, DdqConfig};
pub use distributed::DistributedFcfs;
pub use global::Global;
pub use mach::MachRunQueue;
pub use multi_access::{MultiAccess, MultiAccessConfig};
pub use percore::PerCore;

use std::fmt;

/// The most workers any structure supports: affinity masks are 64-bit.
pub const MAX_WORKERS: usize = 64;

/// The priority a [`Post`] has unless told otherwise (Mach: 0 is the highest of 32 levels).
pub const DEFAULT_PRIORITY: u8 = 16;

/// A ready queue shared by any number of clients, which post items, and `workers()` workers,
/// which take them by index. Every method takes `&self`; each worker index should be used by one
/// thread at a time (the structures stay memory-safe otherwise, but the papers' per-worker state
/// such as the remembered mailbox index assumes it).
pub trait ReadyQueue<T: Send>: Send + Sync {
    /// The structure's name, as `smpsched real` and the benchmarks print it.
    fn name(&self) -> &'static str;

    /// The number of worker indices, `0..workers()`.
    fn workers(&self) -> usize;

    /// Posts an item on behalf of `client`. On success says which worker to wake; a bounded
    /// structure that is full, or one that cannot honour `how`, hands the item back.
    fn post(&self, client: &mut Client, item: T, how: Post) -> Result<Wake, PostError<T>>;

    /// Takes an item for worker `worker`, one of `0..workers()` (a worker past that may panic:
    /// the structures index their per-worker state by it).
    fn take(&self, worker: usize) -> Take<T>;

    /// About how many items are queued (exact when quiescent).
    fn len_hint(&self) -> usize;

    /// Whether a take by `worker` could find something now (exact when quiescent). A pool asks
    /// this after announcing that `worker` is about to sleep, so it must read the same atomics
    /// that a post writes.
    fn has_work_for(&self, worker: usize) -> bool;

    /// Whether the structure honours affinity masks narrower than every worker (the others
    /// refuse such posts with [`PostError::Unsupported`]).
    fn honours_affinity(&self) -> bool {
        false
    }
}

/// The outcome of a take.
#[must_use]
#[derive(Debug, PartialEq, Eq)]
pub enum Take<T> {
    /// An item, now owned by the taker.
    Item(T),
    /// Nothing this worker may take was found.
    Empty,
    /// Items were seen but other workers claimed them first; trying again may succeed.
    Retry,
}

impl<T> Take<T> {
    /// The item, if one was taken.
    pub fn item(self) -> Option<T> {
        match self {
            Take::Item(t) => Some(t),
            _ => None,
        }
    }

    /// Whether the take found nothing (not even a lost race).
    pub fn is_empty(&self) -> bool {
        matches!(self, Take::Empty)
    }
}

/// Whom a post asks to wake, so that a pool need not wake everyone.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wake {
    /// Nobody: the item waits for workers that are busy and will come back (a DDQ leaf).
    None,
    /// This worker, and only this one, can take the item soon (its own slot or queue).
    Worker(usize),
    /// This worker's queue got the item, but any worker can reach it.
    Prefer(usize),
    /// Any worker can take the item.
    Any,
}

/// Why a post handed its item back.
#[derive(thiserror::Error)]
pub enum PostError<T> {
    /// The queue the client's policy chose is full (bounded structures: mailboxes, DDQ slots;
    /// a multi-access client posts to the queue its policy draws, as DiBella's clients do, and
    /// does not try the others: `len_hint` may be below the capacity).
    #[error("the ready queue is full")]
    Full(T),
    /// The structure cannot honour what the post asks for (an affinity mask, say).
    #[error("{structure} cannot honour {what}")]
    Unsupported {
        /// The item, handed back.
        item: T,
        /// The structure's name.
        structure: &'static str,
        /// What it cannot honour.
        what: &'static str,
    },
}

impl<T> PostError<T> {
    /// The item handed back.
    pub fn into_item(self) -> T {
        match self {
            PostError::Full(t) | PostError::Unsupported { item: t, .. } => t,
        }
    }
}

impl<T> fmt::Debug for PostError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PostError::Full(_) => f.write_str("Full(..)"),
            PostError::Unsupported {
                structure, what, ..
            } => write!(f, "Unsupported({structure}: {what})"),
        }
    }
}

/// A set of workers an item may run on: bit i for worker i.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Affinity(pub u64);

impl Affinity {
    /// Every worker.
    pub const ANY: Affinity = Affinity(u64::MAX);

    /// Only worker `w`; past the 64 workers a structure may have, no worker (every structure
    /// refuses the post as `Unsupported`) rather than another worker's bit.
    pub fn only(w: usize) -> Affinity {
        Affinity(if w < 64 { 1 << w } else { 0 })
    }

    /// Whether worker `w` may run the item.
    pub fn allows(self, w: usize) -> bool {
        w < 64 && self.0 >> w & 1 == 1
    }

    /// The mask restricted to `workers` workers.
    pub fn within(self, workers: usize) -> u64 {
        self.0 & all_workers(workers)
    }

    /// Whether every one of `workers` workers may run the item.
    pub fn is_any(self, workers: usize) -> bool {
        self.within(workers) == all_workers(workers)
    }
}

/// The mask of `workers` workers.
pub(crate) fn all_workers(workers: usize) -> u64 {
    if workers >= 64 {
        u64::MAX
    } else {
        (1u64 << workers) - 1
    }
}

/// The `k`-th (mod the count) set bit of a non-zero mask.
pub(crate) fn nth_set_bit(mask: u64, k: u64) -> usize {
    debug_assert!(mask != 0);
    let mut m = mask;
    for _ in 0..k % u64::from(mask.count_ones()) {
        m &= m - 1;
    }
    m.trailing_zeros() as usize
}

/// The first set bit of `mask` at or after `start`, cyclically over the 64 bits.
pub(crate) fn first_set_from(mask: u64, start: usize) -> Option<usize> {
    let r = mask.rotate_right(start as u32 % 64);
    (r != 0).then(|| (r.trailing_zeros() as usize + start) % 64)
}

/// How an item is posted: its priority and where it may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Post {
    /// Priority, 0 the highest; structures without priorities ignore it.
    pub priority: u8,
    /// The workers that may run the item.
    pub affinity: Affinity,
    /// The item's bits, read by the DDQ as preferred directions; a fresh draw when `None`.
    pub key: Option<u64>,
}

impl Default for Post {
    fn default() -> Post {
        Post {
            priority: DEFAULT_PRIORITY,
            affinity: Affinity::ANY,
            key: None,
        }
    }
}

impl Post {
    /// This post with priority `p` (0 the highest).
    pub fn priority(self, p: u8) -> Post {
        Post {
            priority: p,
            ..self
        }
    }

    /// This post restricted to the workers in `a`.
    pub fn affinity(self, a: Affinity) -> Post {
        Post {
            affinity: a,
            ..self
        }
    }
}

/// The state a client keeps between posts: its id (which fixes its static queues), how many
/// requests it has posted (the Sequential policy), a random stream, whether it is a worker
/// posting its own work, and how many more posts it sends past a full ring (the per-core
/// queues' injection lanes).
#[derive(Clone, Debug)]
pub struct Client {
    id: usize,
    sequence: u64,
    rng: u64,
    home: Option<usize>,
    spill: u32,
}

impl Client {
    /// Client number `id`, its random stream seeded from the id.
    pub fn new(id: usize) -> Client {
        Client::with_seed(id, 0x9e37_79b9_7f4a_7c15)
    }

    /// Client number `id` with a random stream from `seed`.
    pub fn with_seed(id: usize, seed: u64) -> Client {
        Client {
            id,
            sequence: 0,
            rng: smpsched_policy::mix::splitmix(
                seed ^ (id as u64).wrapping_mul(0xa076_1d64_78bd_642f),
            ) | 1,
            home: None,
            spill: 0,
        }
    }

    /// Worker `w` posting its own work (tasks spawned by tasks): per-worker structures keep it
    /// on `w`'s queue.
    pub fn worker(w: usize) -> Client {
        Client {
            home: Some(w),
            ..Client::new(w)
        }
    }

    /// The client's id.
    pub fn id(&self) -> usize {
        self.id
    }

    /// The worker this client is, if it is one.
    pub fn home(&self) -> Option<usize> {
        self.home
    }

    /// A fresh random number (xorshift64*).
    pub fn draw(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// How many more posts go past a full ring before the client tries the ring again.
    pub(crate) fn spill(&mut self) -> &mut u32 {
        &mut self.spill
    }

    /// How many posts this client made before, counting this one as made.
    pub(crate) fn next_sequence(&mut self) -> u64 {
        let s = self.sequence;
        self.sequence += 1;
        s
    }
}

/// Refuses a post whose mask the structure cannot honour (anything but every worker).
pub(crate) fn require_any<T>(
    structure: &'static str,
    workers: usize,
    item: T,
    how: &Post,
) -> Result<T, PostError<T>> {
    if how.affinity.is_any(workers) {
        Ok(item)
    } else {
        Err(PostError::Unsupported {
            item,
            structure,
            what: "an affinity mask narrower than every worker",
        })
    }
}

/// Panics with a clear message when a structure is built with an unusable worker count.
pub(crate) fn check_workers(workers: usize) {
    assert!(
        (1..=MAX_WORKERS).contains(&workers),
        "a ready queue needs 1 to {MAX_WORKERS} workers, not {workers}"
    );
}
