//! Maxflow (Gupta, Tucker and Urushibara 1991, section 3.3): Goldberg and Tarjan's push-relabel
//! maximum flow, parallel, on a generated RMF network (see `maxflow_graph`).
//!
//! Each process has a local task queue of active nodes (nodes with excess) and goes to the one
//! global task queue when its own is empty; a newly active node goes to the global queue when
//! that is empty (so a process without work finds some), else to the local one: the global
//! queue is the place of last resort the paper describes, not a second work list. Queues and
//! nodes have fine-grain locks (busy-waiting or spin-then-block, in the line of the data they
//! guard) and a semaphore counts the global queue's nodes, so a process without work waits on
//! it. Discharging a node locks it and pushes flow along admissible arcs, each push
//! locking the head node too (in node order: a lower head is locked after releasing the node,
//! which is then taken again, so no two processes wait for each other); it relabels the node when
//! no arc is admissible and requeues it while it has excess. Heights start at exact distances to
//! the sink and a relabel that empties a height lifts the nodes above it (the gap heuristic), as
//! practical push-relabel codes do; without it the work of flow returning to the source grows
//! erratically with the network. The run ends when no node is active:
//! the last process to deactivate a node releases every waiter.
//!
//! The paper does not describe its network; its Maxflow is contended (Figure 4: 119 switches per
//! slice at no spin), which a small network that fits the caches is and a large one is not. So
//! the network may be solved `solves` times: the process that deactivates the last node of one
//! solution starts the next (every record carries the number of the solution that last wrote it,
//! so a record of an earlier solution reads as its initial value and no pass resets the network),
//! saturates the source's arcs again and releases the processes waiting for work.
//!
//! A process without work waits on a semaphore that counts the global queue's nodes, or with
//! `work_wait = "event"` on an event set while the queue holds a node (section 5 names both
//! kinds: a semaphore's signal moves one blocked process to the run queue, an event's all).
//!
//! The application obeys process control ([`Control`]): a process told to suspend first moves
//! its local queue to the global one. The last process records the flow that reached the sink as
//! `flow` and the nodes discharged over every solution as `discharges` (push-relabel's work
//! depends on the order in which nodes are discharged, so it changes with the processes).
//!
//! Memory layout: a 16-byte record (one line) per node (excess, height, lock word) and per arc
//! (head, reverse, residual capacity); queue heads and the active-node counter have a line each;
//! each process has a private area (its locals), 40 % of its references as in Table 1.
//!
//! Invariant: a node is in exactly one queue, or being discharged, exactly while it is active; its
//! excess and arcs change only under its lock (a pusher holds the head's lock), so the Rust state
//! the programs keep is what the simulated memory holds at the moment each operation is issued.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use serde::Deserialize;
use smpsched_sim::memory::Placement;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{SimError, Simulation, SyncKind, TaskId};

use super::maxflow_graph::{Graph, Heights};
use super::maxflow_process::{Process, FIELD};
use super::maxflow_shared::{Layout, Shared, RECORD};
pub use super::maxflow_shared::{Successors, WorkWait};
use super::{check_count, check_cpr, wait_policy, Control};
use crate::{Workload, WorkloadInfo};

/// Parameters of `maxflow`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Maxflow {
    /// Side of a frame of the RMF network (frame: side x side grid).
    pub side: u32,
    /// Frames of the RMF network.
    pub frames: u32,
    /// Largest arc capacity.
    pub max_cap: u64,
    /// Seed of the network generator.
    pub graph_seed: u64,
    /// Private references per discharge (the routine's locals).
    pub private_refs: u32,
    /// Processes.
    pub processes: u32,
    /// Spin before blocking on a queue lock or the work semaphore (absent: busy-wait).
    pub spin_cycles: Option<u64>,
    /// Hand the processor to a lock's holder instead of blocking.
    pub handoff: bool,
    /// Compute cycles per reference (Table 1: (194 x 0.64 - 44.9) / 48).
    pub compute_per_ref: f64,
    /// Times the network is solved, one solution after another.
    pub solves: u32,
    /// Where a node that a push made active goes.
    pub successors: Successors,
    /// How a process without work waits for the global queue to fill.
    pub work_wait: WorkWait,
}

impl Default for Maxflow {
    fn default() -> Self {
        Maxflow {
            side: 16,
            frames: 32,
            max_cap: 1_000,
            graph_seed: 1,
            private_refs: 24,
            processes: 12,
            spin_cycles: None,
            handoff: false,
            compute_per_ref: 1.65,
            solves: 1,
            successors: Successors::Local,
            work_wait: WorkWait::Semaphore,
        }
    }
}

impl Workload for Maxflow {
    fn threads(&self) -> u64 {
        u64::from(self.processes)
    }

    fn threads_field(&self) -> Option<&'static str> {
        Some("processes")
    }

    fn memory_bytes(&self) -> u64 {
        let nodes = u64::from(self.side).pow(2) * u64::from(self.frames) + 2;
        let arcs = 12 * nodes;
        (nodes + arcs + u64::from(self.processes) * 4 + 2) * RECORD
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        let g = Graph::rmf(self.side, self.frames, self.max_cap, self.graph_seed);
        let p = self.processes as usize;
        let mut alloc = |bytes: u64| sim.memory().alloc(bytes.max(1), Placement::Uma, None).base;
        let nodes = alloc(u64::from(g.n) * RECORD);
        let arcs = alloc(g.arcs.len() as u64 * RECORD);
        let queues = alloc((p as u64 + 1) * RECORD);
        let counter = alloc(RECORD);
        let privates: Vec<u64> = (0..p)
            .map(|_| alloc(u64::from(self.private_refs) * FIELD))
            .collect();
        let policy = wait_policy(self.spin_cycles, self.handoff);
        // Queue locks live in their queue's line, node locks in their node's record.
        let first_lock = sim
            .create_sync_at(SyncKind::Lock { holder: None }, policy, Some(queues))
            .0;
        for q in 1..=p as u64 {
            let at = Some(queues + q * RECORD);
            sim.create_sync_at(SyncKind::Lock { holder: None }, policy, at);
        }
        for v in 0..g.n {
            let at = Some(nodes + u64::from(v) * RECORD + 12);
            sim.create_sync_at(SyncKind::Lock { holder: None }, policy, at);
        }
        // The source's arcs are saturated before the processes start.
        let labels = g.distance_labels();
        let mut sh = Shared {
            capacity: g.arcs.iter().map(|a| a.cap).collect(),
            excess: vec![0; g.n as usize],
            height: Heights::new(labels.clone(), g.n),
            labels,
            solves_left: self.solves - 1,
            local: vec![VecDeque::new(); p],
            global: VecDeque::new(),
            active: 0,
            discharges: 0,
            done: false,
            control: Control::new(sim, self.processes),
            g,
        };
        sh.saturate_source();
        let kind = match self.work_wait {
            WorkWait::Semaphore => SyncKind::Semaphore {
                count: sh.global.len() as u64,
            },
            WorkWait::Event => SyncKind::Event {
                set: !sh.global.is_empty(),
            },
        };
        let work = sim.create_sync(kind, wait_policy(self.spin_cycles, false));
        let layout = Layout {
            nodes,
            arcs,
            queues,
            counter,
            first_lock,
            queues_n: p as u32 + 1,
            work,
        };
        let shared = Rc::new(RefCell::new(sh));
        for (rank, private) in (0..p).zip(privates) {
            sim.spawn(
                task,
                Box::new(Process::new(
                    rank,
                    layout,
                    private,
                    self.clone(),
                    shared.clone(),
                )),
            )?;
        }
        Ok(())
    }
}

/// Registry entry of `maxflow`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "maxflow",
    summary: "Gupta et al.'s Maxflow: parallel push-relabel with local and global task queues",
    description: "Goldberg-Tarjan push-relabel maximum flow on a generated RMF network: each \
                  process discharges active nodes from its local queue, or from the global queue \
                  when its own is empty (a newly active node goes to the global queue only when \
                  that is empty), under fine-grain node and queue locks that busy-wait or spin \
                  then block (locked in node order); solved `solves` times.",
    paper: "Gupta, Tucker and Urushibara 1991, section 3.3",
    params: crate::gupta_params!(
        "1.65",
        ParamInfo {
            name: "side",
            default: "16",
            doc: "side of a frame of the generated RMF network",
        },
        ParamInfo {
            name: "frames",
            default: "32",
            doc: "frames of the RMF network",
        },
        ParamInfo {
            name: "max_cap",
            default: "1000",
            doc: "largest arc capacity",
        },
        ParamInfo {
            name: "graph_seed",
            default: "1",
            doc: "seed of the network generator",
        },
        ParamInfo {
            name: "private_refs",
            default: "24",
            doc: "private references per discharge",
        },
        ParamInfo {
            name: "solves",
            default: "1",
            doc: "times the network is solved, one solution after another",
        },
        ParamInfo {
            name: "work_wait",
            default: "semaphore",
            doc: "what a process without work waits on: semaphore (each node on the global \
                  queue releases one waiter) or event (a node on the empty global queue \
                  releases every waiter)",
        },
        ParamInfo {
            name: "successors",
            default: "local",
            doc: "where a node a push activates goes: local (own queue; the global one when that \
                  is empty) or global (always the global queue)",
        },
    ),
    build: |t| {
        let w: Maxflow = toml::Value::Table(t).try_into()?;
        check_count("side", u64::from(w.side), 1_000)?;
        check_count("frames", u64::from(w.frames), 100_000)?;
        if u64::from(w.side).pow(2) * u64::from(w.frames) > 1_000_000 {
            return Err(serde::de::Error::custom(
                "side, frames: at most 1,000,000 nodes (side^2 x frames)",
            ));
        }
        check_count("max_cap", w.max_cap, 1 << 40)?;
        check_count("private_refs", u64::from(w.private_refs), 100_000)?;
        check_count("processes", u64::from(w.processes), 4096)?;
        check_cpr(w.compute_per_ref)?;
        check_count("solves", u64::from(w.solves), 100_000)?;
        Ok(Box::new(w))
    },
};
