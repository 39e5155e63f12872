//! Process control end to end: task-queue applications told their processor counts suspend
//! workers until their runnable workers match their partition (Gupta et al. 1991, 7.2).

use std::cell::Cell;
use std::rc::Rc;

use smpsched_sim::sched::{
    policy, Actions, Enqueue, Handoff, QuantumEnd, SchedCtx, Scheduler, Shape, Stop, Target,
};
use smpsched_sim::{Cycles, MachineConfig, ProcId, Simulation, ThreadId};
use smpsched_workloads::{workload, Workload};

/// Delegates to a registered policy and, at each of its ticks after `settle`, counts every
/// application's runnable (ready or running) threads beyond its share of the processors.
struct Watch {
    inner: Box<dyn Scheduler>,
    settle: Cycles,
    worst_excess: Rc<Cell<i64>>,
}

impl Scheduler for Watch {
    fn enqueue(&mut self, t: ThreadId, why: Enqueue, cx: &SchedCtx) -> Target {
        self.inner.enqueue(t, why, cx)
    }
    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        self.inner.pick_next(p, cx)
    }
    fn shape(&self, m: &MachineConfig) -> Shape {
        self.inner.shape(m)
    }
    fn quantum_expired(&mut self, t: ThreadId, p: ProcId, cx: &SchedCtx) -> QuantumEnd {
        self.inner.quantum_expired(t, p, cx)
    }
    fn charge(&mut self, t: ThreadId, c: Cycles) {
        self.inner.charge(t, c)
    }
    fn stopped(&mut self, t: ThreadId, why: Stop, cx: &SchedCtx) {
        self.inner.stopped(t, why, cx)
    }
    fn dequeue(&mut self, t: ThreadId, cx: &SchedCtx) -> Handoff {
        self.inner.dequeue(t, cx)
    }
    fn tick(&mut self, cx: &SchedCtx, out: &mut Actions) {
        self.inner.tick(cx, out);
        let live = cx.tasks.iter().filter(|t| t.live > 0).count().max(1);
        if cx.now < self.settle || live < cx.tasks.len() {
            return;
        }
        let share = (cx.machine.processors as usize / live) as i64;
        for k in 0..cx.tasks.len() {
            let runnable = (0..cx.thread_count() as u32)
                .map(ThreadId)
                .filter(|&t| {
                    let i = cx.thread(t);
                    i.task.index() == k
                        && matches!(
                            i.state,
                            smpsched_sim::sched::ThreadState::Ready
                                | smpsched_sim::sched::ThreadState::Running(_)
                        )
                })
                .count() as i64;
            let w = self.worst_excess.get().max(runnable - share);
            self.worst_excess.set(w);
        }
    }
}

fn run(policy_name: &str) -> (i64, smpsched_sim::RunReport) {
    let mut m = MachineConfig::tango_12();
    m.memory = smpsched_sim::memory::MemoryConfig::none();
    let inner = policy(policy_name)
        .unwrap()
        .make(&toml::Table::new())
        .unwrap();
    let worst = Rc::new(Cell::new(i64::MIN));
    let slice = m.slice_cycles;
    let watch = Watch {
        inner,
        settle: 3 * slice,
        worst_excess: worst.clone(),
    };
    let mut sim = Simulation::new(m, Box::new(watch), 1).unwrap();
    let params: toml::Table = toml::from_str(
        "workers = 12\ntasks = 400\ntask = { dist = \"uniform\", min = 50000, max = 150000 }",
    )
    .unwrap();
    let w: Box<dyn Workload> = (workload("taskqueue").unwrap().build)(params).unwrap();
    for name in ["a", "b", "c", "d"] {
        let task = sim.add_task(name);
        w.install(&mut sim, task).unwrap();
    }
    let r = sim.run().unwrap();
    r.check_conservation().unwrap();
    (worst.get(), r)
}

#[test]
fn under_process_control_runnable_workers_never_exceed_the_partition() {
    let (excess, r) = run("process-control");
    assert!(
        excess <= 0,
        "an application had {excess} runnable workers beyond its share"
    );
    assert!(r.apps.iter().all(|a| a.recorded["suspended"].count >= 9));
    // Without the notices the same applications keep all twelve workers runnable on their
    // three processors.
    let (excess, r2) = run("partition");
    assert!(excess >= 6, "{excess}");
    assert!(r2
        .apps
        .iter()
        .all(|a| !a.recorded.contains_key("suspended")));
    let switches =
        |r: &smpsched_sim::RunReport| r.apps.iter().map(|a| a.context_switches).sum::<u64>();
    assert!(
        switches(&r) < switches(&r2),
        "{} vs {}",
        switches(&r),
        switches(&r2)
    );
}
