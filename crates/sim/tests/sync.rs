//! Synchronization in the engine: mutual exclusion, no lost wake-ups, the spin limits of
//! spin-then-block, barriers, hints, and a priority inversion resolved by handoff.

use std::cell::Cell;
use std::rc::Rc;

use proptest::prelude::*;
use rand::Rng;
use smpsched_sim::sched::{policy, Scheduler};
use smpsched_sim::sync::{AfterSpin, Probe, Spin};
use smpsched_sim::{
    Cycles, Hint, Limits, MachineConfig, Op, Program, RunReport, SimError, Simulation, SyncId,
    SyncKind, ThreadCtx, WaitPolicy,
};

fn machine(p: u32) -> MachineConfig {
    let mut m = MachineConfig::tango_12();
    m.processors = p;
    m.slice_cycles = 20_000;
    m
}

fn sched(name: &str) -> Box<dyn Scheduler> {
    policy(name).unwrap().make(&toml::Table::new()).unwrap()
}

/// Takes a lock, checks nobody else is inside, computes, leaves, computes outside; `iters` times.
struct Locker {
    lock: SyncId,
    iters: u32,
    state: u8,
    inside: Rc<Cell<u32>>,
    worst: Rc<Cell<u32>>,
    passes: Rc<Cell<u64>>,
}

impl Program for Locker {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        match self.state {
            0 if self.iters == 0 => Op::Exit,
            0 => {
                self.state = 1;
                Op::Wait(self.lock)
            }
            1 => {
                self.inside.set(self.inside.get() + 1);
                self.worst.set(self.worst.get().max(self.inside.get()));
                self.passes.set(self.passes.get() + 1);
                self.state = 2;
                Op::Compute(cx.rng.random_range(1..3_000))
            }
            2 => {
                self.inside.set(self.inside.get() - 1);
                self.state = 3;
                Op::Signal(self.lock)
            }
            _ => {
                self.state = 0;
                self.iters -= 1;
                Op::Compute(cx.rng.random_range(1..6_000))
            }
        }
    }
}

fn lock_run(
    policy_name: &str,
    wait: WaitPolicy,
    procs: u32,
    threads: u32,
    seed: u64,
) -> (RunReport, u32, u64) {
    lock_run_on(machine(procs), policy_name, wait, threads, seed)
}

/// `threads` lockers on machine `m`: the report, the most threads ever inside at once, and the
/// number of passes through the critical section.
fn lock_run_on(
    m: MachineConfig,
    policy_name: &str,
    wait: WaitPolicy,
    threads: u32,
    seed: u64,
) -> (RunReport, u32, u64) {
    let mut sim = Simulation::new(m, sched(policy_name), seed).unwrap();
    let lock = sim.create_sync(SyncKind::Lock { holder: None }, wait);
    let task = sim.add_task("lockers");
    let inside = Rc::new(Cell::new(0));
    let worst = Rc::new(Cell::new(0));
    let passes = Rc::new(Cell::new(0));
    for _ in 0..threads {
        sim.spawn(
            task,
            Box::new(Locker {
                lock,
                iters: 20,
                state: 0,
                inside: inside.clone(),
                worst: worst.clone(),
                passes: passes.clone(),
            }),
        )
        .unwrap();
    }
    sim.set_limits(BOUND);
    let r = sim.run().unwrap();
    r.check_conservation().unwrap();
    (r, worst.get(), passes.get())
}

const POLICIES: [WaitPolicy; 4] = [
    WaitPolicy::SPIN,
    WaitPolicy::BLOCK,
    WaitPolicy {
        spin: Spin::Limit(500),
        probe: Probe::Continuous,
        after: AfterSpin::Block,
    },
    WaitPolicy {
        spin: Spin::Limit(2_000),
        probe: Probe::Backoff { base: 20, cap: 640 },
        after: AfterSpin::HandoffToHolder,
    },
];

/// A bound for the property tests' runs (far above what any case needs), so that a case that
/// never finishes fails and shrinks instead of hanging the suite.
const BOUND: Limits = Limits {
    cycles: Cycles::MAX,
    events: 5_000_000,
    ..Limits::NONE
};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn a_lock_is_never_held_by_two_threads(
        seed in 0u64..1_000_000,
        procs in 1u32..6,
        threads in 1u32..10,
        which in 0usize..4,
        prio in proptest::bool::ANY,
    ) {
        let name = if prio { "priority" } else { "round-robin" };
        let (r, worst, passes) = lock_run(name, POLICIES[which], procs, threads, seed);
        prop_assert!(worst <= 1, "two threads inside the critical section");
        // Nobody was lost: every thread got the lock every time and the run ended.
        prop_assert_eq!(passes, threads as u64 * 20);
        prop_assert!(r.elapsed_cycles > 0);
    }
}

#[test]
fn spin_limit_zero_never_spins_and_infinite_never_blocks() {
    let (r, ..) = lock_run("round-robin", WaitPolicy::BLOCK, 4, 8, 1);
    assert_eq!(r.total.spin, 0, "S = 0 spun");
    assert!(r.sync.blocks > 0, "contention expected");
    let (r, ..) = lock_run("round-robin", WaitPolicy::SPIN, 4, 8, 1);
    assert_eq!(r.sync.blocks, 0, "S = infinite blocked");
    assert!(r.total.spin > 0, "contention expected");
    let (r, ..) = lock_run("round-robin", WaitPolicy::spin_then_block(500), 4, 8, 1);
    assert!(r.total.spin > 0 && r.sync.blocks > 0);
}

#[test]
fn the_locks_counters_count_locks_alone() {
    // Only a lock: the lock counters are the whole run's, and the slices are elapsed time over
    // the 20,000-cycle slice.
    let (r, ..) = lock_run("round-robin", WaitPolicy::BLOCK, 4, 8, 1);
    assert!(r.locks.blocks > 0, "contention expected");
    assert_eq!(r.locks, r.sync);
    assert!((r.slices - r.elapsed_cycles as f64 / 20_000.0).abs() < 1e-9);
    // Only a semaphore: its waiters block, and no lock counts them.
    let mut sim = Simulation::new(machine(2), sched("priority"), 1).unwrap();
    let sem = sim.create_sync(SyncKind::Semaphore { count: 0 }, WaitPolicy::BLOCK);
    let task = sim.add_task("pc");
    let got = Rc::new(Cell::new(0));
    for _ in 0..3 {
        sim.spawn(
            task,
            Box::new(Producer {
                sem,
                left: 30,
                computing: false,
            }),
        )
        .unwrap();
        sim.spawn(
            task,
            Box::new(Consumer {
                sem,
                left: 30,
                got: got.clone(),
                waiting: false,
            }),
        )
        .unwrap();
    }
    sim.set_limits(BOUND);
    let r = sim.run().unwrap();
    assert!(r.sync.blocks > 0, "waiting consumers expected");
    assert_eq!(r.locks, smpsched_sim::sync::SyncStats::default());
}

/// Arrives at a barrier `episodes` times, computing a random time before each arrival, and
/// records the episode it passes.
struct Phases {
    barrier: SyncId,
    episodes: u32,
    computing: bool,
    passed: Rc<Cell<u64>>,
}

impl Program for Phases {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        if self.episodes == 0 {
            return Op::Exit;
        }
        self.computing = !self.computing;
        if self.computing {
            Op::Compute(cx.rng.random_range(100..50_000))
        } else {
            self.episodes -= 1;
            self.passed.set(self.passed.get() + 1);
            Op::Wait(self.barrier)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn barriers_wake_every_waiter(seed in 0u64..1_000_000, procs in 1u32..8, parties in 1u32..12, which in 0usize..3) {
        let mut sim = Simulation::new(machine(procs), sched("round-robin"), seed).unwrap();
        let barrier = sim.create_sync(
            SyncKind::Barrier { parties, arrived: 0, generation: 0 },
            POLICIES[which],
        );
        let task = sim.add_task("phases");
        let passed = Rc::new(Cell::new(0));
        for _ in 0..parties {
            sim.spawn(task, Box::new(Phases { barrier, episodes: 7, computing: false, passed: passed.clone() })).unwrap();
        }
        // A lost wake-up would end in SimError::Deadlock; a livelock at the event bound.
        sim.set_limits(BOUND);
        let r = sim.run().unwrap();
        r.check_conservation().unwrap();
        prop_assert_eq!(passed.get(), parties as u64 * 7);
    }
}

/// Producer/consumer over a semaphore: no unit is lost and no consumer sleeps forever.
struct Producer {
    sem: SyncId,
    left: u32,
    computing: bool,
}

impl Program for Producer {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        if self.left == 0 {
            return Op::Exit;
        }
        self.computing = !self.computing;
        if self.computing {
            Op::Compute(cx.rng.random_range(10..5_000))
        } else {
            self.left -= 1;
            Op::Signal(self.sem)
        }
    }
}

struct Consumer {
    sem: SyncId,
    left: u32,
    got: Rc<Cell<u32>>,
    waiting: bool,
}

impl Program for Consumer {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        if self.waiting {
            self.got.set(self.got.get() + 1);
        }
        if self.left == 0 {
            return Op::Exit;
        }
        self.waiting = !self.waiting;
        if self.waiting {
            self.left -= 1;
            Op::Wait(self.sem)
        } else {
            Op::Compute(cx.rng.random_range(10..5_000))
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn semaphores_lose_no_wakeup(seed in 0u64..1_000_000, procs in 1u32..6, pairs in 1u32..6, which in 0usize..3) {
        let mut sim = Simulation::new(machine(procs), sched("priority"), seed).unwrap();
        let sem = sim.create_sync(SyncKind::Semaphore { count: 0 }, POLICIES[which]);
        let task = sim.add_task("pc");
        let got = Rc::new(Cell::new(0));
        for _ in 0..pairs {
            sim.spawn(task, Box::new(Producer { sem, left: 30, computing: false })).unwrap();
            sim.spawn(task, Box::new(Consumer { sem, left: 30, got: got.clone(), waiting: false })).unwrap();
        }
        sim.set_limits(BOUND);
        let r = sim.run().unwrap();
        r.check_conservation().unwrap();
        prop_assert_eq!(got.get(), pairs * 30);
    }
}

/// A simulation whose one thread, of application `app`, waits on a semaphore nobody signals.
fn lone_consumer(policy: &str, wait: WaitPolicy, app: &str) -> Simulation {
    let mut sim = Simulation::new(machine(2), sched(policy), 1).unwrap();
    let sem = sim.create_sync(SyncKind::Semaphore { count: 0 }, wait);
    let task = sim.add_task(app);
    sim.spawn(
        task,
        Box::new(Consumer {
            sem,
            left: 1,
            got: Rc::new(Cell::new(0)),
            waiting: false,
        }),
    )
    .unwrap();
    sim
}

#[test]
fn a_spinner_with_no_producer_is_a_reported_livelock_not_a_deadlock() {
    // Batch has no quantum and no tick: a thread that spins forever leaves nothing to happen.
    let sim = lone_consumer("batch", WaitPolicy::SPIN, "spinner");
    match sim.run() {
        Err(e @ SimError::Livelock { spinning: 1, .. }) => {
            assert!(e.to_string().contains("livelock") && e.to_string().contains("`spinner`"));
        }
        other => panic!("expected a livelock, got {other:?}"),
    }
}

#[test]
fn a_consumer_with_no_producer_is_a_reported_deadlock() {
    let sim = lone_consumer("round-robin", WaitPolicy::BLOCK, "alone");
    match sim.run() {
        // The message names a blocked thread and its application, as a livelock's does.
        Err(e @ SimError::Deadlock { blocked: 1, .. }) => {
            assert!(e.to_string().contains("deadlock") && e.to_string().contains("`alone`"));
        }
        other => panic!("expected a deadlock, got {other:?}"),
    }
}

#[test]
fn releasing_a_lock_one_does_not_hold_is_an_error() {
    let mut sim = Simulation::new(machine(1), sched("round-robin"), 1).unwrap();
    let lock = sim.create_sync(SyncKind::Lock { holder: None }, WaitPolicy::BLOCK);
    let task = sim.add_task("bad");
    sim.spawn(
        task,
        Box::new(smpsched_sim::Script::new([Op::Signal(lock)])),
    )
    .unwrap();
    assert!(matches!(sim.run(), Err(SimError::Misuse { .. })));
}

/// Priority inversion (Black 5.1): on one processor a low-priority thread holds a lock and is
/// preempted by medium-priority hogs; a high-priority thread needs the lock. Handing the
/// processor to the holder lets the high-priority thread finish far sooner.
fn inversion(after: AfterSpin) -> (u64, RunReport) {
    let mut m = machine(1);
    m.slice_cycles = 50_000;
    let mut sim = Simulation::new(m, sched("priority"), 1).unwrap();
    let lock = sim.create_sync(
        SyncKind::Lock { holder: None },
        WaitPolicy {
            spin: Spin::Limit(500),
            probe: Probe::Continuous,
            after,
        },
    );
    let low = sim.add_task("low");
    // The holder has used a lot of processor (low priority), then takes the lock.
    sim.spawn(
        low,
        Box::new(smpsched_sim::Script::new([
            Op::Compute(2_000_000),
            Op::Wait(lock),
            Op::Compute(200_000),
            Op::Signal(lock),
        ])),
    )
    .unwrap();
    let mid = sim.add_task("medium");
    for _ in 0..3 {
        sim.spawn(
            mid,
            Box::new(smpsched_sim::Script::new([
                Op::Sleep(2_100_000),
                Op::Compute(3_000_000),
            ])),
        )
        .unwrap();
    }
    let high = sim.add_task("high");
    sim.spawn(
        high,
        Box::new(smpsched_sim::Script::new([
            Op::Sleep(2_150_000),
            Op::Wait(lock),
            Op::Compute(10_000),
            Op::Signal(lock),
        ])),
    )
    .unwrap();
    let r = sim.run().unwrap();
    r.check_conservation().unwrap();
    (r.apps[2].completion_cycles, r)
}

#[test]
fn handoff_to_the_holder_resolves_priority_inversion() {
    let (plain, _) = inversion(AfterSpin::Block);
    let (handoff, r) = inversion(AfterSpin::HandoffToHolder);
    eprintln!("high-priority thread done at {plain} cycles without handoff, {handoff} with");
    assert!(handoff < plain, "{handoff} >= {plain}");
    assert!(r.sync.blocks >= 1);
}

/// Handoff hints hand the processor to the named thread even when others are queued first.
struct Baton {
    me: u32,
    next: Rc<Cell<u32>>,
    ids: Rc<Cell<[u32; 3]>>,
    rounds: Rc<Cell<u32>>,
    hint: Hint,
}

impl Program for Baton {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        if self.rounds.get() == 0 {
            return Op::Exit;
        }
        if self.next.get() != self.me {
            return match self.hint {
                Hint::Handoff(_) => Op::Hint(Hint::Handoff(smpsched_sim::ThreadId(
                    self.ids.get()[self.next.get() as usize],
                ))),
                h => Op::Hint(h),
            };
        }
        self.rounds.set(self.rounds.get() - 1);
        let n = (self.me + 1 + cx.rng.random_range(0..2)) % 3;
        self.next.set(n);
        Op::Compute(100)
    }
}

fn baton(hint: Hint) -> RunReport {
    let mut sim = Simulation::new(machine(1), sched("round-robin"), 9).unwrap();
    let task = sim.add_task("baton");
    let next = Rc::new(Cell::new(0));
    let ids = Rc::new(Cell::new([0; 3]));
    let rounds = Rc::new(Cell::new(150));
    sim.set_time_limit(1_000_000_000);
    let mut got = [0; 3];
    for me in 0..3 {
        got[me as usize] = sim
            .spawn(
                task,
                Box::new(Baton {
                    me,
                    next: next.clone(),
                    ids: ids.clone(),
                    rounds: rounds.clone(),
                    hint,
                }),
            )
            .unwrap()
            .0;
    }
    ids.set(got);
    sim.run().unwrap()
}

#[test]
fn handoff_switches_less_than_mild_discouragement() {
    let handoff = baton(Hint::Handoff(smpsched_sim::ThreadId(0)));
    let mild = baton(Hint::Mild);
    assert!(handoff.elapsed_cycles <= mild.elapsed_cycles);
    assert!(handoff.apps[0].context_switches <= mild.apps[0].context_switches);
}

/// With the memory model on, a contended lock is a hot spot: the lock's line is invalidated at
/// each release and the waiters' re-reads and test-and-sets miss and serialize on it, so more
/// spinners make each hand-over slower. Nothing in the lock code says so; the memory model does.
#[test]
fn a_contended_lock_is_a_memory_hot_spot() {
    let handover = |threads: u32, memory: bool, probe: Probe| {
        let mut m = machine(threads);
        m.memory.enabled = memory;
        let wait = WaitPolicy {
            probe,
            ..WaitPolicy::SPIN
        };
        let (r, worst, passes) = lock_run_on(m, "round-robin", wait, threads, 5);
        assert!(worst <= 1);
        assert_eq!(passes, u64::from(threads) * 20);
        r
    };
    let off = handover(8, false, Probe::Continuous);
    assert_eq!(off.memory.invalidations, 0);
    let two = handover(2, true, Probe::Continuous);
    let eight = handover(8, true, Probe::Continuous);
    assert!(eight.memory.invalidations > two.memory.invalidations);
    assert!(eight.memory.misses > two.memory.misses);
    assert!(eight.total.stall > 0);
    // Waiting per acquisition grows with the number of spinners hammering the line.
    let per = |r: &RunReport, n: u64| r.total.spin as f64 / (n * 20) as f64;
    assert!(
        per(&eight, 8) > per(&two, 2),
        "{} vs {}",
        per(&eight, 8),
        per(&two, 2)
    );
}

#[test]
fn a_blocking_waiter_hands_its_processor_to_the_events_owner_next() {
    // One processor. The waiter blocks on an event its owner will set; another ready thread
    // was queued before the owner. With handoff the owner runs next (the other waits); with
    // plain blocking the queue order runs the other thread first.
    let owner_done = |after: AfterSpin| {
        let mut m = MachineConfig::tango_12();
        m.processors = 1;
        let sched = policy("round-robin")
            .unwrap()
            .make(&toml::Table::new())
            .unwrap();
        let mut sim = Simulation::new(m, sched, 1).unwrap();
        let app = sim.add_task("app");
        let event = sim.create_sync(
            SyncKind::Event { set: false },
            WaitPolicy {
                spin: Spin::Limit(0),
                probe: Probe::Continuous,
                after,
            },
        );
        let waiter = Op::Wait(event);
        sim.spawn(
            app,
            Box::new(smpsched_sim::Script::new([waiter, Op::Compute(1_000)])),
        )
        .unwrap();
        sim.spawn(
            app,
            Box::new(smpsched_sim::Script::new([Op::Compute(5_000_000)])),
        )
        .unwrap();
        let owners = sim.add_task("owner");
        let owner = sim
            .spawn(
                owners,
                Box::new(smpsched_sim::Script::new([
                    Op::Compute(1_000),
                    Op::Signal(event),
                ])),
            )
            .unwrap();
        sim.set_sync_owner(event, Some(owner));
        let r = sim.run().unwrap();
        r.check_conservation().unwrap();
        r.apps[1].completion_cycles
    };
    // The owner finishes at once with handoff, after a whole quantum of the long thread
    // (250,000 cycles) without.
    let handoff = owner_done(AfterSpin::HandoffToHolder);
    let plain = owner_done(AfterSpin::Block);
    assert!(handoff < 20_000, "the owner ran next: {handoff}");
    assert!(
        plain > 250_000,
        "queue order ran the long thread first: {plain}"
    );
}
