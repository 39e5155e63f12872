//! The flow network Maxflow runs on (Gupta, Tucker and Urushibara 1991, section 3.3): a
//! generated network (the paper does not say which; we use the RMF family) in residual form, and a sequential maximum flow (Edmonds-Karp)
//! that the tests compare the parallel push-relabel's result with.
//!
//! The graph is held in compressed form: the arcs of node v are `arcs[first[v]..first[v + 1]]`;
//! every arc has its reverse (`rev`), whose capacity is 0 unless the graph has both directions.
//! Node 0 is the source and node n - 1 the sink.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One residual arc.
#[derive(Clone, Copy, Debug)]
pub struct Arc {
    /// Head node.
    pub to: u32,
    /// Index of the reverse arc.
    pub rev: u32,
    /// Residual capacity.
    pub cap: u64,
}

/// A flow network in residual form.
#[derive(Clone, Debug)]
pub struct Graph {
    /// Nodes.
    pub n: u32,
    /// Where each node's arcs start (length n + 1).
    pub first: Vec<u32>,
    /// The arcs, grouped by tail.
    pub arcs: Vec<Arc>,
}

impl Graph {
    /// A Goldfarb-Grigoriadis RMF network ("random maximum flow", the family on which push-relabel
    /// works hardest): `frames` square grids of `side` x `side` nodes; grid neighbours are joined
    /// both ways with capacity `max_cap * side^2`; each node of a frame has an arc to a random
    /// node of the next frame (a random permutation) with capacity drawn from 1..=`max_cap`.
    /// The source feeds every node of the first frame and every node of the last feeds the sink,
    /// both with the large capacity, so the cut lies between frames.
    pub fn rmf(side: u32, frames: u32, max_cap: u64, seed: u64) -> Graph {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let per = side * side;
        let n = per * frames + 2;
        let (s, t) = (0, n - 1);
        let big = max_cap.saturating_mul(u64::from(per));
        let node = |k: u32, x: u32, y: u32| 1 + k * per + x * side + y;
        let mut edges: Vec<(u32, u32, u64)> = Vec::new();
        for k in 0..frames {
            for x in 0..side {
                for y in 0..side {
                    let v = node(k, x, y);
                    if x + 1 < side {
                        edges.push((v, node(k, x + 1, y), big));
                        edges.push((node(k, x + 1, y), v, big));
                    }
                    if y + 1 < side {
                        edges.push((v, node(k, x, y + 1), big));
                        edges.push((node(k, x, y + 1), v, big));
                    }
                }
            }
            if k + 1 < frames {
                let mut perm: Vec<u32> = (0..per).collect();
                for i in (1..perm.len()).rev() {
                    perm.swap(i, rng.random_range(0..=i));
                }
                for (i, &j) in perm.iter().enumerate() {
                    let cap = rng.random_range(1..=max_cap);
                    edges.push((1 + k * per + i as u32, 1 + (k + 1) * per + j, cap));
                }
            }
        }
        for i in 0..per {
            edges.push((s, 1 + i, big));
            edges.push((1 + (frames - 1) * per + i, t, big));
        }
        Graph::from_edges(n, &edges)
    }

    /// The residual network of these edges (tail, head, capacity).
    pub fn from_edges(n: u32, edges: &[(u32, u32, u64)]) -> Graph {
        let mut count = vec![0u32; n as usize + 1];
        for &(v, w, _) in edges {
            count[v as usize] += 1;
            count[w as usize] += 1;
        }
        let mut first = vec![0u32; n as usize + 1];
        for v in 0..n as usize {
            first[v + 1] = first[v] + count[v];
        }
        let mut fill = first.clone();
        let mut arcs = vec![
            Arc {
                to: 0,
                rev: 0,
                cap: 0
            };
            first[n as usize] as usize
        ];
        for &(v, w, c) in edges {
            let (a, b) = (fill[v as usize], fill[w as usize]);
            fill[v as usize] += 1;
            fill[w as usize] += 1;
            arcs[a as usize] = Arc {
                to: w,
                rev: b,
                cap: c,
            };
            arcs[b as usize] = Arc {
                to: v,
                rev: a,
                cap: 0,
            };
        }
        Graph { n, first, arcs }
    }

    /// The arc indices of node `v`.
    pub fn arcs_of(&self, v: u32) -> std::ops::Range<usize> {
        self.first[v as usize] as usize..self.first[v as usize + 1] as usize
    }

    /// Exact distance labels: each node's residual distance to the sink (BFS backwards), n for
    /// the source and for nodes that cannot reach the sink (the usual start of push-relabel).
    pub fn distance_labels(&self) -> Vec<u32> {
        let n = self.n as usize;
        let mut h = vec![self.n; n];
        let t = n - 1;
        h[t] = 0;
        let mut queue = std::collections::VecDeque::from([t]);
        while let Some(w) = queue.pop_front() {
            for a in self.arcs_of(w as u32) {
                // Arc w -> v's reverse is v -> w: v reaches w if that arc has capacity.
                let v = self.arcs[a].to as usize;
                let back = self.arcs[self.arcs[a].rev as usize];
                if back.cap > 0 && h[v] == self.n && v != 0 {
                    h[v] = h[w] + 1;
                    queue.push_back(v);
                }
            }
        }
        h[0] = self.n;
        h
    }

    /// The maximum flow from node 0 to node n - 1 (Edmonds-Karp on a copy).
    pub fn max_flow(&self) -> u64 {
        let mut g = self.clone();
        let (s, t) = (0usize, self.n as usize - 1);
        let mut total = 0;
        loop {
            let mut via = vec![usize::MAX; g.n as usize];
            let mut queue = std::collections::VecDeque::from([s]);
            via[s] = usize::MAX - 1;
            while let Some(v) = queue.pop_front() {
                for a in g.arcs_of(v as u32) {
                    let w = g.arcs[a].to as usize;
                    if g.arcs[a].cap > 0 && via[w] == usize::MAX {
                        via[w] = a;
                        queue.push_back(w);
                    }
                }
            }
            if via[t] == usize::MAX {
                return total;
            }
            let mut push = u64::MAX;
            let mut w = t;
            while w != s {
                let a = via[w];
                push = push.min(g.arcs[a].cap);
                w = g.arcs[g.arcs[a].rev as usize].to as usize;
            }
            let mut w = t;
            while w != s {
                let a = via[w];
                g.arcs[a].cap -= push;
                let r = g.arcs[a].rev as usize;
                g.arcs[r].cap += push;
                w = g.arcs[r].to as usize;
            }
            total += push;
        }
    }
}

/// Heights of a push-relabel run with the gap heuristic (Cherkassky and Goldberg): how many
/// nodes are at each height, so that when the last node leaves a height below n, every node
/// between it and n (which can no longer reach the sink) is lifted to n + 1 at once.
#[derive(Clone, Debug)]
pub struct Heights {
    /// Each node's height.
    pub h: Vec<u32>,
    count: Vec<u32>,
    n: u32,
}

impl Heights {
    /// Heights starting at `h` for a network of `n` nodes.
    pub fn new(h: Vec<u32>, n: u32) -> Heights {
        let mut count = vec![0; 2 * n as usize + 2];
        for &x in &h {
            count[x as usize] += 1;
        }
        Heights { h, count, n }
    }

    /// Sets v's height to `new`; returns how many nodes a gap lifted (0 if none).
    pub fn relabel(&mut self, v: u32, new: u32) -> u32 {
        let new = new.min(2 * self.n);
        let old = self.h[v as usize];
        self.count[old as usize] -= 1;
        self.h[v as usize] = new;
        self.count[new as usize] += 1;
        if self.count[old as usize] > 0 || old >= self.n {
            return 0;
        }
        let mut lifted = 0;
        for x in self.h.iter_mut() {
            if *x > old && *x < self.n {
                self.count[*x as usize] -= 1;
                *x = self.n + 1;
                self.count[*x as usize] += 1;
                lifted += 1;
            }
        }
        lifted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_small_network_has_its_known_maximum_flow() {
        // Two disjoint paths of capacity 3 and 2 plus a cross arc: max flow 5.
        let g = Graph::from_edges(4, &[(0, 1, 3), (0, 2, 2), (1, 3, 4), (2, 3, 2), (1, 2, 1)]);
        assert_eq!(g.max_flow(), 5);
    }

    #[test]
    fn distance_labels_count_residual_arcs_to_the_sink() {
        let g = Graph::from_edges(4, &[(0, 1, 3), (1, 2, 1), (2, 3, 1)]);
        assert_eq!(g.distance_labels(), vec![4, 2, 1, 0]);
    }

    #[test]
    fn a_gap_lifts_the_nodes_above_it() {
        let mut h = Heights::new(vec![10, 3, 2, 1, 0], 5);
        // Node 2 leaves height 2: nodes at 3 can no longer reach the sink.
        assert_eq!(h.relabel(2, 4), 2);
        assert_eq!(h.h, vec![10, 6, 6, 1, 0]);
    }

    #[test]
    fn every_arc_has_its_reverse() {
        let g = Graph::rmf(3, 3, 100, 7);
        for (i, a) in g.arcs.iter().enumerate() {
            let r = g.arcs[a.rev as usize];
            assert_eq!(r.rev as usize, i);
        }
        assert!(g.max_flow() > 0);
    }
}
