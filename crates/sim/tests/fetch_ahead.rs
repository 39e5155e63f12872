//! The policies' next-pick hints (`Scheduler::next_picks`), with which the engine has
//! the host fetch a thread's records ahead of its dispatch: they name the thread the policy
//! then picks, and they never change a result.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use smpsched_sim::sched::{policy, Scheduler};
use smpsched_sim::{MachineConfig, Op, ProcId, Program, Simulation, ThreadCtx, ThreadId};

mod common;
use common::Wrapped;

/// Above the engine's threshold for fetching ahead (32,768 threads).
const THREADS: u64 = 40_000;

/// Computes of random length with a sleep after every third.
struct Bursty {
    left: u32,
}

impl Program for Bursty {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        use rand::Rng;
        if self.left == 0 {
            return Op::Exit;
        }
        self.left -= 1;
        if self.left % 3 == 0 {
            Op::Sleep(cx.rng.random_range(1..20_000))
        } else {
            Op::Compute(cx.rng.random_range(1..60_000))
        }
    }
}

/// `inner` wrapped to check its hints: `hide` answers no hint at all (the engine then fetches
/// nothing ahead); otherwise each pick is compared with the first hint given after the pick
/// before it on the same queue (`shared`: one queue for every processor), counted in `right`
/// and `wrong`.
fn watched(
    inner: Box<dyn Scheduler>,
    hide: bool,
    shared: bool,
    right: Rc<Cell<u64>>,
    wrong: Rc<Cell<u64>>,
) -> Wrapped {
    let queue = move |p: ProcId| if shared { 0 } else { p.index() };
    let hints: Rc<RefCell<Vec<Option<ThreadId>>>> = Rc::default();
    let seen = hints.clone();
    let mut w = Wrapped::new(inner);
    w.on_pick = Box::new(move |p, t| {
        if let (Some(t), Some(Some(hint))) = (t, seen.borrow().get(queue(p))) {
            let count = if *hint == t { &right } else { &wrong };
            count.set(count.get() + 1);
        }
    });
    w.on_hints = Box::new(move |p, picks| {
        if hide {
            return [None, None];
        }
        let q = queue(p);
        let mut hints = hints.borrow_mut();
        if hints.len() <= q {
            hints.resize(q + 1, None);
        }
        hints[q] = picks[0];
        picks
    });
    w
}

/// Runs the load under `name`, its hints hidden or watched: the report's text, and how many
/// picks the hints named rightly and wrongly.
fn run(name: &str, hide: bool) -> (String, u64, u64) {
    let mut m = MachineConfig::tango_12();
    m.processors = 64;
    m.slice_cycles = 50_000;
    let (right, wrong) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
    let watched = watched(
        policy(name).unwrap().make(&toml::Table::new()).unwrap(),
        hide,
        name != "per-core",
        right.clone(),
        wrong.clone(),
    );
    let mut sim = Simulation::new(m, Box::new(watched), 5).unwrap();
    let task = sim.add_task("many");
    for _ in 0..THREADS {
        sim.spawn(task, Box::new(Bursty { left: 6 })).unwrap();
    }
    let r = sim.run().unwrap();
    r.check_conservation().unwrap();
    (format!("{r:?}"), right.get(), wrong.get())
}

#[test]
fn the_hints_name_the_next_pick_and_change_no_result() {
    for name in ["round-robin", "per-core", "priority"] {
        let (hidden, right, wrong) = run(name, true);
        assert_eq!((right, wrong), (0, 0), "{name}: a hidden hint was scored");
        let (hinted, right, wrong) = run(name, false);
        assert_eq!(hidden, hinted, "{name}: fetching ahead changed the run");
        // Without masks a FIFO's head is its next pick unless a handoff or a pull took
        // another thread first.
        assert!(
            right > 100_000 && wrong * 100 <= right,
            "{name}: the hints named {right} picks rightly and {wrong} wrongly"
        );
    }
}
