//! Operations whose outcome the program sees: word operations race for real (a compare-and-swap
//! loop, fetch-and-add and a test-and-set lock count exactly, with failed attempts), kernel
//! requests are answered (processor count, a mask that moves the thread), and a policy's
//! notices reach every thread of an application once.

use std::cell::RefCell;
use std::rc::Rc;

use smpsched_sim::memory::{MemoryConfig, Placement};
use smpsched_sim::sched::{
    policy, Actions, Enqueue, Handoff, QuantumEnd, SchedCtx, Scheduler, Shape, Target,
};
use smpsched_sim::{
    CpuMask, Cycles, MachineConfig, Notice, Op, Outcome, ProcId, Program, Reply, Request,
    Simulation, TaskId, ThreadCtx, ThreadId, WordOp,
};

fn machine(p: u32) -> MachineConfig {
    let mut m = MachineConfig::tango_12();
    m.processors = p;
    m.memory = MemoryConfig::tango();
    m
}

fn sched(name: &str) -> Box<dyn Scheduler> {
    policy(name).unwrap().make(&toml::Table::new()).unwrap()
}

/// Increments the word at `addr` `left` times with a load / compare-and-swap loop, counting the
/// compare-and-swaps that lost the race.
struct CasIncrement {
    addr: u64,
    left: u32,
    seen: Option<u64>,
    failures: Rc<RefCell<u64>>,
}

impl Program for CasIncrement {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        match (cx.take_outcome(), self.seen) {
            // A load came back: try to install seen + 1.
            (Some(Outcome::Word { old, .. }), None) => {
                self.seen = Some(old);
                return Op::Word {
                    addr: self.addr,
                    op: WordOp::CompareAndSwap {
                        expected: old,
                        new: old + 1,
                    },
                };
            }
            (Some(Outcome::Word { success, .. }), Some(_)) => {
                self.seen = None;
                if success {
                    self.left -= 1;
                } else {
                    *self.failures.borrow_mut() += 1;
                }
            }
            _ => {}
        }
        if self.left == 0 {
            return Op::Exit;
        }
        Op::Word {
            addr: self.addr,
            op: WordOp::Load,
        }
    }
}

/// Reads the word at `addr` at the end, into `out`.
struct ReadBack {
    addr: u64,
    after: Cycles,
    out: Rc<RefCell<Option<u64>>>,
    step: u8,
}

impl Program for ReadBack {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        self.step += 1;
        match self.step {
            1 => Op::Sleep(self.after),
            2 => Op::Word {
                addr: self.addr,
                op: WordOp::Load,
            },
            _ => {
                if let Some(Outcome::Word { old, .. }) = cx.take_outcome() {
                    *self.out.borrow_mut() = Some(old);
                }
                Op::Exit
            }
        }
    }
}

#[test]
fn compare_and_swap_loops_race_and_count_exactly() {
    let (threads, each) = (6u32, 200u32);
    let mut sim = Simulation::new(machine(6), sched("round-robin"), 1).unwrap();
    let task = sim.add_task("counters");
    let addr = sim.memory().alloc(64, Placement::Uma, None).base;
    let failures = Rc::new(RefCell::new(0));
    for _ in 0..threads {
        let p = CasIncrement {
            addr,
            left: each,
            seen: None,
            failures: failures.clone(),
        };
        sim.spawn(task, Box::new(p)).unwrap();
    }
    let out = Rc::new(RefCell::new(None));
    let reader = sim.add_task("reader");
    let rb = ReadBack {
        addr,
        after: 1 << 40,
        out: out.clone(),
        step: 0,
    };
    sim.spawn(reader, Box::new(rb)).unwrap();
    let r = sim.run().unwrap();
    r.check_conservation().unwrap();
    assert_eq!(*out.borrow(), Some(u64::from(threads * each)));
    assert!(
        *failures.borrow() > 0,
        "six processors on one word must collide"
    );
}

/// A test-and-set spin lock around a plain load-then-store increment, `left` times; it spins
/// by re-issuing the test-and-set.
struct LockedIncrement {
    lock: u64,
    counter: u64,
    left: u32,
    state: u8,
}

impl Program for LockedIncrement {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        let outcome = cx.take_outcome();
        let (lock, counter) = (self.lock, self.counter);
        let word = |addr, op| Op::Word { addr, op };
        match (self.state, outcome) {
            (0, _) if self.left == 0 => Op::Exit,
            (0, _) => {
                self.state = 1;
                word(lock, WordOp::TestAndSet)
            }
            (1, Some(Outcome::Word { success: false, .. })) => word(lock, WordOp::TestAndSet),
            (1, _) => {
                self.state = 2;
                word(counter, WordOp::Load)
            }
            (2, Some(Outcome::Word { old, .. })) => {
                self.state = 3;
                word(counter, WordOp::Store(old + 1))
            }
            _ => {
                self.state = 0;
                self.left -= 1;
                word(lock, WordOp::Store(0))
            }
        }
    }
}

#[test]
fn a_test_and_set_lock_makes_a_plain_increment_exact() {
    let mut sim = Simulation::new(machine(4), sched("round-robin"), 1).unwrap();
    let task = sim.add_task("locked");
    let lock = sim.memory().alloc(64, Placement::Uma, None).base;
    let counter = sim.memory().alloc(64, Placement::Uma, None).base;
    for _ in 0..4 {
        let p = LockedIncrement {
            lock,
            counter,
            left: 100,
            state: 0,
        };
        sim.spawn(task, Box::new(p)).unwrap();
    }
    let out = Rc::new(RefCell::new(None));
    let reader = sim.add_task("reader");
    let rb = ReadBack {
        addr: counter,
        after: 1 << 40,
        out: out.clone(),
        step: 0,
    };
    sim.spawn(reader, Box::new(rb)).unwrap();
    sim.run().unwrap().check_conservation().unwrap();
    assert_eq!(*out.borrow(), Some(400));
}

/// Asks how many processors there are, then moves itself to processor 2 and records where it
/// runs afterwards.
struct Mover {
    step: u8,
    seen: Rc<RefCell<Vec<String>>>,
}

impl Program for Mover {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        self.step += 1;
        let outcome = cx.take_outcome();
        let mut seen = self.seen.borrow_mut();
        match self.step {
            1 => Op::Kernel(Request::Processors),
            2 => {
                seen.push(format!("{outcome:?}"));
                Op::Kernel(Request::SetMask(CpuMask::of([ProcId(2)])))
            }
            3 => {
                seen.push(format!("{outcome:?} on {}", cx.processor));
                Op::Compute(1_000)
            }
            4 => Op::Kernel(Request::SetMask(CpuMask::of([ProcId(9)]))),
            _ => {
                seen.push(format!("{outcome:?} on {}", cx.processor));
                Op::Exit
            }
        }
    }
}

#[test]
fn kernel_requests_are_answered_and_a_new_mask_moves_the_thread() {
    let mut sim = Simulation::new(machine(4), sched("round-robin"), 1).unwrap();
    let task = sim.add_task("mover");
    let seen = Rc::new(RefCell::new(Vec::new()));
    sim.spawn(
        task,
        Box::new(Mover {
            step: 0,
            seen: seen.clone(),
        }),
    )
    .unwrap();
    sim.run().unwrap().check_conservation().unwrap();
    let seen = seen.borrow();
    assert_eq!(
        seen[0],
        format!("{:?}", Some(Outcome::Kernel(Reply::Processors(4))))
    );
    assert_eq!(
        seen[1],
        format!("{:?} on 2", Some(Outcome::Kernel(Reply::Done)))
    );
    assert!(
        seen[2].contains("Refused") && seen[2].ends_with("on 2"),
        "{}",
        seen[2]
    );
}

/// Round-robin that tells task 0 at every tick how many processors it has (process control's
/// channel), counting down.
struct Telling {
    inner: Box<dyn Scheduler>,
    ticks: u32,
}

impl Scheduler for Telling {
    fn enqueue(&mut self, t: ThreadId, why: Enqueue, cx: &SchedCtx) -> Target {
        self.inner.enqueue(t, why, cx)
    }
    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        self.inner.pick_next(p, cx)
    }
    fn quantum_expired(&mut self, t: ThreadId, p: ProcId, cx: &SchedCtx) -> QuantumEnd {
        self.inner.quantum_expired(t, p, cx)
    }
    fn dequeue(&mut self, _t: ThreadId, _cx: &SchedCtx) -> Handoff {
        Handoff::Refused
    }
    fn shape(&self, machine: &MachineConfig) -> Shape {
        Shape::new(machine).tick(Some(100_000))
    }
    fn tick(&mut self, _cx: &SchedCtx, out: &mut Actions) {
        self.ticks += 1;
        if self.ticks <= 3 {
            out.notify
                .push((TaskId(0), Notice::Processors(4 - self.ticks)));
        }
    }
}

/// Computes in short bursts and records the notices it sees.
struct Listener {
    left: u32,
    seen: Rc<RefCell<Vec<(u32, Notice)>>>,
}

impl Program for Listener {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        if let Some(n) = cx.notice {
            self.seen.borrow_mut().push((cx.rank, n));
        }
        if self.left == 0 {
            return Op::Exit;
        }
        self.left -= 1;
        Op::Compute(10_000)
    }
}

#[test]
fn notices_reach_every_thread_of_the_application_once() {
    let policy = Telling {
        inner: sched("round-robin"),
        ticks: 0,
    };
    let mut sim = Simulation::new(machine(4), Box::new(policy), 1).unwrap();
    let task = sim.add_task("told");
    let seen = Rc::new(RefCell::new(Vec::new()));
    for _ in 0..3 {
        let l = Listener {
            left: 100,
            seen: seen.clone(),
        };
        sim.spawn(task, Box::new(l)).unwrap();
    }
    sim.run().unwrap();
    let mut seen = seen.borrow().clone();
    seen.sort_by_key(|&(rank, n)| (rank, format!("{n:?}")));
    let want: Vec<(u32, Notice)> = (0..3)
        .flat_map(|rank| (1..=3).rev().map(move |n| (rank, Notice::Processors(n))))
        .collect::<Vec<_>>();
    let mut want = want;
    want.sort_by_key(|&(rank, n)| (rank, format!("{n:?}")));
    assert_eq!(seen, want);
}

#[test]
fn the_global_queue_policies_respect_masks() {
    // Eight threads pinned in pairs to processors 3, 2, 1, 0: every registered policy keeps
    // them there (the engine would stop the run otherwise).
    for name in ["batch", "round-robin", "priority"] {
        let mut sim = Simulation::new(machine(4), sched(name), 1).unwrap();
        let task = sim.add_task("pinned");
        for i in 0..8u32 {
            let attrs = smpsched_sim::ThreadAttrs {
                mask: Some(CpuMask::of([ProcId(3 - i / 2)])),
                base_priority: 0,
            };
            let ops = [
                Op::Compute(300_000),
                Op::Sleep(10_000),
                Op::Compute(300_000),
            ];
            sim.spawn_with(task, Box::new(smpsched_sim::Script::new(ops)), attrs)
                .unwrap();
        }
        let r = sim.run().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.apps[0].migrations, 0, "{name}");
    }
}

/// Spawns `left` workers, each of which computes and records how long it waited to start.
struct Pool {
    left: u32,
    children: Rc<RefCell<Vec<ThreadId>>>,
}

impl Program for Pool {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        if let Some(Outcome::Spawned(t)) = cx.take_outcome() {
            self.children.borrow_mut().push(t);
        }
        if self.left == 0 {
            return Op::Exit;
        }
        self.left -= 1;
        let born = cx.now;
        Op::Spawn(smpsched_sim::Spawner::new(move || {
            let mut step = 0;
            Box::new(FnProgram(move |cx: &mut ThreadCtx<'_>| {
                step += 1;
                match step {
                    1 => Op::Record {
                        name: "start_delay",
                        value: (cx.now - born) as f64,
                    },
                    2 => Op::Compute(5_000),
                    _ => Op::Exit,
                }
            }))
        }))
    }
}

/// A program from a closure.
struct FnProgram<F>(F);

impl<F: FnMut(&mut ThreadCtx<'_>) -> Op> Program for FnProgram<F> {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        (self.0)(cx)
    }
}

#[test]
fn programs_spawn_threads_and_record_their_own_measures() {
    let mut m = machine(4);
    m.memory = MemoryConfig::none();
    m.kernel.spawn = 700;
    let mut sim = Simulation::new(m, sched("round-robin"), 1).unwrap();
    let task = sim.add_task("pool");
    let children = Rc::new(RefCell::new(Vec::new()));
    sim.spawn(
        task,
        Box::new(Pool {
            left: 10,
            children: children.clone(),
        }),
    )
    .unwrap();
    let r = sim.run().unwrap();
    r.check_conservation().unwrap();
    let app = &r.apps[0];
    assert_eq!(app.threads, 11);
    let children = children.borrow();
    assert_eq!(children.len(), 10);
    assert!(children.windows(2).all(|w| w[0] < w[1]), "{children:?}");
    // The creator pays kernel.spawn per thread.
    assert_eq!(app.time.kernel, 10 * 700);
    assert_eq!(app.time.useful, 10 * 5_000);
    let rec = &app.recorded["start_delay"];
    assert_eq!(rec.count, 10);
    assert!(rec.min >= 0.0 && rec.max >= rec.min);
    assert_eq!(app.jobs.jobs, 11);
}
