//! LU (Gupta, Tucker and Urushibara 1991, section 3.2): LU decomposition of a dense n x n matrix
//! of doubles (256 x 256, 512 KB, in the paper), stored by columns, columns interleaved among the
//! processes (column j belongs to process j mod P).
//!
//! Working left to right, pivot column k, once modified by every column to its left and
//! normalized by its owner, is used by every process to modify each of its own columns to the
//! right of k. Each column has an event its owner sets when it is ready; the others wait on it
//! (busy-waiting or spin-then-block, with an optional handoff to the owner, who is known). An
//! owner normalizes and publishes column k+1 as soon as it has applied pivot k to it, before its
//! other columns (lookahead), as the fine-grained producer/consumer pattern of the paper needs.
//!
//! References per (pivot k, column j): the pivot below the diagonal is read, `col_j[k]` is read
//! and col_j below the diagonal is read-modified-written, so the whole decomposition makes about
//! n^3 references (17 M at n = 256: Table 1's figure). With 12 processes each one's columns fit
//! its 64 KB cache; with one they do not (the superlinear speedup of Table 1).

use std::cell::RefCell;
use std::rc::Rc;

use serde::Deserialize;
use smpsched_sim::memory::{AccessKind, Placement};
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{
    Op, Program, SimError, Simulation, SyncId, SyncKind, TaskId, ThreadCtx, ThreadId,
};

use super::{check_count, check_cpr, wait_policy, Plan, WORD};
use crate::{Workload, WorkloadInfo};

/// Parameters of `lu`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Lu {
    /// Matrix order n.
    pub n: u32,
    /// Processes.
    pub processes: u32,
    /// Spin before blocking on a column's event (absent: busy-wait).
    pub spin_cycles: Option<u64>,
    /// Hand the processor to a column's owner before waiting for it.
    pub handoff: bool,
    /// Compute cycles per reference (Table 1: (93 x 0.81 - 16.3) / 17).
    pub compute_per_ref: f64,
    /// Bytes between the end of one column and the start of the next (the matrix's layout: 0
    /// stores the columns back to back, so in a set-associative cache a process's columns,
    /// 12 columns apart, fall on few sets).
    pub column_pad: u32,
}

impl Default for Lu {
    fn default() -> Self {
        Lu {
            n: 256,
            processes: 12,
            spin_cycles: None,
            handoff: false,
            compute_per_ref: 3.47,
            column_pad: 0,
        }
    }
}

/// What the processes share.
struct Shared {
    n: u32,
    /// Bytes from one column's start to the next's.
    stride: u64,
    base: u64,
    /// The first column's event; column j's is `first + j`.
    first: u32,
    threads: Vec<ThreadId>,
    cpr: f64,
}

impl Shared {
    fn col(&self, j: u32) -> u64 {
        self.base + u64::from(j) * self.stride
    }
    fn event(&self, j: u32) -> SyncId {
        SyncId(self.first + j)
    }
}

impl Lu {
    /// Bytes from one column's start to the next's.
    fn stride(&self) -> u64 {
        u64::from(self.n) * WORD + u64::from(self.column_pad)
    }
}

impl Workload for Lu {
    fn threads(&self) -> u64 {
        u64::from(self.processes)
    }

    fn threads_field(&self) -> Option<&'static str> {
        Some("processes")
    }

    fn memory_bytes(&self) -> u64 {
        u64::from(self.n) * self.stride()
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        let base = sim
            .memory()
            .alloc(self.memory_bytes(), Placement::Uma, None)
            .base;
        let policy = wait_policy(self.spin_cycles, self.handoff);
        let first = sim.create_sync(SyncKind::Event { set: false }, policy).0;
        for _ in 1..self.n {
            sim.create_sync(SyncKind::Event { set: false }, policy);
        }
        let shared = Rc::new(RefCell::new(Shared {
            n: self.n,
            stride: self.stride(),
            base,
            first,
            threads: Vec::new(),
            cpr: self.compute_per_ref,
        }));
        for rank in 0..self.processes {
            let t = sim.spawn(
                task,
                Box::new(Process {
                    rank,
                    procs: self.processes,
                    k: 0,
                    normalized: 0,
                    plan: Plan::default(),
                    shared: shared.clone(),
                }),
            )?;
            shared.borrow_mut().threads.push(t);
        }
        // Each column's owner is the thread a handing-off waiter runs.
        let s = shared.borrow();
        for j in 0..self.n {
            sim.set_sync_owner(s.event(j), Some(s.threads[(j % self.processes) as usize]));
        }
        Ok(())
    }
}

/// One LU process.
struct Process {
    rank: u32,
    procs: u32,
    /// The next pivot column to apply.
    k: u32,
    /// Own columns below this one have been normalized and published.
    normalized: u32,
    plan: Plan,
    shared: Rc<RefCell<Shared>>,
}

impl Process {
    fn owner(&self, j: u32) -> u32 {
        j % self.procs
    }

    /// Plans column j's element in row r read and the elements below it rewritten; returns
    /// the references.
    fn rewrite_below(&mut self, s: &Shared, j: u32, r: u32) -> u64 {
        let col = s.col(j);
        let below = u64::from(s.n - r - 1) * WORD;
        let rmw = AccessKind::ReadModifyWrite;
        self.plan
            .sweep(col + u64::from(r) * WORD, WORD, AccessKind::Read, 1)
            + self
                .plan
                .sweep(col + u64::from(r + 1) * WORD, below, rmw, 1)
    }

    /// Normalizes own column j (divides below the diagonal by the pivot) and publishes it.
    fn normalize(&mut self, s: &Shared, j: u32) {
        let refs = self.rewrite_below(s, j, j);
        self.plan.compute(refs, s.cpr);
        self.plan.push(Op::Signal(s.event(j)));
        self.normalized = j + 1;
    }

    /// Plans pivot k applied to every own column right of it.
    fn apply(&mut self, s: &Shared) {
        let k = self.k;
        if self.owner(k) == self.rank {
            if self.normalized <= k {
                self.normalize(s, k);
            }
        } else {
            self.plan.push(Op::Wait(s.event(k)));
        }
        let below = u64::from(s.n - k - 1) * WORD;
        let pivot = s.col(k) + u64::from(k + 1) * WORD;
        let first_own = k + 1 + (self.rank + self.procs - (k + 1) % self.procs) % self.procs;
        let mut j = first_own;
        while j < s.n {
            let refs =
                self.plan.sweep(pivot, below, AccessKind::Read, 1) + self.rewrite_below(s, j, k);
            self.plan.compute(refs, s.cpr);
            if j == k + 1 {
                self.normalize(s, j);
            }
            j += self.procs;
        }
        self.k += 1;
    }
}

impl Program for Process {
    fn next(&mut self, _cx: &mut ThreadCtx<'_>) -> Op {
        loop {
            if let Some(op) = self.plan.pop() {
                return op;
            }
            let shared = self.shared.clone();
            let s = shared.borrow();
            if self.k + 1 >= s.n {
                return Op::Exit;
            }
            self.apply(&s);
        }
    }
}

/// Registry entry of `lu`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "lu",
    summary: "Gupta et al.'s LU: column-interleaved LU decomposition with an event per column",
    description: "LU decomposition of an n x n matrix of doubles stored by columns, columns \
                  interleaved among the processes; each pivot column is normalized by its owner, \
                  who sets its event, and applied by every process to its own columns to the \
                  right. Waits busy-wait or spin then block; with handoff a waiter first hands \
                  its processor to the column's owner. About n^3 references.",
    paper: "Gupta, Tucker and Urushibara 1991, section 3.2",
    params: crate::gupta_params!(
        "3.47",
        ParamInfo {
            name: "n",
            default: "256",
            doc: "matrix order",
        },
        ParamInfo {
            name: "column_pad",
            default: "0",
            doc: "bytes between one column's end and the next's start (the matrix layout)",
        },
    ),
    build: |t| {
        let w: Lu = toml::Value::Table(t).try_into()?;
        check_count("n", u64::from(w.n), 4096)?;
        if w.n < 2 {
            return Err(serde::de::Error::custom("n: must be at least 2"));
        }
        check_count("processes", u64::from(w.processes), 4096)?;
        check_cpr(w.compute_per_ref)?;
        if w.column_pad > 1 << 20 {
            return Err(serde::de::Error::custom(format!(
                "column_pad: at most 1048576 bytes, got {}",
                w.column_pad
            )));
        }
        Ok(Box::new(w))
    },
};
