//! Kernel scheduling policies: the [`Scheduler`] trait the engine calls, and the registry of
//! policies by name.
//!
//! Shaped like sched_ext's operations: three required hooks (`enqueue`, `pick_next`,
//! `dequeue`), what a policy is declared once in its [`Shape`], the rest defaulted. A policy *returns decisions*; the engine applies them
//! and charges their costs. Each policy is one small module, registered by one line in the `policies!` list, with its
//! name, summary, paper section and parameters, which is what `smpsched list` and
//! `smpsched explain` show.

use crate::config::MachineConfig;
use crate::ids::{Cycles, ProcId, TaskId, ThreadId};
use crate::outcome::{Notice, Reply, Request};

mod affinity_queue;
pub mod depress;
pub mod framework;
pub mod params;
pub mod queues;
pub mod scx;
mod vacant;

/// Declares each policy's module and registers the [`PolicyInfo`] it defines as `INFO`, in the
/// order `smpsched list` shows them: a policy is its module, registered by one line here. The
/// module is named after the policy (`round_robin` for `round-robin`; a test checks it).
macro_rules! policies {
    ($($(#[$doc:meta])* $module:ident,)*) => {
        $($(#[$doc])* pub mod $module;)*

        /// Every kernel scheduling policy, in the order `smpsched list` shows them (the papers'
        /// order).
        pub const POLICIES: &[PolicyInfo] = &[$($module::INFO,)*];

        /// The module each registered policy lives in, beside [`POLICIES`] (for the test that
        /// names agree).
        #[cfg(test)]
        const MODULES: &[&str] = &[$(stringify!($module),)*];
    };
}

policies! {
    batch,
    round_robin,
    priority,
    mach,
    affinity,
    gang,
    per_core,
    partition,
    process_control,
    scx_simple,
    scx_central,
}

/// Why a thread is being put on the ready queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enqueue {
    /// The thread was just created.
    New,
    /// The thread was blocked and is runnable again.
    Woken,
    /// The thread was running and its quantum expired or a higher-priority thread took over.
    Preempted,
    /// The thread gave up its processor voluntarily.
    Yielded,
}

/// Why a thread left its processor without going back to the ready queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The thread blocked (sleep, lock, barrier, ...).
    Blocked,
    /// The thread finished.
    Exited,
}

pub use crate::thread::{TaskInfo, ThreadInfo, ThreadState};

/// A read-only view of the machine that every hook receives: the engine's own records of the
/// machine, threads, tasks and processors, lent by reference, so that calling a hook costs
/// nothing to prepare (the engine owns one and keeps it current).
pub struct SchedCtx {
    /// Current simulated time.
    pub now: Cycles,
    /// The machine being simulated.
    pub machine: MachineConfig,
    /// Every thread, indexed by `ThreadId` (read through [`SchedCtx::thread`]).
    pub(crate) threads: Vec<crate::thread::ThreadSlot>,
    /// The engine's cold record of every thread (read through [`SchedCtx::arrived`] and
    /// [`SchedCtx::base_priority`]).
    pub(crate) cold: Vec<crate::thread::ThreadCold>,
    /// Every task, indexed by `TaskId`.
    pub tasks: Vec<TaskInfo>,
    /// The thread running on each processor, indexed by `ProcId`.
    pub running: Vec<Option<ThreadId>>,
    /// The processors nothing runs on (`running[p]` is `None`), kept in step by
    /// [`SchedCtx::set_running`] (read through [`SchedCtx::vacant`]).
    pub(crate) vacant: crate::procset::ProcSet,
    /// Whether any thread was ever given an affinity mask.
    pub(crate) any_masked: bool,
}

impl SchedCtx {
    /// The information about thread `t`.
    #[inline]
    pub fn thread(&self, t: ThreadId) -> &ThreadInfo {
        &self.threads[t.index()].info
    }

    /// How many threads have been created (ids `0..thread_count()`).
    pub fn thread_count(&self) -> usize {
        self.threads.len()
    }

    /// When thread `t` was created (its arrival, for a job of an open workload).
    pub fn arrived(&self, t: ThreadId) -> Cycles {
        self.cold[t.index()].arrived
    }

    /// Thread `t`'s base priority (larger is more important).
    pub fn base_priority(&self, t: ThreadId) -> i32 {
        self.cold[t.index()].base_priority
    }

    /// Thread `t`'s affinity mask (`None`: every processor).
    pub fn mask(&self, t: ThreadId) -> Option<&crate::thread::CpuMask> {
        self.cold[t.index()].mask.as_ref()
    }

    /// Whether any thread was ever given an affinity mask: until one is, a policy may skip
    /// every mask check (and keep one shared queue).
    #[inline]
    pub fn any_masked(&self) -> bool {
        self.any_masked
    }

    /// Whether thread `t`'s affinity mask lets it run on processor `p`.
    #[inline]
    pub fn allowed(&self, t: ThreadId, p: ProcId) -> bool {
        !self.thread(t).masked || self.mask(t).is_none_or(|m| m.allows(p))
    }
}

/// Where a thread that became runnable should be offered first (Linux's `select_task_rq`).
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// No preference: idle processors are offered work lowest-numbered first.
    Any,
    /// This processor is offered work first, if it is idle (a per-processor queue the policy
    /// put the thread on).
    Processor(ProcId),
    /// Only processors `first .. first + count` could take the thread (a gang's home processor,
    /// an application's block, the CPU a sched_ext wake-up names), and they draw on one queue:
    /// `first` is offered work first, then the other idle ones of the range lowest-numbered
    /// first, until one finds nothing (while no thread has an affinity mask, then all would;
    /// with masks every idle one of the range is asked); no processor outside it is asked.
    /// The engine's cost per wake-up then stays flat in the machine's size (with
    /// [`Target::Processor`] every idle processor is asked, and each declines in its own
    /// `pick_next`). A policy must not return it when another idle processor could now take
    /// work it could not before (a redivision of processors): then [`Target::Any`].
    Within {
        /// The first processor of the range, offered first.
        first: ProcId,
        /// How many processors the range has (0: none may take the thread now).
        count: u32,
    },
}

impl Target {
    /// Only processor `p` could take the thread.
    pub fn only(p: ProcId) -> Self {
        Target::Within { first: p, count: 1 }
    }
}

/// A reference a policy's dispatch makes to its own structures in the simulated memory (a
/// run-queue lock, a queue head), charged through the memory model as kernel time, so that
/// contention on run queues shows by itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Touch {
    /// A load.
    Read(u64),
    /// A store (a lock release).
    Write(u64),
    /// An atomic read-modify-write (a test-and-set lock acquire).
    Atomic(u64),
}

/// What happens to a running thread whose quantum ran out.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QuantumEnd {
    /// It leaves the processor and is enqueued as [`Enqueue::Preempted`].
    Preempt,
    /// It keeps the processor with a fresh quantum.
    Renew,
}

impl QuantumEnd {
    /// [`QuantumEnd::Preempt`] when `preempt`, else [`QuantumEnd::Renew`].
    pub fn preempt_if(preempt: bool) -> Self {
        if preempt {
            QuantumEnd::Preempt
        } else {
            QuantumEnd::Renew
        }
    }
}

/// Whether a policy gave up a ready thread for a handoff ([`Scheduler::dequeue`]).
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Handoff {
    /// The thread was taken off the policy's queues; the engine runs it.
    Taken,
    /// The policy cannot give it (the engine falls back to an ordinary pick).
    Refused,
}

impl Handoff {
    /// [`Handoff::Taken`] when `taken`, else [`Handoff::Refused`].
    pub fn taken_if(taken: bool) -> Self {
        if taken {
            Handoff::Taken
        } else {
            Handoff::Refused
        }
    }
}

/// What a policy asks of the engine from its [`Scheduler::tick`] or [`Scheduler::request`]
/// (beyond the request's reply).
#[derive(Debug, Default)]
pub struct Actions {
    /// Running processors to preempt now (each then asks [`Scheduler::pick_next`]).
    pub preempt: Vec<ProcId>,
    /// Offer work to every idle processor now (a gang's slice begins).
    pub offer_idle: bool,
    /// Notices to applications (process control: "you now have N processors"); each thread of
    /// the task sees the latest at its next operation.
    pub notify: Vec<(TaskId, Notice)>,
}

/// A policy's request that the engine look at processor `cpu` outside placement (sched_ext's
/// `scx_bpf_kick_cpu`): an idle one is offered work at once; a running one, with `preempt`,
/// is interrupted so that it picks again. Policies that kick declare it in [`Shape::kicking`]
/// and hand their requests over in [`Scheduler::take_kicks`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kick {
    /// The processor kicked.
    pub cpu: ProcId,
    /// Whether a running processor gives up its thread (`SCX_KICK_PREEMPT`); else only an
    /// idle one is woken (`SCX_KICK_IDLE`).
    pub preempt: bool,
}

/// How a policy treats a thread that asks for strong discouragement ([`Op::Hint`]'s `Strong`,
/// Black 1990, section 5.1).
///
/// [`Op::Hint`]: crate::program::Op::Hint
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Depression {
    /// Not supported: the hint costs its kernel call and changes nothing.
    Ignored,
    /// The framework does it for the policy: a depressed thread made ready is parked off the
    /// policy's queues until its timeout passes or it cancels, and runs only when the policy
    /// has nothing for an idle processor; at a quantum's end a depressed runner yields to any
    /// parked thread whose depression ended. A thread whose depression ends goes back through
    /// the policy's `enqueue` (as [`Enqueue::Woken`]) at the next pick; the target it returns
    /// then is not acted on, so this suits a policy with one shared queue.
    Parked,
    /// The policy does it itself in [`Scheduler::depress`] (Mach: the lowest level).
    Own,
}

/// What a policy is, declared once before the run ([`Scheduler::shape`]) rather than asked at
/// every dispatch: its slice, its tick, whether it accounts usage, whether its run queue is
/// shared by every processor, and how it treats depression.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    /// The quantum a thread gets at each dispatch and each renewal (sched_ext's slice);
    /// `None`: it runs until it blocks or exits (or the policy's tick preempts it).
    pub slice: Option<Cycles>,
    /// The policy's nominal time slice, the unit of per-slice measures (context switches per
    /// slice per processor).
    pub nominal_slice: Cycles,
    /// Interval of the policy's periodic [`Scheduler::tick`], or `None` for no ticks.
    pub tick: Option<Cycles>,
    /// Whether [`Scheduler::charge`] is told of every stretch of processor time (else it is
    /// never called).
    pub charges: bool,
    /// Whether the policy keeps one run queue every processor serves, so that, while no thread
    /// with an affinity mask has been queued, `pick_next` returning `None` on one idle processor
    /// means it would on every one (the engine then stops offering).
    pub shared_queue: bool,
    /// How strong discouragement is done.
    pub depression: Depression,
    /// Whether the policy kicks processors ([`Kick`], [`Scheduler::take_kicks`]).
    pub kicks: bool,
    /// Whether every idle processor is asked for work after any thread's exit (an idle
    /// processor of a pull policy may then take a waiting thread); else only after an
    /// application's last thread exits (when a gang rotates or a partition is redivided), a
    /// thread's exit freeing only its own processor, which picks at once.
    pub exit_offers_all: bool,
}

impl Shape {
    /// The plain shape: the machine's `slice_cycles` as slice and nominal slice, no tick, no
    /// usage accounting, per-processor queues (every idle processor is asked), depression
    /// ignored. Policies change what differs with the methods below.
    pub fn new(machine: &MachineConfig) -> Self {
        Shape {
            slice: Some(machine.slice_cycles),
            nominal_slice: machine.slice_cycles,
            tick: None,
            charges: false,
            shared_queue: false,
            depression: Depression::Ignored,
            kicks: false,
            exit_offers_all: true,
        }
    }

    /// A quantum of `slice` cycles (the machine's when `None`), also the nominal slice.
    pub fn slice(self, slice: Option<Cycles>) -> Self {
        let s = slice.unwrap_or(self.nominal_slice);
        Shape {
            slice: Some(s),
            nominal_slice: s,
            ..self
        }
    }

    /// No quantum: threads run until they block or exit; `nominal` is the slice per-slice
    /// measures count in.
    pub fn unsliced(self, nominal: Cycles) -> Self {
        Shape {
            slice: None,
            nominal_slice: nominal,
            ..self
        }
    }

    /// A periodic [`Scheduler::tick`] every `interval` cycles (none when `None`).
    pub fn tick(self, interval: Option<Cycles>) -> Self {
        Shape {
            tick: interval,
            ..self
        }
    }

    /// [`Scheduler::charge`] is called.
    pub fn charging(self) -> Self {
        Shape {
            charges: true,
            ..self
        }
    }

    /// One run queue shared by every processor.
    pub fn shared_queue(self) -> Self {
        Shape {
            shared_queue: true,
            ..self
        }
    }

    /// The policy kicks processors: the engine collects its [`Scheduler::take_kicks`] after
    /// each event and each offer of work, and applies them.
    pub fn kicking(self) -> Self {
        Shape {
            kicks: true,
            ..self
        }
    }

    /// A thread's exit offers nothing to other idle processors; an application's last exit
    /// still asks them all ([`Shape::exit_offers_all`] false).
    pub fn quiet_exits(self) -> Self {
        Shape {
            exit_offers_all: false,
            ..self
        }
    }

    /// Strong discouragement done as `how`.
    pub fn depression(self, how: Depression) -> Self {
        Shape {
            depression: how,
            ..self
        }
    }
}

/// A kernel scheduling policy, shaped like sched_ext's operations: three required hooks
/// (`enqueue` with placement, `pick_next`, `dequeue`), what the policy is declared once in
/// [`Scheduler::shape`], everything else defaulted. The engine calls the hooks and applies
/// what they decide; the policy keeps its own run queues, and the framework
/// ([`framework`]) does the work common to every policy (depression parking, the shared-queue
/// shortcut). A policy never sees the engine's internals.
pub trait Scheduler {
    /// Thread `t` became runnable: queue it and say where it should be offered first.
    fn enqueue(&mut self, t: ThreadId, why: Enqueue, cx: &SchedCtx) -> Target;

    /// Processor `p` needs a thread. The returned thread must have been enqueued and not picked
    /// since; it runs for the shape's slice. `None` leaves the processor idle until something
    /// changes.
    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId>;

    /// Takes ready thread `t` off the run queues for a handoff ([`Handoff::Refused`] if the
    /// policy cannot; the handoff then falls back to an ordinary pick).
    fn dequeue(&mut self, t: ThreadId, cx: &SchedCtx) -> Handoff;

    /// What the policy is on `machine` (slice, tick, usage accounting, shared queue,
    /// depression); asked once, before the run.
    fn shape(&self, machine: &MachineConfig) -> Shape {
        Shape::new(machine)
    }

    /// The quantum of `t` running on `p` expired: [`QuantumEnd::Preempt`] (the default) sends
    /// it to the ready queue as [`Enqueue::Preempted`], [`QuantumEnd::Renew`] gives it a fresh
    /// slice.
    fn quantum_expired(&mut self, _t: ThreadId, _p: ProcId, _cx: &SchedCtx) -> QuantumEnd {
        QuantumEnd::Preempt
    }

    /// Thread `t` held a processor for `cycles` more (usage accounting; called only when the
    /// shape says [`Shape::charges`]).
    fn charge(&mut self, _t: ThreadId, _cycles: Cycles) {}

    /// Thread `t` left its processor and did not go back to a ready queue.
    fn stopped(&mut self, _t: ThreadId, _why: Stop, _cx: &SchedCtx) {}

    /// Periodic bookkeeping every [`Shape::tick`] (usage decay, aging, slice boundaries):
    /// processors pushed on `out.preempt` are preempted, and `out.offer_idle` offers work to
    /// the idle ones.
    fn tick(&mut self, _cx: &SchedCtx, _out: &mut Actions) {}

    /// Thread `t` asks the kernel `req`: the reply and the kernel cycles it costs; processors
    /// the answer takes from their threads go on `out.preempt` (a processor moved to another
    /// processor set, a thread moved off its processor's set), and `out.offer_idle` offers
    /// work to idle processors. By default a request costs what a `thread_switch` call does;
    /// the processor count is the machine's; mask and priority changes are granted (the engine
    /// applies them, moving the thread at once if its processor leaves its mask); processor
    /// sets are refused (a policy without them).
    fn request(
        &mut self,
        _t: ThreadId,
        req: &Request,
        cx: &SchedCtx,
        _out: &mut Actions,
    ) -> (Reply, Cycles) {
        let reply = match req {
            Request::Processors => Reply::Processors(cx.machine.processors),
            Request::SetMask(_) | Request::SetBasePriority(_) => Reply::Done,
            Request::ProcessorSet(_) => {
                Reply::Refused("this scheduling policy has no processor sets")
            }
        };
        (reply, cx.machine.kernel.yield_call)
    }

    /// After `t` was enqueued as woken or new (created: an arrival, a spawn) and no idle
    /// processor took it: a running processor to preempt in its favour, if the policy preempts
    /// when a thread becomes ready.
    fn preempt_for(&mut self, _t: ThreadId, _cx: &SchedCtx) -> Option<ProcId> {
        None
    }

    /// Strong discouragement of `t` until `until`, or its cancellation (`None`), for a policy
    /// whose shape says [`Depression::Own`] (Black 1990, section 5.1).
    fn depress(&mut self, _t: ThreadId, _until: Option<Cycles>, _cx: &SchedCtx) {}

    /// Lays out the policy's own structures in the simulated memory before the run: `alloc(bytes)`
    /// returns the base address of a fresh region (for [`Scheduler::dispatch_touches`], which
    /// the engine asks only of a policy that allocated something here).
    fn layout(&mut self, _alloc: &mut dyn FnMut(u64) -> u64) {}

    /// The references the dispatch just chosen by [`Scheduler::pick_next`] on `p` made to the
    /// policy's structures, in order (e.g. acquire the run-queue lock, read the head, release).
    /// The engine charges them through the memory model one after another, as kernel time, on
    /// top of the machine's `sched_op_cycles`.
    fn dispatch_touches(&self, _p: ProcId, _cx: &SchedCtx, _out: &mut Vec<Touch>) {}

    /// Moves the processors the policy kicked since it was last asked onto `out` (asked after
    /// each event and each offer of work, only when the shape says [`Shape::kicks`]).
    fn take_kicks(&mut self, _out: &mut Vec<Kick>) {}

    /// Whether no idle processor's `pick_next` could find a thread now, and asking one would
    /// change nothing (no pass it would use up, no look charged through `dispatch_touches`):
    /// the engine then stops offering work to idle processors for this round. `false`, the
    /// default, when the policy cannot tell cheaply. `per-core` tells from its count of queued
    /// threads, so that a wake-up on a large machine does not ask thousands of idle
    /// processors in turn.
    fn nothing_waiting(&self) -> bool {
        false
    }

    /// The threads this policy would most likely pick next on `p`, after the pick it just
    /// made, the likelier first: the head of its run queue and the thread behind it, when it
    /// knows them cheaply. A hint only: the engine has the host fetch their records ahead of
    /// their dispatch (with hundreds of thousands of threads each would otherwise come from
    /// host memory); a wrong or absent answer costs time, never changes a result.
    fn next_picks(&self, _p: ProcId, _cx: &SchedCtx) -> [Option<ThreadId>; 2] {
        [None, None]
    }
}

/// One parameter of a policy, for `smpsched explain`.
#[derive(Clone, Copy, Debug)]
pub struct ParamInfo {
    /// Name as written in an experiment file.
    pub name: &'static str,
    /// Default value, as written in an experiment file.
    pub default: &'static str,
    /// What it means.
    pub doc: &'static str,
}

/// A registered policy: its name, documentation and constructor.
#[derive(Clone, Copy)]
pub struct PolicyInfo {
    /// Name as written in `[scheduler] policy = "..."`.
    pub name: &'static str,
    /// One-line summary.
    pub summary: &'static str,
    /// What the policy does, a short paragraph.
    pub description: &'static str,
    /// The paper and section it comes from.
    pub paper: &'static str,
    /// Its parameters.
    pub params: &'static [ParamInfo],
    /// Whether it provides processor sets to programs' kernel requests (Black 1990, section 6):
    /// a workload that needs them is refused under a policy that does not.
    pub processor_sets: bool,
    /// Parses and checks the policy's parameter table (without the `policy` key) once into the
    /// policy's own parameter struct, its settings; an error names the field ([`ParamError`]).
    pub parse: fn(&toml::Table) -> Result<std::sync::Arc<dyn Settings>, ParamError>,
}

impl PolicyInfo {
    /// A scheduler from the policy's parameter table: [`PolicyInfo::parse`], then
    /// [`Settings::build`].
    pub fn make(&self, table: &toml::Table) -> Result<Box<dyn Scheduler>, ParamError> {
        Ok((self.parse)(table)?.build())
    }
}

/// A policy's settings: its `[scheduler]` table parsed and checked once (typed: the policy's own
/// parameter struct), from which each run builds a fresh scheduler.
pub trait Settings: std::fmt::Debug + Send + Sync {
    /// A fresh scheduler with these settings.
    fn build(&self) -> Box<dyn Scheduler>;
}

/// The registered policy of that name.
pub fn policy(name: &str) -> Option<&'static PolicyInfo> {
    POLICIES.iter().find(|p| p.name == name)
}

pub use params::{no_params, parse, settings, NoParams, ParamError, PolicyParams};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_policy_builds_from_defaults_and_names_are_unique() {
        for (i, p) in POLICIES.iter().enumerate() {
            assert!(p.make(&toml::Table::new()).is_ok(), "{}", p.name);
            assert!(POLICIES[..i].iter().all(|q| q.name != p.name));
            assert!(policy(p.name).is_some());
        }
    }

    #[test]
    fn each_policy_lives_in_the_module_named_after_it() {
        assert_eq!(POLICIES.len(), MODULES.len());
        for (p, m) in POLICIES.iter().zip(MODULES) {
            assert_eq!(p.name.replace('-', "_"), *m);
        }
    }

    #[test]
    fn unknown_parameter_is_rejected() {
        let mut t = toml::Table::new();
        t.insert("quantumm".into(), toml::Value::Integer(3));
        let typed = policy("round-robin").unwrap().make(&t).err().unwrap();
        assert_eq!(typed.field, "quantumm");
        assert!(typed.message.starts_with("unknown field"), "{typed}");
    }
}
