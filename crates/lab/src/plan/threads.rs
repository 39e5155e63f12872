//! How many threads a point's runs may create, and the kernel memory their creation writes:
//! the bounds that keep a program spawning without end (an rt-app fork in a loop) within the
//! memory the lab was given (`input::budget`).

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

/// The kernel memory the creation of `threads` threads writes through the memory model
/// (`kernel.thread_bytes` each; none with the model off).
pub(crate) fn kernel_bytes(machine: &MachineConfig, threads: u64) -> u64 {
    if machine.memory.enabled {
        threads.saturating_mul(machine.kernel.thread_bytes)
    } else {
        0
    }
}
