//! The discrete-event engine: simulated processors running simulated threads under a kernel
//! scheduling policy.
//!
//! Cut by role (tokio's scheduler is the model): this file holds the event loop and
//! construction ([`Simulation::run`]); `finish` settles the processors and builds the report
//! from the ledger of what the run measured; `build` tasks,
//! threads (now or arriving later) and synchronization objects; `processor` the processors,
//! their segments, dispatch and preemption; `actions` what a policy asks (its tick, interrupts,
//! placement, offering idle processors); `interp` the operation interpreter; `requests`
//! word operations with outcomes and kernel requests; `waiting` the synchronization mechanics
//! (decisions are pure functions in `crate::sync`).
//! Thread and task records live below both engine and policies, in `crate::thread`. The engine
//! knows no policy and no workload by name: it reaches them only through
//! [`Scheduler`] and [`Program`].
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
//! * The exception is a bulk memory access ([`Op::Mem`](crate::Op::Mem)): it is walked
//!   through the memory model in chunks of at most `memory.chunk_cycles` (and never past the quantum), each charged as a
//!   fixed segment of useful (hit) then stall (miss) cycles; preemption and quantum expiry are
//!   checked between chunks, so processors interleave in virtual-time order.

use rand_chacha::ChaCha8Rng;

use crate::config::{ConfigError, MachineConfig, MAX_THREADS};
use crate::event_queue::EventQueue;
use crate::ids::{Cycles, TaskId, ThreadId};
use crate::limits::{Bound, Limits, Progress};
use crate::memory::{Charge, MemorySystem, Placement};
use crate::metrics::{Recorded, RunReport, TimeSplit};
use crate::outcome::Notice;
use crate::procset::ProcSet;
use crate::program::Program;
use crate::sched::framework::Policy;
use crate::sched::{Actions, Enqueue, SchedCtx, Scheduler, ThreadState, Touch};
use crate::sync::SyncObject;
use crate::thread::{ThreadAttrs, ThreadCold, ThreadSlot};
use crate::trace::{Trace, TraceConfig};
use bounds::Checked;

/// Simulated time never goes past 2^63 cycles, whatever the run's bound: a time that saturated
/// near `u64::MAX` stops the run there.
const MAX_TIME: Cycles = 1 << 63;

/// Most operations a processor may perform at one instant before the engine calls it a livelock.
const MAX_ZERO_TIME_STEPS: u32 = 1_000_000;

/// Bytes the engine holds per thread: its records and random stream (as if it draws), plus 160
/// bytes for the program's own state and the allocator (a synthetic-workload thread measured
/// about 510 bytes in all). For budgeting memory before a run; large program state needs more.
pub const THREAD_FOOTPRINT_BYTES: u64 = (std::mem::size_of::<ThreadSlot>()
    + std::mem::size_of::<ThreadCold>()
    + std::mem::size_of::<crate::rng::ThreadRng>()
    + std::mem::size_of::<ChaCha8Rng>()
    + 160) as u64;

/// Bytes the engine holds per processor (its record, and its share of the run-queue indexes).
pub const PROC_FOOTPRINT_BYTES: u64 = (std::mem::size_of::<Proc>() + 64) as u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum EventKind {
    /// The current segment of a processor ends.
    Proc { p: u32, epoch: u32 },
    /// A blocked thread's timed wait ends.
    Wake { t: u32, epoch: u32 },
    /// The scheduler's periodic tick.
    Tick,
    /// A job of an open workload arrives: pending arrival `i` becomes a thread.
    Arrive { i: u32 },
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
            EventKind::Arrive { i } => (3 << 62) | (u64::from(i) << 32),
        }
    }

    #[inline]
    fn unpack(x: u64) -> Self {
        let id = ((x >> 32) & ((1 << 30) - 1)) as u32;
        let epoch = x as u32;
        match x >> 62 {
            0 => EventKind::Proc { p: id, epoch },
            1 => EventKind::Wake { t: id, epoch },
            2 => EventKind::Tick,
            _ => EventKind::Arrive { i: id },
        }
    }
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
    /// Dispatches of other threads between two runs of one thread on one processor.
    intervening: crate::metrics::Histogram,
    /// Measures the task's programs recorded ([`Op::Record`](crate::Op::Record)).
    recorded: std::collections::BTreeMap<&'static str, Recorded>,
    /// Whether the task's threads keep per-thread measures ([`Simulation::measure_threads`]).
    per_thread: bool,
}

/// A simulation under construction or running: build it with [`Simulation::new`],
/// [`Simulation::add_task`] and [`Simulation::spawn`], then [`Simulation::run`] it.
pub struct Simulation {
    /// The machine, the clock, every thread and task and what each processor runs: what the
    /// policy may read, lent to its hooks as `&self.cx`.
    cx: SchedCtx,
    seed: u64,
    /// Pending events, earliest first.
    agenda: EventQueue,
    /// Events in the agenda other than ticks (to detect deadlock).
    pending_work: u64,
    /// Ticks in a row with no other event (to detect threads stuck ready or spinning).
    idle_ticks: u64,
    procs: Vec<Proc>,
    /// Each thread's random stream, apart from its hot record (16 bytes until its first draw).
    rngs: Vec<crate::rng::ThreadRng>,
    apps: Vec<AppAcc>,
    sched: Policy,
    sync: Vec<SyncObject>,
    memory: MemorySystem,
    idle_handoff: bool,
    idle: ProcSet,
    /// Whether some idle processor is to be offered work after this event.
    poll_idle: bool,
    /// Whether every idle processor is (a thread placed anywhere, a policy's `offer_idle`, an
    /// exit); else only those in `offer_first` and `offer_within`.
    offer_all: bool,
    live: u64,
    events: u64,
    limits: Limits,
    /// The policy's requests at its last tick (kept to reuse the allocation).
    tick_actions: Actions,
    /// Processors the policy placed threads on, offered work first.
    offer_first: Vec<usize>,
    /// Ranges of processors (`start..end`) that alone could take the threads placed with
    /// [`Target::Within`](crate::sched::Target::Within), offered after `offer_first`.
    offer_within: Vec<(usize, usize)>,
    /// Whether some task keeps per-thread measures ([`Simulation::measure_threads`]).
    measured: bool,
    /// The words programs operate on ([`Op::Word`](crate::Op::Word)), by address; absent
    /// means 0. Only looked up, never iterated.
    words: crate::word_hash::WordMap,
    /// The latest notice to each task and its generation (0: none yet).
    notices: Vec<(u32, Option<Notice>)>,
    /// Whether any notice was ever sent (else programs are not checked for one).
    notices_sent: bool,
    /// Always `None`: what a program's context lends it as its outcome when its last operation
    /// gave nothing back.
    no_outcome: Option<crate::outcome::Outcome>,
    /// The references of the dispatch being charged (kept to reuse the allocation).
    touches: Vec<Touch>,
    /// Whether the policy laid out structures in memory (else it has no references to charge,
    /// and dispatches do not ask).
    policy_touches: bool,
    /// A policy's fault, found mid-event; the run stops with it at the next check.
    fault: Option<SimError>,
    /// Events handled at which the run loop next checks its bounds, faults and observer.
    next_check: u64,
    /// The event count at which the observer is next shown the run's progress.
    next_observe: u64,
    /// Events between two comparisons of the memory references made with
    /// `limits.references` (`u64::MAX`: that bound is off, or nothing is walked).
    refs_every: u64,
    /// The memory references counted at the last comparison.
    refs_seen: u64,
    /// Run-queue lock traffic of the policy's dispatches.
    runq_lock: crate::metrics::RunQueueLock,
    /// The kernel's own memory charges (run-queue touches, thread creation), for the user /
    /// kernel split of accesses and refills.
    kernel_mem: Charge,
    /// What each processor ran, when a trace was asked for.
    trace: Option<Box<Trace>>,
    /// Whether the report keeps every job's times (`AppReport::job_times`).
    keep_job_times: bool,
    /// Jobs of open workloads not yet arrived, by arrival index.
    arrivals: Vec<Option<(TaskId, Box<dyn Program>)>>,
    /// The task whose completion ends the run ([`Simulation::end_when_done`]).
    end_task: Option<TaskId>,
    /// The cycle at which the run ends normally ([`Simulation::end_at`]).
    end_time: Option<Cycles>,
    /// Whether the run lasts until `end_time` when every thread has exited before it
    /// ([`Simulation::last_until_end`]).
    last_until_end: bool,
    /// Set when `end_task` completed: the run ends at the next check.
    ending: bool,
    /// When the event being handled was scheduled (0 when unknown): a parked poller's load at
    /// this very cycle came first if it was scheduled earlier (`poll`).
    event_pushed: Cycles,
    /// Processors whose parked poller's line was invalidated (kept to reuse the allocation).
    woken: Vec<u32>,
    /// Pollers parked so far (their order, `poll`).
    parks: u64,
    /// Each polling thread's poll in progress, by thread index (`poll`): few threads poll at
    /// once, so a map keeps the thread records free of it.
    polls: std::collections::BTreeMap<usize, Polling>,
    /// The most threads the run may create ([`Simulation::set_thread_limit`]).
    max_threads: u64,
    /// Processors handed out for processor sets so far ([`Simulation::reserve_processors`]),
    /// from processor 1 up.
    reserved_processors: u32,
}

mod actions;
mod ahead;
mod bounds;
mod build;
mod error;
mod finish;
mod interp;
mod poll;
mod processor;
mod requests;
mod segment;
mod waiting;

pub use error::SimError;
use poll::Polling;
use processor::Proc;

impl Simulation {
    /// A machine with no tasks yet, scheduled by `sched`, whose random streams derive from `seed`.
    pub fn new(
        machine: MachineConfig,
        sched: Box<dyn Scheduler>,
        seed: u64,
    ) -> Result<Self, SimError> {
        machine.validate()?;
        let mut memory =
            MemorySystem::new(&machine.memory, machine.processors).map_err(ConfigError::from)?;
        let mut sched = Policy::new(sched, &machine);
        let mut laid_out = false;
        sched.layout(&mut |bytes| {
            laid_out = true;
            memory.alloc(bytes, Placement::Uma, None).base
        });
        let n = machine.processors as usize;
        let idle_handoff = machine.kernel.idle_handoff;
        let procs = (0..n).map(|_| Proc::idle()).collect();
        let idle = ProcSet::all(n);
        Ok(Simulation {
            cx: SchedCtx::new(machine),
            seed,
            agenda: EventQueue::default(),
            pending_work: 0,
            idle_ticks: 0,
            procs,
            rngs: Vec::new(),
            apps: Vec::new(),
            sched,
            sync: Vec::new(),
            memory,
            idle_handoff,
            idle,
            poll_idle: false,
            offer_all: false,
            live: 0,
            events: 0,
            limits: Limits::NONE,
            tick_actions: Actions::default(),
            offer_first: Vec::new(),
            offer_within: Vec::new(),
            measured: false,
            words: Default::default(),
            notices: Vec::new(),
            touches: Vec::new(),
            notices_sent: false,
            no_outcome: None,
            policy_touches: laid_out,
            fault: None,
            next_check: 0,
            next_observe: 0,
            refs_every: u64::MAX,
            refs_seen: 0,
            arrivals: Vec::new(),
            end_task: None,
            end_time: None,
            last_until_end: false,
            ending: false,
            event_pushed: 0,
            woken: Vec::new(),
            parks: 0,
            polls: Default::default(),
            max_threads: MAX_THREADS,
            reserved_processors: 0,
            trace: None,
            keep_job_times: false,
            runq_lock: Default::default(),
            kernel_mem: Charge::default(),
        })
    }

    /// The machine being simulated.
    pub fn machine(&self) -> &MachineConfig {
        &self.cx.machine
    }

    /// The machine's memory system, for workloads to allocate regions at install time (and for
    /// tests to inspect caches).
    pub fn memory(&mut self) -> &mut MemorySystem {
        &mut self.memory
    }

    /// Ends the run, normally, when the last thread of `task` exits: what the other tasks did
    /// until then is measured and the rest is not simulated (Gupta et al. 1991 measure a mix
    /// "up to the point LU finishes", footnote 3). Without it a run ends when every thread has.
    pub fn end_when_done(&mut self, task: TaskId) {
        self.end_task = Some(task);
    }

    /// Ends the run, normally, at cycle `at`: what every task did until then is measured and
    /// threads still live are simply not simulated further (rt-app's `duration`, after which
    /// every thread is killed). Threads blocked at that moment are no deadlock.
    pub fn end_at(&mut self, at: Cycles) {
        self.end_time = Some(self.end_time.map_or(at, |e| e.min(at)));
    }

    /// Makes the run last until its end time ([`Simulation::end_at`]) even when every thread
    /// has exited before it: the processors idle until then, the clock's ticks and the policy's
    /// calls on idle processors going on, as a program whose main process sleeps out its time
    /// whatever its threads do (rt-app's `duration`). No thread stands for the wait: the
    /// measures of the threads and applications are theirs; the run's time, its processors'
    /// idle time and utilization count the tail. Without an end time it changes nothing.
    pub fn last_until_end(&mut self) {
        self.last_until_end = true;
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

    /// Bounds the threads the run may create, those it starts with and those it spawns, to
    /// `n` (never more than [`MAX_THREADS`], the default): a thread created past it stops the
    /// run with [`SimError::TooManyThreads`]. For a program that spawns without end (a fork in
    /// a loop) to stop at what the memory allows rather than when it runs out.
    pub fn set_thread_limit(&mut self, n: u64) {
        self.max_threads = n.min(MAX_THREADS);
    }

    /// `now + d`, saturating: simulated time never wraps (a time past every limit simply
    /// stops the run).
    #[inline]
    fn after(&self, d: Cycles) -> Cycles {
        self.cx.now.saturating_add(d)
    }

    /// Records what each processor runs, within `config`'s bounds, into the report's `trace`.
    pub fn set_trace(&mut self, config: TraceConfig) {
        let n = self.procs.len();
        self.trace = Some(Box::new(Trace::new(config, n)));
    }

    /// Keeps every exited job's times in the report (`AppReport::job_times`), beside the
    /// per-application summary: 40 bytes a job, so an open workload's millions of jobs are kept
    /// only when asked.
    pub fn keep_job_times(&mut self) {
        self.keep_job_times = true;
    }

    /// Keeps per-thread measures for the threads of `task` created from now on: dispatches,
    /// runtime and the wake-to-run latency of every wake-up (`AppReport::per_thread`, and the
    /// application's recorded `wake_lat_us` with its median and 99th percentile).
    pub fn measure_threads(&mut self, task: TaskId) {
        if let Some(a) = self.apps.get_mut(task.index()) {
            a.per_thread = true;
            self.measured = true;
        }
    }

    /// Dispatches a thread that becomes ready straight to an idle processor, bypassing the run
    /// queue and its cost (Black 1990, section 3.1), when `on`: overrides the machine's
    /// `kernel.idle_handoff`.
    pub fn set_idle_handoff(&mut self, on: bool) {
        self.idle_handoff = on;
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
        if let Some(iv) = self.sched.shape.tick {
            self.push(iv.max(1), EventKind::Tick);
        }
        self.start_checks(every);
        // Every processor starts idle and, once threads are placed, is asked for work. A policy
        // that kicks hears from each at least once, as sched_ext's CPUs each pass through
        // `dispatch` when they go idle.
        if self.poll_idle || self.sched.shape.kicks {
            self.offer_all_idle();
        }
        self.poll_idle_processors()?;
        let time_bound = self.limits.cycles.min(MAX_TIME);
        // One comparison an event covers both time bounds (the end of the run, fixed by now).
        let stop_at = self.end_time.map_or(time_bound, |end| end.min(time_bound));
        // Lasting until the end, the loop ends there (or at a bound), whoever is live.
        let hold = self.last_until_end && self.end_time.is_some();
        while self.live > 0 || hold {
            let Some((time, kind)) = self.agenda.pop() else {
                if let Some(end) = self.end_time {
                    // Nothing left to happen before the end: the rest is idle until then.
                    self.cx.now = end.max(self.cx.now);
                    self.event_pushed = Cycles::MAX;
                    break;
                }
                let stuck = self.deadlock();
                return Err(self.ended(stuck));
            };
            if time > stop_at {
                if let Some(end) = self.end_time.filter(|&end| time > end) {
                    self.cx.now = end.max(self.cx.now);
                    // Every event up to the end was handled, a parked poller's loads included.
                    self.event_pushed = Cycles::MAX;
                    break;
                }
                // A time that saturated near `Cycles::MAX` is past every bound.
                self.cx.now = time_bound.max(self.cx.now);
                let bound = Bound::Cycles(self.limits.cycles);
                return Err(self.stop(bound));
            }
            if self.events >= self.next_check {
                match self.check(every, observe) {
                    Checked::Go => {}
                    Checked::End => break,
                    Checked::Fault(fault) => return Err(fault),
                    Checked::Bound(bound) => return Err(self.stop(bound)),
                }
            }
            debug_assert!(time >= self.cx.now);
            self.cx.now = time;
            self.events += 1;
            self.event_pushed = 0;
            self.fetch_next_events();
            let tick = self.handle(kind)?;
            if let Err(e) = self.after_event(tick) {
                return Err(self.ended(e));
            }
        }
        match self.fault.take() {
            Some(fault) => Err(fault),
            None => Ok(self.finish()),
        }
    }

    /// Handles one event at the current time; true when it was the clock's tick.
    #[inline]
    fn handle(&mut self, kind: u64) -> Result<bool, SimError> {
        match EventKind::unpack(kind) {
            EventKind::Proc { p, epoch } => {
                self.pending_work -= 1;
                let pi = p as usize;
                if self.procs[pi].epoch == epoch {
                    self.event_pushed = self.procs[pi].pushed;
                    self.settle(pi);
                    self.advance(pi)?;
                }
            }
            EventKind::Wake { t, epoch } => {
                self.pending_work -= 1;
                let ti = t as usize;
                if self.cx.threads[ti].exec.epoch == epoch
                    && self.cx.threads[ti].info.state == ThreadState::Blocked
                {
                    self.make_ready(ThreadId(t), Enqueue::Woken);
                }
            }
            EventKind::Tick => {
                self.tick()?;
                return Ok(true);
            }
            EventKind::Arrive { i } => {
                self.pending_work -= 1;
                let (task, program) = self.arrivals[i as usize]
                    .take()
                    .expect("an arrival happens once");
                self.create_thread(task, program, ThreadAttrs::default());
            }
        }
        Ok(false)
    }

    /// What follows every event: the policy's kicks, an offer to the idle processors, the
    /// pollers a write released, and the deadlock check once only ticks are left (`tick`: the
    /// event was the clock's).
    #[inline]
    fn after_event(&mut self, tick: bool) -> Result<(), SimError> {
        self.apply_kicks_if_any();
        if self.poll_idle {
            if self.idle.is_empty() {
                // Every processor is busy: nobody to offer the change to.
                self.poll_idle = false;
                self.offer_all = false;
                self.offer_within.clear();
            } else {
                self.poll_idle_processors()?;
            }
        }
        if self.memory.has_woken() {
            self.wake_pollers();
        }
        // Only ticks are left, and no thread can run or be woken: a deadlock. A thread that
        // is ready may wait for a later tick (a gang waits for its slice), so only once no
        // other event has come for more ticks than there are applications (a whole round of
        // slices) are ready or spinning threads taken as stuck.
        if !tick {
            self.idle_ticks = 0;
        } else if self.pending_work == 0 && self.end_time.is_none() {
            if self.all_live_blocked() {
                return Err(self.deadlock());
            }
            self.idle_ticks += 1;
            if self.idle_ticks > self.cx.tasks.len() as u64 + 2 {
                return Err(self.deadlock());
            }
        }
        Ok(())
    }

    #[inline]
    fn push(&mut self, time: Cycles, kind: EventKind) {
        if !matches!(kind, EventKind::Tick) {
            self.pending_work += 1;
        }
        self.agenda.push(time, kind.pack());
    }

    /// Schedules the end of a one-word memory access, often the next event of all: the agenda
    /// holds it out of its wheel ([`EventQueue::push_next`]).
    #[inline]
    fn push_next(&mut self, time: Cycles, kind: EventKind) {
        self.pending_work += 1;
        self.agenda.push_next(time, kind.pack());
    }
}
