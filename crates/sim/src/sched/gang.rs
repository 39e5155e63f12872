//! Gang scheduling (Gupta, Tucker and Urushibara 1991, section 6; Ousterhout's coscheduling):
//! the applications take the machine in turn, one slice each; in its slice every thread of the
//! application runs at once, and a thread always runs on the same processor (rank r on
//! processor r mod P), so its cache is kept; threads of one application that share a processor
//! (more threads than processors) take its slices in turn. With `fill`, a processor the current application
//! leaves idle runs a ready thread of another application that belongs on it (Ousterhout's
//! filling of leftover processors).
//!
//! Invariant: a thread is only ever dispatched on its own processor.

use std::collections::VecDeque;

use serde::Deserialize;

use super::{Actions, Enqueue, Handoff, ParamInfo, PolicyInfo, SchedCtx, Scheduler, Shape, Target};
use crate::config::MachineConfig;
use crate::ids::{ProcId, ThreadId};

/// Parameters of `gang`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// The gang slice in milliseconds (10 and 25 in the paper).
    pub slice_ms: f64,
    /// Fill processors the current gang leaves idle with other applications' threads.
    pub fill: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            slice_ms: 10.0,
            fill: false,
        }
    }
}

/// Gang scheduling: one application's threads at a time, each on its own processor.
#[derive(Debug)]
pub struct Gang {
    params: Params,
    /// The application whose slice it is.
    current: usize,
    /// Ready threads by application and processor.
    ready: Vec<Vec<VecDeque<ThreadId>>>,
}

impl Gang {
    /// A gang scheduler with these parameters.
    pub fn new(params: Params) -> Self {
        Gang {
            params,
            current: 0,
            ready: Vec::new(),
        }
    }

    /// The processor thread `t` always runs on: its rank modulo the processors, or, for a
    /// thread whose mask excludes that one, the first processor of its mask at or after it.
    fn home(t: ThreadId, cx: &SchedCtx) -> usize {
        let n = cx.machine.processors as usize;
        let r = cx.thread(t).rank as usize % n;
        (0..n)
            .map(|i| (r + i) % n)
            .find(|&p| cx.allowed(t, ProcId(p as u32)))
            .unwrap_or(r)
    }

    /// The next application with live threads takes the machine.
    fn rotate(&mut self, cx: &SchedCtx) {
        let tasks = cx.tasks.len().max(1);
        if let Some(next) = (1..=tasks)
            .map(|i| (self.current + i) % tasks)
            .find(|&k| cx.tasks.get(k).is_some_and(|t| t.live > 0))
        {
            self.current = next;
        }
    }

    fn slot(&mut self, task: usize, n: usize) -> &mut Vec<VecDeque<ThreadId>> {
        if self.ready.len() <= task {
            self.ready.resize_with(task + 1, Vec::new);
        }
        let rows = &mut self.ready[task];
        if rows.len() < n {
            rows.resize_with(n, VecDeque::new);
        }
        rows
    }
}

impl Scheduler for Gang {
    fn shape(&self, machine: &MachineConfig) -> Shape {
        let slice = machine.ms(self.params.slice_ms).max(1);
        Shape::new(machine)
            .unsliced(slice)
            .tick(Some(slice))
            .quiet_exits()
    }

    fn enqueue(&mut self, t: ThreadId, _why: Enqueue, cx: &SchedCtx) -> Target {
        let n = cx.machine.processors as usize;
        let (task, p) = (cx.thread(t).task.index(), Self::home(t, cx));
        self.slot(task, n)[p].push_back(t);
        // Only its home processor takes a thread from its slot.
        Target::only(ProcId(p as u32))
    }

    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        let n = cx.machine.processors as usize;
        // The gang's application has exited: the next one takes the machine now, not at the
        // end of the slice (every idle processor is asked after an exit).
        if cx.tasks.get(self.current).is_some_and(|t| t.live == 0) {
            self.rotate(cx);
        }
        let mine = self.slot(self.current, n)[p.index()].pop_front();
        if mine.is_some() || !self.params.fill {
            return mine;
        }
        let tasks = self.ready.len();
        (1..tasks)
            .map(|i| (self.current + i) % tasks)
            .find_map(|k| self.ready[k].get_mut(p.index())?.pop_front())
    }

    fn tick(&mut self, cx: &SchedCtx, out: &mut Actions) {
        self.rotate(cx);
        // Every running thread of another gang makes way, and so does one of the gang's own
        // whose processor has another of its threads ready (an application with more threads
        // than processors: those sharing one take the slices in turn, so that a thread spinning
        // for a sibling on its processor cannot hold it for ever); idle processors ask the new
        // gang.
        let current = self.current;
        let waiting = |p: usize| {
            self.ready
                .get(current)
                .and_then(|rows| rows.get(p))
                .is_some_and(|q| !q.is_empty())
        };
        out.preempt
            .extend(cx.running.iter().enumerate().filter_map(|(p, r)| {
                r.filter(|&t| cx.thread(t).task.index() != current || waiting(p))
                    .map(|_| ProcId(p as u32))
            }));
        out.offer_idle = true;
    }

    fn dequeue(&mut self, t: ThreadId, cx: &SchedCtx) -> Handoff {
        let (task, p) = (cx.thread(t).task.index(), Self::home(t, cx));
        let q = &mut self.slot(task, cx.machine.processors as usize)[p];
        Handoff::taken_if(match q.iter().position(|&x| x == t) {
            Some(i) => q.remove(i).is_some(),
            None => false,
        })
    }
}

impl super::PolicyParams for Params {
    fn check(&self) -> Result<(), super::ParamError> {
        super::params::check_range(
            "slice_ms",
            self.slice_ms,
            0.001,
            super::params::MAX_PERIOD_MS,
            "milliseconds",
        )?;
        Ok(())
    }
}

impl super::Settings for Params {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(Gang::new(self.clone()))
    }
}

/// Registry entry of `gang`.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "gang",
    summary: "applications take the whole machine in turn, each thread on its own processor",
    description: "Every slice the next application with live threads takes the machine: all its \
                  threads run at once, thread of rank r on processor r mod P, so a thread always \
                  finds its own cache (threads sharing a processor, when the application has \
                  more than the machine, take its slices in turn). Threads of other applications \
                  are preempted at the slice boundary. With `fill`, a processor the current application leaves idle runs \
                  another application's thread that belongs on it. When the current \
                  application exits, the next takes the machine at once.",
    paper: "Gupta et al. 1991 section 6 (gang scheduling, 10 ms and 25 ms slices)",
    params: &[
        ParamInfo {
            name: "slice_ms",
            default: "10",
            doc: "the gang slice in milliseconds",
        },
        ParamInfo {
            name: "fill",
            default: "false",
            doc: "fill processors the current gang leaves idle (Ousterhout)",
        },
    ],
    processor_sets: false,
    parse: super::settings::<Params>,
};
