//! The discrete-event engine: simulated processors running simulated threads under a kernel
//! scheduling policy.
//!
//! # Invariants
//!
//! * Time is a `u64` cycle count; nothing reads the wall clock.
//! * Events are handled earliest first and, at the same cycle, in the order they were
//!   scheduled (the [`EventQueue`] guarantees both), so a run is deterministic. This is Tango's
//!   rule (Gupta et al. 1991, section 2): when several processors could touch shared state, the
//!   one with the lowest virtual time goes first.
//! * A processor is always in exactly one *segment* (idle, computing, or a fixed charge such as a
//!   context switch) that began at `seg_start`. Every change of segment first *settles* the old
//!   one, charging its cycles to one category; so a processor's categories sum to elapsed time.
//! * Each processor and each thread carries an epoch; an event whose epoch is stale (its segment
//!   was interrupted, its wake-up was cancelled) is dropped when it pops.
//! * A thread's operation is charged in one step: the engine asks a [`Program`] for its next
//!   operation only when the previous one is done.
//! * The exception is a bulk memory access ([`Op::Mem`]): it is walked through the memory model
//!   in chunks of at most `memory.chunk_cycles` (and never past the quantum), each charged as a
//!   fixed segment of useful (hit) then stall (miss) cycles; preemption and quantum expiry are
//!   checked between chunks, so processors interleave in virtual-time order.

use rand_chacha::ChaCha8Rng;
use thiserror::Error;

use crate::config::{ConfigError, MachineConfig, MAX_THREADS};
use crate::event_queue::EventQueue;
use crate::ids::{Cycles, ProcId, TaskId, ThreadId};
use crate::limits::{Bound, Limits, Progress};
use crate::memory::{AccessKind, AtomicKind, BulkAccess, Charge, MemorySystem, Placement};
use crate::metrics::{ratio, AppReport, Category, RunReport, TimeSplit};
use crate::program::{Hint, Op, Program, ThreadCtx};
use crate::rng::{stream_rng, Stream};
use crate::sched::{Enqueue, SchedCtx, Scheduler, Stop, TaskInfo, ThreadInfo, ThreadState};
use crate::sync::{
    next_probe, AfterSpin, Attempt, Spin, Spinner, SyncId, SyncKind, SyncObject, SyncStats,
    WaitPolicy,
};

/// Simulated time never goes past 2^63 cycles, whatever the run's bound: a time that saturated
/// near `u64::MAX` stops the run there.
const MAX_TIME: Cycles = 1 << 63;

/// Most operations a processor may perform at one instant before the engine calls it a livelock.
const MAX_ZERO_TIME_STEPS: u32 = 1_000_000;

/// Bytes the engine holds per thread: its records and random stream, plus an allowance of 160
/// bytes for the program's own state and the allocator (a synthetic-workload thread measured
/// about 510 bytes in all). For budgeting memory before a run; a program that keeps large
/// state of its own needs more.
pub const THREAD_FOOTPRINT_BYTES: u64 =
    (std::mem::size_of::<ThreadSlot>() + std::mem::size_of::<ChaCha8Rng>() + 160) as u64;

/// Bytes the engine holds per processor (its record, and its share of the run-queue indexes).
pub const PROC_FOOTPRINT_BYTES: u64 = (std::mem::size_of::<Proc>() + 64) as u64;

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
    /// The run reached one of its [`Limits`] before every thread exited. What was measured up
    /// to the stop is in `partial` (its `elapsed_cycles` is the stop time).
    #[error("stopped at {bound} (cycle {at}, {events} events) with {live} thread(s) still live")]
    Limit {
        /// The bound reached.
        bound: Bound,
        /// Simulated time at the stop.
        at: Cycles,
        /// Events handled.
        events: u64,
        /// Threads not yet exited.
        live: u64,
        /// The measures up to the stop.
        partial: Box<RunReport>,
    },
    /// A thread performed too many zero-time operations in a row.
    #[error("thread {0} made no progress: {MAX_ZERO_TIME_STEPS} operations at one instant")]
    NoProgress(ThreadId),
    /// A program referenced memory outside every allocated region.
    #[error("thread {thread} referenced address {addr:#x}, which lies in no allocated region")]
    BadAddress {
        /// The thread.
        thread: ThreadId,
        /// The first address at fault.
        addr: u64,
    },
    /// A program used a synchronization object wrongly.
    #[error("thread {thread} misused synchronization object {object}: {what}")]
    Misuse {
        /// The thread.
        thread: ThreadId,
        /// The object.
        object: u32,
        /// What it did.
        what: String,
    },
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

impl EventKind {
    /// Packs into 64 bits: a 2-bit tag, a 30-bit processor or thread (both are bounded well
    /// below 2^30), a 32-bit epoch. Keeps queue entries at 16 bytes.
    #[inline]
    fn pack(self) -> u64 {
        match self {
            EventKind::Proc { p, epoch } => (u64::from(p) << 32) | u64::from(epoch),
            EventKind::Wake { t, epoch } => (1 << 62) | (u64::from(t) << 32) | u64::from(epoch),
            EventKind::Tick => 2 << 62,
        }
    }

    #[inline]
    fn unpack(x: u64) -> Self {
        let id = ((x >> 32) & ((1 << 30) - 1)) as u32;
        let epoch = x as u32;
        match x >> 62 {
            0 => EventKind::Proc { p: id, epoch },
            1 => EventKind::Wake { t: id, epoch },
            _ => EventKind::Tick,
        }
    }
}

impl Seg {
    /// Fixed charges in this order (at most four).
    fn fixed(parts: &[(Category, Cycles)]) -> Seg {
        let mut out = [(Category::Kernel, 0); 4];
        out[..parts.len()].copy_from_slice(parts);
        Seg::Fixed(out)
    }
}

/// A processor's current stretch of activity.
#[derive(Clone, Copy, Debug)]
enum Seg {
    Idle,
    /// Running its thread's compute operation (interruptible).
    Compute,
    /// Busy-waiting on a synchronization object (interruptible).
    Spin,
    /// Fixed charges in order (e.g. kernel then switch), not interruptible.
    Fixed([(Category, Cycles); 4]),
}

struct Proc {
    thread: Option<ThreadId>,
    /// The thread whose application is charged for the current segment.
    charge_to: Option<ThreadId>,
    /// Set while the kernel finishes with a thread that left (a departure charge).
    departing: Option<Departure>,
    seg: Seg,
    seg_start: Cycles,
    quantum_end: Cycles,
    epoch: u32,
    time: TimeSplit,
    need_resched: bool,
}

/// What a processor does once the kernel work for a departed thread is charged.
#[derive(Clone, Copy, Debug)]
struct Departure {
    prev: ThreadId,
    handoff: Option<ThreadId>,
}

/// What happened to the thread a processor was running.
enum Step {
    /// A segment was started; the processor waits for its end.
    Busy,
    /// The thread left; charge `cost` kernel cycles, then run `handoff` or ask the policy.
    Left {
        prev: ThreadId,
        cost: Cycles,
        handoff: Option<ThreadId>,
    },
}

/// The state of a thread waiting on a synchronization object.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    obj: SyncId,
    /// Barrier generation the thread arrived in.
    arrived: Option<u64>,
    /// When the current spell of spinning began (None before the first failed attempt, and after
    /// a wake-up: a woken waiter spins afresh).
    since: Option<Cycles>,
    /// Whether the thread has already failed one attempt of this wait.
    contended: bool,
}

/// Everything about one thread, in one record so that a dispatch touches one place: what the
/// policies see ([`ThreadInfo`]) and the engine's own state.
pub(crate) struct ThreadSlot {
    pub(crate) info: ThreadInfo,
    exec: ThreadExec,
}

struct ThreadExec {
    program: Box<dyn Program>,
    /// Cycles left of the current compute operation.
    remaining: Cycles,
    /// The bulk memory access in progress, if any (run in chunks; boxed to keep the record of
    /// a thread that never touches memory small).
    mem: Option<Box<BulkAccess>>,
    /// The synchronization wait in progress, if any.
    wait: Option<Waiting>,
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
    /// Memory charges summed over the task's threads.
    mem: Charge,
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
    /// Pending events, earliest first.
    agenda: EventQueue,
    /// Events in the agenda other than ticks (to detect deadlock).
    pending_work: u64,
    procs: Vec<Proc>,
    running: Vec<Option<ThreadId>>,
    threads: Vec<ThreadSlot>,
    /// Each thread's random stream, apart from its hot record (a stream is 300-odd bytes).
    rngs: Vec<ChaCha8Rng>,
    tasks: Vec<TaskInfo>,
    apps: Vec<AppAcc>,
    sched: Box<dyn Scheduler>,
    sync: Vec<SyncObject>,
    memory: MemorySystem,
    idle_handoff: bool,
    idle: Vec<u64>,
    poll_idle: bool,
    live: u64,
    events: u64,
    limits: Limits,
    preempt_buf: Vec<ProcId>,
}

macro_rules! cx {
    ($s:expr) => {
        SchedCtx {
            now: $s.now,
            machine: &$s.machine,
            threads: &$s.threads,
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
        let memory =
            MemorySystem::new(&machine.memory, machine.processors).map_err(ConfigError::from)?;
        let n = machine.processors as usize;
        let procs = (0..n)
            .map(|_| Proc {
                thread: None,
                charge_to: None,
                departing: None,
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
            agenda: EventQueue::default(),
            pending_work: 0,
            procs,
            running: vec![None; n],
            threads: Vec::new(),
            rngs: Vec::new(),
            tasks: Vec::new(),
            apps: Vec::new(),
            sched,
            sync: Vec::new(),
            memory,
            idle_handoff: false,
            idle,
            poll_idle: false,
            live: 0,
            events: 0,
            limits: Limits::NONE,
            preempt_buf: Vec::new(),
        })
    }

    /// The machine being simulated.
    pub fn machine(&self) -> &MachineConfig {
        &self.machine
    }

    /// The machine's memory system, for workloads to allocate regions at install time (and for
    /// tests to inspect caches).
    pub fn memory(&mut self) -> &mut MemorySystem {
        &mut self.memory
    }

    /// Stops the run with [`SimError::Limit`] if it goes past `limit` cycles.
    pub fn set_time_limit(&mut self, limit: Cycles) {
        self.limits.cycles = limit;
    }

    /// Bounds the run in simulated time and in events (see [`Limits`]); a run that reaches a
    /// bound stops with [`SimError::Limit`], which carries what was measured so far.
    pub fn set_limits(&mut self, limits: Limits) {
        self.limits = limits;
    }

    /// `now + d`, saturating: simulated time never wraps (a time past every limit simply
    /// stops the run).
    #[inline]
    fn after(&self, d: Cycles) -> Cycles {
        self.now.saturating_add(d)
    }

    /// Dispatches a thread that becomes ready straight to an idle processor, bypassing the run
    /// queue and its cost (Black 1990, section 3.1), when `on`.
    pub fn set_idle_handoff(&mut self, on: bool) {
        self.idle_handoff = on;
    }

    /// Creates a synchronization object; with the memory model on, its variable gets a line of
    /// its own.
    pub fn create_sync(&mut self, kind: SyncKind, policy: WaitPolicy) -> SyncId {
        let mut obj = SyncObject::new(kind, policy);
        if self.machine.memory.enabled {
            let bytes = self.memory.line_bytes();
            obj.line = Some(self.memory.alloc(bytes, Placement::Uma, None).base);
        }
        self.sync.push(obj);
        SyncId(self.sync.len() as u32 - 1)
    }

    /// Creates a synchronization object whose variable lives at `addr` (e.g. beside the data it
    /// protects, to study false sharing), or, with `None`, one that costs a fixed
    /// `kernel.sync_op` and causes no memory traffic (an idealized primitive).
    pub fn create_sync_at(
        &mut self,
        kind: SyncKind,
        policy: WaitPolicy,
        addr: Option<u64>,
    ) -> SyncId {
        let mut obj = SyncObject::new(kind, policy);
        obj.line = addr.filter(|_| self.machine.memory.enabled);
        self.sync.push(obj);
        SyncId(self.sync.len() as u32 - 1)
    }

    /// The counters of a synchronization object so far.
    pub fn sync_stats(&self, id: SyncId) -> SyncStats {
        self.sync[id.0 as usize].stats
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
        if self.threads.len() as u64 >= MAX_THREADS {
            return Err(SimError::TooManyThreads);
        }
        let t = ThreadId(self.threads.len() as u32);
        let info = &mut self.tasks[task.index()];
        let rank = info.threads;
        info.threads += 1;
        info.live += 1;
        self.threads.push(ThreadSlot {
            info: ThreadInfo {
                task,
                rank,
                state: ThreadState::Ready,
                last_proc: None,
                cpu_cycles: 0,
            },
            exec: ThreadExec {
                program,
                remaining: 0,
                mem: None,
                wait: None,
                epoch: 0,
            },
        });
        self.rngs
            .push(stream_rng(self.seed, Stream::Thread, t.0 as u64));
        self.live += 1;
        self.sched.enqueue(t, Enqueue::New, &cx!(self));
        self.poll_idle = true;
        Ok(t)
    }

    /// Runs until every thread has exited, and reports what was measured.
    pub fn run(self) -> Result<RunReport, SimError> {
        self.run_observed(u64::MAX, &mut |_| {})
    }

    /// Runs like [`Simulation::run`], showing `observe` how far the run has come every
    /// `every` events (never, with `u64::MAX`).
    pub fn run_observed(
        mut self,
        every: u64,
        observe: &mut dyn FnMut(Progress),
    ) -> Result<RunReport, SimError> {
        let every = every.max(1);
        if let Some(iv) = self.sched.tick_interval(&self.machine) {
            self.push(iv.max(1), EventKind::Tick);
        }
        self.poll_idle_processors()?;
        // One comparison per event covers both the event bound and the observer.
        let mut next_check = every.min(self.limits.events);
        while self.live > 0 {
            let Some((time, kind)) = self.agenda.pop() else {
                return Err(self.deadlock());
            };
            // A time that saturated near `Cycles::MAX` is past every bound.
            let time_bound = self.limits.cycles.min(MAX_TIME);
            if time > time_bound {
                self.now = time_bound.max(self.now);
                let bound = Bound::Cycles(self.limits.cycles);
                return Err(self.stop(bound));
            }
            if self.events >= next_check {
                if self.events >= self.limits.events {
                    let bound = Bound::Events(self.limits.events);
                    return Err(self.stop(bound));
                }
                observe(Progress {
                    now: self.now,
                    events: self.events,
                    live: self.live,
                    limits: self.limits,
                });
                next_check = self.events.saturating_add(every).min(self.limits.events);
            }
            debug_assert!(time >= self.now);
            self.now = time;
            self.events += 1;
            match EventKind::unpack(kind) {
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
                    if self.threads[ti].exec.epoch == epoch
                        && self.threads[ti].info.state == ThreadState::Blocked
                    {
                        self.make_ready(ThreadId(t), Enqueue::Woken);
                    }
                }
                EventKind::Tick => self.tick()?,
            }
            if self.poll_idle {
                if self.idle.iter().all(|&w| w == 0) {
                    // Every processor is busy: nobody to offer the change to.
                    self.poll_idle = false;
                } else {
                    self.poll_idle_processors()?;
                }
            }
        }
        Ok(self.finish())
    }

    /// Ends a run that reached `bound`, with what was measured up to now.
    fn stop(self, bound: Bound) -> SimError {
        let (at, events, live) = (self.now, self.events, self.live);
        SimError::Limit {
            bound,
            at,
            events,
            live,
            partial: Box::new(self.finish()),
        }
    }

    fn push(&mut self, time: Cycles, kind: EventKind) {
        if !matches!(kind, EventKind::Tick) {
            self.pending_work += 1;
        }
        self.agenda.push(time, kind.pack());
    }

    fn deadlock(&self) -> SimError {
        let blocked: Vec<usize> = (0..self.threads.len())
            .filter(|&t| self.threads[t].info.state == ThreadState::Blocked)
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
            self.push(self.after(iv.max(1)), EventKind::Tick);
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
        let who = proc.charge_to;
        match &mut proc.seg {
            Seg::Idle => proc.time.idle += e,
            Seg::Compute => {
                proc.time.useful += e;
                let t = who.expect("computing processor has a thread");
                self.threads[t.index()].exec.remaining -= e;
                self.charge_thread(t, Category::Useful, e);
            }
            Seg::Spin => {
                proc.time.spin += e;
                let t = who.expect("spinning processor has a thread");
                self.charge_thread(t, Category::Spin, e);
            }
            Seg::Fixed(parts) => {
                // Parts are consumed in order; the thread (if any) is charged each part's share
                // in its category.
                let app = who.map(|t| self.threads[t.index()].info.task.index());
                let mut left = e;
                for part in parts.iter_mut() {
                    let c = part.1.min(left);
                    if c == 0 {
                        if left == 0 {
                            break;
                        }
                        continue;
                    }
                    part.1 -= c;
                    left -= c;
                    proc.time.add(part.0, c);
                    if let Some(a) = app {
                        self.apps[a].time.add(part.0, c);
                    }
                }
                debug_assert_eq!(left, 0, "fixed segment overran on processor {p}");
                if let Some(t) = who {
                    self.threads[t.index()].info.cpu_cycles += e;
                    self.sched.charge(t, e);
                }
            }
        }
    }

    #[inline]
    fn charge_thread(&mut self, t: ThreadId, cat: Category, c: Cycles) {
        let info = &mut self.threads[t.index()].info;
        info.cpu_cycles += c;
        self.apps[info.task.index()].time.add(cat, c);
        self.sched.charge(t, c);
    }

    /// Starts a segment on `p` that ends at `end` (never, if `end` is `Cycles::MAX`).
    fn start_seg(&mut self, p: usize, seg: Seg, end: Cycles) {
        let proc = &mut self.procs[p];
        proc.seg = seg;
        proc.seg_start = self.now;
        proc.charge_to = proc.thread.or(proc.charge_to);
        proc.epoch = proc.epoch.wrapping_add(1);
        let epoch = proc.epoch;
        if end != Cycles::MAX {
            self.push(end, EventKind::Proc { p: p as u32, epoch });
        }
    }

    /// Books a memory charge to `t`'s application and starts its segment on `p`: the hits as
    /// useful time, then the misses as stall.
    fn start_mem(&mut self, p: usize, t: ThreadId, charge: Charge) -> Step {
        let task = self.threads[t.index()].info.task.index();
        self.apps[task].mem += charge;
        self.start_seg(
            p,
            Seg::fixed(&[
                (Category::Useful, charge.useful),
                (Category::Stall, charge.stall),
            ]),
            self.after(charge.total()),
        );
        Step::Busy
    }

    /// Starts fixed charges on `p` for its thread: a synchronization variable's access (useful
    /// and stall), then `kernel` cycles.
    fn start_charge(&mut self, p: usize, c: Charge, kernel: Cycles) -> Step {
        self.start_seg(
            p,
            Seg::fixed(&[
                (Category::Useful, c.useful),
                (Category::Stall, c.stall),
                (Category::Kernel, kernel),
            ]),
            self.after(c.total().saturating_add(kernel)),
        );
        Step::Busy
    }

    /// The cost to `t` on `p` of touching `obj`'s variable at `at`: an atomic test-and-set to
    /// acquire (a read for events and barriers), a write to release. Without the memory model it
    /// is the fixed `kernel.sync_op`.
    fn sync_access(
        &mut self,
        p: usize,
        t: ThreadId,
        obj: SyncId,
        at: Cycles,
        release: bool,
    ) -> Charge {
        let o = &self.sync[obj.0 as usize];
        let Some(line) = o.line else {
            return Charge {
                useful: self.machine.kernel.sync_op,
                ..Charge::default()
            };
        };
        let pid = ProcId(p as u32);
        let c = if release {
            self.memory.access(pid, at, line, AccessKind::Write)
        } else if o.wakes_all() {
            self.memory.access(pid, at, line, AccessKind::Read)
        } else {
            self.memory.atomic(pid, at, line, AtomicKind::TestAndSet)
        };
        let task = self.threads[t.index()].info.task.index();
        self.apps[task].mem += c;
        c
    }

    fn set_idle(&mut self, p: usize) {
        let proc = &mut self.procs[p];
        proc.thread = None;
        proc.charge_to = None;
        proc.departing = None;
        proc.seg = Seg::Idle;
        proc.seg_start = self.now;
        proc.epoch = proc.epoch.wrapping_add(1);
        proc.quantum_end = Cycles::MAX;
        proc.need_resched = false;
        self.running[p] = None;
        self.idle[p / 64] |= 1 << (p % 64);
    }

    /// Gives processor `p`, which was running `prev` (or nothing), its next thread: `handoff` if
    /// that thread can be taken, else the policy's choice.
    fn dispatch(
        &mut self,
        p: usize,
        prev: Option<ThreadId>,
        handoff: Option<ThreadId>,
    ) -> Dispatch {
        if let Some(h) = handoff {
            let hi = h.index();
            let taken = match self.threads[hi].info.state {
                ThreadState::Ready => self.sched.remove(h, &cx!(self)),
                // A blocked receiver handed a message (Black, Table 3): woken by the handoff.
                ThreadState::Blocked => {
                    self.threads[hi].exec.epoch = self.threads[hi].exec.epoch.wrapping_add(1);
                    true
                }
                _ => false,
            };
            if taken {
                let kernel = self.machine.kernel.handoff;
                return self.start_thread(p, h, prev, kernel, true);
            }
        }
        let Some(t) = self.sched.pick_next(ProcId(p as u32), &cx!(self)) else {
            self.set_idle(p);
            return Dispatch::Idle;
        };
        let kernel = self.machine.sched_op_cycles;
        self.start_thread(p, t, prev, kernel, false)
    }

    /// Starts thread `t` on processor `p` after `kernel` cycles of kernel work and, if `t` is not
    /// `prev`, a context switch. A handed-off thread keeps the rest of the current slice.
    fn start_thread(
        &mut self,
        p: usize,
        t: ThreadId,
        prev: Option<ThreadId>,
        kernel: Cycles,
        rest_of_slice: bool,
    ) -> Dispatch {
        let ti = t.index();
        debug_assert_ne!(
            self.threads[ti].info.state,
            ThreadState::Exited,
            "dispatching exited {t}"
        );
        self.idle[p / 64] &= !(1 << (p % 64));
        let pid = ProcId(p as u32);
        let info = &mut self.threads[ti].info;
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
        self.running[p] = Some(t);
        let quantum = self.sched.quantum(t, pid, &cx!(self));
        let overhead = kernel.saturating_add(switch);
        let started = self.after(overhead);
        let fresh = match quantum {
            Some(q) => started.saturating_add(q.max(1)),
            None => Cycles::MAX,
        };
        let proc = &mut self.procs[p];
        proc.thread = Some(t);
        proc.charge_to = Some(t);
        proc.departing = None;
        proc.need_resched = false;
        if !(rest_of_slice && proc.quantum_end > started) {
            proc.quantum_end = fresh;
        }
        if overhead > 0 {
            self.start_seg(
                p,
                Seg::fixed(&[(Category::Kernel, kernel), (Category::Switch, switch)]),
                self.after(overhead),
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
            if let Some(dep) = self.procs[p].departing.take() {
                match self.dispatch(p, Some(dep.prev), dep.handoff) {
                    Dispatch::Idle | Dispatch::Overhead => return Ok(()),
                    Dispatch::Immediate => continue,
                }
            }
            let Some(t) = self.procs[p].thread else {
                // An idle processor's segment never ends by itself.
                return Ok(());
            };
            if steps > MAX_ZERO_TIME_STEPS {
                return Err(SimError::NoProgress(t));
            }
            match self.step_thread(p, t)? {
                Step::Busy => return Ok(()),
                Step::Left {
                    prev,
                    cost,
                    handoff,
                } => {
                    if cost > 0 {
                        let proc = &mut self.procs[p];
                        proc.departing = Some(Departure { prev, handoff });
                        proc.charge_to = Some(prev);
                        self.start_seg(
                            p,
                            Seg::fixed(&[(Category::Kernel, cost)]),
                            self.after(cost),
                        );
                        return Ok(());
                    }
                    match self.dispatch(p, Some(prev), handoff) {
                        Dispatch::Idle | Dispatch::Overhead => return Ok(()),
                        Dispatch::Immediate => continue,
                    }
                }
            }
        }
    }

    /// Lets thread `t`, current on `p`, run its operations until it starts a segment or leaves.
    fn step_thread(&mut self, p: usize, t: ThreadId) -> Result<Step, SimError> {
        let pid = ProcId(p as u32);
        let ti = t.index();
        let mut zero = 0u32;
        let left = |cost: Cycles, handoff: Option<ThreadId>| Step::Left {
            prev: t,
            cost,
            handoff,
        };
        loop {
            if self.procs[p].need_resched {
                self.procs[p].need_resched = false;
                self.preempt(p, t);
                return Ok(left(0, None));
            }
            // The quantum is checked only while the thread has work under way (computing,
            // walking memory, waiting): a thread whose work ended exactly at the quantum's end
            // first asks its program for the next operation, so one that exits or blocks then
            // leaves at once instead of being requeued with nothing to do (issue 10). An
            // operation that takes time waits for the next quantum; an atomic or a
            // synchronization access begun at the boundary completes first, as an instruction
            // in flight would.
            let under_way = {
                let e = &self.threads[ti].exec;
                e.remaining > 0 || e.mem.is_some() || e.wait.is_some()
            };
            if under_way && self.now >= self.procs[p].quantum_end {
                if self.sched.quantum_expired(t, pid, &cx!(self)) {
                    self.preempt(p, t);
                    return Ok(left(0, None));
                }
                let q = self.sched.quantum(t, pid, &cx!(self));
                self.procs[p].quantum_end = q.map_or(Cycles::MAX, |q| self.after(q.max(1)));
            }
            if let Some(w) = self.threads[ti].exec.wait {
                match self.wait_step(p, t, w)? {
                    None => {}
                    Some(step) => return Ok(step),
                }
                continue;
            }
            let rem = self.threads[ti].exec.remaining;
            if rem > 0 {
                // Never `Cycles::MAX` (a segment without an end): a saturated end is past every bound.
                let end = self
                    .after(rem)
                    .min(self.procs[p].quantum_end)
                    .min(Cycles::MAX - 1);
                self.start_seg(p, Seg::Compute, end);
                return Ok(Step::Busy);
            }
            if let Some(acc) = self.threads[ti].exec.mem.as_deref_mut() {
                // One chunk, ending no later than the quantum (at least one element is made).
                let budget = (self.procs[p].quantum_end.saturating_sub(self.now))
                    .min(self.machine.memory.chunk_cycles)
                    .max(1);
                let charge = self.memory.run(pid, self.now, acc, budget);
                if charge.done {
                    self.threads[ti].exec.mem = None;
                }
                if charge.total() > 0 {
                    return Ok(self.start_mem(p, t, charge));
                }
                continue;
            }
            zero += 1;
            if zero > MAX_ZERO_TIME_STEPS {
                return Err(SimError::NoProgress(t));
            }
            let k = self.machine.kernel;
            let ThreadSlot { info, exec } = &mut self.threads[ti];
            let mut ctx = ThreadCtx {
                thread: t,
                task: info.task,
                rank: info.rank,
                processor: pid,
                now: self.now,
                rng: &mut self.rngs[ti],
            };
            match exec.program.next(&mut ctx) {
                Op::Compute(n) => exec.remaining = n,
                Op::Mem(acc) => {
                    if !acc.is_done() {
                        for addr in [acc.base, acc.base.saturating_add(acc.len - 1)] {
                            if !self.memory.is_allocated(addr) {
                                return Err(SimError::BadAddress { thread: t, addr });
                            }
                        }
                        self.threads[ti].exec.mem = Some(Box::new(acc));
                    }
                }
                Op::Atomic { addr, kind } => {
                    if !self.memory.is_allocated(addr) {
                        return Err(SimError::BadAddress { thread: t, addr });
                    }
                    let charge = self.memory.atomic(pid, self.now, addr, kind);
                    return Ok(self.start_mem(p, t, charge));
                }
                Op::Sleep(n) => {
                    self.sleep(p, t, n);
                    return Ok(left(0, None));
                }
                Op::Yield | Op::Hint(Hint::Mild) => {
                    let cost = k.yield_call;
                    self.leave(p, t);
                    self.make_ready(t, Enqueue::Yielded);
                    return Ok(left(cost, None));
                }
                Op::Hint(Hint::Strong { timeout }) => {
                    let cost = k.yield_call + k.depress;
                    self.sched.depress(t, self.after(timeout), &cx!(self));
                    self.leave(p, t);
                    self.make_ready(t, Enqueue::Yielded);
                    return Ok(left(cost, None));
                }
                Op::Hint(Hint::Cancel) => self.sched.undepress(t, &cx!(self)),
                Op::Hint(Hint::Absolute(n)) => {
                    let cost = k.yield_call;
                    self.sleep(p, t, n);
                    return Ok(left(cost, None));
                }
                Op::Hint(Hint::Handoff(to)) => {
                    let cost = k.yield_call;
                    let target = (to != t
                        && to.index() < self.threads.len()
                        && self.threads[to.index()].info.state == ThreadState::Ready)
                        .then_some(to);
                    self.leave(p, t);
                    self.make_ready(t, Enqueue::Yielded);
                    return Ok(left(cost, target));
                }
                Op::Wait(obj) => {
                    self.check_sync(t, obj)?;
                    self.threads[ti].exec.wait = Some(Waiting {
                        obj,
                        arrived: None,
                        since: None,
                        contended: false,
                    });
                }
                Op::Signal(obj) => {
                    self.check_sync(t, obj)?;
                    let o = &mut self.sync[obj.0 as usize];
                    o.signal(t).map_err(|m| SimError::Misuse {
                        thread: t,
                        object: obj.0,
                        what: format!("{m:?}"),
                    })?;
                    let msg = if matches!(o.kind, SyncKind::Port { .. }) {
                        self.machine.kernel.message
                    } else {
                        0
                    };
                    // The releasing write comes first: it invalidates the spinners' copies.
                    let c = self.sync_access(p, t, obj, self.now, true);
                    let (wake_cost, handoff) = self.release_waiters(obj, true);
                    if let Some(r) = handoff {
                        self.leave(p, t);
                        self.make_ready(t, Enqueue::Yielded);
                        return Ok(left(msg, Some(r)));
                    }
                    if c.total() + msg + wake_cost > 0 {
                        return Ok(self.start_charge(p, c, msg + wake_cost));
                    }
                }
                Op::Clear(obj) => {
                    self.check_sync(t, obj)?;
                    self.sync[obj.0 as usize]
                        .clear()
                        .map_err(|m| SimError::Misuse {
                            thread: t,
                            object: obj.0,
                            what: format!("{m:?}"),
                        })?;
                }
                Op::Exit => {
                    self.leave(p, t);
                    self.threads[ti].info.state = ThreadState::Exited;
                    let task = self.threads[ti].info.task.index();
                    self.tasks[task].live -= 1;
                    if self.tasks[task].live == 0 {
                        self.apps[task].completion = self.now;
                    }
                    self.live -= 1;
                    self.sched.stopped(t, Stop::Exited, &cx!(self));
                    self.poll_idle = true;
                    return Ok(left(0, None));
                }
            }
        }
    }

    fn check_sync(&self, t: ThreadId, obj: SyncId) -> Result<(), SimError> {
        if (obj.0 as usize) < self.sync.len() {
            Ok(())
        } else {
            Err(SimError::Misuse {
                thread: t,
                object: obj.0,
                what: "no such object".into(),
            })
        }
    }

    /// One attempt of thread `t` on `p` to pass the object it waits on. Returns `None` when it
    /// passed at no cost (the thread goes on), or the step taken (a charge, a spin, blocking).
    fn wait_step(&mut self, p: usize, t: ThreadId, w: Waiting) -> Result<Option<Step>, SimError> {
        let ti = t.index();
        let oi = w.obj.0 as usize;
        let attempt = self.sync[oi].try_pass(t, w.arrived);
        match attempt {
            Attempt::Pass | Attempt::PassAndRelease => {
                let o = &mut self.sync[oi];
                if !w.contended {
                    o.stats.immediate += 1;
                }
                let msg = if matches!(o.kind, SyncKind::Port { .. }) {
                    self.machine.kernel.message
                } else {
                    0
                };
                self.threads[ti].exec.wait = None;
                let wake_cost = if attempt == Attempt::PassAndRelease {
                    self.release_waiters(w.obj, false).0
                } else {
                    0
                };
                let c = self.sync_access(p, t, w.obj, self.now, false);
                if c.total() + msg + wake_cost == 0 {
                    return Ok(None);
                }
                Ok(Some(self.start_charge(p, c, msg + wake_cost)))
            }
            Attempt::Wait(arrived) => {
                let policy = self.sync[oi].policy;
                let since = w.since.unwrap_or(self.now);
                if !w.contended {
                    self.sync[oi].stats.contended += 1;
                }
                self.threads[ti].exec.wait = Some(Waiting {
                    obj: w.obj,
                    arrived,
                    since: Some(since),
                    contended: true,
                });
                let deadline = match policy.spin {
                    Spin::Forever => Cycles::MAX,
                    Spin::Limit(s) => since.saturating_add(s),
                };
                if self.now < deadline {
                    let o = &mut self.sync[oi];
                    if !o.spinners.iter().any(|s| s.thread == t) {
                        o.spinners.push(Spinner {
                            thread: t,
                            proc: ProcId(p as u32),
                            since,
                        });
                    }
                    let end = deadline.min(self.procs[p].quantum_end);
                    self.start_seg(p, Seg::Spin, end);
                    return Ok(Some(Step::Busy));
                }
                // Spinning is over: block on the object's queue.
                let o = &mut self.sync[oi];
                o.remove_spinner(t);
                o.blocked.push_back(t);
                o.stats.blocks += 1;
                let handoff = match policy.after {
                    AfterSpin::HandoffToHolder => o
                        .holder()
                        .filter(|h| self.threads[h.index()].info.state == ThreadState::Ready),
                    AfterSpin::Block => None,
                };
                if let Some(Waiting { since, .. }) = &mut self.threads[ti].exec.wait {
                    *since = None;
                }
                self.block(p, t);
                Ok(Some(Step::Left {
                    prev: t,
                    cost: self.machine.kernel.block,
                    handoff,
                }))
            }
        }
    }

    /// After a signal (or the last arrival at a barrier) on `obj`: grants spinners first, else
    /// wakes blocked waiters. Returns the kernel cost of the wake-ups, charged to the signaller,
    /// and a blocked receiver the signaller should hand its processor to (ports with handoff,
    /// when `may_handoff`).
    fn release_waiters(&mut self, obj: SyncId, may_handoff: bool) -> (Cycles, Option<ThreadId>) {
        let oi = obj.0 as usize;
        let all = self.sync[oi].wakes_all();
        let probe = self.sync[oi].policy.probe;
        let mut granted = false;
        while !self.sync[oi].spinners.is_empty() {
            let now = self.now;
            let (i, (at, failed)) = self.sync[oi]
                .spinners
                .iter()
                .map(|s| next_probe(probe, s.since, now))
                .enumerate()
                .min_by_key(|&(i, (at, _))| {
                    let s = &self.sync[oi].spinners[i];
                    (at, s.since, s.thread)
                })
                .expect("spinners is not empty");
            let s = self.sync[oi].spinners[i];
            let arrived = self.threads[s.thread.index()]
                .exec
                .wait
                .and_then(|w| w.arrived);
            match self.sync[oi].try_pass(s.thread, arrived) {
                Attempt::Wait(_) => break,
                Attempt::Pass | Attempt::PassAndRelease => {}
            }
            let o = &mut self.sync[oi];
            o.spinners.remove(i);
            o.stats.spin_grants += 1;
            o.stats.backoffs += failed;
            o.stats.max_backoffs = o.stats.max_backoffs.max(failed);
            let msg = if matches!(o.kind, SyncKind::Port { .. }) {
                self.machine.kernel.message
            } else {
                0
            };
            self.grant_spinner(obj, s, at, msg);
            granted = true;
            if !all {
                break;
            }
        }
        if granted && !all {
            return (0, None);
        }
        // A processor still finishing a departed thread is about to look for work: handing off
        // to a receiver it could run would only move the sender off its processor.
        let no_idle = self.no_idle_processor() && self.procs.iter().all(|p| p.departing.is_none());
        let o = &mut self.sync[oi];
        let port_handoff = matches!(o.kind, SyncKind::Port { handoff: true, .. });
        if may_handoff && port_handoff && !o.blocked.is_empty() && no_idle {
            let r = o.blocked.pop_front().expect("not empty");
            o.stats.wakeups += 1;
            if let Some(w) = &mut self.threads[r.index()].exec.wait {
                w.since = None;
            }
            return (0, Some(r));
        }
        let n = if all {
            o.blocked.len()
        } else {
            o.blocked.len().min(1)
        };
        let woken: Vec<ThreadId> = o.blocked.drain(..n).collect();
        o.stats.wakeups += n as u64;
        for &r in &woken {
            self.make_ready(r, Enqueue::Woken);
        }
        (n as Cycles * self.machine.kernel.wake, None)
    }

    /// A spinner was granted `obj`: it probes at `at`, pays for the variable's line (with the
    /// memory model: behind the other spinners' re-reads of the invalidated line, which is the
    /// hot spot of a contended lock), and goes on with its program. Waiting, including that
    /// stall, is spin time.
    fn grant_spinner(&mut self, obj: SyncId, s: Spinner, at: Cycles, extra_kernel: Cycles) {
        let p = s.proc.index();
        debug_assert_eq!(self.procs[p].thread, Some(s.thread));
        self.settle(p);
        self.threads[s.thread.index()].exec.wait = None;
        let oi = obj.0 as usize;
        let c = match self.sync[oi].line {
            None => Charge {
                useful: self.machine.kernel.sync_op,
                stall: self.machine.kernel.spin_notice,
                ..Charge::default()
            },
            Some(line) => {
                let probe = self.sync[oi].policy.probe;
                if !matches!(probe, crate::sync::Probe::Backoff { .. }) {
                    // At a release every spinner probes the invalidated line at once: a re-read
                    // (test-and-test-and-set) or an atomic (test-and-set); they serialize on it.
                    let others: Vec<Spinner> = self.sync[oi].spinners.clone();
                    for o in others {
                        let mut c = if probe == crate::sync::Probe::TestAndSet {
                            self.memory
                                .atomic(o.proc, self.now, line, AtomicKind::TestAndSet)
                        } else {
                            self.memory.access(o.proc, self.now, line, AccessKind::Read)
                        };
                        // The re-read's stall overlaps the spinning already charged.
                        c.stall = 0;
                        let task = self.threads[o.thread.index()].info.task.index();
                        self.apps[task].mem += c;
                    }
                }
                self.sync_access(p, s.thread, obj, at, false)
            }
        };
        // Without the memory model the notice delay is spinning, not a charged miss.
        let (notice, stall) = match self.sync[oi].line {
            None => (c.stall, 0),
            Some(_) => (0, c.stall),
        };
        let wait = (at - self.now).saturating_add(notice);
        self.start_seg(
            p,
            Seg::fixed(&[
                (Category::Spin, wait),
                (Category::Stall, stall),
                (Category::Useful, c.useful),
                (Category::Kernel, extra_kernel),
            ]),
            self.after(
                wait.saturating_add(stall)
                    .saturating_add(c.useful)
                    .saturating_add(extra_kernel),
            ),
        );
    }

    /// Takes `t` off processor `p` (the caller decides where it goes).
    fn leave(&mut self, p: usize, t: ThreadId) {
        debug_assert_eq!(self.procs[p].thread, Some(t));
        self.procs[p].thread = None;
        self.running[p] = None;
        if let Some(w) = self.threads[t.index()].exec.wait {
            self.sync[w.obj.0 as usize].remove_spinner(t);
        }
    }

    fn sleep(&mut self, p: usize, t: ThreadId, n: Cycles) {
        self.block(p, t);
        let epoch = self.threads[t.index()].exec.epoch;
        self.push(self.after(n), EventKind::Wake { t: t.0, epoch });
    }

    fn block(&mut self, p: usize, t: ThreadId) {
        self.leave(p, t);
        let ti = t.index();
        self.threads[ti].info.state = ThreadState::Blocked;
        self.threads[ti].exec.epoch = self.threads[ti].exec.epoch.wrapping_add(1);
        self.sched.stopped(t, Stop::Blocked, &cx!(self));
    }

    fn preempt(&mut self, p: usize, t: ThreadId) {
        self.leave(p, t);
        self.make_ready(t, Enqueue::Preempted);
    }

    fn make_ready(&mut self, t: ThreadId, why: Enqueue) {
        self.threads[t.index()].info.state = ThreadState::Ready;
        if self.idle_handoff && matches!(why, Enqueue::Woken | Enqueue::New) {
            if let Some(p) = self.next_idle(0) {
                // Black 3.1: the idle processor picks the thread up without a run-queue search.
                self.settle(p);
                self.threads[t.index()].exec.epoch =
                    self.threads[t.index()].exec.epoch.wrapping_add(1);
                if let Dispatch::Immediate = self.start_thread(p, t, None, 0, false) {
                    self.start_seg(p, Seg::fixed(&[]), self.now);
                }
                return;
            }
        }
        self.sched.enqueue(t, why, &cx!(self));
        self.poll_idle = true;
        if why == Enqueue::Woken && self.no_idle_processor() {
            if let Some(p) = self.sched.preempt_for(t, &cx!(self)) {
                let pi = p.index();
                self.procs[pi].need_resched = true;
                if matches!(self.procs[pi].seg, Seg::Compute | Seg::Spin) {
                    // Interrupt now; the processor's event notices need_resched.
                    self.settle(pi);
                    self.start_seg(pi, Seg::fixed(&[]), self.now);
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
        if matches!(self.procs[p].seg, Seg::Compute | Seg::Spin) {
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
                match self.dispatch(p, None, None) {
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
        let slices = elapsed as f64 / self.sched.slice_cycles(&self.machine).max(1) as f64;
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
                refs: a.mem.refs,
                misses: a.mem.misses,
                miss_rate: ratio(a.mem.misses as f64, a.mem.refs as f64),
                invalidations: a.mem.invalidations,
                remote: a.mem.remote,
                stall: a.mem.stall,
            })
            .collect();
        let mut sync = SyncStats::default();
        for o in &self.sync {
            sync.merge(&o.stats);
        }
        RunReport {
            sync,
            memory: self.memory.total_stats(),
            elapsed_cycles: elapsed,
            events: self.events,
            utilization: ratio(total.useful as f64, machine_time),
            processors,
            total,
            apps,
        }
    }
}
