//! George's Distributed Dual Queues (George 1990, sections 2-2.4).
//!
//! A DDQ is a binary tree of atomic counters over *dual queues* at the leaves. A dual queue holds
//! either data (items waiting for a worker) or waiting workers (items yet to come), never both.
//! Each internal node has a static D field (the capacity below it, assuming no waiting workers)
//! and a dynamic N field. Every worker has a HOME_LEAF.
//!
//! - *Insert* (a post) reads N at the root and, if positive, reserves a slot by an atomic
//!   decrement that must leave it non-negative (else it is undone), then descends, reserving at
//!   each level, preferring a child with idle workers below it (N > D), then one with room, the
//!   item's bits choosing among equals (`policy::ddq`). At the leaf it hands the item to the
//!   first waiting worker, through that worker's own slot, or buffers it.
//! - *Remove* (a take) works only at the home leaf: it dequeues data, or enqueues the worker as a
//!   waiter; either way one more item can now be inserted below every node on the path, so it
//!   *ascends*, incrementing N from the leaf to the root.
//! - *Lazy ascends* (2.3): while data remains after a dequeue the increment is only counted at
//!   the leaf; whoever takes the last item ascends with the accumulated count. A worker posting
//!   its own work first uses a lazily freed slot of its home leaf, without touching the tree.
//! - *Several trees* (2.4): workers are split into clusters, one tree each; an insert polls the
//!   roots round robin from the client's own tree.
//!
//! # Invariants
//!
//! N at a node never exceeds the number of items that can still be placed below it (free buffer
//! slots plus waiting workers); lazy and in-flight ascends only make N smaller. So an insert that
//! has reserved a node will find room in one of its children (perhaps after other inserts that
//! raced it settle: it then retries, the starvation case of 2.2), and one that reserved a leaf
//! finds a waiter or a free slot there. A waiting worker's slot is written only by the insert
//! that dequeued it from the leaf, and emptied only by that worker.

use std::collections::VecDeque;

use crossbeam_utils::CachePadded;
use smpsched_policy::ddq::{choose_child, height, home_leaf, leaf_node, preferred, tree_of, Side};

use crate::sync::{lock, spin, AtomicBool, AtomicI64, AtomicUsize, Mutex, Ordering};
use crate::{check_workers, require_any, Client, Post, PostError, ReadyQueue, Take, Wake};

/// The largest `capacity` a leaf may have: the D fields count a tree's whole capacity (up to
/// 64 leaves of it) in an `i64`, well within range at 2^32 a leaf.
pub const MAX_CAPACITY: usize = 1 << 32;

/// How a DDQ is shaped: workers per leaf (q), buffer slots per leaf, and the number of trees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DdqConfig {
    /// Workers sharing a leaf (the paper's q): H = ceil(log2(workers per tree / q)).
    pub per_leaf: usize,
    /// Items a leaf's dual queue can buffer (its D field).
    pub capacity: usize,
    /// Trees (clusters of workers) that inserts poll round robin.
    pub trees: usize,
}

impl Default for DdqConfig {
    /// One worker per leaf, 256 slots per leaf, one tree.
    fn default() -> DdqConfig {
        DdqConfig {
            per_leaf: 1,
            capacity: 256,
            trees: 1,
        }
    }
}

/// A leaf's dual queue: data, or waiting workers, and the count of lazily deferred ascends.
struct Dual<T> {
    data: VecDeque<T>,
    waiters: VecDeque<usize>,
    lazy: i64,
}

struct Tree<T> {
    /// N fields, indexed as a heap: node 1 is the root, leaves are `leaves..2*leaves`.
    n: Box<[CachePadded<AtomicI64>]>,
    /// D fields, static.
    d: Box<[i64]>,
    leaves: usize,
    duals: Box<[CachePadded<Mutex<Dual<T>>>]>,
    /// The global index of this tree's first worker.
    first_worker: usize,
}

/// A worker's spin/park slot: where an insert hands it an item while it waits.
struct Slot<T> {
    item: Mutex<Option<T>>,
    full: AtomicBool,
    waiting: AtomicBool,
}

/// A tree (or several) of atomic counters over dual queues, with home leaves and lazy ascends.
pub struct Ddq<T> {
    trees: Box<[Tree<T>]>,
    slots: Box<[CachePadded<Slot<T>>]>,
    /// For each worker: (tree, leaf within the tree).
    home: Box<[(usize, usize)]>,
    count: CachePadded<AtomicUsize>,
    config: DdqConfig,
}

impl<T> Ddq<T> {
    /// A DDQ for `workers` workers with the default shape (one worker per leaf, one tree).
    pub fn new(workers: usize) -> Ddq<T> {
        Self::with_config(workers, DdqConfig::default())
    }

    /// A DDQ with the given shape.
    ///
    /// # Panics
    ///
    /// If a count is zero, `capacity` is past [`MAX_CAPACITY`] or there are more trees than
    /// workers.
    pub fn with_config(workers: usize, config: DdqConfig) -> Ddq<T> {
        check_workers(workers);
        assert!(
            config.per_leaf > 0 && config.capacity > 0,
            "per_leaf and capacity must be > 0"
        );
        assert!(
            config.capacity <= MAX_CAPACITY,
            "a leaf's capacity is at most {MAX_CAPACITY}, not {}",
            config.capacity
        );
        assert!(
            (1..=workers).contains(&config.trees),
            "a DDQ needs 1 to {workers} trees"
        );
        let mut home = vec![(0, 0); workers];
        let mut trees = Vec::new();
        for t in 0..config.trees {
            let members: Vec<usize> = (0..workers)
                .filter(|&w| tree_of(w, workers, config.trees) == t)
                .collect();
            let size = members.len();
            let leaves = 1usize << height(size, config.per_leaf);
            let mut d = vec![0i64; 2 * leaves];
            for (i, &w) in members.iter().enumerate() {
                home[w] = (t, home_leaf(i, config.per_leaf));
            }
            for leaf in 0..leaves {
                let has_home = (0..size).any(|i| home_leaf(i, config.per_leaf) == leaf);
                d[leaf_node(leaf, leaves)] = if has_home { config.capacity as i64 } else { 0 };
            }
            for k in (1..leaves).rev() {
                d[k] = d[2 * k] + d[2 * k + 1];
            }
            trees.push(Tree {
                n: d.iter()
                    .map(|&x| CachePadded::new(AtomicI64::new(x)))
                    .collect(),
                d: d.into_boxed_slice(),
                leaves,
                duals: (0..leaves)
                    .map(|_| {
                        CachePadded::new(Mutex::new(Dual {
                            data: VecDeque::new(),
                            waiters: VecDeque::new(),
                            lazy: 0,
                        }))
                    })
                    .collect(),
                first_worker: members.first().copied().unwrap_or(0),
            });
        }
        Ddq {
            trees: trees.into_boxed_slice(),
            slots: (0..workers)
                .map(|_| {
                    CachePadded::new(Slot {
                        item: Mutex::new(None),
                        full: AtomicBool::new(false),
                        waiting: AtomicBool::new(false),
                    })
                })
                .collect(),
            home: home.into_boxed_slice(),
            count: CachePadded::new(AtomicUsize::new(0)),
            config,
        }
    }

    /// The shape in use.
    pub fn config(&self) -> DdqConfig {
        self.config
    }

    /// George's `reserve_processor`: decrement N if that leaves it non-negative, else undo.
    fn reserve(n: &AtomicI64) -> bool {
        if n.load(Ordering::Acquire) <= 0 {
            return false;
        }
        if n.fetch_sub(1, Ordering::AcqRel) > 0 {
            true
        } else {
            n.fetch_add(1, Ordering::AcqRel);
            false
        }
    }

    fn ascend(tree: &Tree<T>, leaf: usize, by: i64) {
        if by == 0 {
            return;
        }
        let mut node = leaf_node(leaf, tree.leaves);
        while node >= 1 {
            tree.n[node].fetch_add(by, Ordering::AcqRel);
            node >>= 1;
        }
    }

    /// Places `item` in leaf `leaf` of `tree`, whose slot is reserved: to a waiter or buffered.
    fn place(&self, tree: &Tree<T>, leaf: usize, item: T) -> Wake {
        let mut dual = lock(&tree.duals[leaf]);
        if let Some(w) = dual.waiters.pop_front() {
            drop(dual);
            let slot = &self.slots[w];
            *lock(&slot.item) = Some(item);
            self.count.fetch_add(1, Ordering::AcqRel);
            slot.full.store(true, Ordering::Release);
            Wake::Worker(w)
        } else {
            debug_assert!((dual.data.len() as i64) < tree.d[leaf_node(leaf, tree.leaves)]);
            dual.data.push_back(item);
            self.count.fetch_add(1, Ordering::AcqRel);
            Wake::None
        }
    }

    /// Insert into one tree: `Err(item)` when its root shows no room.
    fn insert(&self, tree: &Tree<T>, bits: u64, item: T) -> Result<Wake, T> {
        if !Self::reserve(&tree.n[1]) {
            return Err(item);
        }
        let mut node = 1;
        let mut level = 0;
        while node < tree.leaves {
            let (l, r) = (2 * node, 2 * node + 1);
            node = loop {
                let field = |k: usize| (tree.n[k].load(Ordering::Acquire), tree.d[k]);
                match choose_child(field(l), field(r), preferred(bits, level)) {
                    Some(side) => {
                        let c = if side == Side::Left { l } else { r };
                        if Self::reserve(&tree.n[c]) {
                            break c;
                        }
                    }
                    // Room below us is promised but not yet visible (2.2): look again.
                    None => spin(),
                }
            };
            level += 1;
        }
        Ok(self.place(tree, node - tree.leaves, item))
    }

    /// Takes the item in `worker`'s slot, if an insert has filled it.
    fn take_slot(&self, worker: usize) -> Option<T> {
        let slot = &self.slots[worker];
        if !slot.full.load(Ordering::Acquire) {
            return None;
        }
        let item = lock(&slot.item).take();
        slot.full.store(false, Ordering::Release);
        slot.waiting.store(false, Ordering::Release);
        self.count.fetch_sub(1, Ordering::AcqRel);
        item
    }
}

impl<T: Send> ReadyQueue<T> for Ddq<T> {
    fn name(&self) -> &'static str {
        "ddq"
    }

    fn workers(&self) -> usize {
        self.slots.len()
    }

    fn post(&self, client: &mut Client, item: T, how: Post) -> Result<Wake, PostError<T>> {
        let n = self.slots.len();
        let mut item = require_any("ddq", n, item, &how)?;
        // A worker first uses a lazily freed slot of its own home leaf (2.3).
        if let Some(w) = client.home().filter(|&w| w < n) {
            let (t, leaf) = self.home[w];
            let mut dual = lock(&self.trees[t].duals[leaf]);
            if dual.lazy > 0 && dual.waiters.is_empty() {
                dual.lazy -= 1;
                dual.data.push_back(item);
                self.count.fetch_add(1, Ordering::AcqRel);
                return Ok(Wake::None);
            }
        }
        let bits = match how.key {
            Some(k) => k,
            None => client.draw(),
        };
        let trees = self.trees.len();
        let start = match client.home() {
            Some(w) if w < n => self.home[w].0,
            _ => client.id() % trees,
        };
        for k in 0..trees {
            match self.insert(&self.trees[(start + k) % trees], bits, item) {
                Ok(wake) => return Ok(wake),
                Err(back) => item = back,
            }
        }
        Err(PostError::Full(item))
    }

    fn take(&self, worker: usize) -> Take<T> {
        if let Some(item) = self.take_slot(worker) {
            return Take::Item(item);
        }
        let slot = &self.slots[worker];
        if slot.waiting.load(Ordering::Acquire) {
            return Take::Empty; // still enqueued as a waiter at the home leaf
        }
        let (t, leaf) = self.home[worker];
        let tree = &self.trees[t];
        let mut dual = lock(&tree.duals[leaf]);
        if let Some(item) = dual.data.pop_front() {
            let by = if dual.data.is_empty() {
                let by = dual.lazy + 1;
                dual.lazy = 0;
                by
            } else {
                dual.lazy += 1;
                0
            };
            drop(dual);
            self.count.fetch_sub(1, Ordering::AcqRel);
            Self::ascend(tree, leaf, by);
            return Take::Item(item);
        }
        // No data: wait here. One more item can be absorbed below every node on the path.
        slot.waiting.store(true, Ordering::Release);
        dual.waiters.push_back(worker);
        let by = dual.lazy + 1;
        dual.lazy = 0;
        drop(dual);
        Self::ascend(tree, leaf, by);
        match self.take_slot(worker) {
            Some(item) => Take::Item(item),
            None => Take::Empty,
        }
    }

    fn len_hint(&self) -> usize {
        self.count.load(Ordering::Acquire)
    }

    fn has_work_for(&self, worker: usize) -> bool {
        let slot = &self.slots[worker];
        if slot.full.load(Ordering::SeqCst) {
            return true;
        }
        if slot.waiting.load(Ordering::SeqCst) {
            return false;
        }
        let (t, leaf) = self.home[worker];
        !lock(&self.trees[t].duals[leaf]).data.is_empty()
    }
}

impl<T> Ddq<T> {
    /// The N field at the root of tree `t` (for tests and the curious).
    pub fn root_n(&self, t: usize) -> i64 {
        self.trees[t].n[1].load(Ordering::Acquire)
    }

    /// The first worker of tree `t`.
    pub fn tree_first_worker(&self, t: usize) -> usize {
        self.trees[t].first_worker
    }
}
