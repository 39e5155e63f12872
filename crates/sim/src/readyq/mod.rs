//! Ready-queue structures in simulation: Mach's priority run queue as data for the policies of
//! `sched` to hold (Black 1990, section 3); and the structures of DiBella et al. 1992 that live
//! in simulated memory and are operated by the threads' own programs, one protocol step at a
//! time — the multi-access mailboxes (section 2.1) and the Global / Distributed FCFS baselines
//! (section 2.2), built on a test-and-test-and-set spin lock; and George 1990's centralized dual
//! queue (section 1) and Distributed Dual Queues (section 2) on the GP1000's NUMA memory.

pub mod copy;
pub mod ddq;
pub mod ddq_layout;
pub mod dual;
pub mod fcfs;
pub mod multi_access;
pub mod multi_access_post;
#[cfg(test)]
mod multi_access_tests;
pub mod spin;

pub use ddq::{DdqInsert, DdqRemove, GeorgeLayout, Inserted, Scheme, Tuning};
pub use dual::{Ascend, Backoff, BackoffLock, DualAccess, DualLayout};
pub use fcfs::{FcfsLayout, FcfsPost, FcfsTake};
pub use multi_access::{CollectReply, Layout, Poll, PutReply, TakeRequest};
pub use multi_access_post::Post;
pub use spin::{Acquire, Pause, Spin, Step, TestMemory};

/// Mach's run queue of threads (Black 1990, section 3.1): 32 levels with a hint and a count,
/// the one implementation the real `MachRunQueue` also uses.
pub type RunQueue = smpsched_policy::run_queue::RunQueue<crate::ids::ThreadId>;

/// A ready-queue structure that lives in simulated memory, as `smpsched list` and `explain`
/// show it: the workloads that operate it choose it by their parameters.
#[derive(Clone, Copy, Debug)]
pub struct StructureInfo {
    /// Name, for `smpsched explain`.
    pub name: &'static str,
    /// One-line summary.
    pub summary: &'static str,
    /// What it is and how it is operated, a short paragraph.
    pub description: &'static str,
    /// The paper and section it implements.
    pub paper: &'static str,
    /// The workloads (and parameters) that use it.
    pub used_by: &'static str,
}

/// Every ready-queue structure in simulated memory, in the order `smpsched list` shows them.
pub const STRUCTURES: &[StructureInfo] = &[
    StructureInfo {
        name: "multi-access",
        summary: "DiBella's per-processor queues of mailboxes with a bitmap and two-level optimistic locking",
        description: "One queue per scheduler: MaxReqs mailboxes (an IN-box and an OUT-box each, \
                      with their own test-and-test-and-set locks) and a bitmap of filled \
                      IN-boxes under a bitmap lock; schedulers read the bitmap without the lock, \
                      then re-check under it; clients read an IN-box before locking it; a \
                      request's other words are copied under the IN-box lock; a mailbox stays \
                      in use until its client collects the reply, the OUT-box reserved for it \
                      (modules `readyq::multi_access`, `readyq::copy`).",
        paper: "DiBella et al. 1992 section 2.1",
        used_by: "dibella (scheduler = static | random | sequential | primary-*)",
    },
    StructureInfo {
        name: "fcfs",
        summary: "DiBella's Global FCFS queue and Anderson's Distributed FCFS queues, one lock each",
        description: "A ring of request words with head and tail under one test-and-test-and-set \
                      lock, a request's other words copied under it: one queue for all (Global) \
                      or one per scheduler (Distributed FCFS) (modules `readyq::fcfs`, \
                      `readyq::copy`).",
        paper: "DiBella et al. 1992 section 2.2",
        used_by: "dibella (scheduler = global | distributed-fcfs)",
    },
    StructureInfo {
        name: "central-dual-queue",
        summary: "George's centralized dual queue: tasks or waiting processors' spin words, one lock with exponential backoff",
        description: "One dual queue on processor 0's node holding either tasks or the spin \
                      words of waiting processors; a remove takes the lock with exponential \
                      backoff (counted per processor), dequeues a task or enqueues its spin word \
                      and spins on it locally; an insert hands a task to the first waiter by \
                      writing its spin word, or buffers it; a spawn that fails its single lock \
                      attempt runs the task locally (module `readyq::dual`, `readyq::ddq`).",
        paper: "George 1990 sections 1 and 1.1, Figure 1",
        used_by: "george-pc, george-sieve (structure = \"central\")",
    },
    StructureInfo {
        name: "ddq",
        summary: "George's Distributed Dual Queues: a tree of N/D counters over dual queues at the leaves, NUMA-placed",
        description: "A binary tree stored as an array replicated read-only on every node (the \
                      static D fields), whose dynamic N fields are words placed on processors \
                      below their nodes, over dual queues of size q at the leaves (H = \
                      ceil(log2(N/q))). Insert: read N at a root, reserve by an atomic decrement \
                      (undone if it found N <= 0), descend preferring children with idle \
                      processors (N > D), then room, then the item's bits, going back to the \
                      other branch when a reservation fails (Figure 4); at the leaf, wake a \
                      waiting processor by writing its spin word or buffer the item. Remove: \
                      dequeue at the home leaf or enqueue the spin word, ascend incrementing N \
                      (lazily, 2.3), spin. Several trees are polled round robin (2.4). Shape and \
                      direction choice come from `smpsched_policy::ddq`, as for the real queue \
                      (module `readyq::ddq`).",
        paper: "George 1990 sections 2-2.4, Figures 2-6",
        used_by: "george-pc, george-sieve (structure = \"ddq\", queue_size, height, trees, ascend, local_first)",
    },
];

/// The structure of that name.
pub fn structure(name: &str) -> Option<&'static StructureInfo> {
    STRUCTURES.iter().find(|s| s.name == name)
}
