//! NUMA placement: which node's memory serves a line, which node each processor sits on, and the
//! latency of a miss that follows (local or remote). Models the BBN GP1000 of George 1990,
//! section 1.2 (memory distributed over the nodes, remote:local access time 5:1).

use serde::{Deserialize, Serialize};

use super::config::{NodeMapping, NumaConfig, PAGE_BYTES};
use crate::ids::{Cycles, ProcId};

/// Where the memory of a newly allocated region lives. Ignored when NUMA is off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// No home node: misses cost `miss_cycles` from every processor (a UMA memory).
    Uma,
    /// On node `n` (taken modulo the node count).
    Node(u32),
    /// Page by page (4 KB) round robin over all nodes, starting at node 0 with the region's first
    /// page.
    Interleaved,
    /// On the node of the allocating processor (`owner`); with no owner, `Interleaved`.
    Local,
}

/// A region's resolved home.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Home {
    Uma,
    Node(u32),
    Interleaved { base: u64 },
}

/// Processor-to-node map and NUMA latencies.
#[derive(Clone, Debug)]
pub(crate) struct NumaMap {
    nodes: u32,
    node_of: Vec<u32>,
    local: Cycles,
    remote: Cycles,
}

impl NumaMap {
    /// The map for `processors` processors (`cfg` must have been validated).
    pub(crate) fn new(cfg: &NumaConfig, processors: u32) -> Self {
        let nodes = match cfg.mapping {
            NodeMapping::PerProcessor => processors.max(1),
            _ => cfg.nodes,
        };
        let node_of = (0..processors)
            .map(|p| match cfg.mapping {
                NodeMapping::PerProcessor => p,
                NodeMapping::Blocks => {
                    (u64::from(p) * u64::from(nodes) / u64::from(processors)) as u32
                }
                NodeMapping::RoundRobin => p % nodes,
            })
            .collect();
        NumaMap {
            nodes,
            node_of,
            local: cfg.local_cycles,
            remote: cfg.remote_cycles,
        }
    }

    /// The node processor `p` sits on.
    #[inline]
    pub(crate) fn node_of(&self, p: usize) -> u32 {
        self.node_of[p]
    }

    /// Resolves a placement for a region that will start at `base`.
    pub(crate) fn resolve(&self, placement: Placement, owner: Option<ProcId>, base: u64) -> Home {
        match (placement, owner) {
            (Placement::Uma, _) => Home::Uma,
            (Placement::Node(n), _) => Home::Node(n % self.nodes),
            (Placement::Local, Some(p)) => Home::Node(self.node_of(p.index())),
            (Placement::Interleaved, _) | (Placement::Local, None) => Home::Interleaved { base },
        }
    }

    /// The node serving `addr` in a region with home `home`.
    pub(crate) fn home_node(&self, home: Home, addr: u64) -> Option<u32> {
        match home {
            Home::Uma => None,
            Home::Node(n) => Some(n),
            Home::Interleaved { base } => {
                Some(((addr - base) / PAGE_BYTES % u64::from(self.nodes)) as u32)
            }
        }
    }

    /// Latency of a miss by processor `p` served by `node` (`None`: no home, `uma_cycles`), and
    /// whether it was remote.
    #[inline]
    pub(crate) fn miss_latency(
        &self,
        p: usize,
        node: Option<u32>,
        uma_cycles: Cycles,
    ) -> (Cycles, bool) {
        match node {
            None => (uma_cycles, false),
            Some(n) if n == self.node_of(p) => (self.local, false),
            Some(_) => (self.remote, true),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(nodes: u32, mapping: NodeMapping, processors: u32) -> NumaMap {
        NumaMap::new(
            &NumaConfig {
                nodes,
                mapping,
                ..NumaConfig::default()
            },
            processors,
        )
    }

    #[test]
    fn block_and_round_robin_mappings() {
        let b = map(4, NodeMapping::Blocks, 8);
        let r = map(4, NodeMapping::RoundRobin, 8);
        let blocks: Vec<u32> = (0..8).map(|p| b.node_of(p)).collect();
        let rr: Vec<u32> = (0..8).map(|p| r.node_of(p)).collect();
        assert_eq!(blocks, vec![0, 0, 1, 1, 2, 2, 3, 3]);
        assert_eq!(rr, vec![0, 1, 2, 3, 0, 1, 2, 3]);
        let uneven = map(3, NodeMapping::Blocks, 4);
        let v: Vec<u32> = (0..4).map(|p| uneven.node_of(p)).collect();
        assert_eq!(v, vec![0, 0, 1, 2]);
        // One node per processor, whatever `nodes` says (the GP1000 at 256 processors).
        let per = map(64, NodeMapping::PerProcessor, 256);
        assert_eq!((per.node_of(0), per.node_of(255)), (0, 255));
        assert_eq!(per.resolve(Placement::Node(200), None, 0), Home::Node(200));
    }

    #[test]
    fn placements_resolve() {
        let m = map(4, NodeMapping::Blocks, 4);
        assert_eq!(m.resolve(Placement::Node(6), None, 0), Home::Node(2));
        assert_eq!(
            m.resolve(Placement::Local, Some(ProcId(3)), 0),
            Home::Node(3)
        );
        assert_eq!(
            m.resolve(Placement::Local, None, 64),
            Home::Interleaved { base: 64 }
        );
        let h = m.resolve(Placement::Interleaved, None, 8192);
        assert_eq!(m.home_node(h, 8192), Some(0));
        assert_eq!(m.home_node(h, 8192 + 4095), Some(0));
        assert_eq!(m.home_node(h, 8192 + 4096), Some(1));
        assert_eq!(m.home_node(h, 8192 + 5 * 4096), Some(1));
        assert_eq!(m.home_node(Home::Uma, 8192), None);
        assert_eq!(m.miss_latency(1, Some(1), 20), (4, false));
        assert_eq!(m.miss_latency(1, Some(2), 20), (20, true));
        assert_eq!(m.miss_latency(1, None, 7), (7, false));
    }
}
