//! Shared by the integration tests: every structure (and the interesting policy variants) behind
//! one constructor type, so that one suite runs over all of them (like tokio's `rt_test!`).

#![allow(dead_code)]

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use smpsched_policy::dibella::{ClientPolicy, SchedulerPolicy};
use smpsched_queues::{
    Client, Ddq, DdqConfig, DistributedFcfs, Global, MachRunQueue, MultiAccess, MultiAccessConfig,
    PerCore, Post, PostError, ReadyQueue, Take,
};

pub type Queue = Arc<dyn ReadyQueue<u64>>;

/// A structure under test: its name and how to build it for `n` workers.
pub type Maker = fn(usize) -> Queue;

fn ma(n: usize, scheduler: SchedulerPolicy, client: ClientPolicy, mailboxes: usize) -> Queue {
    Arc::new(MultiAccess::with_config(
        n,
        MultiAccessConfig {
            client,
            scheduler,
            mailboxes,
            bidirectional: true,
        },
    ))
}

/// Every structure, with a few policy and shape variants of the multi-access queue and the DDQ.
pub fn makers() -> Vec<(&'static str, Maker)> {
    vec![
        ("global", |n| Arc::new(Global::new(n))),
        ("distributed-fcfs", |n| Arc::new(DistributedFcfs::new(n))),
        ("distributed-fcfs-static", |n| {
            Arc::new(DistributedFcfs::with_client_policy(
                n,
                ClientPolicy::StaticFcfs,
            ))
        }),
        ("multi-access", |n| Arc::new(MultiAccess::new(n))),
        ("multi-access-static-static", |n| {
            ma(n, SchedulerPolicy::Static, ClientPolicy::Static, 64)
        }),
        ("multi-access-random-random", |n| {
            ma(n, SchedulerPolicy::Random, ClientPolicy::Random, 64)
        }),
        ("multi-access-fixed-fixed", |n| {
            ma(
                n,
                SchedulerPolicy::PrimaryFixed,
                ClientPolicy::PrimaryFixed { cutoff: 3 },
                128,
            )
        }),
        ("multi-access-pseq-seq", |n| {
            ma(
                n,
                SchedulerPolicy::PrimarySequential,
                ClientPolicy::Sequential,
                64,
            )
        }),
        ("multi-access-prand-prand", |n| {
            ma(
                n,
                SchedulerPolicy::PrimaryRandom,
                ClientPolicy::PrimaryRandom { cutoff: 2 },
                64,
            )
        }),
        ("ddq", |n| Arc::new(Ddq::new(n))),
        ("ddq-shared-leaves-two-trees", |n| {
            Arc::new(Ddq::with_config(
                n,
                DdqConfig {
                    per_leaf: 2,
                    capacity: 8,
                    trees: 2.min(n),
                },
            ))
        }),
        ("mach", |n| Arc::new(MachRunQueue::new(n))),
        ("per-core", |n| Arc::new(PerCore::new(n))),
        ("per-core-one-injection-lane", |n| {
            Arc::new(PerCore::with_injection_lanes(n, 1))
        }),
        // Two-slot rings: posts from outside spill to the overflow queues at once.
        ("per-core-two-slot-rings", |n| {
            Arc::new(PerCore::with_injection(n, 2, 2))
        }),
    ]
}

/// Whether the structure honours narrow affinity masks (the others refuse them).
pub fn honours_masks(name: &str) -> bool {
    name == "mach" || name.starts_with("per-core")
}

/// Posts, retrying while the structure is full.
pub fn post_retrying(q: &Queue, client: &mut Client, item: u64, how: Post) {
    let mut item = item;
    let mut tries = 0u64;
    loop {
        match q.post(client, item, how) {
            Ok(_) => return,
            Err(PostError::Full(back)) => {
                item = back;
                tries += 1;
                assert!(tries < 50_000_000, "post stayed full");
                std::thread::yield_now();
            }
            Err(e) => panic!("post refused: {e}"),
        }
    }
}

/// Takes everything left, with every worker, until the structure says it is empty.
pub fn drain(q: &Queue) -> Vec<(usize, u64)> {
    let mut out = Vec::new();
    for _ in 0..10_000 {
        for w in 0..q.workers() {
            loop {
                match q.take(w) {
                    Take::Item(x) => out.push((w, x)),
                    Take::Retry => continue,
                    Take::Empty => break,
                }
            }
        }
        if q.len_hint() == 0 {
            return out;
        }
    }
    panic!("could not drain: {} left", q.len_hint());
}

/// A bitset that records each item once and reports a second take.
pub struct Seen {
    bits: Vec<AtomicU64>,
    pub count: AtomicUsize,
}

impl Seen {
    pub fn new(n: usize) -> Seen {
        Seen {
            bits: (0..n.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
            count: AtomicUsize::new(0),
        }
    }

    /// Records item `i`; panics if it was already taken.
    pub fn mark(&self, i: u64) {
        let bit = 1u64 << (i % 64);
        let old = self.bits[(i / 64) as usize].fetch_or(bit, Ordering::Relaxed);
        assert!(old & bit == 0, "item {i} taken twice");
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    pub fn all_marked(&self, n: usize) -> bool {
        (0..n as u64)
            .all(|i| self.bits[(i / 64) as usize].load(Ordering::Relaxed) >> (i % 64) & 1 == 1)
    }
}

/// P producers post `items` distinct items (spread over them, with masks where the structure
/// honours them) while C consumers, one per worker, take until all are taken; checks that each
/// is taken exactly once and by a worker its mask allows.
pub fn producers_consumers(
    make: Maker,
    name: &str,
    producers: usize,
    workers: usize,
    items: usize,
) {
    let q = make(workers);
    let seen = Arc::new(Seen::new(items));
    let masks = honours_masks(name);
    std::thread::scope(|s| {
        for p in 0..producers {
            let q = q.clone();
            s.spawn(move || {
                let mut client = Client::new(p);
                let mut i = p;
                while i < items {
                    // Masks: item i may run on workers whose bit is set in mask(i).
                    let how = if masks {
                        Post::default()
                            .affinity(smpsched_queues::Affinity(mask_of(i as u64, workers)))
                    } else {
                        Post::default()
                    };
                    post_retrying(&q, &mut client, i as u64, how);
                    i += producers;
                }
            });
        }
        for w in 0..workers {
            let q = q.clone();
            let seen = seen.clone();
            s.spawn(move || {
                let mut idle = 0u64;
                while seen.count.load(Ordering::Relaxed) < items {
                    match q.take(w) {
                        Take::Item(x) => {
                            if masks {
                                assert!(mask_of(x, workers) >> w & 1 == 1, "mask violated");
                            }
                            seen.mark(x);
                            idle = 0;
                        }
                        Take::Retry => {}
                        Take::Empty => {
                            idle += 1;
                            if idle > 16 {
                                std::thread::yield_now();
                            }
                        }
                    }
                }
            });
        }
    });
    assert_eq!(seen.count.load(Ordering::Relaxed), items);
    assert!(seen.all_marked(items));
    assert_eq!(q.len_hint(), 0);
}

/// The affinity mask given to item `i` by the tests: every worker for most items, one or two
/// workers for the others.
pub fn mask_of(i: u64, workers: usize) -> u64 {
    let all = if workers >= 64 {
        u64::MAX
    } else {
        (1 << workers) - 1
    };
    match i % 4 {
        0 => 1 << (i / 4 % workers as u64),
        1 => (1 << (i / 4 % workers as u64)) | 1,
        _ => all,
    }
}
