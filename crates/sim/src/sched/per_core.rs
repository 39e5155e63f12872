//! Per-core run queues with pull and push migration and affinity masks (Weibel; Linux's
//! per-CPU run queues): each processor serves its own FIFO queue. A new thread goes to the
//! allowed processor with the shortest queue, a woken one back to the processor it last ran on
//! (its cache may still be warm). With `pull`, a processor whose queue is empty pulls from the
//! tail of the busiest queue holding a thread it may run (at once, or with `pull_ms` at the next
//! pull pass, scanning every queue: Weibel section 3's pull interval), and every `balance_ms` an
//! underloaded processor pulls one thread; with `push`, a preempted thread goes to a queue at
//! least `push_threshold` shorter than its own. Each queue has a lock in the simulated memory:
//! a dispatch takes the lock of every queue it looks at, so contention on a busy queue shows
//! as kernel time. With `global`, every processor serves one shared queue behind one lock
//! (Weibel's global run queue, Figure 1). The victim choices are `smpsched_policy::migration`.
//!
//! Invariant: a thread is only queued on, pulled to or pushed to a processor its mask allows.

use std::collections::VecDeque;

use serde::Deserialize;
use smpsched_policy::migration::{pull_victim_where, push_target};

use super::{
    Actions, Enqueue, Handoff, ParamInfo, PolicyInfo, QuantumEnd, SchedCtx, Scheduler, Shape,
    Target, Touch,
};
use crate::config::MachineConfig;
use crate::ids::{Cycles, ProcId, ThreadId};

/// Parameters of `per-core`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// One queue shared by every processor instead of one each (Weibel's global run queue,
    /// Figure 1), behind one lock in the simulated memory. Needs `pull = false`.
    pub global: bool,
    /// An idle processor pulls work from the busiest queue.
    pub pull: bool,
    /// Milliseconds between an idle processor's pull passes (Weibel section 3's pull
    /// interval): 0 pulls at once when a processor runs dry; otherwise an idle processor scans
    /// every queue (taking their locks) only at each pass. Needs `pull`.
    pub pull_ms: f64,
    /// Milliseconds between periodic balancing passes (an underloaded processor pulls one
    /// thread); 0 for none. Needs `pull`.
    pub balance_ms: f64,
    /// A preempted thread moves to a sufficiently emptier queue.
    pub push: bool,
    /// How much shorter a queue must be for a push.
    pub push_threshold: usize,
    /// Time slice in milliseconds; the machine's slice when absent.
    #[serde(deserialize_with = "super::params::de_slice_ms", default)]
    pub slice_ms: Option<f64>,
    /// Deprecated: the time slice in cycles (write `slice_ms`).
    #[serde(deserialize_with = "super::params::de_quantum", default)]
    pub quantum: Option<Cycles>,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            global: false,
            pull: true,
            pull_ms: 0.0,
            balance_ms: 0.0,
            push: false,
            push_threshold: 2,
            slice_ms: None,
            quantum: None,
        }
    }
}

/// One FIFO run queue per processor.
#[derive(Debug)]
pub struct PerCore {
    params: Params,
    queues: Vec<VecDeque<ThreadId>>,
    /// The lock line of each queue in the simulated memory.
    locks: Vec<u64>,
    /// The queues the last pick on each processor looked at (their locks are charged).
    looked: Vec<Vec<usize>>,
    /// Processors whose next pick may pull (a pull pass is due), with `pull_ms`.
    pull_due: Vec<bool>,
    /// When the next periodic balancing pass is due.
    next_balance: Cycles,
    /// Threads queued over every queue: an idle processor finds nothing to pull without
    /// scanning the queues when it is 0 (on a large machine with little work, each idle
    /// processor's scan of every queue, at every event, made the run's cost grow with the
    /// square of the processors).
    queued: usize,
}

impl PerCore {
    /// A per-core scheduler with these parameters.
    pub fn new(params: Params) -> Self {
        PerCore {
            params,
            queues: Vec::new(),
            locks: Vec::new(),
            looked: Vec::new(),
            pull_due: Vec::new(),
            next_balance: 0,
            queued: 0,
        }
    }

    /// Appends `t` to queue `q`.
    fn push(&mut self, q: usize, t: ThreadId) {
        self.queues[q].push_back(t);
        self.queued += 1;
    }

    /// Takes the thread at `i` out of queue `q`.
    fn take(&mut self, q: usize, i: usize) -> Option<ThreadId> {
        let t = self.queues[q].remove(i)?;
        self.queued -= 1;
        Some(t)
    }

    fn size(&mut self, cx: &SchedCtx) {
        let n = cx.machine.processors as usize;
        if self.queues.len() < n {
            self.queues.resize_with(n, VecDeque::new);
            self.looked.resize_with(n, Vec::new);
            self.pull_due.resize(n, false);
        }
    }

    /// The queue processor `p` serves: its own, or the global one.
    fn home(&self, p: usize) -> usize {
        if self.params.global {
            0
        } else {
            p
        }
    }

    /// The first thread of queue `q` that processor `p` may run, taken out.
    fn take_head(&mut self, q: usize, p: usize, cx: &SchedCtx) -> Option<ThreadId> {
        let i = if cx.any_masked() {
            self.queues[q]
                .iter()
                .position(|&t| cx.allowed(t, ProcId(p as u32)))?
        } else {
            0
        };
        self.take(q, i)
    }

    fn lengths(&self) -> Vec<usize> {
        let lengths: Vec<usize> = self.queues.iter().map(VecDeque::len).collect();
        debug_assert_eq!(lengths.iter().sum::<usize>(), self.queued, "the count of queued");
        lengths
    }

    /// The allowed processor with the shortest queue (lowest number on ties).
    fn shortest(&self, t: ThreadId, cx: &SchedCtx) -> usize {
        (0..self.queues.len())
            .filter(|&p| cx.allowed(t, ProcId(p as u32)))
            .min_by_key(|&p| {
                (
                    self.queues[p].len() + usize::from(cx.running[p].is_some()),
                    p,
                )
            })
            .unwrap_or(0)
    }

    /// The last thread of queue `q` that processor `p` may run, taken out.
    fn take_tail(&mut self, q: usize, p: usize, cx: &SchedCtx) -> Option<ThreadId> {
        let i = self.queues[q]
            .iter()
            .rposition(|&t| cx.allowed(t, ProcId(p as u32)))?;
        self.take(q, i)
    }

    fn has_for(&self, q: usize, p: usize, cx: &SchedCtx) -> bool {
        if !cx.any_masked() {
            return !self.queues[q].is_empty();
        }
        self.queues[q]
            .iter()
            .any(|&t| cx.allowed(t, ProcId(p as u32)))
    }

    /// Processor `p` pulls one thread from the busiest queue holding one it may run.
    fn pull(&mut self, p: usize, cx: &SchedCtx) -> Option<ThreadId> {
        if self.queued == 0 {
            return None;
        }
        let lengths = self.lengths();
        let victim = pull_victim_where(&lengths, |q| self.has_for(q, p, cx), p)?;
        if !self.looked[p].contains(&victim) {
            self.looked[p].push(victim);
        }
        self.take_tail(victim, p, cx)
    }
}

impl Scheduler for PerCore {
    fn shape(&self, machine: &MachineConfig) -> Shape {
        let tick = [self.params.pull_ms, self.params.balance_ms]
            .into_iter()
            .filter(|&ms| ms > 0.0)
            .map(|ms| machine.ms(ms).max(1))
            .min();
        let slice = super::params::slice_cycles(self.params.slice_ms, self.params.quantum, machine);
        Shape::new(machine).slice(slice).tick(tick)
    }

    fn layout(&mut self, alloc: &mut dyn FnMut(u64) -> u64) {
        // One line per queue lock, for as many processors as the engine simulates (1,024).
        let base = alloc(64 * 1024);
        self.locks = (0..1024).map(|q| base + 64 * q).collect();
    }

    fn enqueue(&mut self, t: ThreadId, why: Enqueue, cx: &SchedCtx) -> Target {
        self.size(cx);
        let last = cx
            .thread(t)
            .last_proc
            .map(ProcId::index)
            .filter(|&p| p < self.queues.len() && cx.allowed(t, ProcId(p as u32)));
        if self.params.global {
            self.push(0, t);
            return Target::Any;
        }
        let p = match (why, last) {
            (Enqueue::Preempted, Some(home)) if self.params.push => {
                let lengths = self.lengths();
                push_target(
                    &lengths,
                    |q| cx.allowed(t, ProcId(q as u32)),
                    home,
                    self.params.push_threshold,
                )
                .unwrap_or(home)
            }
            (Enqueue::New, _) | (_, None) => self.shortest(t, cx),
            (_, Some(home)) => home,
        };
        self.push(p, t);
        Target::Processor(ProcId(p as u32))
    }

    fn nothing_waiting(&self) -> bool {
        // A timed pull pass (`pull_ms`) is used up, and its scan charged, when its processor is
        // asked, queued threads or not.
        self.queued == 0 && !(self.params.pull && self.params.pull_ms > 0.0)
    }

    fn next_picks(&self, p: ProcId, _cx: &SchedCtx) -> [Option<ThreadId>; 2] {
        match self.queues.get(self.home(p.index())) {
            Some(q) => [q.front().copied(), q.get(1).copied()],
            None => [None, None],
        }
    }

    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        self.size(cx);
        let pi = p.index();
        let q = self.home(pi);
        self.looked[pi].clear();
        self.looked[pi].push(q);
        if let Some(t) = self.take_head(q, pi, cx) {
            return Some(t);
        }
        // A look that finds nothing is charged only when it is a pull pass's scan (an idle
        // processor's glance at its own empty queue is not).
        if !self.params.pull {
            self.looked[pi].clear();
            return None;
        }
        if self.params.pull_ms > 0.0 {
            // A pull pass: only when due, and it scans (locks) every queue.
            if !std::mem::take(&mut self.pull_due[pi]) {
                self.looked[pi].clear();
                return None;
            }
            self.looked[pi] = (0..self.queues.len()).collect();
            return self.pull(pi, cx);
        }
        let pulled = self.pull(pi, cx);
        if pulled.is_none() {
            self.looked[pi].clear();
        }
        pulled
    }

    fn dispatch_touches(&self, p: ProcId, _cx: &SchedCtx, out: &mut Vec<Touch>) {
        for &q in &self.looked[p.index()] {
            if let Some(&lock) = self.locks.get(q) {
                out.extend([
                    Touch::Atomic(lock),
                    Touch::Read(lock + 8),
                    Touch::Write(lock),
                ]);
            }
        }
    }

    fn quantum_expired(&mut self, _t: ThreadId, p: ProcId, cx: &SchedCtx) -> QuantumEnd {
        let q = self.home(p.index());
        QuantumEnd::preempt_if(self.has_for(q, p.index(), cx))
    }

    fn tick(&mut self, cx: &SchedCtx, out: &mut Actions) {
        self.size(cx);
        out.offer_idle = true;
        if self.params.pull_ms > 0.0 {
            // A pull pass: every processor that is or goes idle may pull once.
            self.pull_due.fill(true);
        }
        if self.params.balance_ms <= 0.0 || cx.now < self.next_balance {
            return;
        }
        self.next_balance = cx
            .now
            .saturating_add(cx.machine.ms(self.params.balance_ms).max(1));
        // Periodic balancing: each processor with less work than the busiest queue by two or
        // more pulls one thread from it.
        for p in 0..self.queues.len() {
            let load =
                |s: &Self, q: usize| s.queues[q].len() + usize::from(cx.running[q].is_some());
            let mine = load(self, p);
            let lengths = self.lengths();
            let Some(v) = pull_victim_where(&lengths, |q| self.has_for(q, p, cx), p) else {
                continue;
            };
            if load(self, v) >= mine + 2 {
                if let Some(t) = self.take_tail(v, p, cx) {
                    self.push(p, t);
                }
            }
        }
    }

    fn dequeue(&mut self, t: ThreadId, _cx: &SchedCtx) -> Handoff {
        for q in 0..self.queues.len() {
            if let Some(i) = self.queues[q].iter().position(|&x| x == t) {
                self.take(q, i);
                return Handoff::Taken;
            }
        }
        Handoff::Refused
    }
}

impl super::PolicyParams for Params {
    fn check(&self) -> Result<(), super::ParamError> {
        super::params::one_slice(self.slice_ms, self.quantum.map(|_| "quantum"))?;
        // 0 for none.
        super::params::check_range(
            "balance_ms",
            self.balance_ms,
            0.0,
            super::params::MAX_PERIOD_MS,
            "milliseconds (0: no periodic balancing)",
        )?;
        if self.global && (self.pull || self.push) {
            return Err(super::ParamError::new(
                "global",
                "one shared queue has nothing to pull from or push to; set pull = false",
            ));
        }
        super::params::check_range(
            "pull_ms",
            self.pull_ms,
            0.0,
            super::params::MAX_PERIOD_MS,
            "milliseconds (0: an idle processor pulls at once)",
        )?;
        if self.pull_ms > 0.0 && !self.pull {
            return Err(super::ParamError::new(
                "pull_ms",
                "a pull interval needs pull = true",
            ));
        }
        if self.balance_ms > 0.0 && !self.pull {
            return Err(super::ParamError::new(
                "balance_ms",
                "periodic balancing pulls work, so it needs pull = true",
            ));
        }
        if self.push_threshold == 0 {
            return Err(super::ParamError::new(
                "push_threshold",
                "a queue must be at least 1 shorter for a push (0 pushes as 1 does)",
            ));
        }
        if self.push_threshold != Params::default().push_threshold && !self.push {
            return Err(super::ParamError::new(
                "push_threshold",
                "a push threshold needs push = true",
            ));
        }
        Ok(())
    }
}

impl super::Settings for Params {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(PerCore::new(self.clone()))
    }
}

/// Registry entry of `per-core`.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "per-core",
    summary: "a FIFO run queue per processor, with pull and push migration and masks",
    description: "Each processor serves its own queue (or, with `global`, all share one); a new thread goes to the allowed processor \
                  with the least work, a woken one back where it ran. With `pull` an idle \
                  processor takes the last thread it may run from the busiest queue (at once, \
                  or every `pull_ms` scanning every queue's lock), and with \
                  `balance_ms` an underloaded processor pulls one periodically; with `push` a \
                  preempted thread moves to a queue `push_threshold` shorter. Every queue's lock \
                  is a line in the simulated memory, so run-queue contention shows as kernel time. \
                  pull = false is Weibel's per-core queues without migration.",
    paper: "Weibel (per-core run queues, pull and push migration, affinity sets)",
    params: &[
        ParamInfo {
            name: "global",
            default: "false",
            doc: "one queue shared by every processor, behind one lock (needs pull = false)",
        },
        ParamInfo {
            name: "pull",
            default: "true",
            doc: "an idle processor pulls from the busiest queue",
        },
        ParamInfo {
            name: "pull_ms",
            default: "0",
            doc: "milliseconds between an idle processor's pull passes (0: at once)",
        },
        ParamInfo {
            name: "balance_ms",
            default: "0",
            doc: "milliseconds between periodic balancing pulls (0: none)",
        },
        ParamInfo {
            name: "push",
            default: "false",
            doc: "a preempted thread moves to a sufficiently emptier queue",
        },
        ParamInfo {
            name: "push_threshold",
            default: "2",
            doc: "how much shorter a queue must be for a push, 1 or more (with push = true)",
        },
        ParamInfo {
            name: "slice_ms",
            default: "the machine's slice",
            doc: "time slice in milliseconds",
        },
    ],
    processor_sets: false,
    parse: super::settings::<Params>,
};
