//! An rt-app file compiled for one run: every event's time in the machine's cycles (a `run`
//! through rt-app's calibration), every mutex, condition and barrier named by its kernel object,
//! every timer and fork target by a number. The threads' interpreter (`program.rs`) then does no
//! arithmetic on microseconds, no name lookups and no string comparisons per event: `perf` put a
//! fifth of a periodic load's run in reading the file's events in place.

use std::collections::BTreeMap;

use smpsched_sim::{Cycles, SyncId};

use super::spec::{Attrs, Event, Spec};

/// One event, resolved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Step {
    /// `run` (after calibration) or `runtime`.
    Compute(Cycles),
    /// `sleep`.
    Sleep(Cycles),
    /// `timer`: the thread's timer number `timer`, its period.
    Timer {
        timer: usize,
        period: Cycles,
        absolute: bool,
    },
    Lock(SyncId),
    Unlock(SyncId),
    /// `wait` on condition number `cond`, releasing the mutex meanwhile.
    Wait {
        cond: usize,
        mutex: SyncId,
    },
    Signal(usize),
    Broad(usize),
    Sync {
        cond: usize,
        mutex: SyncId,
        /// The thread holds the mutex already: no lock or unlock around the sync.
        held: bool,
    },
    Barrier(SyncId),
    /// `suspend`: wait on the named task's suspend condition (its number).
    Suspend(usize),
    /// `resume`: wake every waiter of that condition.
    Resume(usize),
    Yield,
    /// `fork`: a thread of task number `.0`.
    Fork(usize),
    /// `mem` or `iorun`: bytes written.
    Mem(u64),
}

/// A phase, resolved.
#[derive(Debug)]
pub(super) struct CodePhase {
    pub loops: u64,
    pub attrs: Attrs,
    pub steps: Vec<Step>,
}

/// A task, resolved.
#[derive(Debug)]
pub(super) struct TaskCode {
    /// Cycles before a thread starts, when the task gives a delay.
    pub delay: Option<Cycles>,
    pub loops: Option<u64>,
    pub attrs: Attrs,
    pub phases: Vec<CodePhase>,
    /// Distinct timer names of the task (each thread has one timer per name).
    pub timers: usize,
}

/// The whole file, resolved.
#[derive(Debug)]
pub(super) struct Code {
    pub tasks: Vec<TaskCode>,
    pub cycles_per_us: f64,
    /// Bytes of each thread's memory buffer.
    pub mem_buffer: u64,
}

/// The kernel objects the file's names stand for (`objects.rs` makes them).
pub(super) struct Names<'a> {
    pub mutexes: &'a BTreeMap<String, SyncId>,
    /// Each condition's number (its place in the threads' shared list of conditions).
    pub conds: &'a BTreeMap<String, usize>,
    pub barriers: &'a BTreeMap<String, SyncId>,
}

/// `us` microseconds in cycles, rounded to the nearest.
pub(super) fn cycles(us: f64, cycles_per_us: f64) -> Cycles {
    (us * cycles_per_us).round() as Cycles
}

/// A phase's attributes as the thread gets them when the phase starts: where some phase of the
/// task sets `cpus`, a phase without them goes back to the task's (or, without those, to
/// every one of the machine's `processors`), as rt-app sets each phase's affinity.
fn phase_attrs(task: &super::spec::Task, phase: &Attrs, processors: u32) -> Attrs {
    let mut attrs = phase.clone();
    if attrs.cpus.is_none() && task.phases.iter().any(|p| p.attrs.cpus.is_some()) {
        attrs.cpus = Some(
            task.attrs
                .cpus
                .clone()
                .unwrap_or_else(|| (0..processors).collect()),
        );
    }
    attrs
}

/// Compiles `spec` against the machine (its clock, its `processors`) and the kernel objects in
/// `names`. The file has been checked (`checks.rs`, `objects.rs`), so every name it uses is
/// there.
pub(super) fn compile(spec: &Spec, cycles_per_us: f64, processors: u32, names: &Names<'_>) -> Code {
    let task_index = spec.task_indices();
    let tasks = spec
        .tasks
        .iter()
        .map(|t| {
            let mut timers: Vec<&str> = Vec::new();
            let phases = t
                .phases
                .iter()
                .map(|p| CodePhase {
                    loops: p.loops,
                    attrs: phase_attrs(t, &p.attrs, processors),
                    steps: p
                        .events
                        .iter()
                        .map(|e| step(e, spec, cycles_per_us, names, &task_index, &mut timers))
                        .collect(),
                })
                .collect();
            TaskCode {
                delay: (t.delay > 0.0).then(|| cycles(t.delay, cycles_per_us)),
                loops: t.loops,
                attrs: t.attrs.clone(),
                phases,
                timers: timers.len(),
            }
        })
        .collect();
    Code {
        tasks,
        cycles_per_us,
        mem_buffer: spec.mem_buffer,
    }
}

/// One event resolved; `timers` numbers the task's timer names in order of first appearance.
fn step<'s>(
    event: &'s Event,
    spec: &Spec,
    cpu: f64,
    names: &Names<'_>,
    task_index: &BTreeMap<&str, usize>,
    timers: &mut Vec<&'s str>,
) -> Step {
    let cond = |c: &str| names.conds[c];
    match event {
        Event::Run(us) => {
            // rt-app runs floor(t * 1000 / ns) loops of the calibrated workload.
            let us = spec
                .ns_per_loop
                .map_or(*us, |ns| (us * 1000.0 / ns).floor() * ns / 1000.0);
            Step::Compute(cycles(us, cpu))
        }
        Event::Runtime(us) => Step::Compute(cycles(*us, cpu)),
        Event::Sleep(us) => Step::Sleep(cycles(*us, cpu)),
        Event::Timer {
            name,
            period,
            absolute,
        } => {
            let timer = match timers.iter().position(|n| *n == name.as_str()) {
                Some(i) => i,
                None => {
                    timers.push(name);
                    timers.len() - 1
                }
            };
            Step::Timer {
                timer,
                // At least a cycle: a period shorter than the clock's would be missed at every
                // expiry, and a thread of timers alone would never let time pass.
                period: cycles(*period, cpu).max(1),
                absolute: *absolute,
            }
        }
        Event::Lock(m) => Step::Lock(names.mutexes[m]),
        Event::Unlock(m) => Step::Unlock(names.mutexes[m]),
        Event::Wait { cond: c, mutex } => Step::Wait {
            cond: cond(c),
            mutex: names.mutexes[mutex],
        },
        Event::Signal(c) => Step::Signal(cond(c)),
        Event::Broad(c) => Step::Broad(cond(c)),
        Event::Sync {
            cond: c,
            mutex,
            held,
        } => Step::Sync {
            cond: cond(c),
            mutex: names.mutexes[mutex],
            held: *held,
        },
        Event::Barrier(b) => Step::Barrier(names.barriers[b]),
        Event::Suspend(t) => Step::Suspend(cond(&super::objects::suspend_cond(t))),
        Event::Resume(t) => Step::Resume(cond(&super::objects::suspend_cond(t))),
        Event::Yield => Step::Yield,
        Event::Fork(name) => Step::Fork(task_index[name.as_str()]),
        Event::Mem(bytes) | Event::IoRun(bytes) => Step::Mem(*bytes),
    }
}
