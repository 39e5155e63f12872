//! The Mach timesharing scheduler (Black 1990, section 3).
//!
//! A shared global run queue and a local run queue per processor, each a 32-level
//! [`RunQueue`] with a hint and a count; a processor looks at its local queue first (threads
//! bound to it: here, a thread whose affinity mask holds that one processor), then at the
//! global queue. A thread's level is its base level plus an offset from recent usage; usage
//! accumulates weighted by the overload factor (runnable threads per processor, at least 1,
//! exponentially averaged once a second) and is aged by 5/8 once a second through the thread's
//! own copy of a global seconds counter, checked at clock ticks (running threads) and when a
//! thread becomes ready. A kernel thread scans the run queues every 2 seconds and ages starved
//! threads. Quanta are counted in clock ticks; at a quantum's end the thread yields to a
//! waiting thread of equal or higher priority; usage gained during a thread's first quantum
//! causes no switch. A more important thread made ready is noticed at the next tick (no
//! interprocessor interrupt), or at once with `ipi = true`. The arithmetic is in
//! `smpsched_policy::mach`.
//!
//! Processor sets (Black 1990, section 6): each set has its own global run queue; a processor
//! belongs to one set and runs only its threads (and its local queue's); a thread belongs to
//! its task's set (the default set, 0, unless assigned), so threads a task creates inherit it;
//! a set with no processors leaves its threads waiting; the default set always keeps at least
//! one processor. Creating a set and assigning processors and threads are kernel requests
//! charged the costs of Black's Table 4.

use serde::Deserialize;
use smpsched_policy::mach::{
    age, average_load, base_level, level, overload, preempts, weighted_usage, yields_at_quantum,
    LOAD_ONE, LOWEST,
};

use super::{
    Actions, Depression, Enqueue, Handoff, ParamInfo, PolicyInfo, SchedCtx, Scheduler, Shape,
    Target,
};
use crate::config::MachineConfig;
use crate::ids::{Cycles, ProcId, ThreadId};
use crate::outcome::{Reply, Request};
use crate::readyq::RunQueue;

/// The most seconds one clock tick steps through one by one ([`Mach`]'s `tick`): more than the
/// 64 halvings after which the load average sits at its fixed point.
const STEPPED_SECONDS: u64 = 64;

mod psets;

/// Parameters of `mach`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Params {
    /// Time slice in milliseconds, rounded to whole clock ticks (at least one); one tick when
    /// absent.
    #[serde(deserialize_with = "super::params::de_slice_ms")]
    pub slice_ms: Option<f64>,
    /// Deprecated: the quantum in clock ticks (write `slice_ms`).
    pub quantum_ticks: Option<u32>,
    /// Milliseconds of (load-weighted) usage per priority level.
    pub usage_per_level_ms: f64,
    /// Seconds between two starvation scans of the run queues.
    pub scan_seconds: u32,
    /// Preempt at once for a more important ready thread (an interprocessor interrupt) instead
    /// of at the next clock tick.
    pub ipi: bool,
    /// Microseconds to create a processor set (Black, Table 4: 2250).
    pub create_set_us: f64,
    /// Microseconds to assign a processor to a set (Table 4: 4772).
    pub assign_processor_us: f64,
    /// Microseconds for a thread to assign itself to a set (Table 4: 1558).
    pub assign_thread_self_us: f64,
    /// Microseconds to assign another thread (or a task) to a set (Table 4: 2624).
    pub assign_thread_other_us: f64,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            slice_ms: None,
            quantum_ticks: None,
            usage_per_level_ms: 100.0,
            scan_seconds: 2,
            ipi: false,
            create_set_us: 2250.0,
            assign_processor_us: 4772.0,
            assign_thread_self_us: 1558.0,
            assign_thread_other_us: 2624.0,
        }
    }
}

/// Where a ready thread is queued.
#[derive(Clone, Copy, Debug)]
struct Queued {
    /// `None`: its processor set's global queue; `Some(p)`: processor `p`'s local queue.
    local: Option<usize>,
    /// Its processor set.
    set: usize,
    level: usize,
}

/// What the scheduler keeps of a processor.
#[derive(Clone, Copy, Debug, Default)]
struct Cpu {
    /// Ticks left of the running thread's quantum.
    ticks_left: u32,
    /// Whether the running thread is in its first quantum since it was dispatched.
    first_quantum: bool,
    /// The running thread's level when it was dispatched.
    dispatch_level: usize,
}

/// Mach's scheduler: global and local run queues, usage aging with the overload factor.
#[derive(Debug)]
pub struct Mach {
    params: Params,
    /// The global run queue of each processor set (0: the default set).
    global: Vec<RunQueue>,
    local: Vec<RunQueue>,
    cpus: Vec<Cpu>,
    /// The processor set of each processor, of each thread and of each task.
    proc_set: Vec<usize>,
    thread_set: Vec<usize>,
    task_set: Vec<usize>,
    /// Per thread: load-weighted recent usage, the seconds counter it last aged at, where it is
    /// queued, and the time its strong discouragement ends.
    usage: Vec<u64>,
    stamp: Vec<u64>,
    queued: Vec<Option<Queued>>,
    depressed_until: Vec<Cycles>,
    /// Threads in the run queues, global and local (`Scheduler::nothing_waiting`).
    waiting: usize,
    /// The global seconds counter, and the exponentially averaged overload factor.
    seconds: u64,
    load: u64,
}

impl Mach {
    /// A Mach scheduler with these parameters.
    pub fn new(params: Params) -> Self {
        Mach {
            params,
            global: vec![RunQueue::default()],
            local: Vec::new(),
            cpus: Vec::new(),
            proc_set: Vec::new(),
            thread_set: Vec::new(),
            task_set: Vec::new(),
            usage: Vec::new(),
            stamp: Vec::new(),
            queued: Vec::new(),
            depressed_until: Vec::new(),
            waiting: 0,
            seconds: 0,
            load: LOAD_ONE,
        }
    }

    fn grow(&mut self, t: ThreadId, cx: &SchedCtx) {
        let n = cx.machine.processors as usize;
        self.processors(n);
        if self.usage.len() <= t.index() {
            let m = t.index() + 1;
            self.usage.resize(m, 0);
            self.stamp.resize(m, self.seconds);
            self.queued.resize(m, None);
            self.depressed_until.resize(m, 0);
            // A new thread joins its task's set.
            let task = cx.thread(t).task.index();
            if self.task_set.len() <= task {
                self.task_set.resize(task + 1, 0);
            }
            self.thread_set.resize(m, 0);
            self.thread_set[t.index()] = self.task_set[task];
        }
    }

    /// Sizes the per-processor records for `n` processors (all in the default set at first).
    fn processors(&mut self, n: usize) {
        if self.local.len() < n {
            self.local.resize_with(n, RunQueue::default);
            self.cpus.resize(n, Cpu::default());
            self.proc_set.resize(n, 0);
        }
    }

    /// Ages `t`'s usage for the seconds since it last checked the global counter.
    /// The starvation scan: ages every queued thread and re-queues it at its level.
    fn starvation_scan(&mut self, cx: &SchedCtx) {
        let mut all = Vec::new();
        for q in self.global.iter_mut().chain(&mut self.local) {
            all.extend(q.drain());
        }
        self.waiting -= all.len();
        for (t, _) in all {
            self.catch_up(t);
            let _ = self.queue(t, cx);
        }
    }

    fn catch_up(&mut self, t: ThreadId) {
        let i = t.index();
        let behind = self.seconds - self.stamp[i];
        if behind > 0 {
            self.usage[i] = age(self.usage[i], behind);
            self.stamp[i] = self.seconds;
        }
    }

    /// `t`'s level now.
    fn level_of(&self, t: ThreadId, cx: &SchedCtx) -> usize {
        if self.depressed_until[t.index()] > cx.now {
            return LOWEST;
        }
        let per_level = cx.machine.ms(self.params.usage_per_level_ms).max(1);
        level(
            base_level(cx.base_priority(t)),
            self.usage[t.index()],
            per_level,
        )
    }

    /// The quantum in clock ticks: `slice_ms` rounded to whole ticks (at least one), else the
    /// deprecated `quantum_ticks`, else one tick.
    fn quantum_ticks(&self, machine: &MachineConfig) -> u32 {
        match self.params.slice_ms {
            Some(ms) => {
                let ticks = machine.ms(ms) as f64 / machine.tick_cycles.max(1) as f64;
                ticks.round().clamp(1.0, f64::from(u32::MAX)) as u32
            }
            None => self.params.quantum_ticks.unwrap_or(1),
        }
    }

    /// The processor `t` is bound to: the one processor of its mask, if it has one.
    fn bound(t: ThreadId, cx: &SchedCtx) -> Option<usize> {
        let mut procs = cx.mask(t)?.processors();
        let p = procs.next()?;
        procs.next().is_none().then_some(p.index())
    }

    fn queue(&mut self, t: ThreadId, cx: &SchedCtx) -> Target {
        let level = self.level_of(t, cx);
        let local = Self::bound(t, cx).filter(|&p| p < self.local.len());
        let set = self.thread_set[t.index()];
        match local {
            Some(p) => self.local[p].push(t, level),
            None => self.global[set].push(t, level),
        }
        self.queued[t.index()] = Some(Queued { local, set, level });
        self.waiting += 1;
        match local {
            Some(p) => Target::Processor(ProcId(p as u32)),
            None => Target::Any,
        }
    }

    /// The most important level waiting for processor `p` (its local queue or the global one).
    fn best_waiting(&mut self, p: usize) -> Option<usize> {
        let local = self.local[p].best_level();
        let global = self.global[self.proc_set[p]].best_level();
        local.into_iter().chain(global).min()
    }

    /// The level the running thread on `p` is judged at: its dispatch level during its first
    /// quantum (usage gained then causes no switch), its current level after.
    fn running_level(&self, t: ThreadId, p: usize, cx: &SchedCtx) -> usize {
        if self.cpus[p].first_quantum {
            self.cpus[p].dispatch_level
        } else {
            self.level_of(t, cx)
        }
    }

    fn runnable(&self, cx: &SchedCtx) -> u64 {
        (self.waiting + cx.busy()) as u64
    }
}

impl Scheduler for Mach {
    fn shape(&self, machine: &MachineConfig) -> Shape {
        // Quanta are counted down by clock ticks.
        let quantum = machine
            .tick_cycles
            .saturating_mul(Cycles::from(self.quantum_ticks(machine)));
        Shape::new(machine)
            .unsliced(quantum)
            .tick(Some(machine.tick_cycles.max(1)))
            .charging()
            .depression(Depression::Own)
    }

    fn enqueue(&mut self, t: ThreadId, _why: Enqueue, cx: &SchedCtx) -> Target {
        self.grow(t, cx);
        self.catch_up(t);
        self.queue(t, cx)
    }

    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId> {
        let pi = p.index();
        self.processors(pi + 1);
        // The local queue first: absolute preference to bound threads; then the global queue
        // of the processor's set.
        let global = &mut self.global[self.proc_set[pi]];
        let (t, level) = match self.local[pi].pop() {
            Some(found) => found,
            None if cx.any_masked() => global.pop_where(|&t| cx.allowed(t, p))?,
            None => global.pop()?,
        };
        self.queued[t.index()] = None;
        self.waiting -= 1;
        self.cpus[pi] = Cpu {
            ticks_left: self.quantum_ticks(&cx.machine),
            first_quantum: true,
            dispatch_level: level,
        };
        Some(t)
    }

    fn charge(&mut self, t: ThreadId, cycles: Cycles) {
        if let Some(u) = self.usage.get_mut(t.index()) {
            *u = u.saturating_add(weighted_usage(cycles, self.load));
        }
    }

    fn tick(&mut self, cx: &SchedCtx, out: &mut Actions) {
        let second = cx.machine.ms(1000.0).max(1);
        let now_seconds = cx.now / second;
        if now_seconds.saturating_sub(self.seconds) > STEPPED_SECONDS {
            // A tick many seconds long (a clock slowed to a few cycles a second): only the last
            // seconds are stepped through. The load average has reached its fixed point within
            // them (each second halves its distance to the sample), and one starvation scan, if
            // the seconds passed over hold a scan's time, ages every queued thread by all the
            // seconds since it last aged.
            let skip_to = now_seconds - STEPPED_SECONDS;
            let scan = u64::from(self.params.scan_seconds);
            let passed_a_scan = skip_to / scan > self.seconds / scan;
            self.seconds = skip_to;
            if passed_a_scan {
                self.starvation_scan(cx);
            }
        }
        while self.seconds < now_seconds {
            self.seconds += 1;
            self.load = average_load(
                self.load,
                overload(self.runnable(cx), u64::from(cx.machine.processors)),
            );
            if self.seconds % u64::from(self.params.scan_seconds) == 0 {
                self.starvation_scan(cx);
            }
        }
        let quantum = self.quantum_ticks(&cx.machine);
        for (p, running) in cx.running.iter().enumerate() {
            let Some(t) = *running else { continue };
            if p >= self.cpus.len() || t.index() >= self.usage.len() {
                continue;
            }
            // The clock interrupt ages the running thread and counts down its quantum.
            self.catch_up(t);
            let cpu = &mut self.cpus[p];
            cpu.ticks_left = cpu.ticks_left.saturating_sub(1);
            let expired = cpu.ticks_left == 0;
            let mine = self.running_level(t, p, cx);
            let waiting = self.best_waiting(p);
            let preempt = match waiting {
                Some(w) if expired => yields_at_quantum(w, mine),
                Some(w) => preempts(w, mine),
                None => false,
            };
            if preempt {
                out.preempt.push(ProcId(p as u32));
            } else if expired {
                self.cpus[p].ticks_left = quantum;
                self.cpus[p].first_quantum = false;
            }
        }
    }

    fn preempt_for(&mut self, t: ThreadId, cx: &SchedCtx) -> Option<ProcId> {
        if !self.params.ipi {
            return None;
        }
        let mine = self.queued[t.index()]?.level;
        let (p, lvl) = cx
            .running
            .iter()
            .enumerate()
            .filter_map(|(p, r)| r.map(|r| (p, r)))
            .filter(|&(p, _)| p < self.cpus.len() && cx.allowed(t, ProcId(p as u32)))
            .map(|(p, r)| (p, self.running_level(r, p, cx)))
            .max_by_key(|&(p, l)| (l, std::cmp::Reverse(p)))?;
        preempts(mine, lvl).then_some(ProcId(p as u32))
    }

    fn request(
        &mut self,
        t: ThreadId,
        req: &Request,
        cx: &SchedCtx,
        out: &mut Actions,
    ) -> (Reply, Cycles) {
        self.answer(t, req, cx, out)
    }

    fn dequeue(&mut self, t: ThreadId, _cx: &SchedCtx) -> Handoff {
        let Some(q) = self.queued.get_mut(t.index()).and_then(Option::take) else {
            return Handoff::Refused;
        };
        let rq = match q.local {
            Some(p) => &mut self.local[p],
            None => &mut self.global[q.set],
        };
        let taken = rq.remove(&t, q.level);
        self.waiting -= usize::from(taken);
        Handoff::taken_if(taken)
    }

    fn nothing_waiting(&self) -> bool {
        debug_assert!(
            self.local.len() > 64 || self.waiting == self.global.iter().chain(&self.local).map(RunQueue::len).sum::<usize>(),
            "the count of waiting threads"
        );
        self.waiting == 0
    }

    fn depress(&mut self, t: ThreadId, until: Option<Cycles>, cx: &SchedCtx) {
        self.grow(t, cx);
        self.depressed_until[t.index()] = until.unwrap_or(0);
        if until.is_none() && self.dequeue(t, cx) == Handoff::Taken {
            let _ = self.queue(t, cx);
        }
    }
}

impl super::PolicyParams for Params {
    fn check(&self) -> Result<(), super::ParamError> {
        if self.quantum_ticks == Some(0) {
            return Err(super::ParamError::new(
                "quantum_ticks",
                "must be at least 1",
            ));
        }
        super::params::one_slice(self.slice_ms, self.quantum_ticks.map(|_| "quantum_ticks"))?;
        super::params::check_range(
            "usage_per_level_ms",
            self.usage_per_level_ms,
            0.001,
            super::params::MAX_PERIOD_MS,
            "milliseconds",
        )?;
        if self.scan_seconds == 0 {
            return Err(super::ParamError::new("scan_seconds", "must be at least 1"));
        }
        for (name, us) in [
            ("create_set_us", self.create_set_us),
            ("assign_processor_us", self.assign_processor_us),
            ("assign_thread_self_us", self.assign_thread_self_us),
            ("assign_thread_other_us", self.assign_thread_other_us),
        ] {
            // At most a minute: an operation the kernel charges past that is no measurement.
            super::params::check_range(name, us, 0.0, 60e6, "microseconds")?;
        }
        Ok(())
    }
}

impl super::Settings for Params {
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(Mach::new(self.clone()))
    }
}

/// Registry entry of `mach`.
pub const INFO: PolicyInfo = PolicyInfo {
    name: "mach",
    summary: "Mach's 32-level global and local run queues, usage aged by 5/8 a second",
    description: "A global run queue and a local one per processor, each 32 priority levels with \
                  a hint and a count; a processor serves its local queue (threads bound to it) \
                  first. A thread's level is its base plus its load-weighted recent usage, aged \
                  by 5/8 once a second; the overload factor (runnable threads per processor, at \
                  least 1) is averaged once a second; every 2 s starved queued threads are aged. \
                  Quanta are clock ticks; at a quantum's end a thread yields to an equal or more \
                  important one; a more important ready thread preempts at the next tick. \
                  Processor sets: each has its own global queue, a processor runs only its \
                  set's threads, tasks and threads are assigned to sets by kernel requests \
                  charged Black's Table 4 costs.",
    paper: "Black 1990 section 3 (the Mach timesharing scheduler) and section 6 (processor sets)",
    params: &[
        ParamInfo {
            name: "slice_ms",
            default: "one clock tick",
            doc: "time slice in milliseconds, rounded to whole clock ticks (at least one)",
        },
        ParamInfo {
            name: "usage_per_level_ms",
            default: "100",
            doc: "milliseconds of load-weighted recent usage per priority level",
        },
        ParamInfo {
            name: "scan_seconds",
            default: "2",
            doc: "seconds between starvation scans of the run queues",
        },
        ParamInfo {
            name: "ipi",
            default: "false",
            doc: "preempt at once for a more important ready thread instead of at the next tick",
        },
        ParamInfo {
            name: "create_set_us",
            default: "2250",
            doc: "microseconds to create a processor set (Table 4)",
        },
        ParamInfo {
            name: "assign_processor_us",
            default: "4772",
            doc: "microseconds to assign a processor to a set (Table 4)",
        },
        ParamInfo {
            name: "assign_thread_self_us",
            default: "1558",
            doc: "microseconds for a thread to assign itself to a set (Table 4)",
        },
        ParamInfo {
            name: "assign_thread_other_us",
            default: "2624",
            doc: "microseconds to assign another thread or a task to a set (Table 4)",
        },
    ],
    processor_sets: true,
    parse: super::settings::<Params>,
};
