//! DiBella's multi-access distributed ready queues (DiBella et al. 1992, sections 2.1-2.3).
//!
//! Each worker has a queue: an array of mailboxes and a bitmap with one bit per mailbox. A client
//! posts a request into a mailbox's IN-box and sets its bit; a scheduler searches bitmaps for a
//! set bit and claims it, then empties the IN-box. (The OUT-box, where the reply goes, belongs to
//! the request: see [`crate::requests`].) The paper's bitmap lock, held "only to set a single
//! bit", is replaced by atomic bit operations that keep its semantics: a claim is a `fetch_and`
//! that clears the bit and succeeds only if the bit was still set, so two schedulers that find
//! the same bit cannot both win, and the loser continues its search (optimistic
//! synchronization). Which queue a client posts to and in which queues, order and direction a
//! scheduler searches come from [`smpsched_policy::dibella`].
//!
//! # Invariants
//!
//! - A mailbox is *reserved* by a client when it sets the mailbox's bit in `reserved` (a second
//!   bitmap, so that clients find a free mailbox without locking); only the reserving client
//!   writes its IN-box, and then sets the bit in `bitmap`.
//! - A bit set in `bitmap` means the IN-box holds a request (it is set after the request is
//!   stored). The scheduler that clears it owns the request; it empties the IN-box and only
//!   then frees the mailbox by clearing the bit in `reserved`.
//! - Hence an IN-box is touched by one thread at a time; its mutex is never contended and exists
//!   only so that the crate needs no `unsafe`.
//! - A queue's length is the number of reserved mailboxes (the popcount of `reserved`): a
//!   mailbox is reserved before its bit is published and freed after its request is taken, so
//!   the length is never below the number of set bits. No separate counter is kept: it would
//!   add two atomic operations on a shared line to every post and take.
//! - Each scheduler remembers the mailbox it last serviced in its primary queue and in its
//!   secondary queues and searches from the next one, so every mailbox is eventually serviced.

use crossbeam_utils::CachePadded;
use smpsched_policy::dibella::{
    client_queue, next_mailbox, ClientPolicy, Direction, SchedulerPolicy, SearchOrder,
};

use crate::sync::{lock, AtomicU64, AtomicUsize, Mutex, Ordering};
use crate::{check_workers, require_any, Client, Post, PostError, ReadyQueue, Take, Wake};

/// The most mailboxes a queue may have (16 bitmap words).
pub const MAX_MAILBOXES: usize = 1024;

/// How a multi-access queue is set up: its client and scheduler policies, mailboxes per queue
/// and whether secondary queues are searched right to left.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MultiAccessConfig {
    /// The client (enqueuing) policy; must be compatible with `scheduler` (Table 3).
    pub client: ClientPolicy,
    /// The scheduler (dequeuing) policy.
    pub scheduler: SchedulerPolicy,
    /// Mailboxes per queue (MaxReqs; 32 in the paper), rounded up to a multiple of 64.
    pub mailboxes: usize,
    /// Bidirectional search: primary queues left to right, secondary queues right to left.
    pub bidirectional: bool,
}

impl Default for MultiAccessConfig {
    /// The paper's best pair (section 5.3): Sequential scheduler, Primary/Random client with a
    /// cutoff of 32, 256 mailboxes, bidirectional search.
    fn default() -> MultiAccessConfig {
        MultiAccessConfig {
            client: ClientPolicy::PrimaryRandom { cutoff: 32 },
            scheduler: SchedulerPolicy::Sequential,
            mailboxes: 256,
            bidirectional: true,
        }
    }
}

struct Queue<T> {
    bitmap: Box<[AtomicU64]>,
    reserved: Box<[AtomicU64]>,
    inbox: Box<[Mutex<Option<T>>]>,
}

impl<T> Queue<T> {
    /// Reserved mailboxes: requests posted and not yet taken (exact when quiescent).
    fn len(&self, order: Ordering) -> usize {
        self.reserved
            .iter()
            .map(|w| w.load(order).count_ones() as usize)
            .sum()
    }
}

/// What one scheduler remembers between searches.
struct SchedulerState {
    last_primary: AtomicUsize,
    last_secondary: AtomicUsize,
    cursor: AtomicUsize,
    rng: AtomicU64,
}

/// Per-worker arrays of mailboxes with bitmaps, claimed optimistically by atomic bit operations.
pub struct MultiAccess<T> {
    queues: Box<[CachePadded<Queue<T>>]>,
    schedulers: Box<[CachePadded<SchedulerState>]>,
    config: MultiAccessConfig,
}

impl<T> MultiAccess<T> {
    /// Multi-access queues for `workers` workers with the default (paper's best) policies.
    pub fn new(workers: usize) -> MultiAccess<T> {
        Self::with_config(workers, MultiAccessConfig::default())
    }

    /// Multi-access queues with the given policies.
    ///
    /// # Panics
    ///
    /// If the policy pair is incompatible (check it first with
    /// [`smpsched_policy::dibella::check_pair`]), or the worker or mailbox count is out of range.
    pub fn with_config(workers: usize, config: MultiAccessConfig) -> MultiAccess<T> {
        check_workers(workers);
        if let Err(e) = smpsched_policy::dibella::check_pair(config.scheduler, config.client) {
            panic!("{e}");
        }
        assert!(
            matches!(
                config.scheduler,
                SchedulerPolicy::Static
                    | SchedulerPolicy::Random
                    | SchedulerPolicy::Sequential
                    | SchedulerPolicy::PrimaryFixed
                    | SchedulerPolicy::PrimaryRandom
                    | SchedulerPolicy::PrimarySequential
            ),
            "multi-access queues take the first block of Table 3"
        );
        assert!(
            (1..=MAX_MAILBOXES).contains(&config.mailboxes),
            "mailboxes per queue: 1 to {MAX_MAILBOXES}"
        );
        let words = config.mailboxes.div_ceil(64);
        let config = MultiAccessConfig {
            mailboxes: words * 64,
            ..config
        };
        MultiAccess {
            queues: (0..workers)
                .map(|_| {
                    CachePadded::new(Queue {
                        bitmap: (0..words).map(|_| AtomicU64::new(0)).collect(),
                        reserved: (0..words).map(|_| AtomicU64::new(0)).collect(),
                        inbox: (0..words * 64).map(|_| Mutex::new(None)).collect(),
                    })
                })
                .collect(),
            schedulers: (0..workers)
                .map(|w| {
                    CachePadded::new(SchedulerState {
                        last_primary: AtomicUsize::new(words * 64 - 1),
                        last_secondary: AtomicUsize::new(0),
                        cursor: AtomicUsize::new(w + 1),
                        rng: AtomicU64::new(0x2545_f491_4f6c_dd1d ^ (w as u64 + 1) << 17),
                    })
                })
                .collect(),
            config,
        }
    }

    /// The policies and sizes in use.
    pub fn config(&self) -> MultiAccessConfig {
        self.config
    }

    /// Reserves a free mailbox of queue `q`, if any.
    fn reserve(&self, q: usize) -> Option<usize> {
        let queue = &self.queues[q];
        for (w, word) in queue.reserved.iter().enumerate() {
            let mut cur = word.load(Ordering::Relaxed);
            while cur != u64::MAX {
                let bit = (!cur).trailing_zeros();
                let old = word.fetch_or(1 << bit, Ordering::Acquire);
                if old & (1 << bit) == 0 {
                    return Some(w * 64 + bit as usize);
                }
                cur = old | (1 << bit);
            }
        }
        None
    }

    /// Searches queue `q` in direction `dir` from the remembered index `last`; returns the
    /// mailbox claimed and its request, and whether a claim was lost to another scheduler.
    fn search(&self, q: usize, dir: Direction, last: usize) -> (Option<(usize, T)>, bool) {
        let queue = &self.queues[q];
        let words = queue.bitmap.len();
        let mut snap = [0u64; MAX_MAILBOXES / 64];
        let mut any = 0;
        for (s, w) in snap.iter_mut().zip(queue.bitmap.iter()) {
            *s = w.load(Ordering::Acquire);
            any |= *s;
        }
        if any == 0 {
            return (None, false);
        }
        let mut lost = false;
        let mut from = last;
        while let Some(m) = next_mailbox(&snap[..words], from, dir) {
            let bit = 1u64 << (m % 64);
            let old = queue.bitmap[m / 64].fetch_and(!bit, Ordering::AcqRel);
            if old & bit != 0 {
                let request = lock(&queue.inbox[m]).take();
                queue.reserved[m / 64].fetch_and(!bit, Ordering::Release);
                let request = request.expect("a set bit means a stored request");
                return (Some((m, request)), lost);
            }
            // Another scheduler claimed it first: continue the search past it.
            lost = true;
            snap[m / 64] &= !bit;
            from = m;
        }
        (None, lost)
    }
}

impl<T: Send> ReadyQueue<T> for MultiAccess<T> {
    fn name(&self) -> &'static str {
        "multi-access"
    }

    fn workers(&self) -> usize {
        self.queues.len()
    }

    fn post(&self, client: &mut Client, item: T, how: Post) -> Result<Wake, PostError<T>> {
        let n = self.queues.len();
        let item = require_any("multi-access", n, item, &how)?;
        let q = match client.home() {
            Some(w) if w < n => w,
            _ => {
                let primary = smpsched_policy::dibella::client_primary(client.id(), n);
                let len = self.queues[primary].len(Ordering::Relaxed);
                let seq = client.next_sequence();
                let draw = client.draw();
                client_queue(self.config.client, client.id(), seq, n, len, draw)
            }
        };
        let Some(m) = self.reserve(q) else {
            return Err(PostError::Full(item));
        };
        let queue = &self.queues[q];
        *lock(&queue.inbox[m]) = Some(item);
        queue.bitmap[m / 64].fetch_or(1 << (m % 64), Ordering::Release);
        Ok(if self.config.scheduler.searches_all() {
            Wake::Prefer(q)
        } else {
            Wake::Worker(q)
        })
    }

    fn take(&self, worker: usize) -> Take<T> {
        let n = self.queues.len();
        let me = &self.schedulers[worker];
        let draw = {
            let mut x = me.rng.load(Ordering::Relaxed);
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            me.rng.store(x, Ordering::Relaxed);
            x
        };
        let order = SearchOrder::new(
            self.config.scheduler,
            worker,
            n,
            me.cursor.load(Ordering::Relaxed),
            draw,
            self.config.bidirectional,
        );
        let mut lost = false;
        for (q, dir) in order {
            let remembered = if q == worker {
                &me.last_primary
            } else {
                &me.last_secondary
            };
            let (found, l) = self.search(q, dir, remembered.load(Ordering::Relaxed));
            lost |= l;
            if let Some((m, request)) = found {
                remembered.store(m, Ordering::Relaxed);
                if q != worker {
                    me.cursor.store(q, Ordering::Relaxed);
                }
                return Take::Item(request);
            }
        }
        if lost {
            Take::Retry
        } else {
            Take::Empty
        }
    }

    fn len_hint(&self) -> usize {
        self.queues.iter().map(|q| q.len(Ordering::Acquire)).sum()
    }

    fn has_work_for(&self, worker: usize) -> bool {
        let sees = |q: usize| self.queues[q].len(Ordering::SeqCst) > 0;
        match self.config.scheduler {
            SchedulerPolicy::Static => sees(worker),
            SchedulerPolicy::PrimaryFixed => {
                let n = self.queues.len();
                sees(worker)
                    || sees(smpsched_policy::dibella::scheduler_fixed_secondary(
                        worker, n,
                    ))
            }
            _ => (0..self.queues.len()).any(sees),
        }
    }
}
