//! Matmul (Gupta, Tucker and Urushibara 1991, section 3.4): a block-based multiplication C = A x B
//! of n x n matrices of doubles (672 x 672 in the paper), in blocks of b x b (56 x 56, 25 KB).
//!
//! The block columns of C are the tasks: a process takes the next one from a shared counter (a
//! fetch-and-add), so the processes never wait for each other, and the application obeys process
//! control at task boundaries ([`Control`]). For block column jb and each block row kb, a
//! process first copies block `B[kb][jb]` into contiguous local memory (footnote 2: so that its rows
//! do not interfere in the cache), then, `reuse` rows of A at a time, reads those rows' segment of
//! A, reads the local block once (each element is used for `reuse` rows from registers) and
//! updates those rows' segment of C. The local block stays in the cache while a process keeps
//! its processor; an intervening process that fills the cache makes it reload it.
//!
//! References: about n^2 (n/b) (3 + b/reuse) for all blocks; `k_blocks` limits how many block rows
//! each block column takes (the paper, too, shows only part of this long computation).

use serde::Deserialize;
use std::cell::RefCell;
use std::rc::Rc;

use smpsched_sim::memory::{AccessKind, AtomicKind, Placement};
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{Op, Program, SimError, Simulation, TaskId, ThreadCtx};

use super::{check_count, check_cpr, Control, Plan, WORD};
use crate::{Workload, WorkloadInfo};

/// Parameters of `matmul`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Matmul {
    /// Matrix order n.
    pub n: u32,
    /// Block order b (at most n; columns past the last whole block are not computed).
    pub block: u32,
    /// Block rows of B taken per block column of C (at most n / b).
    pub k_blocks: u32,
    /// Rows of A multiplied per read of the local block (register blocking).
    pub reuse: u32,
    /// Processes.
    pub processes: u32,
    /// Accepted for uniformity: Matmul has no waits.
    pub spin_cycles: Option<u64>,
    /// Accepted for uniformity: Matmul has no waits.
    pub handoff: bool,
    /// Compute cycles per reference (Table 1: (600 x 0.87 - 103) / 107).
    pub compute_per_ref: f64,
}

impl Default for Matmul {
    fn default() -> Self {
        Matmul {
            n: 672,
            block: 56,
            k_blocks: 12,
            reuse: 4,
            processes: 12,
            spin_cycles: None,
            handoff: false,
            compute_per_ref: 3.92,
        }
    }
}

impl Workload for Matmul {
    fn threads(&self) -> u64 {
        u64::from(self.processes)
    }

    fn threads_field(&self) -> Option<&'static str> {
        Some("processes")
    }

    fn memory_bytes(&self) -> u64 {
        let n = u64::from(self.n);
        let b = u64::from(self.block);
        3 * n * n * WORD + u64::from(self.processes) * b * b * WORD
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        let matrix = u64::from(self.n) * u64::from(self.n) * WORD;
        let mut alloc = |bytes| sim.memory().alloc(bytes, Placement::Uma, None).base;
        let (a, b, c) = (alloc(matrix), alloc(matrix), alloc(matrix));
        let block = u64::from(self.block) * u64::from(self.block) * WORD;
        let locals: Vec<u64> = (0..self.processes).map(|_| alloc(block)).collect();
        let counter = alloc(WORD);
        let shared = Rc::new(RefCell::new(Shared {
            next: 0,
            control: Control::new(sim, self.processes),
        }));
        for (rank, local) in (0..self.processes).zip(locals) {
            sim.spawn(
                task,
                Box::new(Process {
                    cfg: self.clone(),
                    rank: rank as usize,
                    a,
                    b,
                    c,
                    local,
                    counter,
                    jb: None,
                    kb: 0,
                    row: 0,
                    plan: Plan::default(),
                    shared: shared.clone(),
                }),
            )?;
        }
        Ok(())
    }
}

/// What the processes share: the next block column to take, and process control.
struct Shared {
    next: u32,
    control: Control,
}

/// One Matmul process.
struct Process {
    cfg: Matmul,
    rank: usize,
    a: u64,
    b: u64,
    c: u64,
    /// Its local copy of the current block of B.
    local: u64,
    /// The task counter's word.
    counter: u64,
    /// The block column of C it is computing, if any.
    jb: Option<u32>,
    /// The block row of B in use.
    kb: u32,
    /// The next row of A (n: the block row is done; 0 also means the copy is due).
    row: u32,
    plan: Plan,
    shared: Rc<RefCell<Shared>>,
}

impl Process {
    fn jb(&self) -> u32 {
        self.jb.unwrap_or(0)
    }

    /// At a task boundary: obeys process control, then takes the next block column; `None`
    /// when the process exits. Returns with operations planned when it suspended or resumed
    /// another process (the caller asks again after them).
    fn take_task(&mut self) -> Option<()> {
        let blocks = self.cfg.n / self.cfg.block;
        let shared = self.shared.clone();
        let mut s = shared.borrow_mut();
        let left = s.next < blocks;
        if s.control.should_suspend(self.rank, left) {
            for op in s.control.suspend(self.rank) {
                self.plan.push(op);
            }
            return Some(());
        }
        if let Some(op) = s.control.resume_one(left) {
            self.plan.push(op);
            return Some(());
        }
        if !left {
            return None;
        }
        self.jb = Some(s.next);
        s.next += 1;
        self.plan.push(Op::Atomic {
            addr: self.counter,
            kind: AtomicKind::FetchAdd,
        });
        Some(())
    }

    fn at(&self, base: u64, row: u32, col: u32) -> u64 {
        base + (u64::from(row) * u64::from(self.cfg.n) + u64::from(col)) * WORD
    }

    /// Plans the copy of B[kb][jb] into local memory.
    fn copy_block(&mut self) {
        let bsz = self.cfg.block;
        let seg = u64::from(bsz) * WORD;
        let mut refs = 0;
        for r in 0..bsz {
            let from = self.at(self.b, self.kb * bsz + r, self.jb() * bsz);
            refs += self.plan.sweep(from, seg, AccessKind::Read, 1);
            let to = self.local + u64::from(r) * seg;
            refs += self.plan.sweep(to, seg, AccessKind::Write, 1);
        }
        self.plan.compute(refs, self.cfg.compute_per_ref);
    }

    /// Plans the next `reuse` rows of A times the local block into C.
    fn rows(&mut self) {
        let (bsz, n) = (self.cfg.block, self.cfg.n);
        let seg = u64::from(bsz) * WORD;
        let rows = self.cfg.reuse.max(1).min(n - self.row);
        let mut refs = 0;
        for i in self.row..self.row + rows {
            let from = self.at(self.a, i, self.kb * bsz);
            refs += self.plan.sweep(from, seg, AccessKind::Read, 1);
        }
        refs += self
            .plan
            .sweep(self.local, seg * u64::from(bsz), AccessKind::Read, 1);
        for i in self.row..self.row + rows {
            let to = self.at(self.c, i, self.jb() * bsz);
            refs += self.plan.sweep(to, seg, AccessKind::ReadModifyWrite, 1);
        }
        self.plan.compute(refs, self.cfg.compute_per_ref);
        self.row += rows;
    }
}

impl Program for Process {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        self.shared.borrow_mut().control.notice(cx.notice);
        loop {
            if let Some(op) = self.plan.pop() {
                return op;
            }
            let blocks = self.cfg.n / self.cfg.block;
            if self.row >= self.cfg.n {
                self.row = 0;
                self.kb += 1;
                if self.kb >= self.cfg.k_blocks.min(blocks) {
                    self.kb = 0;
                    self.jb = None;
                }
                continue;
            }
            if self.jb.is_none() {
                if self.take_task().is_none() {
                    return Op::Exit;
                }
                continue;
            }
            if self.row == 0 {
                self.copy_block();
            }
            self.rows();
        }
    }
}

/// Registry entry of `matmul`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "matmul",
    summary: "Gupta et al.'s Matmul: blocked matrix multiply with blocks of B copied locally",
    description: "C = A x B for n x n doubles in b x b blocks: block columns of C divided among \
                  the processes; each block of B is copied into contiguous local memory and \
                  reused for every row of A, `reuse` rows per read. No synchronization.",
    paper: "Gupta, Tucker and Urushibara 1991, section 3.4",
    params: crate::gupta_params!(
        "3.92",
        ParamInfo {
            name: "n",
            default: "672",
            doc: "matrix order",
        },
        ParamInfo {
            name: "block",
            default: "56",
            doc: "block order (at most n)",
        },
        ParamInfo {
            name: "k_blocks",
            default: "12",
            doc: "block rows of B per block column (part of the computation)",
        },
        ParamInfo {
            name: "reuse",
            default: "4",
            doc: "rows of A per read of the local block",
        },
    ),
    build: |t| {
        let w: Matmul = toml::Value::Table(t).try_into()?;
        check_count("n", u64::from(w.n), 16_384)?;
        check_count("block", u64::from(w.block), u64::from(w.n))?;
        check_count("k_blocks", u64::from(w.k_blocks), 16_384)?;
        check_count("reuse", u64::from(w.reuse), 4096)?;
        check_count("processes", u64::from(w.processes), 4096)?;
        check_cpr(w.compute_per_ref)?;
        Ok(Box::new(w))
    },
};
