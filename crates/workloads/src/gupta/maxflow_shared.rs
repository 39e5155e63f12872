//! What Maxflow's processes share (Gupta, Tucker and Urushibara 1991, section 3.3): the
//! network's state and the task queues as the programs keep them, and where the network, the
//! queues and their locks lie in simulated memory; and the two readings of the program the paper
//! leaves open (where a newly active node goes, what a process without work waits on).

use serde::Deserialize;
use std::collections::VecDeque;

use smpsched_sim::SyncId;

use super::maxflow_graph::{Graph, Heights};
use super::Control;

/// Bytes of a node or arc record (one line).
pub(super) const RECORD: u64 = 16;

/// What the processes share: the network's state and the queues.
pub(super) struct Shared {
    pub(super) g: Graph,
    /// The arcs' capacities before the first solution (restored for the next).
    pub(super) capacity: Vec<u64>,
    /// The exact distance labels the heights start from.
    pub(super) labels: Vec<u32>,
    /// Solutions still to start after the current one.
    pub(super) solves_left: u32,
    /// Each node's excess.
    pub(super) excess: Vec<u64>,
    /// Each node's height (with the gap heuristic's counts).
    pub(super) height: Heights,
    /// Each process's local task queue.
    pub(super) local: Vec<VecDeque<u32>>,
    /// The global task queue.
    pub(super) global: VecDeque<u32>,
    /// Active nodes (queued or being discharged).
    pub(super) active: u64,
    /// Nodes discharged so far, over every solution.
    pub(super) discharges: u64,
    /// Set when the last solution has no active node.
    pub(super) done: bool,
    /// Process control's state (section 8).
    pub(super) control: Control,
}

impl Shared {
    /// Saturates the source's arcs, activating their heads (on the global queue); returns how
    /// many nodes became active.
    pub(super) fn saturate_source(&mut self) -> u64 {
        let t = self.g.n - 1;
        let before = self.active;
        for a in self.g.arcs_of(0) {
            let (w, c, r) = (
                self.g.arcs[a].to,
                self.g.arcs[a].cap,
                self.g.arcs[a].rev as usize,
            );
            self.g.arcs[a].cap = 0;
            self.g.arcs[r].cap += c;
            if w != t && w != 0 && self.excess[w as usize] == 0 && c > 0 {
                self.global.push_back(w);
                self.active += 1;
            }
            self.excess[w as usize] += c;
        }
        self.active - before
    }

    /// Restores the network as it was before the first solution and saturates the source again;
    /// returns how many nodes became active.
    pub(super) fn restore(&mut self) -> u64 {
        for (arc, &cap) in self.g.arcs.iter_mut().zip(&self.capacity) {
            arc.cap = cap;
        }
        self.excess.iter_mut().for_each(|e| *e = 0);
        self.height = Heights::new(self.labels.clone(), self.g.n);
        self.saturate_source()
    }
}

/// Addresses and objects of the network in simulated memory.
#[derive(Clone, Copy)]
pub(super) struct Layout {
    /// The node records.
    pub(super) nodes: u64,
    /// The arc records.
    pub(super) arcs: u64,
    /// Queue-head lines: the locals', then the global's.
    pub(super) queues: u64,
    /// The active-node counter's line.
    pub(super) counter: u64,
    /// Queue locks (the locals', then the global's), then node locks: `first_lock + index`.
    pub(super) first_lock: u32,
    /// Queues (the processes' and the global one).
    pub(super) queues_n: u32,
    /// The semaphore counting the global queue's nodes.
    pub(super) work: SyncId,
}

impl Layout {
    /// Node v's record.
    pub(super) fn node(&self, v: u32) -> u64 {
        self.nodes + u64::from(v) * RECORD
    }
    /// Arc a's record.
    pub(super) fn arc(&self, a: usize) -> u64 {
        self.arcs + a as u64 * RECORD
    }
    /// Queue q's head line (q = processes: the global queue).
    pub(super) fn queue(&self, q: usize) -> u64 {
        self.queues + q as u64 * RECORD
    }
    /// Queue q's lock.
    pub(super) fn queue_lock(&self, q: usize) -> SyncId {
        SyncId(self.first_lock + q as u32)
    }
    /// Node v's lock.
    pub(super) fn node_lock(&self, v: u32) -> SyncId {
        SyncId(self.first_lock + self.queues_n + v)
    }
}

/// Where Maxflow puts a node that a push made active (section 3.3: "placing its successor nodes
/// onto a task queue", without saying which).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Successors {
    /// On the pushing process's local queue, and on the global queue only when that is empty
    /// (so that a process without work finds some).
    #[default]
    Local,
    /// Always on the global queue: every process shares every newly active node.
    Global,
}

/// How a Maxflow process whose queues are empty waits for work (section 5: "depending on the
/// type of the lock variable (semaphore or event), one or all blocked processes are moved to the
/// run queue").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WorkWait {
    /// A semaphore counts the global queue's nodes: each node put there releases one waiter.
    #[default]
    Semaphore,
    /// An event is set while the global queue holds a node: setting it releases every waiter,
    /// each of which looks at the queue and waits again if another took the node first.
    Event,
}
