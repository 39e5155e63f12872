//! Partitioned scheduling (Gupta, Tucker and Urushibara 1991, section 7.1): the processors are
//! divided equally among the applications with live threads, each application's threads run
//! only on its own block of processors, and within a block threads are chosen by priority with
//! usage decay, with affinity when `c` > 0 (`affinity`'s rule, one instance per application).
//! The division is redone when an application starts or finishes; a thread left on a
//! processor that changed hands is preempted at the next slice boundary.
//!
//! Invariant: after each slice boundary, every running thread runs in its application's block.

use serde::Deserialize;

use super::affinity::{self, Affinity};
use super::{
    Actions, Enqueue, Handoff, ParamInfo, PolicyInfo, QuantumEnd, SchedCtx, Scheduler, Shape, Stop,
    Target,
};
use crate::config::MachineConfig;
use crate::ids::{Cycles, ProcId, TaskId, ThreadId};
use crate::outcome::Notice;

/// Parameters of `partition` (and of `process-control`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Affinity weight within a partition (0: plain priority by usage; 0.5 in Figure 9).
    pub c: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params { c: 0.0 }
    }
}

/// The equal division of `processors` among `apps` applications, in order: each gets
/// `processors / apps`, the first `processors % apps` one more; `(first, count)` per
/// application. With more applications than processors, the last ones get none.
pub fn blocks(processors: usize, apps: usize) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(apps);
    let mut next = 0;
    for i in 0..apps {
        let n = processors / apps + usize::from(i < processors % apps);
        out.push((next, n));
        next += n;
    }
    out
}

/// Processors divided equally among the applications, priority (and affinity) within each.
#[derive(Debug)]
pub struct Partition {
    c: f64,
    /// One priority scheduler per application, by task index.
    apps: Vec<Affinity>,
    /// The application owning each processor (`None`: no live application).
    owner: Vec<Option<usize>>,
    /// Processors per application in the current division.
    share: Vec<u32>,
    /// Each application's first processor in the current division (its block is
    /// `first .. first + share`).
    first: Vec<u32>,
    /// The task of each thread seen (usage is charged without a context).
    task_of: Vec<u32>,
    /// The live applications the division was made for.
    divided_for: Vec<usize>,
    next_decay: Cycles,
    /// Process control (section 7.2): the count each application was last told, when the
    /// policy tells applications their processor counts.
    told: Option<Vec<Option<u32>>>,
}

impl Partition {
    /// A partitioned scheduler with these parameters.
    pub fn new(params: Params) -> Self {
        Partition {
            c: params.c,
            apps: Vec::new(),
            owner: Vec::new(),
            share: Vec::new(),
            first: Vec::new(),
            task_of: Vec::new(),
            divided_for: Vec::new(),
            next_decay: 0,
            told: None,
        }
    }

    /// The same division, telling each application its processor count whenever it changes
    /// ([`Notice::Processors`]): process control.
    pub fn telling(self) -> Self {
        Partition {
            told: Some(Vec::new()),
            ..self
        }
    }

    /// Tells every live application whose count changed (process control only).
    fn tell(&mut self, cx: &SchedCtx, out: &mut Actions) {
        let Some(told) = &mut self.told else { return };
        told.resize(cx.tasks.len(), None);
        for (k, task) in cx.tasks.iter().enumerate() {
            let n = self.share.get(k).copied().unwrap_or(0);
            if task.live > 0 && told[k] != Some(n) {
                told[k] = Some(n);
                out.notify.push((TaskId(k as u32), Notice::Processors(n)));
            }
        }
    }

    fn app(&mut self, task: usize) -> &mut Affinity {
        while self.apps.len() <= task {
            let a = Affinity::new(affinity::Params {
                c: self.c,
                ..Default::default()
            });
            self.apps.push(a);
        }
        &mut self.apps[task]
    }

    /// Redivides the processors if the live applications changed; `true` if it did.
    fn redivide(&mut self, cx: &SchedCtx) -> bool {
        let live: Vec<usize> = (0..cx.tasks.len())
            .filter(|&k| cx.tasks[k].live > 0)
            .collect();
        if live == self.divided_for && self.owner.len() == cx.machine.processors as usize {
            return false;
        }
        let n = cx.machine.processors as usize;
        self.owner = vec![None; n];
        self.share = vec![0; cx.tasks.len()];
        self.first = vec![0; cx.tasks.len()];
        for (&task, (first, count)) in live.iter().zip(blocks(n, live.len())) {
            for p in first..first + count {
                self.owner[p] = Some(task);
            }
            self.share[task] = count as u32;
            self.first[task] = first as u32;
        }
        self.divided_for = live;
        true
    }

    fn task(&self, t: ThreadId) -> Option<usize> {
        self.task_of.get(t.index()).map(|&k| k as usize)
    }

    /// Slice-boundary work: decay, redivide, and preempt threads
    /// running outside their application's block.
    fn boundary(&mut self, cx: &SchedCtx, out: &mut Actions) {
        if cx.now >= self.next_decay {
            self.next_decay = cx.now + affinity::Params::default().decay_interval;
            let mut ignored = Actions::default();
            for a in &mut self.apps {
                a.tick(cx, &mut ignored);
            }
        }
        self.redivide(cx);
        for (p, r) in cx.running.iter().enumerate() {
            if let Some(t) = *r {
                if self.owner.get(p).copied().flatten() != self.task(t) {
                    out.preempt.push(ProcId(p as u32));
                }
            }
        }
        out.offer_idle = true;
    }
}

impl Scheduler for Partition {
    fn shape(&self, machine: &MachineConfig) -> Shape {
        Shape::new(machine)
            .tick(Some(machine.slice_cycles.max(1)))
            .charging()
            .quiet_exits()
    }

    fn enqueue(&mut self, t: ThreadId, why: Enqueue, cx: &SchedCtx) -> Target {
        let task = cx.thread(t).task.index();
        if self.task_of.len() <= t.index() {
            self.task_of.resize(t.index() + 1, 0);
        }
        self.task_of[t.index()] = task as u32;
        let redivided = why == Enqueue::New && self.redivide(cx);
        let _ = self.app(task).enqueue(t, why, cx);
        let share = self.share.get(task).copied().unwrap_or(0);
        let first = ProcId(self.first.get(task).copied().unwrap_or(0));
        if redivided {
            // Processors changed hands: every idle one may now find work of its new owner.
            return match share {
                0 => Target::Any,
                _ => Target::Processor(first),
            };
        }
        // Only the application's block runs its threads.
        Target::Within {
            first,
            count: share,
        }
    }

    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        if self.owner.len() != cx.machine.processors as usize {
            self.redivide(cx);
        }
        let task = self.owner.get(p.index()).copied().flatten()?;
        self.app(task).pick_next(p, cx)
    }

    fn quantum_expired(&mut self, t: ThreadId, p: ProcId, cx: &SchedCtx) -> QuantumEnd {
        match self.task(t) {
            Some(task) => self.app(task).quantum_expired(t, p, cx),
            None => QuantumEnd::Renew,
        }
    }

    fn charge(&mut self, t: ThreadId, cycles: Cycles) {
        if let Some(task) = self.task(t) {
            self.app(task).charge(t, cycles);
        }
    }

    fn stopped(&mut self, t: ThreadId, why: Stop, cx: &SchedCtx) {
        if let Some(task) = self.task(t) {
            self.app(task).stopped(t, why, cx);
        }
        if why == Stop::Exited {
            self.redivide(cx);
        }
    }

    fn tick(&mut self, cx: &SchedCtx, out: &mut Actions) {
        self.boundary(cx, out);
        self.tell(cx, out);
    }

    fn dequeue(&mut self, t: ThreadId, cx: &SchedCtx) -> Handoff {
        match self.task(t) {
            Some(task) => self.app(task).dequeue(t, cx),
            None => Handoff::Refused,
        }
    }
}

impl super::PolicyParams for Params {
    fn check(&self) -> Result<(), super::ParamError> {
        // Checks c as the affinity policy does.
        super::PolicyParams::check(&affinity::Params {
            c: self.c,
            ..Default::default()
        })
    }
}

impl super::Settings for Params {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(Partition::new(self.clone()))
    }
}

/// Registry entry of `partition`.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "partition",
    summary: "processors divided equally among applications, priority within each block",
    description: "The applications with live threads share the processors equally, each in a \
                  block of its own; a thread runs only in its application's block, chosen there \
                  by priority with usage decay, and with affinity when c > 0. The division is \
                  redone as applications start and finish; threads left outside their block \
                  are preempted at the next slice boundary.",
    paper: "Gupta et al. 1991 section 7.1 (partitioned scheduling, Figure 9)",
    params: &[ParamInfo {
        name: "c",
        default: "0",
        doc: "affinity weight within a partition (0: plain priority)",
    }],
    processor_sets: false,
    parse: super::settings::<Params>,
};

#[cfg(test)]
mod tests {
    use super::blocks;

    #[test]
    fn processors_are_divided_equally_remainder_first() {
        assert_eq!(blocks(12, 4), vec![(0, 3), (3, 3), (6, 3), (9, 3)]);
        assert_eq!(blocks(10, 4), vec![(0, 3), (3, 3), (6, 2), (8, 2)]);
        assert_eq!(blocks(2, 3), vec![(0, 1), (1, 1), (2, 0)]);
        assert!(blocks(4, 0).is_empty());
    }
}
