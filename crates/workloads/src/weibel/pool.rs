//! `weibel-pool`: Weibel's Tables 10-11 (section 4): `items` work items, each a scalar
//! multiply of one of `matrices` matrices smaller than the L1 (item `i` works on matrix
//! `i mod matrices`: 4 is "sm", 16 "lg"), done either by one thread per item (`workers = 0`,
//! "unpooled") or by `workers` threads pulling items from a shared queue behind a lock (a
//! thread pool). A main process spawns the threads and joins them.

use std::cell::Cell;
use std::rc::Rc;

use serde::Deserialize;
use smpsched_sim::memory::Region;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{
    Op, Program, SimError, Simulation, SyncId, SyncKind, TaskId, ThreadCtx, WaitPolicy,
};

use super::{
    check_alu, check_bytes, check_range, check_total, data, spawn_main, Join, JoinBy, Multiply,
    Process,
};
use crate::{Workload, WorkloadInfo};

/// Cycles a pool worker spins on the queue lock before blocking.
const LOCK_SPIN: u64 = 2_000;

/// Parameters of `weibel-pool`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pool {
    /// Work items.
    pub items: u32,
    /// Pool workers; 0 for one thread per item.
    pub workers: u32,
    /// Matrices the items work on (item `i` on matrix `i mod matrices`).
    pub matrices: u32,
    /// Bytes of each matrix.
    pub matrix_bytes: u64,
    /// Passes of one item over its matrix.
    pub passes: u64,
    /// Cycles of register work per element and pass.
    #[serde(default)]
    pub alu: f64,
    /// How the main process joins its children: "block" (the default) or "spin" (busy-waits on
    /// the children's semaphore, its cycles spin time).
    #[serde(default)]
    pub join: JoinBy,
}

impl Workload for Pool {
    fn threads(&self) -> u64 {
        let n = if self.workers == 0 {
            self.items
        } else {
            self.workers
        };
        u64::from(n) + 1
    }

    fn threads_field(&self) -> Option<&'static str> {
        Some(if self.workers == 0 {
            "items"
        } else {
            "workers"
        })
    }

    fn memory_bytes(&self) -> u64 {
        self.matrix_bytes * u64::from(self.matrices)
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        let done = Join::new(sim, self.join);
        let matrices: Vec<Region> = (0..self.matrices)
            .map(|_| data(sim, self.matrix_bytes))
            .collect();
        let item = |i: u32| Multiply {
            region: matrices[(i % self.matrices) as usize],
            passes: self.passes,
            alu: self.alu,
        };
        let children: Vec<Box<dyn Program>> = if self.workers == 0 {
            (0..self.items)
                .map(|i| {
                    Box::new(Process::new(vec![item(i)], done.clone(), None)) as Box<dyn Program>
                })
                .collect()
        } else {
            let lock = sim.create_sync(
                SyncKind::Lock { holder: None },
                WaitPolicy::spin_then_block(LOCK_SPIN),
            );
            let queue = Rc::new(Queue {
                items: (0..self.items).map(item).collect(),
                next: Cell::new(0),
            });
            (0..self.workers)
                .map(|_| {
                    Box::new(Worker {
                        queue: queue.clone(),
                        lock,
                        done: done.clone(),
                        state: State::Take,
                        current: None,
                        passes: 0,
                        plan: Vec::new(),
                    }) as Box<dyn Program>
                })
                .collect()
        };
        spawn_main(sim, task, children, done)
    }
}

/// The pool's shared work queue.
struct Queue {
    items: Vec<Multiply>,
    next: Cell<usize>,
}

/// Where a worker is in its loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// About to lock the queue.
    Take,
    /// Holding the lock: take an item and unlock.
    Locked,
    /// Working on its item.
    Work,
    /// The queue is empty: tell the main process, then exit.
    Finish,
    /// Done.
    Exit,
}

/// A pool worker: locks the queue, takes the next item, unlocks, multiplies, again.
struct Worker {
    queue: Rc<Queue>,
    lock: SyncId,
    done: Join,
    state: State,
    current: Option<usize>,
    passes: u64,
    plan: Vec<Op>,
}

impl Program for Worker {
    fn next(&mut self, _cx: &mut ThreadCtx<'_>) -> Op {
        if let Some(op) = self.plan.pop() {
            return op;
        }
        loop {
            match self.state {
                State::Take => {
                    self.state = State::Locked;
                    return Op::Wait(self.lock);
                }
                State::Locked => {
                    let next = self.queue.next.get();
                    if next < self.queue.items.len() {
                        self.queue.next.set(next + 1);
                        self.current = Some(next);
                        self.passes = 0;
                        self.state = State::Work;
                    } else {
                        self.state = State::Finish;
                    }
                    return Op::Signal(self.lock);
                }
                State::Work => {
                    let item = &self.queue.items[self.current.expect("working on an item")];
                    if let Some((sweep, alu)) = item.pass(&mut self.passes) {
                        self.plan.extend(alu);
                        return sweep;
                    }
                    self.state = State::Take;
                }
                State::Finish => {
                    self.state = State::Exit;
                    return self.done.arrive();
                }
                State::Exit => return Op::Exit,
            }
        }
    }
}

/// Registry entry of `weibel-pool`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "weibel-pool",
    summary: "work items as one thread each, or taken from a shared queue by a thread pool",
    description: "`items` work items, item i a scalar multiply of matrix i mod `matrices` (each \
                  `matrix_bytes`, `passes` passes, `alu` cycles per element). With `workers = 0` \
                  a main process spawns one thread per item; otherwise it spawns `workers` \
                  threads that lock a shared queue, take the next item, unlock and work, until \
                  the queue is empty. The main process joins them.",
    paper: "Weibel, section 4, Tables 10-11 (thread pool against one thread per work item)",
    params: &[
        ParamInfo {
            name: "items",
            default: "(required)",
            doc: "work items",
        },
        ParamInfo {
            name: "workers",
            default: "(required)",
            doc: "pool workers; 0 for one thread per item",
        },
        ParamInfo {
            name: "matrices",
            default: "(required)",
            doc: "matrices the items work on (4: sm, 16: lg)",
        },
        ParamInfo {
            name: "matrix_bytes",
            default: "(required)",
            doc: "bytes of each matrix",
        },
        ParamInfo {
            name: "passes",
            default: "(required)",
            doc: "passes of one item over its matrix",
        },
        super::ALU_PARAM,
        super::JOIN_PARAM,
    ],
    build: |t| {
        let w: Pool = toml::Value::Table(t).try_into()?;
        check_range("items", u64::from(w.items), 1, 100_000)?;
        check_range("workers", u64::from(w.workers), 0, 100_000)?;
        check_range("matrices", u64::from(w.matrices), 1, 4096)?;
        check_bytes("matrix_bytes", w.matrix_bytes)?;
        check_range("passes", w.passes, 1, 100_000_000)?;
        check_alu(w.alu)?;
        check_total(
            "matrix_bytes",
            w.matrix_bytes,
            u64::from(w.matrices),
            "matrices",
        )?;
        Ok(Box::new(w))
    },
};
