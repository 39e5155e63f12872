//! George 1990's prime number sieve (section 3.1) with the fine-grained task structure of the
//! CoF compiler's code: `sieve l = hd l :: sieve (filter (hd l) (tl l))` over `from 2 numbers`
//! evaluated as a pipeline of lazy streams. A task is one step of a stream: the generator
//! producing the next number, or the filter of the k-th prime taking one number (a `mod`, and
//! the number passed on or dropped). Each stream consumes its numbers in order, one step at a
//! time, so a filter step is spawned when its number arrives at an idle filter, or when the
//! filter's previous step ends and numbers are waiting for it. A number that passes every filter
//! is a prime and starts a new filter (the `hd l :: sieve ...` step).
//!
//! Every spawn goes through the queue under test; when the insert fails (the centralized
//! queue's lock was busy on the single attempt a migration makes, or every tree is full) the
//! spawner runs the task itself later (section 1). Processors with no task of their own remove.
//! The run ends when the generator has produced every number and no task is left; the
//! processor that ends the last task writes the termination value into the others' spin words.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

use rand::Rng;
use serde::Deserialize;
use smpsched_sim::readyq::ddq::Inserted;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{Op, Program, SimError, Simulation, TaskId, ThreadCtx};

use super::hotspot::HotSpot;
use super::port::{Poll, Port, TERM};
use super::{pin, processors, split, QueueParams, QUEUE_PARAMS};
use crate::{Workload, WorkloadInfo};

/// The stage number of the generator in a task word.
const GEN: u64 = (1 << 31) - 1;

/// The load's own parameters of `george-sieve`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SieveParams {
    /// The sieve runs over 2..=numbers.
    pub numbers: u64,
    /// Cycles of one filter step (a `mod`, a list cell).
    #[serde(default = "d_filter")]
    pub filter_cycles: u64,
    /// Cycles of one generator step.
    #[serde(default = "d_filter")]
    pub generate_cycles: u64,
    /// Cycles to make a task (its closure) before it is inserted.
    #[serde(default = "d_spawn")]
    pub spawn_cycles: u64,
}

/// The `george-sieve` workload: the load and the queue under test.
#[derive(Clone, Debug)]
pub struct Sieve {
    /// The load.
    pub load: SieveParams,
    /// The queue under test.
    pub queue: QueueParams,
}

fn d_filter() -> u64 {
    800
}
fn d_spawn() -> u64 {
    200
}

/// A filter (or the generator): its prime, the numbers waiting for it, whether a step of it is
/// spawned or running.
struct Stream {
    prime: u64,
    waiting: VecDeque<u64>,
    busy: bool,
}

/// The program's state outside the simulated memory: the streams and the count of tasks.
struct Shared {
    numbers: u64,
    streams: Vec<Stream>,
    /// Tasks spawned and not yet ended.
    outstanding: u64,
    tasks: u64,
    finished: bool,
}

impl Shared {
    /// Number `x` arrives at stream `k`: a task to spawn if the stream was idle.
    fn arrive(&mut self, k: usize, x: u64) -> Option<u64> {
        if k == self.streams.len() {
            // Passed every filter: a prime, and a new filter (no number for it yet).
            self.streams.push(Stream {
                prime: x,
                waiting: VecDeque::new(),
                busy: false,
            });
            return None;
        }
        let s = &mut self.streams[k];
        if s.busy {
            s.waiting.push_back(x);
            return None;
        }
        s.busy = true;
        self.outstanding += 1;
        Some(task(k as u64, x))
    }

    /// Stream `k`'s step ended: its next step, if numbers wait.
    fn ended(&mut self, k: usize) -> Option<u64> {
        let s = &mut self.streams[k];
        match s.waiting.pop_front() {
            Some(x) => {
                self.outstanding += 1;
                Some(task(k as u64, x))
            }
            None => {
                s.busy = false;
                None
            }
        }
    }
}

fn task(stage: u64, x: u64) -> u64 {
    // The number in the low bits: its bits choose the directions of descent.
    (stage << 32) | x
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Phase {
    Start,
    Idle,
    Removing,
    Run(u64),
    Spawn,
    Spawning,
    Terminate(usize),
    Records,
}

struct Worker {
    me: usize,
    procs: usize,
    costs: (u64, u64, u64),
    port: Port,
    shared: Rc<RefCell<Shared>>,
    phase: Phase,
    /// Tasks this processor will run itself (failed migrations), last first.
    local: Vec<u64>,
    /// Tasks the current task spawns, to insert.
    spawns: Vec<u64>,
    tasks: u64,
    /// Whether this processor ended the last task (and so sends the termination).
    finisher: bool,
    records: Vec<Op>,
    mhz: f64,
}

impl Worker {
    /// Runs task `t`'s bookkeeping: the numbers it passes on and the steps to spawn.
    fn run(&mut self, t: u64) -> u64 {
        let (stage, x) = (t >> 32, t & 0xffff_ffff);
        let mut sh = self.shared.borrow_mut();
        self.tasks += 1;
        sh.tasks += 1;
        let cost;
        if stage == GEN {
            cost = self.costs.1;
            self.spawns.extend(sh.arrive(0, x));
            if x < sh.numbers {
                sh.outstanding += 1;
                self.spawns.push(task(GEN, x + 1));
            }
        } else {
            cost = self.costs.0;
            let k = stage as usize;
            if x % sh.streams[k].prime != 0 {
                self.spawns.extend(sh.arrive(k + 1, x));
            }
            self.spawns.extend(sh.ended(k));
        }
        sh.outstanding -= 1;
        if sh.outstanding == 0 {
            sh.finished = true;
            self.finisher = true;
        }
        cost
    }
}

impl Worker {
    /// The next of the measures to record at the end, then the exit.
    fn record(&mut self) -> Op {
        if self.records.is_empty() {
            self.records = self.port.records(self.mhz);
            self.records.push(Op::Record {
                name: "tasks",
                value: self.tasks as f64,
            });
            if self.me == 0 {
                let primes = self.shared.borrow().streams.len();
                self.records.push(Op::Record {
                    name: "primes",
                    value: primes as f64,
                });
            }
            self.records.reverse();
            self.records.insert(0, Op::Exit);
        }
        self.records.pop().unwrap_or(Op::Exit)
    }
}

impl Program for Worker {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        loop {
            let outcome = cx.take_outcome();
            match self.phase {
                Phase::Start => {
                    self.port.reseed(cx.rng.random::<u64>());
                    self.phase = Phase::Idle;
                    if self.me == 0 {
                        self.shared.borrow_mut().outstanding += 1;
                        self.phase = Phase::Run(task(GEN, 2));
                    }
                }
                Phase::Idle => {
                    if let Some(t) = self.local.pop() {
                        self.phase = Phase::Run(t);
                    } else if self.shared.borrow().finished {
                        self.phase = Phase::Records;
                    } else {
                        self.port.remove(cx.now);
                        self.phase = Phase::Removing;
                    }
                }
                Phase::Removing => match self.port.step(outcome.as_ref(), cx.now) {
                    Poll::Op(op) => return op,
                    Poll::Removed(TERM) => self.phase = Phase::Records,
                    Poll::Removed(t) => self.phase = Phase::Run(t),
                    Poll::Inserted(_) => self.phase = Phase::Idle,
                },
                Phase::Run(t) => {
                    let cost = self.run(t);
                    self.spawns.reverse();
                    self.phase = Phase::Spawn;
                    return Op::Compute(cost.max(1));
                }
                Phase::Spawn => match self.spawns.pop() {
                    Some(t) => {
                        self.port.insert(t, cx.now, true);
                        self.phase = Phase::Spawning;
                        self.spawns.push(t);
                        if self.costs.2 > 0 {
                            return Op::Compute(self.costs.2);
                        }
                    }
                    None if self.finisher => {
                        self.finisher = false;
                        self.phase = Phase::Terminate(0);
                    }
                    None => self.phase = Phase::Idle,
                },
                Phase::Spawning => match self.port.step(outcome.as_ref(), cx.now) {
                    Poll::Op(op) => return op,
                    Poll::Inserted(r) => {
                        let t = self.spawns.pop().unwrap_or(0);
                        if r == Inserted::Failed {
                            self.local.push(t);
                        }
                        self.phase = Phase::Spawn;
                    }
                    Poll::Removed(_) => self.phase = Phase::Spawn,
                },
                Phase::Terminate(p) if p == self.procs => self.phase = Phase::Records,
                Phase::Terminate(p) => {
                    self.phase = Phase::Terminate(p + 1);
                    if p != self.me {
                        return self.port.terminate(p);
                    }
                }
                Phase::Records => return self.record(),
            }
        }
    }
}

impl Workload for Sieve {
    fn threads(&self) -> u64 {
        // One per processor, which the machine decides at install: estimated as the GP1000's
        // most, 256 (a thread's engine record is a few hundred bytes).
        256
    }

    fn threads_field(&self) -> Option<&'static str> {
        None
    }

    fn memory_bytes(&self) -> u64 {
        self.queue.memory_bytes(256)
    }

    fn places_on_nodes(&self) -> bool {
        true
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        let procs = processors(sim, "george-sieve")?;
        let mhz = sim.machine().clock_mhz;
        let (layout, heights) = self.queue.build(sim, procs);
        let shared = Rc::new(RefCell::new(Shared {
            numbers: self.load.numbers,
            streams: vec![Stream {
                prime: 2,
                waiting: VecDeque::new(),
                busy: false,
            }],
            outstanding: 0,
            tasks: 0,
            finished: false,
        }));
        for (p, &height) in heights.iter().enumerate() {
            let tuning = self.queue.tuning(p, 0);
            let prog = Worker {
                me: p,
                procs,
                costs: (
                    self.load.filter_cycles,
                    self.load.generate_cycles,
                    self.load.spawn_cycles,
                ),
                port: Port::new(&layout, p, tuning, height, HotSpot::new(sim, &layout, p)),
                shared: shared.clone(),
                phase: Phase::Start,
                local: Vec::new(),
                spawns: Vec::new(),
                tasks: 0,
                finisher: false,
                records: Vec::new(),
                mhz,
            };
            sim.spawn_with(task, Box::new(prog), pin(p))?;
        }
        Ok(())
    }
}

/// Registry entry of `george-sieve`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "george-sieve",
    summary: "George's prime sieve: a task per filter step of a pipeline of lazy streams, every task spawned through a centralized dual queue or a DDQ",
    description: "George 1990's CoF prime sieve (section 3.1) over 2..=`numbers`: the \
                  generator and each prime's filter are streams taking one number per task \
                  (`filter_cycles`, `generate_cycles`), in order; a number passing every filter \
                  starts a new one. Every task is spawned (`spawn_cycles`) through the \
                  structure under test; a failed insert (a busy central lock on the single \
                  migration attempt, a full tree) runs the task on its spawner. One pinned \
                  process per processor. Records `tasks`, `primes` and the queue measures, \
                  `hotspot_wait` among them (per queue operation: cycles contending for the \
                  central lock or a tree root beyond its accesses' uncontended cost).",
    paper: "George 1990 sections 1, 2 and 3.1, Figures 1 and 6",
    params: &[
        ParamInfo { name: "numbers", default: "(required)", doc: "the sieve runs over 2..=numbers" },
        ParamInfo { name: "filter_cycles", default: "800", doc: "cycles of one filter step" },
        ParamInfo { name: "generate_cycles", default: "800", doc: "cycles of one generator step" },
        ParamInfo { name: "spawn_cycles", default: "200", doc: "cycles to make a task before inserting it" },
        QUEUE_PARAMS[0], QUEUE_PARAMS[1], QUEUE_PARAMS[2], QUEUE_PARAMS[3], QUEUE_PARAMS[4],
        QUEUE_PARAMS[5], QUEUE_PARAMS[6], QUEUE_PARAMS[7], QUEUE_PARAMS[8], QUEUE_PARAMS[9],
    ],
    build: |t| {
        let (load, queue): (SieveParams, QueueParams) = split(t)?;
        if !(2..=1_000_000).contains(&load.numbers) {
            return Err(serde::de::Error::custom(format!(
                "numbers: must be between 2 and 1e6, got {}",
                load.numbers
            )));
        }
        Ok(Box::new(Sieve { load, queue }))
    },
};
