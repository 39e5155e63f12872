//! The event-free test-and-test-and-set wait ([`Op::Poll`]) is exact: threads contending for a
//! spin lock on the Sequent Symmetry's bus give the same run (times, memory counts, what each
//! recorded) whether their waits poll with [`Op::Poll`] or step every pause and load as
//! separate operations, and the polling run takes fewer events.

use smpsched_sim::memory::Placement;
use smpsched_sim::readyq::Pause;
use smpsched_sim::sched::policy;
use smpsched_sim::{
    CpuMask, Cycles, MachineConfig, Op, Outcome, ProcId, Program, RunReport, Simulation,
    ThreadAttrs, ThreadCtx, WordOp,
};

/// Takes the lock at `lock` `rounds` times (test-and-set, then reads until it is free), holds it
/// `hold` cycles while writing `data`, releases it and computes `outside` cycles; records each
/// acquisition's time. `stepped` waits with a pause and a load per poll, else with `Op::Poll`.
struct Locker {
    lock: u64,
    data: u64,
    rounds: u32,
    hold: Cycles,
    outside: Cycles,
    pause: Pause,
    stepped: bool,
    pauses: u32,
    state: u8,
}

impl Locker {
    fn wait(&mut self) -> Op {
        if self.stepped {
            self.state = 2;
            let c = self.pause.nth(self.pauses);
            self.pauses = self.pauses.saturating_add(1);
            Op::Compute(c)
        } else {
            self.state = 4;
            Op::Poll {
                addr: self.lock,
                pause: self.pause,
                pauses: self.pauses,
            }
        }
    }

    fn test_and_set(&mut self) -> Op {
        self.state = 1;
        Op::Word {
            addr: self.lock,
            op: WordOp::TestAndSet,
        }
    }
}

impl Program for Locker {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        let outcome = cx.take_outcome();
        match self.state {
            0 if self.rounds == 0 => Op::Exit,
            0 => {
                self.state = 10;
                Op::Compute(self.outside)
            }
            10 => self.test_and_set(),
            1 => match outcome {
                Some(Outcome::Word { success: true, .. }) => {
                    self.pauses = 0;
                    self.state = 5;
                    Op::Record {
                        name: "acquired",
                        value: cx.now as f64,
                    }
                }
                _ => self.wait(),
            },
            2 => {
                self.state = 3;
                Op::Word {
                    addr: self.lock,
                    op: WordOp::Load,
                }
            }
            3 => match outcome {
                Some(Outcome::Word { old: 0, .. }) => self.test_and_set(),
                _ => self.wait(),
            },
            4 => match outcome {
                Some(Outcome::Polled { old: 0, pauses }) => {
                    self.pauses = pauses;
                    self.test_and_set()
                }
                other => panic!("a poll ended with {other:?}"),
            },
            5 => {
                self.state = 6;
                Op::Compute(self.hold)
            }
            6 => {
                self.state = 7;
                Op::Word {
                    addr: self.data,
                    op: WordOp::Store(cx.now),
                }
            }
            _ => {
                self.state = 0;
                self.rounds -= 1;
                Op::Word {
                    addr: self.lock,
                    op: WordOp::Store(0),
                }
            }
        }
    }
}

fn run(stepped: bool, threads: u32, pause: Cycles, seed: u64) -> RunReport {
    build(stepped, threads, pause, seed).run().unwrap()
}

fn build(stepped: bool, threads: u32, pause: Cycles, seed: u64) -> Simulation {
    let mut m = MachineConfig::sequent_symmetry();
    m.processors = threads;
    let sched = policy("batch").unwrap().make(&toml::Table::new()).unwrap();
    let mut sim = Simulation::new(m, sched, seed).unwrap();
    let region = sim.memory().alloc(4096, Placement::Uma, None);
    let task = sim.add_task("lockers");
    for i in 0..threads {
        let p = Locker {
            lock: region.base,
            data: region.base + 8,
            rounds: 40,
            hold: 700 + 131 * Cycles::from(i),
            outside: 50 + 977 * Cycles::from(i % 3),
            pause: Pause::new(pause, u64::from(i) + 1),
            stepped,
            pauses: 0,
            state: 0,
        };
        let attrs = ThreadAttrs {
            mask: Some(CpuMask::of([ProcId(i)])),
            base_priority: 0,
        };
        sim.spawn_with(task, Box::new(p), attrs).unwrap();
    }
    sim
}

/// What a run measured, apart from its event count.
fn measured(r: &RunReport) -> String {
    format!(
        "{} {:?} {:?} {:?}",
        r.elapsed_cycles, r.processors, r.memory, r.apps[0].recorded
    )
}

#[test]
fn polling_gives_the_stepped_run_with_fewer_events() {
    // Two to sixteen processors; short pauses (long waits' random pauses included) and long
    // ones. Pollers fall into step and wake at the cycle of other events: the order of
    // simultaneous events is kept too.
    let mut events = (0, 0);
    for (threads, pause, seed) in [
        (2, 32, 1),
        (4, 32, 1),
        (5, 7, 2),
        (8, 33, 3),
        (16, 32, 4),
        (3, 200, 5),
    ] {
        let stepped = run(true, threads, pause, seed);
        let polled = run(false, threads, pause, seed);
        assert_eq!(
            measured(&stepped),
            measured(&polled),
            "{threads} threads, pause {pause}"
        );
        assert!(
            polled.events < stepped.events,
            "{threads} threads, pause {pause}"
        );
        events.0 += polled.events;
        events.1 += stepped.events;
    }
    assert!(
        events.0 * 3 < events.1,
        "events {} polled, {} stepped",
        events.0,
        events.1
    );
}

#[test]
fn a_run_stopped_at_its_time_limit_with_pollers_parked_measures_what_stepping_does() {
    // The run stops while waiters are parked (the bound falls between two events): the end of
    // the run counts their loads and charges their time, and schedules nothing.
    for limit in [20_000, 33_333, 61_001] {
        let stopped = |stepped: bool| {
            let mut sim = build(stepped, 6, 32, 7);
            sim.set_time_limit(limit);
            match sim.run() {
                Err(smpsched_sim::SimError::Limit { partial, .. }) => *partial,
                other => panic!(
                    "the run should stop at {limit}: {:?}",
                    other.map(|r| r.events)
                ),
            }
        };
        assert_eq!(
            measured(&stopped(true)),
            measured(&stopped(false)),
            "limit {limit}"
        );
    }
}
