//! George's Distributed Dual Queues: the shape of the tree and the choice of direction
//! (George 1990, sections 2-2.4).
//!
//! A DDQ is a binary tree of counters (the N and D fields) over dual queues at the leaves. With
//! `workers` processors sharing leaves `per_leaf` at a time, the tree has height
//! H = ceil(log2(workers / per_leaf)) ([`height`]). The tree is stored as an array: node 1 is the
//! root, node k has children 2k and 2k+1, and the leaves are nodes `leaves..2*leaves`. An item's
//! bits are read as preferred directions, one per level ([`preferred`]); at a node an insert
//! prefers a child with idle processors below it (N > D), then a child with space (N > 0)
//! ([`choose_child`]).

/// A direction of descent at an internal node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The child 2k.
    Left,
    /// The child 2k+1.
    Right,
}

/// The tree height H = ceil(log2(ceil(workers / per_leaf))): 0 for a single leaf.
pub fn height(workers: usize, per_leaf: usize) -> u32 {
    let leaves = workers.max(1).div_ceil(per_leaf.max(1));
    leaves.next_power_of_two().trailing_zeros()
}

/// The number of leaves, 2^H.
pub fn leaves(workers: usize, per_leaf: usize) -> usize {
    1 << height(workers, per_leaf)
}

/// The leaf index (0-based among the leaves) that is worker `worker`'s HOME_LEAF.
pub fn home_leaf(worker: usize, per_leaf: usize) -> usize {
    worker / per_leaf.max(1)
}

/// The array index of leaf `leaf` in a tree with `leaves` leaves.
pub fn leaf_node(leaf: usize, leaves: usize) -> usize {
    leaves + leaf
}

/// Which of `trees` trees (clusters) worker `worker` of `workers` belongs to: contiguous blocks
/// of nearly equal size.
pub fn tree_of(worker: usize, workers: usize, trees: usize) -> usize {
    worker * trees.max(1) / workers.max(1)
}

/// The preferred direction at depth `level` (0 at the root) for an item with bits `bits`:
/// bit `level` set reads as Left, clear as Right (George: 101001... decodes as LRLRRL...).
pub fn preferred(bits: u64, level: u32) -> Side {
    if (bits >> (level % 64)) & 1 == 1 {
        Side::Left
    } else {
        Side::Right
    }
}

/// The child an insert should try first, from the children's N and D fields: a child with idle
/// processors below it (N > D) first, then one with buffer space (N > 0), the item's preferred
/// side breaking ties. `None` when neither child shows room (the insert waits and retries:
/// the starvation case of section 2.2).
pub fn choose_child(left: (i64, i64), right: (i64, i64), prefer: Side) -> Option<Side> {
    let idle = |(n, d): (i64, i64)| n > d;
    let room = |(n, _): (i64, i64)| n > 0;
    let (first, second, fs, ss) = match prefer {
        Side::Left => (left, right, Side::Left, Side::Right),
        Side::Right => (right, left, Side::Right, Side::Left),
    };
    if idle(first) {
        Some(fs)
    } else if idle(second) {
        Some(ss)
    } else if room(first) {
        Some(fs)
    } else if room(second) {
        Some(ss)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn height_matches_the_paper() {
        // 8 processors, one per queue: 8 leaves, H = 3; four per queue: H = 1 (2 queues).
        assert_eq!(height(8, 1), 3);
        assert_eq!(height(8, 4), 1);
        assert_eq!(height(8, 8), 0);
        assert_eq!(height(5, 2), 2, "ceil(log2(ceil(5/2)))");
        assert_eq!(leaves(5, 2), 4);
        assert_eq!(height(1, 1), 0);
    }

    #[test]
    fn home_leaves_and_trees() {
        assert_eq!(home_leaf(5, 2), 2);
        assert_eq!(leaf_node(2, 4), 6);
        let trees: Vec<usize> = (0..6).map(|w| tree_of(w, 6, 2)).collect();
        assert_eq!(trees, vec![0, 0, 0, 1, 1, 1]);
    }

    #[test]
    fn bits_decode_as_directions() {
        // 101001 read from bit 0: L R L R R L (the paper's example, lowest bit first).
        let bits = 0b100101;
        let d: Vec<Side> = (0..6).map(|l| preferred(bits, l)).collect();
        use Side::*;
        assert_eq!(d, vec![Left, Right, Left, Right, Right, Left]);
    }

    #[test]
    fn children_with_idle_processors_come_first() {
        use Side::*;
        assert_eq!(
            choose_child((2, 3), (5, 3), Left),
            Some(Right),
            "N > D: idle below"
        );
        assert_eq!(choose_child((2, 3), (1, 3), Right), Some(Right));
        assert_eq!(choose_child((2, 3), (0, 3), Right), Some(Left));
        assert_eq!(choose_child((0, 3), (-1, 3), Left), None);
    }
}
