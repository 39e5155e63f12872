//! George 1990's producer/consumer test (section 3): half the processors (the even ones)
//! insert `items` items each, `while (insert(i) == FALSE) backoff(j++)`; the others remove until
//! the termination message. Figure 5 runs it with queue size 1 and one, two or four trees.

use std::cell::RefCell;
use std::rc::Rc;

use rand::Rng;
use serde::Deserialize;
use smpsched_sim::readyq::ddq::Inserted;
use smpsched_sim::readyq::dual::Backoff;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{Op, Program, SimError, Simulation, TaskId, ThreadCtx};

use super::hotspot::HotSpot;
use super::port::{Poll, Port, TERM};
use super::{pin, processors, split, QueueParams, QUEUE_PARAMS};
use crate::{Workload, WorkloadInfo};

/// The load's own parameters of `george-pc`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PcParams {
    /// Items each producer inserts (20,000 in the paper).
    pub items: u64,
    /// Cycles a producer spends making an item and a consumer using one.
    #[serde(default)]
    pub work_cycles: u64,
}

/// The `george-pc` workload: the load and the queue under test.
#[derive(Clone, Debug)]
pub struct ProducerConsumer {
    /// The load.
    pub load: PcParams,
    /// The queue under test.
    pub queue: QueueParams,
}

struct Shared {
    total: u64,
    consumed: u64,
    finished: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Start,
    Produce,
    Inserting,
    Consume,
    Removing,
    Terminate(usize),
    Records,
}

struct Proc {
    me: usize,
    procs: usize,
    next: u64,
    last: u64,
    full: u32,
    backoff: Backoff,
    work: u64,
    port: Port,
    shared: Rc<RefCell<Shared>>,
    phase: Phase,
    records: Vec<Op>,
    mhz: f64,
}

impl Program for Proc {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        loop {
            let outcome = cx.take_outcome();
            match self.phase {
                Phase::Start => {
                    let seed = cx.rng.random::<u64>();
                    self.port.reseed(seed);
                    self.backoff.seed = seed.rotate_left(17);
                    self.phase = Phase::Produce;
                }
                Phase::Produce if self.next == self.last => self.phase = Phase::Consume,
                Phase::Produce => {
                    self.port.insert(self.next, cx.now, false);
                    self.phase = Phase::Inserting;
                    if self.work > 0 {
                        return Op::Compute(self.work);
                    }
                }
                Phase::Inserting => match self.port.step(outcome.as_ref(), cx.now) {
                    Poll::Op(op) => return op,
                    Poll::Inserted(Inserted::Failed) => {
                        // Every tree full: back off and retry the same item.
                        let c = self.backoff.nth(self.full);
                        self.full += 1;
                        self.port.insert(self.next, cx.now + c, false);
                        return Op::Compute(c);
                    }
                    Poll::Inserted(_) | Poll::Removed(_) => {
                        self.full = 0;
                        self.next += 1;
                        self.phase = Phase::Produce;
                    }
                },
                Phase::Consume => {
                    if self.shared.borrow().finished {
                        self.phase = Phase::Records;
                        continue;
                    }
                    self.port.remove(cx.now);
                    self.phase = Phase::Removing;
                }
                Phase::Removing => match self.port.step(outcome.as_ref(), cx.now) {
                    Poll::Op(op) => return op,
                    Poll::Removed(TERM) => self.phase = Phase::Records,
                    Poll::Removed(_) | Poll::Inserted(_) => {
                        let mut sh = self.shared.borrow_mut();
                        sh.consumed += 1;
                        if sh.consumed == sh.total {
                            sh.finished = true;
                            self.phase = Phase::Terminate(0);
                        } else {
                            self.phase = Phase::Consume;
                        }
                        if self.work > 0 {
                            return Op::Compute(self.work);
                        }
                    }
                },
                Phase::Terminate(p) if p == self.procs => self.phase = Phase::Records,
                Phase::Terminate(p) => {
                    self.phase = Phase::Terminate(p + 1);
                    if p != self.me {
                        return self.port.terminate(p);
                    }
                }
                Phase::Records => {
                    if self.records.is_empty() {
                        self.records = self.port.records(self.mhz);
                        self.records.reverse();
                        self.records.insert(0, Op::Exit);
                    }
                    return self.records.pop().unwrap_or(Op::Exit);
                }
            }
        }
    }
}

impl Workload for ProducerConsumer {
    fn threads(&self) -> u64 {
        // One per processor, which the machine decides at install: estimated as the GP1000's
        // most, 256 (a thread's engine record is a few hundred bytes).
        256
    }

    fn threads_field(&self) -> Option<&'static str> {
        None
    }

    fn operations(&self) -> Option<u64> {
        None
    }

    fn memory_bytes(&self) -> u64 {
        self.queue.memory_bytes(256)
    }

    fn places_on_nodes(&self) -> bool {
        true
    }

    fn needs(&self) -> crate::Needs {
        // One producer and one consumer, each pinned to a processor of its own.
        crate::Needs {
            processors: 2,
            ..crate::Needs::default()
        }
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        let procs = processors(sim, "george-pc")?;
        let mhz = sim.machine().clock_mhz;
        let (layout, heights) = self.queue.build(sim, procs);
        let producers = procs.div_ceil(2);
        let shared = Rc::new(RefCell::new(Shared {
            total: producers as u64 * self.load.items,
            consumed: 0,
            finished: false,
        }));
        for (p, &height) in heights.iter().enumerate() {
            let (next, last) = if p % 2 == 0 {
                let first = 1 + (p / 2) as u64 * self.load.items;
                (first, first + self.load.items)
            } else {
                (0, 0)
            };
            let tuning = self.queue.tuning(p, 0);
            let prog = Proc {
                me: p,
                procs,
                next,
                last,
                full: 0,
                backoff: tuning.backoff,
                work: self.load.work_cycles,
                port: Port::new(&layout, p, tuning, height, HotSpot::new(sim, &layout, p)),
                shared: shared.clone(),
                phase: Phase::Start,
                records: Vec::new(),
                mhz,
            };
            sim.spawn_with(task, Box::new(prog), pin(p))?;
        }
        Ok(())
    }
}

/// Registry entry of `george-pc`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "george-pc",
    summary: "George's producer/consumer test: half the processors insert items into a centralized dual queue or a DDQ, half remove",
    description: "George 1990's artificial load (section 3): one pinned process per processor; \
                  the even processors insert `items` items each into the structure under test \
                  (`structure = \"central\"` or `\"ddq\"`), backing off exponentially while \
                  every tree is full, then help remove; the odd ones remove until the last \
                  item is consumed. Records `backoffs`, `insert_us`, `remove_us`, \
                  `insert_atomics`, `remove_atomics`, `below_h`, `root_cycles`, `root_ops`, \
                  `retries` per processor, and per queue operation `hotspot_wait` (cycles \
                  contending for the central lock or a tree root beyond its accesses' \
                  uncontended cost).",
    paper: "George 1990 sections 2 and 3, Figure 5",
    params: &[
        ParamInfo { name: "items", default: "(required)", doc: "items each producer inserts (20,000 in the paper)" },
        ParamInfo { name: "work_cycles", default: "0", doc: "cycles to make (and to use) an item" },
        QUEUE_PARAMS[0], QUEUE_PARAMS[1], QUEUE_PARAMS[2], QUEUE_PARAMS[3], QUEUE_PARAMS[4],
        QUEUE_PARAMS[5], QUEUE_PARAMS[6], QUEUE_PARAMS[7], QUEUE_PARAMS[8], QUEUE_PARAMS[9],
    ],
    build: |t| {
        let (load, queue): (PcParams, QueueParams) = split(t)?;
        if load.items == 0 || load.items > 10_000_000 {
            return Err(serde::de::Error::custom(format!(
                "items: must be between 1 and 1e7, got {}",
                load.items
            )));
        }
        Ok(Box::new(ProducerConsumer { load, queue }))
    },
};
