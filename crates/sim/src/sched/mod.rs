//! Kernel scheduling policies: the [`Scheduler`] trait the engine calls, and the registry of
//! policies by name.
//!
//! Shaped like a Linux scheduling class: a few required hooks (`enqueue`, `pick_next`,
//! `quantum_expired`), the rest defaulted. A policy *returns decisions*; the engine applies them
//! and charges their costs. Each policy is one small module registered in [`POLICIES`] with its
//! name, summary, paper section and parameters, which is what `smpsched list` and
//! `smpsched explain` show.

use serde::de::DeserializeOwned;

use crate::config::MachineConfig;
use crate::ids::{Cycles, ProcId, TaskId, ThreadId};
use crate::outcome::{Notice, Reply, Request};

pub mod affinity;
pub mod batch;
pub mod depress;
pub mod gang;
pub mod mach;
pub mod partition;
pub mod per_core;
pub mod priority;
pub mod process_control;
pub mod round_robin;

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

/// Whether a policy gave up a ready thread for a handoff ([`Scheduler::remove`]).
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

/// Which of the optional hooks called on the engine's hot path a policy implements, declared
/// once before the run ([`Scheduler::hooks`]; sched_ext's ops flags play this part), so that
/// the engine skips the calls a policy leaves at their defaults. [`Hooks::ALL`], the default,
/// is always correct: a hook declared absent is never called, and the engine does what its
/// default would.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hooks {
    /// [`Scheduler::running`] is called at every dispatch.
    pub running: bool,
    /// [`Scheduler::dispatch_cost`] is asked at every dispatch (else the machine's
    /// `sched_op_cycles`).
    pub dispatch_cost: bool,
    /// [`Scheduler::charge`] is told of every stretch of processor time a thread holds.
    pub charge: bool,
}

impl Hooks {
    /// Every optional hook is called.
    pub const ALL: Hooks = Hooks {
        running: true,
        dispatch_cost: true,
        charge: true,
    };
    /// None is: the policy leaves them all at their defaults.
    pub const NONE: Hooks = Hooks {
        running: false,
        dispatch_cost: false,
        charge: false,
    };
}

/// A kernel scheduling policy, shaped like Linux's `sched_class` and sched_ext's operations:
/// the engine calls these hooks and applies what they decide; the policy keeps its own run
/// queues. Every thread a processor starts passes through the policy: [`Scheduler::pick_next`]
/// chooses it, or, for a handoff, [`Scheduler::remove`] yields it; either way
/// [`Scheduler::running`] is told. A policy never sees the engine's internals.
pub trait Scheduler {
    /// Thread `t` became runnable: queue it and say where it should be offered first.
    fn enqueue(&mut self, t: ThreadId, why: Enqueue, cx: &SchedCtx) -> Target;

    /// Processor `p` needs a thread. The returned thread must have been enqueued and not picked
    /// since. `None` leaves the processor idle until something changes.
    fn pick_next(&mut self, p: ProcId, cx: &SchedCtx) -> Option<ThreadId>;

    /// The quantum of `t` starting now on `p`; `None` lets it run until it blocks or exits.
    fn quantum(&self, _t: ThreadId, _p: ProcId, cx: &SchedCtx) -> Option<Cycles> {
        Some(cx.machine.slice_cycles)
    }

    /// The policy's nominal time slice, the one unit of per-slice measures (context switches
    /// per slice per processor): the machine's `slice_cycles` unless the policy sets its own
    /// quantum. One source of truth with [`Scheduler::quantum`].
    fn slice_cycles(&self, machine: &MachineConfig) -> Cycles {
        machine.slice_cycles
    }

    /// The quantum of `t` running on `p` expired: `true` preempts it (it is then enqueued as
    /// [`Enqueue::Preempted`]), `false` gives it a fresh quantum.
    fn quantum_expired(&mut self, t: ThreadId, p: ProcId, cx: &SchedCtx) -> QuantumEnd;

    /// Lays out the policy's own structures in the simulated memory before the run: `alloc(bytes)`
    /// returns the base address of a fresh region (for [`Scheduler::dispatch_touches`], which
    /// the engine asks only of a policy that allocated something here).
    fn layout(&mut self, _alloc: &mut dyn FnMut(u64) -> u64) {}

    /// The references the dispatch just chosen by [`Scheduler::pick_next`] on `p` made to the
    /// policy's structures, in order (e.g. acquire the run-queue lock, read the head, release).
    /// The engine charges them through the memory model one after another, as kernel time, on
    /// top of [`Scheduler::dispatch_cost`].
    fn dispatch_touches(&self, _p: ProcId, _cx: &SchedCtx, _out: &mut Vec<Touch>) {}

    /// The kernel cycles the dispatch just chosen by [`Scheduler::pick_next`] on `p` cost (a
    /// policy that searched several queues, or took a remote lock, says so); by default the
    /// machine's `sched_op_cycles`.
    fn dispatch_cost(&self, _p: ProcId, cx: &SchedCtx) -> Cycles {
        cx.machine.sched_op_cycles
    }

    /// Thread `t` held a processor for `cycles` more (usage accounting).
    fn charge(&mut self, _t: ThreadId, _cycles: Cycles) {}

    /// Thread `t` left its processor and did not go back to a ready queue.
    fn stopped(&mut self, _t: ThreadId, _why: Stop, _cx: &SchedCtx) {}

    /// Interval of the policy's periodic [`Scheduler::tick`], or `None` for no ticks.
    fn tick_interval(&self, _machine: &MachineConfig) -> Option<Cycles> {
        None
    }

    /// Periodic bookkeeping (usage decay, aging, slice boundaries): processors pushed on
    /// `out.preempt` are preempted, and `out.offer_idle` offers work to the idle ones.
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
            Request::CreateProcessorSet
            | Request::AssignProcessor { .. }
            | Request::AssignThread { .. }
            | Request::AssignTask { .. } => {
                Reply::Refused("this scheduling policy has no processor sets")
            }
        };
        (reply, cx.machine.kernel.yield_call)
    }

    /// Thread `t` starts on processor `p` (after a pick, a handoff, or an idle-processor
    /// handoff that bypassed the run queue), so the policy's accounting never drifts.
    fn running(&mut self, _t: ThreadId, _p: ProcId, _cx: &SchedCtx) {}

    /// After `t` was enqueued and no idle processor took it: a running processor to preempt in
    /// its favour, if the policy preempts on wake-up.
    fn preempt_for(&mut self, _t: ThreadId, _cx: &SchedCtx) -> Option<ProcId> {
        None
    }

    /// Takes ready thread `t` off the run queue for a handoff; `false` if the policy cannot (the
    /// handoff then falls back to an ordinary pick).
    fn remove(&mut self, _t: ThreadId, _cx: &SchedCtx) -> Handoff {
        Handoff::Refused
    }

    /// Strong discouragement: `t` runs only when nothing else is ready, until `until` or until
    /// [`Scheduler::undepress`] (Black 1990, section 5.1).
    fn depress(&mut self, _t: ThreadId, _until: Cycles, _cx: &SchedCtx) {}

    /// Cancels a depression set by [`Scheduler::depress`].
    fn undepress(&mut self, _t: ThreadId, _cx: &SchedCtx) {}

    /// Which optional hot-path hooks ([`Scheduler::running`], [`Scheduler::dispatch_cost`],
    /// [`Scheduler::charge`]) the policy implements; asked once, before the run. The default
    /// calls them all; a policy that leaves some at their defaults may say so to save a call
    /// per dispatch or per charge.
    fn hooks(&self) -> Hooks {
        Hooks::ALL
    }

    /// Whether `pick_next` returning `None` on one idle processor means it would on every idle
    /// processor (one shared run queue), so the engine may stop offering. The default, `false`,
    /// is always correct (every idle processor is asked); a global queue answers `true` to save
    /// the asking.
    fn single_queue(&self) -> bool {
        false
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
    /// Builds the policy from its parameter table (without the `policy` key). Validation errors
    /// follow the convention `field: message`, so the lab can point at the field's line.
    pub build: fn(toml::Table) -> Result<Box<dyn Scheduler>, toml::de::Error>,
}

/// Every kernel scheduling policy, in the order `smpsched list` shows them.
pub const POLICIES: &[PolicyInfo] = &[
    batch::INFO,
    round_robin::INFO,
    priority::INFO,
    mach::INFO,
    affinity::INFO,
    gang::INFO,
    per_core::INFO,
    partition::INFO,
    process_control::INFO,
];

/// The registered policy of that name.
pub fn policy(name: &str) -> Option<&'static PolicyInfo> {
    POLICIES.iter().find(|p| p.name == name)
}

/// Deserializes a policy's parameters from its table; shared by every policy's `build`.
pub fn params<P: DeserializeOwned>(table: toml::Table) -> Result<P, toml::de::Error> {
    toml::Value::Table(table).try_into()
}

/// Deserializes an optional quantum: like the machine's `slice_cycles`, at least one cycle (a
/// zero quantum would preempt at every instant) and at most
/// [`MAX_COST_CYCLES`](crate::config::MAX_COST_CYCLES).
/// Checks a policy's number parameter: finite and within `lo..=hi`, or the error
/// `field: must be from LO to HI UNIT, got V` (the lab points at the field's line).
pub(crate) fn check_range(field: &str, v: f64, lo: f64, hi: f64, unit: &str) -> Result<(), String> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(())
    } else {
        let got = if v.is_finite() && v.abs() >= 1e9 {
            format!("{v:e}")
        } else {
            format!("{v}")
        };
        Err(format!(
            "{field}: must be from {lo} to {hi} {unit}, got {got}"
        ))
    }
}

/// Longest time a policy's period may be, in milliseconds (one hour of simulated time).
pub(crate) const MAX_PERIOD_MS: f64 = 3_600_000.0;

pub(crate) fn de_quantum<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<Cycles>, D::Error> {
    let q = <Option<Cycles> as serde::Deserialize>::deserialize(d)?;
    match q {
        Some(c) if c == 0 || c > crate::config::MAX_COST_CYCLES => {
            Err(serde::de::Error::custom(format!(
                "a quantum must be between 1 and {} cycles (like machine.slice_cycles), got {c}",
                crate::config::MAX_COST_CYCLES
            )))
        }
        q => Ok(q),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_policy_builds_from_defaults_and_names_are_unique() {
        for (i, p) in POLICIES.iter().enumerate() {
            assert!((p.build)(toml::Table::new()).is_ok(), "{}", p.name);
            assert!(POLICIES[..i].iter().all(|q| q.name != p.name));
            assert!(policy(p.name).is_some());
        }
    }

    #[test]
    fn unknown_parameter_is_rejected() {
        let mut t = toml::Table::new();
        t.insert("quantumm".into(), toml::Value::Integer(3));
        let err = (policy("round-robin").unwrap().build)(t).err().unwrap();
        assert!(err.to_string().contains("quantumm"), "{err}");
    }
}
