//! The host memory a point's runs need, against the memory the lab was given
//! (`input::budget`): the refusal of a point that would not fit, how many threads its runs may
//! create, and the kernel memory their creation writes (the bound that keeps a program
//! spawning without end, an rt-app fork in a loop, within that memory).

use smpsched_sim::config::MAX_THREADS;
use smpsched_sim::MachineConfig;

use crate::input::budget;
use crate::plan::point::App;

/// The most threads one run of a point may create: those its applications start with, and as
/// many more as the memory left after its estimate allows, shared among as many runs as the
/// host has cores (each may run at once), at most [`MAX_THREADS`]; the engine's bound when
/// the memory is not known. A program that spawns without end (an rt-app task forking in a
/// loop) then stops with "too many threads" where the memory runs out, not after.
pub(crate) fn thread_limit(machine: &MachineConfig, apps: &[App], memory: Option<u64>) -> u64 {
    let Some(avail) = memory else {
        return MAX_THREADS;
    };
    let start = apps
        .iter()
        .fold(0u64, |n, a| n.saturating_add(a.workload.threads()));
    let touched = apps.iter().fold(0u64, |n, a| {
        n.saturating_add(a.workload.memory_bytes())
            .saturating_add(kernel_bytes(machine, a.workload.threads()))
    });
    let model =
        |bytes| smpsched_sim::memory::footprint_bytes(&machine.memory, machine.processors, bytes);
    let (engine, caches) = run_need(machine, start, touched);
    let need = engine.saturating_add(caches);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let spare = avail.saturating_sub(need) / cores;
    // A thread more: its records, and the memory model's share of its kernel memory.
    let one = smpsched_sim::engine::THREAD_FOOTPRINT_BYTES
        .saturating_add(model(kernel_bytes(machine, 1)).saturating_sub(model(0)));
    start.saturating_add(spare / one.max(1)).min(MAX_THREADS)
}

/// The host memory a run of `threads` threads needs, as (the engine's records, the memory
/// model's caches and directory for `touched` bytes of regions): what a point is checked
/// against at load, and what [`thread_limit`] leaves room for.
pub(crate) fn run_need(machine: &MachineConfig, threads: u64, touched: u64) -> (u64, u64) {
    (
        budget::run_bytes(threads, machine.processors),
        smpsched_sim::memory::footprint_bytes(&machine.memory, machine.processors, touched),
    )
}

/// Whether a run of the point so far (`threads` threads, `touched` bytes of regions) fits in
/// `memory` (the lab's, when known): `None`, or the field to name and the message. `own` is
/// what the workload at `root` touches itself, `count_field` the field that sets its thread
/// count: the workload is named when its memory model's share is the larger.
pub(crate) fn memory_refusal(
    machine: &MachineConfig,
    (root, count_field): (&str, &str),
    own: u64,
    threads: u64,
    touched: u64,
    memory: Option<u64>,
) -> Option<(String, String)> {
    let (engine, model) = run_need(machine, threads, touched);
    let need = engine.saturating_add(model);
    let avail = memory.filter(|&a| need > a)?;
    let field = if model > engine && own > 0 {
        root
    } else {
        count_field
    };
    Some((
        field.to_string(),
        format!(
            "a run of this point would need about {} of memory ({} for {threads} threads on \
             {} processors, {} for the memory model: caches and the directory of {} of \
             regions), more than the {} available (set {} to state the memory smpsched may \
             use)",
            budget::human(need),
            budget::human(engine),
            machine.processors,
            budget::human(model),
            budget::human(touched),
            budget::human(avail),
            budget::MEMORY_ENV,
        ),
    ))
}

/// The kernel memory the creation of `threads` threads writes through the memory model
/// (`kernel.thread_bytes` each; none with the model off).
pub(crate) fn kernel_bytes(machine: &MachineConfig, threads: u64) -> u64 {
    if machine.memory.enabled {
        threads.saturating_mul(machine.kernel.thread_bytes)
    } else {
        0
    }
}
