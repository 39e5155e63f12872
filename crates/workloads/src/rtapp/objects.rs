//! What an rt-app load needs from the machine before its threads start: its `cpus` checked
//! against the machine, one kernel object per mutex, condition (and per task, the condition its
//! `suspend` waits on) and barrier, and each memory-writing task's buffers (rt-app's
//! `global.mem_buffer_size`, one per instance), created in file order so that runs repeat.

use std::collections::BTreeMap;

use smpsched_sim::memory::Placement;
use smpsched_sim::sync::{SyncId, WaitPolicy};
use smpsched_sim::{Simulation, SyncKind};

use super::spec::{At, Event, RtAppError, Spec};
use super::RtApp;

/// The load's mutexes, its conditions (each with its count of waiters) and its barriers.
pub(super) type Objects = (
    BTreeMap<String, SyncId>,
    BTreeMap<String, (SyncId, u64)>,
    BTreeMap<String, SyncId>,
);

/// The condition a task's suspended threads wait on (`suspend`, and `resume` naming the task).
pub(super) fn suspend_cond(task: &str) -> String {
    format!("suspend:{task}")
}

/// An error when a task's or a phase's `cpus` names a CPU the machine of `procs` lacks,
/// naming the line, the task and the phase.
pub(super) fn check_cpus(spec: &Spec, procs: u32) -> Result<(), RtAppError> {
    for t in &spec.tasks {
        let phases = t.phases.iter().map(|p| (Some(p.name.clone()), &p.attrs));
        for (phase, attrs) in std::iter::once((None, &t.attrs)).chain(phases) {
            let Some(cpus) = &attrs.cpus else { continue };
            if let Some(c) = cpus.iter().find(|&&c| c >= procs) {
                let at = At {
                    task: Some(t.name.clone()),
                    phase,
                };
                return Err(at.error(
                    "cpus",
                    attrs.cpus_line,
                    format!(
                        "names CPU {c}, but the machine has {procs} processors (0 to {})",
                        procs - 1
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Creates the load's blocking mutexes, conditions and barriers, in the order the file names
/// them.
pub(super) fn sync_objects(sim: &mut Simulation, spec: &Spec) -> Objects {
    let mut mutexes = BTreeMap::new();
    let mut conds = BTreeMap::new();
    let mut barriers = BTreeMap::new();
    let semaphore = |sim: &mut Simulation| {
        (
            sim.create_sync(SyncKind::Semaphore { count: 0 }, WaitPolicy::BLOCK),
            0,
        )
    };
    for t in &spec.tasks {
        conds
            .entry(suspend_cond(&t.name))
            .or_insert_with(|| semaphore(sim));
        for e in t.phases.iter().flat_map(|p| &p.events) {
            let (mutex, cond) = match e {
                Event::Lock(m) | Event::Unlock(m) => (Some(m), None),
                Event::Wait { cond, mutex } | Event::Sync { cond, mutex, .. } => {
                    (Some(mutex), Some(cond.clone()))
                }
                Event::Signal(c) | Event::Broad(c) => (None, Some(c.clone())),
                Event::Suspend(t) | Event::Resume(t) => (None, Some(suspend_cond(t))),
                _ => (None, None),
            };
            if let Some(m) = mutex {
                mutexes.entry(m.clone()).or_insert_with(|| {
                    sim.create_sync(SyncKind::Lock { holder: None }, WaitPolicy::BLOCK)
                });
            }
            if let Some(c) = cond {
                conds.entry(c).or_insert_with(|| semaphore(sim));
            }
        }
    }
    for (b, &parties) in &spec.barriers {
        let kind = SyncKind::Barrier {
            parties: parties.min(u64::from(u32::MAX)) as u32,
            arrived: 0,
            generation: 0,
        };
        barriers.insert(b.clone(), sim.create_sync(kind, WaitPolicy::BLOCK));
    }
    (mutexes, conds, barriers)
}

/// Each task's buffers (base addresses), one per instance of a task that writes memory, in
/// each processor's local memory.
pub(super) fn buffers(sim: &mut Simulation, spec: &Spec) -> Vec<Vec<u64>> {
    spec.tasks
        .iter()
        .map(|t| {
            let n = if RtApp::writes(t) {
                t.instances.max(1)
            } else {
                0
            };
            (0..n)
                .map(|_| {
                    sim.memory()
                        .alloc(spec.mem_buffer, Placement::Local, None)
                        .base
                })
                .collect()
        })
        .collect()
}
