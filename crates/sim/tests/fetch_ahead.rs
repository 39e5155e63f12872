//! The policies' next-pick hints (`Scheduler::next_picks`), with which the engine has
//! the host fetch a thread's records ahead of its dispatch: they name the thread the policy
//! then picks, and they never change a result.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use smpsched_sim::outcome::{Reply, Request};
use smpsched_sim::sched::{
    policy, Actions, Enqueue, Handoff, Kick, QuantumEnd, SchedCtx, Scheduler, Shape, Stop, Target,
    Touch,
};
use smpsched_sim::{Cycles, MachineConfig, Op, ProcId, Program, Simulation, ThreadCtx, ThreadId};

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

/// A policy wrapped to check its hints: `hide` answers no hint at all (the engine then fetches
/// nothing ahead); otherwise each pick is compared with the first hint given after the pick
/// before it on the same queue (`shared`: one queue for every processor).
struct Watched {
    inner: Box<dyn Scheduler>,
    hide: bool,
    shared: bool,
    hints: RefCell<Vec<Option<ThreadId>>>,
    right: Rc<Cell<u64>>,
    wrong: Rc<Cell<u64>>,
}

impl Watched {
    fn queue(&self, p: ProcId) -> usize {
        if self.shared {
            0
        } else {
            p.index()
        }
    }
}

impl Scheduler for Watched {
    fn enqueue(&mut self, t: ThreadId, why: Enqueue, cx: &SchedCtx) -> Target {
        self.inner.enqueue(t, why, cx)
    }
    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        let t = self.inner.pick_next(p, cx);
        let q = self.queue(p);
        if let (Some(t), Some(Some(hint))) = (t, self.hints.borrow().get(q)) {
            let count = if *hint == t { &self.right } else { &self.wrong };
            count.set(count.get() + 1);
        }
        t
    }
    fn dequeue(&mut self, t: ThreadId, cx: &SchedCtx) -> Handoff {
        self.inner.dequeue(t, cx)
    }
    fn shape(&self, machine: &MachineConfig) -> Shape {
        self.inner.shape(machine)
    }
    fn quantum_expired(&mut self, t: ThreadId, p: ProcId, cx: &SchedCtx) -> QuantumEnd {
        self.inner.quantum_expired(t, p, cx)
    }
    fn charge(&mut self, t: ThreadId, cycles: Cycles) {
        self.inner.charge(t, cycles)
    }
    fn stopped(&mut self, t: ThreadId, why: Stop, cx: &SchedCtx) {
        self.inner.stopped(t, why, cx)
    }
    fn tick(&mut self, cx: &SchedCtx, out: &mut Actions) {
        self.inner.tick(cx, out)
    }
    fn request(
        &mut self,
        t: ThreadId,
        req: &Request,
        cx: &SchedCtx,
        out: &mut Actions,
    ) -> (Reply, Cycles) {
        self.inner.request(t, req, cx, out)
    }
    fn preempt_for(&mut self, t: ThreadId, cx: &SchedCtx) -> Option<ProcId> {
        self.inner.preempt_for(t, cx)
    }
    fn depress(&mut self, t: ThreadId, until: Option<Cycles>, cx: &SchedCtx) {
        self.inner.depress(t, until, cx)
    }
    fn layout(&mut self, alloc: &mut dyn FnMut(u64) -> u64) {
        self.inner.layout(alloc)
    }
    fn dispatch_touches(&self, p: ProcId, cx: &SchedCtx, out: &mut Vec<Touch>) {
        self.inner.dispatch_touches(p, cx, out)
    }
    fn take_kicks(&mut self, out: &mut Vec<Kick>) {
        self.inner.take_kicks(out)
    }
    fn next_picks(&self, p: ProcId, cx: &SchedCtx) -> [Option<ThreadId>; 2] {
        if self.hide {
            return [None, None];
        }
        let picks = self.inner.next_picks(p, cx);
        let q = self.queue(p);
        let mut hints = self.hints.borrow_mut();
        if hints.len() <= q {
            hints.resize(q + 1, None);
        }
        hints[q] = picks[0];
        picks
    }
}

/// Runs the load under `name`, its hints hidden or watched: the report's text, and how many
/// picks the hints named rightly and wrongly.
fn run(name: &str, hide: bool) -> (String, u64, u64) {
    let mut m = MachineConfig::tango_12();
    m.processors = 64;
    m.slice_cycles = 50_000;
    let (right, wrong) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
    let watched = Watched {
        inner: policy(name).unwrap().make(&toml::Table::new()).unwrap(),
        hide,
        shared: name != "per-core",
        hints: RefCell::new(Vec::new()),
        right: right.clone(),
        wrong: wrong.clone(),
    };
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
