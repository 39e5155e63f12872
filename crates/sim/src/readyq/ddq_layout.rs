//! Where George 1990's structures lie in the simulated GP1000's memory (section 2.2): the
//! centralized dual queue on processor 0's node, or DDQ trees whose shape and home leaves come
//! from [`smpsched_policy::ddq`] (the real queue's decisions), each N field on a processor that
//! may wait below its node, each leaf queue on its first home processor, each spin word on its
//! own processor. The static D fields are the programs' read-only copy of the array.

use smpsched_policy::ddq;

use super::dual::DualLayout;

/// One tree: its processors, its shape, and where its N words and leaf queues lie.
#[derive(Clone, Debug)]
pub struct Tree {
    /// The first processor of the tree's cluster.
    pub first: usize,
    /// Processors of the cluster.
    pub workers: usize,
    /// Leaves, 2^H.
    pub leaves: usize,
    /// Height H.
    pub height: u32,
    /// Deficit (D - N) word of each node, by heap index (index 0 unused).
    pub n: Vec<u64>,
    /// Static D field of each node, by heap index.
    pub d: Vec<i64>,
    /// The processor each node's N word is placed on, by heap index.
    pub n_home: Vec<usize>,
    /// Each leaf's dual queue.
    pub queues: Vec<DualLayout>,
}

impl Tree {
    /// The N field of node `k`, given the deficit word's value.
    pub fn n_of(&self, k: usize, deficit: u64) -> i64 {
        self.d[k] - deficit as i64
    }
}

/// The structure the processors share: one centralized dual queue, or DDQ trees.
#[derive(Clone, Debug)]
pub enum Scheme {
    /// One dual queue on processor 0 (section 1).
    Central(DualLayout),
    /// Trees of counters over dual queues (section 2).
    Trees(Vec<Tree>),
}

/// Where everything of a centralized queue or a DDQ lies, and each processor's home.
#[derive(Clone, Debug)]
pub struct GeorgeLayout {
    /// The structure.
    pub scheme: Scheme,
    /// Each processor's spin word, on its own node.
    pub spin: Vec<u64>,
    /// Each processor's (tree, leaf).
    pub home: Vec<(usize, usize)>,
}

/// The processor, among those of a tree's `leaves` leaves of `q` processors from `first`, on
/// which node `k` (heap index) is placed: the first processor of the leaf in the middle of the
/// node's range, so that nodes spread over the processors that may wait below them (2.2).
fn node_home(k: usize, leaves: usize, q: usize, first: usize, workers: usize) -> usize {
    let depth = usize::BITS - 1 - k.leading_zeros();
    let width = leaves >> depth;
    let lo = (k << (leaves.trailing_zeros() - depth)) - leaves;
    first + ((lo + width / 2) * q).min(workers - 1)
}

impl GeorgeLayout {
    /// A centralized dual queue buffering `capacity` tasks, allocated by `alloc(bytes,
    /// processor)` (which returns the base address of memory placed on that processor's node),
    /// for `workers` processors.
    pub fn central(
        workers: usize,
        capacity: u64,
        alloc: &mut dyn FnMut(u64, usize) -> u64,
    ) -> Self {
        let slots = capacity.max(workers as u64);
        let q = DualLayout::new(alloc(DualLayout::bytes(slots), 0), capacity, slots);
        GeorgeLayout {
            scheme: Scheme::Central(q),
            spin: (0..workers).map(|p| alloc(16, p)).collect(),
            home: vec![(0, 0); workers],
        }
    }

    /// DDQ trees for `workers` processors (processor p is worker p), `trees` clusters, queue
    /// size `q` (processors per leaf and data items per leaf queue).
    pub fn trees(
        workers: usize,
        q: usize,
        trees: usize,
        alloc: &mut dyn FnMut(u64, usize) -> u64,
    ) -> Self {
        let trees = trees.clamp(1, workers.max(1));
        let mut home = vec![(0, 0); workers];
        let mut out = Vec::with_capacity(trees);
        for t in 0..trees {
            let members: Vec<usize> = (0..workers)
                .filter(|&w| ddq::tree_of(w, workers, trees) == t)
                .collect();
            let (first, n) = (members[0], members.len());
            let height = ddq::height(n, q);
            let leaves = ddq::leaves(n, q);
            for (i, &w) in members.iter().enumerate() {
                home[w] = (t, ddq::home_leaf(i, q));
            }
            let mut d = vec![0i64; 2 * leaves];
            let mut n_home = vec![first; 2 * leaves];
            let mut queues = Vec::with_capacity(leaves);
            for leaf in 0..leaves {
                let cap = if leaf * q < n { q as u64 } else { 0 };
                let p = first + (leaf * q).min(n - 1);
                queues.push(DualLayout::new(
                    alloc(DualLayout::bytes(q as u64), p),
                    cap,
                    q as u64,
                ));
                d[leaves + leaf] = cap as i64;
            }
            for k in (1..leaves).rev() {
                d[k] = d[2 * k] + d[2 * k + 1];
            }
            let mut nw = vec![0u64; 2 * leaves];
            for k in 1..2 * leaves {
                n_home[k] = node_home(k, leaves, q, first, n);
                nw[k] = alloc(16, n_home[k]);
            }
            out.push(Tree {
                first,
                workers: n,
                leaves,
                height,
                n: nw,
                d,
                n_home,
                queues,
            });
        }
        GeorgeLayout {
            scheme: Scheme::Trees(out),
            spin: (0..workers).map(|p| alloc(16, p)).collect(),
            home,
        }
    }

    /// Trees (0 for the centralized queue).
    pub fn tree_count(&self) -> usize {
        match &self.scheme {
            Scheme::Central(_) => 0,
            Scheme::Trees(t) => t.len(),
        }
    }

    /// Bytes a DDQ (or a centralized queue when `trees` is 0) for `workers` processors occupies,
    /// counting the whole pages each object is allocated in.
    pub fn bytes(workers: usize, q: usize, trees: usize, capacity: u64) -> u64 {
        let objects = if trees == 0 {
            1 + workers
        } else {
            workers + 3 * ddq::leaves(workers, q).max(trees)
        };
        let queue = DualLayout::bytes(capacity.max(workers as u64));
        objects as u64 * 4096 + queue
    }
}
