//! The guide's "write your own policy" example (docs/policies.md): a first-come first-served
//! policy in one shared queue that runs every thread until it blocks or exits.

use smpsched_sim::sched::queues::Fifo;
use smpsched_sim::sched::{Enqueue, Handoff, PolicyInfo, SchedCtx, Scheduler, Shape, Target};
use smpsched_sim::{MachineConfig, ProcId, ThreadId};

/// One shared FIFO run queue; no time slices.
#[derive(Default)]
pub struct FirstCome {
    queue: Fifo,
}

impl Scheduler for FirstCome {
    fn shape(&self, machine: &MachineConfig) -> Shape {
        Shape::new(machine)
            .unsliced(machine.slice_cycles)
            .shared_queue()
    }

    fn enqueue(&mut self, t: ThreadId, _why: Enqueue, _cx: &SchedCtx) -> Target {
        self.queue.push(t);
        Target::Any
    }

    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        self.queue.pop_for(p, cx)
    }

    fn dequeue(&mut self, t: ThreadId, _cx: &SchedCtx) -> Handoff {
        Handoff::taken_if(self.queue.remove(t))
    }
}

/// Its registration: the name experiment files use, its documentation, its settings (none).
pub const INFO: PolicyInfo = PolicyInfo {
    name: "fifo",
    summary: "first come, first served; no time slices",
    description: "One queue shared by every processor; a thread runs until it blocks or exits.",
    paper: "the policy guide's example (docs/policies.md)",
    params: &[],
    processor_sets: false,
    parse: smpsched_sim::sched::no_params::<FirstCome>,
};

#[test]
fn the_guides_example_is_the_code_tested_here() {
    let guide = include_str!("../../../../docs/policies.md");
    let code = include_str!("mod.rs");
    let body = &code[code.find("use smpsched_sim").unwrap()..code.find("\n#[test]").unwrap()];
    assert!(
        guide.contains(body.trim()),
        "docs/policies.md is out of step with this file"
    );
    assert!(
        smpsched_sim::sched::policy(INFO.name).is_none(),
        "fifo is not a registered name: the guide tells readers to register theirs as another"
    );
}
