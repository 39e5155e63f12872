//! Mach's processor sets through the engine (Black 1990, section 3): a manager creates a set,
//! moves processors and its task into it, and the threads keep to its processors; a set without
//! processors suspends its threads (or reports them stranded); policies without processor sets
//! refuse the calls.

use super::{build, machine, run};
use smpsched_sim::{Op, ProcId, Script};
/// Shared between the test's programs: when the manager saw its assignments done, and every
/// operation a thread started outside the processors its set then had.
#[derive(Default)]
struct SetWatch {
    assigned_at: std::cell::Cell<Option<u64>>,
    violations: std::cell::Cell<u32>,
    refused: std::cell::Cell<u32>,
}

/// Creates a processor set, moves processors 2 and 3 into it and its own task after them, then
/// tries to move the default set's last processors away (refused once only one is left).
struct Manager {
    step: u32,
    set: u32,
    watch: std::rc::Rc<SetWatch>,
}

impl smpsched_sim::Program for Manager {
    fn next(&mut self, cx: &mut smpsched_sim::ThreadCtx<'_>) -> Op {
        use smpsched_sim::{Outcome, ProcessorSetCall, Reply, Request};
        let outcome = cx.take_outcome();
        self.step += 1;
        match self.step {
            1 => Op::Kernel(Request::ProcessorSet(ProcessorSetCall::Create)),
            2 => {
                let Some(Outcome::Kernel(Reply::ProcessorSet(s))) = outcome else {
                    panic!("no set: {outcome:?}")
                };
                self.set = s;
                Op::Kernel(Request::ProcessorSet(ProcessorSetCall::AssignProcessor {
                    set: s,
                    processor: ProcId(2),
                }))
            }
            3 => Op::Kernel(Request::ProcessorSet(ProcessorSetCall::AssignProcessor {
                set: self.set,
                processor: ProcId(3),
            })),
            4 => Op::Kernel(Request::ProcessorSet(ProcessorSetCall::AssignTask {
                set: self.set,
            })),
            5 => {
                self.watch.assigned_at.set(Some(cx.now));
                // Processors 0 and 1 are the default set's; moving one is allowed...
                Op::Kernel(Request::ProcessorSet(ProcessorSetCall::AssignProcessor {
                    set: self.set,
                    processor: ProcId(1),
                }))
            }
            6 => {
                assert_eq!(outcome, Some(Outcome::Kernel(Reply::Done)));
                // ...the last one is not.
                Op::Kernel(Request::ProcessorSet(ProcessorSetCall::AssignProcessor {
                    set: self.set,
                    processor: ProcId(0),
                }))
            }
            7 => {
                if let Some(Outcome::Kernel(Reply::Refused(_))) = outcome {
                    self.watch.refused.set(self.watch.refused.get() + 1);
                }
                Op::Exit
            }
            _ => Op::Exit,
        }
    }
}

/// Computes in short pieces, noting any piece begun outside `allowed` once the sets are made.
struct Watched {
    left: u32,
    allowed: &'static [u32],
    watch: std::rc::Rc<SetWatch>,
}

impl smpsched_sim::Program for Watched {
    fn next(&mut self, cx: &mut smpsched_sim::ThreadCtx<'_>) -> Op {
        let settled = self.watch.assigned_at.get().is_some_and(|at| cx.now > at);
        if settled && !self.allowed.contains(&cx.processor.0) {
            self.watch.violations.set(self.watch.violations.get() + 1);
        }
        if self.left == 0 {
            return Op::Exit;
        }
        self.left -= 1;
        Op::Compute(200_000)
    }
}

#[test]
fn mach_processor_sets_keep_threads_on_their_sets_processors() {
    let watch = std::rc::Rc::new(SetWatch::default());
    let m = machine(4);
    let mut sim = build("mach", "", m.clone());
    let parallel = sim.add_task("parallel");
    let background = sim.add_task("background");
    sim.spawn(
        parallel,
        Box::new(Manager {
            step: 0,
            set: 0,
            watch: watch.clone(),
        }),
    )
    .unwrap();
    for _ in 0..3 {
        let w = Watched {
            left: 100,
            allowed: &[1, 2, 3],
            watch: watch.clone(),
        };
        sim.spawn(parallel, Box::new(w)).unwrap();
        let b = Watched {
            left: 100,
            allowed: &[0, 1],
            watch: watch.clone(),
        };
        sim.spawn(background, Box::new(b)).unwrap();
    }
    let r = run(sim);
    assert!(watch.assigned_at.get().is_some());
    assert_eq!(
        watch.violations.get(),
        0,
        "a thread ran outside its processor set"
    );
    assert_eq!(
        watch.refused.get(),
        1,
        "the default set kept its last processor"
    );
    // The manager paid Table 4: a set created, three processors assigned, one task assigned
    // (and a refused request at the cost of a thread_switch call).
    let us = |x: f64| m.ms(x / 1000.0);
    let table4 = us(2250.0) + 3 * us(4772.0) + us(2624.0);
    let kernel = r.apps[0].time.kernel;
    assert!(kernel >= table4, "{kernel} < {table4}");
}

#[test]
fn mach_a_processor_set_without_processors_suspends_its_threads() {
    struct Suspender {
        step: u32,
        set: u32,
    }
    impl smpsched_sim::Program for Suspender {
        fn next(&mut self, cx: &mut smpsched_sim::ThreadCtx<'_>) -> Op {
            use smpsched_sim::{Outcome, ProcessorSetCall, Reply, Request};
            self.step += 1;
            match (self.step, cx.take_outcome()) {
                (1, _) => Op::Kernel(Request::ProcessorSet(ProcessorSetCall::Create)),
                (2, Some(Outcome::Kernel(Reply::ProcessorSet(s)))) => {
                    self.set = s;
                    // Every other thread of the task goes to the empty set.
                    Op::Kernel(Request::ProcessorSet(ProcessorSetCall::AssignThread {
                        set: s,
                        thread: Some(smpsched_sim::ThreadId(1)),
                    }))
                }
                (3, _) => Op::Compute(20_000_000),
                (4, _) => Op::Kernel(Request::ProcessorSet(ProcessorSetCall::AssignProcessor {
                    set: self.set,
                    processor: ProcId(1),
                })),
                _ => Op::Exit,
            }
        }
    }
    let mut sim = build("mach", "", machine(2));
    let task = sim.add_task("app");
    sim.spawn(task, Box::new(Suspender { step: 0, set: 0 }))
        .unwrap();
    let worker = sim.add_task("suspended");
    sim.spawn(
        worker,
        Box::new(Script::new([Op::Sleep(1_000), Op::Compute(1_000_000)])),
    )
    .unwrap();
    let r = run(sim);
    // The worker waited in its empty set until a processor joined it after the 20 M compute.
    assert!(
        r.apps[1].completion_cycles > 20_000_000,
        "{}",
        r.apps[1].completion_cycles
    );
}

#[test]
fn mach_a_thread_left_in_a_set_without_processors_is_reported_stranded() {
    // A thread moves its sibling into a new, empty set and exits: no processor may ever run
    // the sibling. The run stops at once, naming it, instead of ticking to its event limit.
    struct Strander {
        step: u32,
    }
    impl smpsched_sim::Program for Strander {
        fn next(&mut self, cx: &mut smpsched_sim::ThreadCtx<'_>) -> Op {
            use smpsched_sim::{Outcome, ProcessorSetCall, Reply, Request};
            self.step += 1;
            match (self.step, cx.take_outcome()) {
                (1, _) => Op::Kernel(Request::ProcessorSet(ProcessorSetCall::Create)),
                (2, Some(Outcome::Kernel(Reply::ProcessorSet(s)))) => {
                    Op::Kernel(Request::ProcessorSet(ProcessorSetCall::AssignThread {
                        set: s,
                        thread: Some(smpsched_sim::ThreadId(1)),
                    }))
                }
                _ => Op::Exit,
            }
        }
    }
    let mut sim = build("mach", "", machine(2));
    let task = sim.add_task("app");
    sim.spawn(task, Box::new(Strander { step: 0 })).unwrap();
    let left = sim.add_task("left-behind");
    sim.spawn(
        left,
        Box::new(Script::new([Op::Sleep(1_000), Op::Compute(1_000_000)])),
    )
    .unwrap();
    match sim.run() {
        Err(e @ smpsched_sim::SimError::Stranded { ready: 1, .. }) => {
            let text = e.to_string();
            assert!(
                text.contains("`left-behind`") && text.contains("processor set"),
                "{text}"
            );
        }
        other => panic!("expected a stranded thread, got {other:?}"),
    }
}

#[test]
fn policies_without_processor_sets_refuse_them() {
    struct Asker(u32, std::rc::Rc<std::cell::Cell<bool>>);
    impl smpsched_sim::Program for Asker {
        fn next(&mut self, cx: &mut smpsched_sim::ThreadCtx<'_>) -> Op {
            use smpsched_sim::{Outcome, ProcessorSetCall, Reply, Request};
            self.0 += 1;
            if let Some(Outcome::Kernel(Reply::Refused(_))) = cx.take_outcome() {
                self.1.set(true);
            }
            if self.0 == 1 {
                Op::Kernel(Request::ProcessorSet(ProcessorSetCall::Create))
            } else {
                Op::Exit
            }
        }
    }
    let refused = std::rc::Rc::new(std::cell::Cell::new(false));
    let mut sim = build("round-robin", "", machine(2));
    let task = sim.add_task("app");
    sim.spawn(task, Box::new(Asker(0, refused.clone())))
        .unwrap();
    run(sim);
    assert!(refused.get());
}
