//! The discrete-event engine: simulated processors running simulated threads under a kernel
//! scheduling policy.
//!
//! # Invariants
//!
//! * Time is a `u64` cycle count; nothing reads the wall clock.
//! * Events are ordered by `(time, seq)`: `seq` is a global counter, so two events at the same
//!   cycle are handled in the order they were scheduled and a run is deterministic. This is
//!   Tango's rule (Gupta et al. 1991, section 2): when several processors could touch shared
//!   state, the one with the lowest virtual time goes first.
//! * A processor is always in exactly one *segment* (idle, computing, or a fixed charge such as a
//!   context switch) that began at `seg_start`. Every change of segment first *settles* the old
//!   one, charging its cycles to one category; so a processor's categories sum to elapsed time.
//! * Each processor and each thread carries an epoch; an event whose epoch is stale (its segment
//!   was interrupted, its wake-up was cancelled) is dropped when it pops.
//! * A thread's operation is charged in one step: the engine asks a [`Program`] for its next
//!   operation only when the previous one is done.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand_chacha::ChaCha8Rng;
use thiserror::Error;

use crate::config::{ConfigError, MachineConfig, MAX_THREADS};
use crate::ids::{Cycles, ProcId, TaskId, ThreadId};
use crate::metrics::{ratio, AppReport, Category, RunReport, TimeSplit};
use crate::program::{Op, Program, ThreadCtx};
use crate::rng::{stream_rng, Stream};
use crate::sched::{Enqueue, SchedCtx, Scheduler, Stop, TaskInfo, ThreadInfo, ThreadState};

/// Most operations a processor may perform at one instant before the engine calls it a livelock.
const MAX_ZERO_TIME_STEPS: u32 = 1_000_000;

/// Why a simulation could not complete.
#[derive(Debug, Error)]
pub enum SimError {
    /// The machine configuration is invalid.
    #[error("machine.{0}")]
    Config(#[from] ConfigError),
    /// Too many threads for one simulation.
    #[error("too many threads: at most {MAX_THREADS} may be created")]
    TooManyThreads,
    /// Live threads remain but nothing can ever wake them.
    #[error("deadlock at cycle {at}: {blocked} thread(s) blocked forever (e.g. thread {example})")]
    Deadlock {
        /// Cycle at which it was detected.
        at: Cycles,
        /// Threads still blocked.
        blocked: usize,
        /// One of them.
        example: ThreadId,
    },
    /// The run went past its time limit.
    #[error("time limit of {limit} cycles reached with {live} thread(s) still live")]
    TimeLimit {
        /// The limit.
        limit: Cycles,
        /// Threads not yet exited.
        live: u64,
    },
    /// A thread performed too many zero-time operations in a row.
    #[error("thread {0} made no progress: {MAX_ZERO_TIME_STEPS} operations at one instant")]
    NoProgress(ThreadId),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum EventKind {
    /// The current segment of a processor ends.
    Proc { p: u32, epoch: u32 },
    /// A blocked thread's timed wait ends.
    Wake { t: u32, epoch: u32 },
    /// The scheduler's periodic tick.
    Tick,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    time: Cycles,
    seq: u64,
    kind: EventKind,
}

/// A processor's current stretch of activity.
#[derive(Clone, Copy, Debug)]
enum Seg {
    Idle,
    /// Running its thread's compute operation (interruptible).
    Compute,
    /// Fixed charges in order (e.g. kernel then switch), not interruptible.
    Fixed([(Category, Cycles); 2]),
}

struct Proc {
    thread: Option<ThreadId>,
    seg: Seg,
    seg_start: Cycles,
    quantum_end: Cycles,
    epoch: u32,
    time: TimeSplit,
    need_resched: bool,
}

struct ThreadExec {
    program: Box<dyn Program>,
    /// Cycles left of the current compute operation.
    remaining: Cycles,
    rng: ChaCha8Rng,
    epoch: u32,
}

#[derive(Default)]
struct AppAcc {
    time: TimeSplit,
    switches: u64,
    migrations: u64,
    redispatches: u64,
    same_proc: u64,
    completion: Cycles,
}

/// What happened when a processor asked for a thread.
enum Dispatch {
    /// It went idle.
    Idle,
    /// A thread starts after a charged overhead (an event is scheduled).
    Overhead,
    /// A thread starts at once.
    Immediate,
}

/// A simulation under construction or running: build it with [`Simulation::new`],
/// [`Simulation::add_task`] and [`Simulation::spawn`], then [`Simulation::run`] it.
pub struct Simulation {
    machine: MachineConfig,
    seed: u64,
    now: Cycles,
    seq: u64,
    heap: BinaryHeap<Reverse<Event>>,
    /// Events in the heap other than ticks (to detect deadlock).
    pending_work: u64,
    procs: Vec<Proc>,
    running: Vec<Option<ThreadId>>,
    tinfo: Vec<ThreadInfo>,
    texec: Vec<ThreadExec>,
    tasks: Vec<TaskInfo>,
    apps: Vec<AppAcc>,
    sched: Box<dyn Scheduler>,
    idle: Vec<u64>,
    poll_idle: bool,
    live: u64,
    events: u64,
    time_limit: Cycles,
    preempt_buf: Vec<ProcId>,
}

macro_rules! cx {
    ($s:expr) => {
        SchedCtx {
            now: $s.now,
            machine: &$s.machine,
            threads: &$s.tinfo,
            tasks: &$s.tasks,
            running: &$s.running,
        }
    };
}

impl Simulation {
    /// A machine with no tasks yet, scheduled by `sched`, whose random streams derive from `seed`.
    pub fn new(
        machine: MachineConfig,
        sched: Box<dyn Scheduler>,
        seed: u64,
    ) -> Result<Self, SimError> {
        machine.validate()?;
        let n = machine.processors as usize;
        let procs = (0..n)
            .map(|_| Proc {
                thread: None,
                seg: Seg::Idle,
                seg_start: 0,
                quantum_end: Cycles::MAX,
                epoch: 0,
                time: TimeSplit::default(),
                need_resched: false,
            })
            .collect();
        let mut idle = vec![0u64; n.div_ceil(64)];
        for p in 0..n {
            idle[p / 64] |= 1 << (p % 64);
        }
        Ok(Simulation {
            machine,
            seed,
            now: 0,
            seq: 0,
            heap: BinaryHeap::new(),
            pending_work: 0,
            procs,
            running: vec![None; n],
            tinfo: Vec::new(),
            texec: Vec::new(),
            tasks: Vec::new(),
            apps: Vec::new(),
            sched,
            idle,
            poll_idle: false,
            live: 0,
            events: 0,
            time_limit: Cycles::MAX,
            preempt_buf: Vec::new(),
        })
    }

    /// The machine being simulated.
    pub fn machine(&self) -> &MachineConfig {
        &self.machine
    }

    /// Stops the run with [`SimError::TimeLimit`] if it goes past `limit` cycles.
    pub fn set_time_limit(&mut self, limit: Cycles) {
        self.time_limit = limit;
    }

    /// Adds an application; its threads are added with [`Simulation::spawn`].
    pub fn add_task(&mut self, name: impl Into<String>) -> TaskId {
        self.tasks.push(TaskInfo {
            name: name.into(),
            threads: 0,
            live: 0,
        });
        self.apps.push(AppAcc::default());
        TaskId(self.tasks.len() as u32 - 1)
    }

    /// Creates a thread of `task` running `program`; it is ready at time 0 (or now, if running).
    pub fn spawn(&mut self, task: TaskId, program: Box<dyn Program>) -> Result<ThreadId, SimError> {
        if self.tinfo.len() as u64 >= MAX_THREADS {
            return Err(SimError::TooManyThreads);
        }
        let t = ThreadId(self.tinfo.len() as u32);
        let info = &mut self.tasks[task.index()];
        let rank = info.threads;
        info.threads += 1;
        info.live += 1;
        self.tinfo.push(ThreadInfo {
            task,
            rank,
            state: ThreadState::Ready,
            last_proc: None,
            cpu_cycles: 0,
        });
        self.texec.push(ThreadExec {
            program,
            remaining: 0,
            rng: stream_rng(self.seed, Stream::Thread, t.0 as u64),
            epoch: 0,
        });
        self.live += 1;
        self.sched.enqueue(t, Enqueue::New, &cx!(self));
        self.poll_idle = true;
        Ok(t)
    }

    /// Runs until every thread has exited, and reports what was measured.
    pub fn run(mut self) -> Result<RunReport, SimError> {
        if let Some(iv) = self.sched.tick_interval(&self.machine) {
            self.push(iv.max(1), EventKind::Tick);
        }
        self.poll_idle_processors()?;
        while self.live > 0 {
            let Some(Reverse(ev)) = self.heap.pop() else {
                return Err(self.deadlock());
            };
            if ev.time > self.time_limit {
                return Err(SimError::TimeLimit {
                    limit: self.time_limit,
                    live: self.live,
                });
            }
            debug_assert!(ev.time >= self.now);
            self.now = ev.time;
            self.events += 1;
            match ev.kind {
                EventKind::Proc { p, epoch } => {
                    self.pending_work -= 1;
                    let pi = p as usize;
                    if self.procs[pi].epoch == epoch {
                        self.settle(pi);
                        self.advance(pi)?;
                    }
                }
                EventKind::Wake { t, epoch } => {
                    self.pending_work -= 1;
                    let ti = t as usize;
                    if self.texec[ti].epoch == epoch && self.tinfo[ti].state == ThreadState::Blocked
                    {
                        self.make_ready(ThreadId(t), Enqueue::Woken);
                    }
                }
                EventKind::Tick => self.tick()?,
            }
            if self.poll_idle {
                self.poll_idle_processors()?;
            }
        }
        Ok(self.finish())
    }

    fn push(&mut self, time: Cycles, kind: EventKind) {
        self.seq += 1;
        if !matches!(kind, EventKind::Tick) {
            self.pending_work += 1;
        }
        self.heap.push(Reverse(Event {
            time,
            seq: self.seq,
            kind,
        }));
    }

    fn deadlock(&self) -> SimError {
        let blocked: Vec<usize> = (0..self.tinfo.len())
            .filter(|&t| self.tinfo[t].state == ThreadState::Blocked)
            .collect();
        SimError::Deadlock {
            at: self.now,
            blocked: blocked.len(),
            example: ThreadId(blocked.first().copied().unwrap_or(0) as u32),
        }
    }

    fn tick(&mut self) -> Result<(), SimError> {
        if self.pending_work == 0 {
            return Err(self.deadlock());
        }
        // Bring usage of running threads up to date before the policy looks at it.
        for p in 0..self.procs.len() {
            if self.procs[p].thread.is_some() {
                self.settle(p);
            }
        }
        let mut preempt = std::mem::take(&mut self.preempt_buf);
        preempt.clear();
        self.sched.tick(&cx!(self), &mut preempt);
        for &p in &preempt {
            self.request_preempt(p.index())?;
        }
        self.preempt_buf = preempt;
        if let Some(iv) = self.sched.tick_interval(&self.machine) {
            self.push(self.now + iv.max(1), EventKind::Tick);
        }
        Ok(())
    }

    /// Charges the processor's current segment up to now.
    #[inline]
    fn settle(&mut self, p: usize) {
        let now = self.now;
        let proc = &mut self.procs[p];
        let e = now - proc.seg_start;
        proc.seg_start = now;
        if e == 0 {
            return;
        }
        let thread = proc.thread;
        match &mut proc.seg {
            Seg::Idle => proc.time.idle += e,
            Seg::Compute => {
                proc.time.useful += e;
                let t = thread.expect("computing processor has a thread");
                self.texec[t.index()].remaining -= e;
                self.charge_thread(t, Category::Useful, e);
            }
            Seg::Fixed(parts) => {
                let mut left = e;
                let mut charged = [(Category::Kernel, 0); 2];
                for (part, out) in parts.iter_mut().zip(charged.iter_mut()) {
                    let c = part.1.min(left);
                    part.1 -= c;
                    left -= c;
                    proc.time.add(part.0, c);
                    *out = (part.0, c);
                }
                debug_assert_eq!(left, 0, "fixed segment overran on processor {p}");
                if let Some(t) = thread {
                    for (cat, c) in charged {
                        if c > 0 {
                            self.charge_thread(t, cat, c);
                        }
                    }
                }
            }
        }
    }

    #[inline]
    fn charge_thread(&mut self, t: ThreadId, cat: Category, c: Cycles) {
        let info = &mut self.tinfo[t.index()];
        info.cpu_cycles += c;
        self.apps[info.task.index()].time.add(cat, c);
        self.sched.charge(t, c);
    }

    fn start_seg(&mut self, p: usize, seg: Seg, end: Cycles) {
        let proc = &mut self.procs[p];
        proc.seg = seg;
        proc.seg_start = self.now;
        proc.epoch = proc.epoch.wrapping_add(1);
        let epoch = proc.epoch;
        self.push(end, EventKind::Proc { p: p as u32, epoch });
    }

    fn set_idle(&mut self, p: usize) {
        let proc = &mut self.procs[p];
        proc.thread = None;
        proc.seg = Seg::Idle;
        proc.seg_start = self.now;
        proc.epoch = proc.epoch.wrapping_add(1);
        proc.quantum_end = Cycles::MAX;
        proc.need_resched = false;
        self.running[p] = None;
        self.idle[p / 64] |= 1 << (p % 64);
    }

    /// Asks the policy for a thread for processor `p`, which was running `prev` (or nothing).
    fn dispatch(&mut self, p: usize, prev: Option<ThreadId>) -> Dispatch {
        let Some(t) = self.sched.pick_next(ProcId(p as u32), &cx!(self)) else {
            self.set_idle(p);
            return Dispatch::Idle;
        };
        let ti = t.index();
        debug_assert_eq!(self.tinfo[ti].state, ThreadState::Ready, "picked {t}");
        self.idle[p / 64] &= !(1 << (p % 64));
        let pid = ProcId(p as u32);
        let info = &mut self.tinfo[ti];
        info.state = ThreadState::Running(pid);
        let app = &mut self.apps[info.task.index()];
        if let Some(last) = info.last_proc {
            app.redispatches += 1;
            if last == pid {
                app.same_proc += 1;
            } else {
                app.migrations += 1;
            }
        }
        info.last_proc = Some(pid);
        let switch = if prev != Some(t) {
            app.switches += 1;
            self.machine.context_switch_cycles
        } else {
            0
        };
        let kernel = self.machine.sched_op_cycles;
        self.running[p] = Some(t);
        let quantum = self.sched.quantum(t, pid, &cx!(self));
        let proc = &mut self.procs[p];
        proc.thread = Some(t);
        proc.need_resched = false;
        let overhead = kernel + switch;
        proc.quantum_end = match quantum {
            Some(q) => self.now + overhead + q.max(1),
            None => Cycles::MAX,
        };
        if overhead > 0 {
            self.start_seg(
                p,
                Seg::Fixed([(Category::Kernel, kernel), (Category::Switch, switch)]),
                self.now + overhead,
            );
            Dispatch::Overhead
        } else {
            let proc = &mut self.procs[p];
            proc.seg = Seg::Compute;
            proc.seg_start = self.now;
            proc.epoch = proc.epoch.wrapping_add(1);
            Dispatch::Immediate
        }
    }

    /// Runs processor `p` from the end of its last segment until it starts a new one.
    fn advance(&mut self, p: usize) -> Result<(), SimError> {
        let mut steps = 0u32;
        loop {
            steps += 1;
            let Some(t) = self.procs[p].thread else {
                // An idle processor's segment never ends by itself.
                return Ok(());
            };
            if steps > MAX_ZERO_TIME_STEPS {
                return Err(SimError::NoProgress(t));
            }
            match self.step_thread(p, t)? {
                None => return Ok(()),
                Some(prev) => match self.dispatch(p, prev) {
                    Dispatch::Idle | Dispatch::Overhead => return Ok(()),
                    Dispatch::Immediate => continue,
                },
            }
        }
    }

    /// Lets thread `t`, current on `p`, run its operations. Returns `None` when a segment was
    /// started, or `Some(prev)` when `t` left the processor and `p` needs a new thread.
    fn step_thread(&mut self, p: usize, t: ThreadId) -> Result<Option<Option<ThreadId>>, SimError> {
        let pid = ProcId(p as u32);
        let ti = t.index();
        let mut zero = 0u32;
        loop {
            if self.procs[p].need_resched {
                self.procs[p].need_resched = false;
                return Ok(Some(self.preempt(p, t)));
            }
            if self.now >= self.procs[p].quantum_end {
                if self.sched.quantum_expired(t, pid, &cx!(self)) {
                    return Ok(Some(self.preempt(p, t)));
                }
                let q = self.sched.quantum(t, pid, &cx!(self));
                self.procs[p].quantum_end = q.map_or(Cycles::MAX, |q| self.now + q.max(1));
            }
            let rem = self.texec[ti].remaining;
            if rem > 0 {
                let end = (self.now + rem).min(self.procs[p].quantum_end);
                self.start_seg(p, Seg::Compute, end);
                return Ok(None);
            }
            zero += 1;
            if zero > MAX_ZERO_TIME_STEPS {
                return Err(SimError::NoProgress(t));
            }
            let info = &self.tinfo[ti];
            let exec = &mut self.texec[ti];
            let mut ctx = ThreadCtx {
                thread: t,
                task: info.task,
                rank: info.rank,
                processor: pid,
                now: self.now,
                rng: &mut exec.rng,
            };
            match exec.program.next(&mut ctx) {
                Op::Compute(n) => exec.remaining = n,
                Op::Sleep(n) => {
                    self.block(p, t);
                    let epoch = self.texec[ti].epoch;
                    self.push(self.now + n, EventKind::Wake { t: t.0, epoch });
                    return Ok(Some(Some(t)));
                }
                Op::Yield => {
                    self.leave(p, t);
                    self.make_ready(t, Enqueue::Yielded);
                    return Ok(Some(Some(t)));
                }
                Op::Exit => {
                    self.leave(p, t);
                    self.tinfo[ti].state = ThreadState::Exited;
                    let task = self.tinfo[ti].task.index();
                    self.tasks[task].live -= 1;
                    if self.tasks[task].live == 0 {
                        self.apps[task].completion = self.now;
                    }
                    self.live -= 1;
                    self.sched.stopped(t, Stop::Exited, &cx!(self));
                    self.poll_idle = true;
                    return Ok(Some(Some(t)));
                }
            }
        }
    }

    /// Takes `t` off processor `p` (the caller decides where it goes).
    fn leave(&mut self, p: usize, t: ThreadId) {
        debug_assert_eq!(self.procs[p].thread, Some(t));
        self.procs[p].thread = None;
        self.running[p] = None;
    }

    fn block(&mut self, p: usize, t: ThreadId) {
        self.leave(p, t);
        let ti = t.index();
        self.tinfo[ti].state = ThreadState::Blocked;
        self.texec[ti].epoch = self.texec[ti].epoch.wrapping_add(1);
        self.sched.stopped(t, Stop::Blocked, &cx!(self));
    }

    fn preempt(&mut self, p: usize, t: ThreadId) -> Option<ThreadId> {
        self.leave(p, t);
        self.make_ready(t, Enqueue::Preempted);
        Some(t)
    }

    fn make_ready(&mut self, t: ThreadId, why: Enqueue) {
        self.tinfo[t.index()].state = ThreadState::Ready;
        self.sched.enqueue(t, why, &cx!(self));
        self.poll_idle = true;
        if why == Enqueue::Woken && self.no_idle_processor() {
            if let Some(p) = self.sched.preempt_for(t, &cx!(self)) {
                self.procs[p.index()].need_resched = true;
                if matches!(self.procs[p.index()].seg, Seg::Compute) {
                    // Interrupt the compute segment now; advance() notices need_resched.
                    self.settle(p.index());
                    let proc = &mut self.procs[p.index()];
                    proc.epoch = proc.epoch.wrapping_add(1);
                    self.push(
                        self.now,
                        EventKind::Proc {
                            p: p.0,
                            epoch: self.procs[p.index()].epoch,
                        },
                    );
                }
            }
        }
    }

    fn no_idle_processor(&self) -> bool {
        self.idle.iter().all(|&w| w == 0)
    }

    fn request_preempt(&mut self, p: usize) -> Result<(), SimError> {
        if self.procs[p].thread.is_none() {
            return Ok(());
        }
        self.procs[p].need_resched = true;
        if matches!(self.procs[p].seg, Seg::Compute) {
            self.settle(p);
            let proc = &mut self.procs[p];
            proc.epoch = proc.epoch.wrapping_add(1);
            self.advance(p)?;
        }
        Ok(())
    }

    /// Offers work to idle processors, lowest number first, until the policy has none left.
    fn poll_idle_processors(&mut self) -> Result<(), SimError> {
        while self.poll_idle {
            self.poll_idle = false;
            let single = self.sched.single_queue();
            let mut from = 0;
            while let Some(p) = self.next_idle(from) {
                from = p + 1;
                self.settle(p);
                match self.dispatch(p, None) {
                    // One shared queue: if it is empty for one processor it is for all.
                    Dispatch::Idle if single => break,
                    Dispatch::Idle | Dispatch::Overhead => {}
                    Dispatch::Immediate => self.advance(p)?,
                }
            }
        }
        Ok(())
    }

    /// The lowest-numbered idle processor at or after `from`.
    fn next_idle(&self, from: usize) -> Option<usize> {
        let mut w = from / 64;
        if w >= self.idle.len() {
            return None;
        }
        let mut bits = self.idle[w] & (!0u64 << (from % 64));
        loop {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w += 1;
            if w >= self.idle.len() {
                return None;
            }
            bits = self.idle[w];
        }
    }

    fn finish(mut self) -> RunReport {
        for p in 0..self.procs.len() {
            self.settle(p);
        }
        let elapsed = self.now;
        let np = self.procs.len() as f64;
        let processors: Vec<TimeSplit> = self.procs.iter().map(|p| p.time).collect();
        let total = processors
            .iter()
            .fold(TimeSplit::default(), |a, b| a.plus(b));
        let machine_time = np * elapsed as f64;
        let slices = elapsed as f64 / self.machine.slice_cycles as f64;
        let apps = self
            .tasks
            .iter()
            .zip(&self.apps)
            .map(|(task, a)| AppReport {
                name: task.name.clone(),
                threads: task.threads,
                completion_cycles: a.completion,
                time: a.time,
                machine_share: ratio(a.time.held() as f64, machine_time),
                utilization: ratio(a.time.useful as f64, a.time.held() as f64),
                context_switches: a.switches,
                switches_per_slice_per_proc: ratio(a.switches as f64, slices * np),
                migrations: a.migrations,
                same_processor_rate: ratio(a.same_proc as f64, a.redispatches as f64),
            })
            .collect();
        RunReport {
            elapsed_cycles: elapsed,
            events: self.events,
            utilization: ratio(total.useful as f64, machine_time),
            processors,
            total,
            apps,
        }
    }
}
