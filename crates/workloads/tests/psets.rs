//! What a processor set buys a parallel application under time-shared load (Black 1990,
//! section 6): with a set of its own its phases run undisturbed.

use smpsched_sim::sched::policy;
use smpsched_sim::{MachineConfig, Simulation};
use smpsched_workloads::workload;

fn run(dedicated: bool) -> smpsched_sim::AppReport {
    let m = MachineConfig::multimax();
    let sched = policy("mach").unwrap().make(&toml::Table::new()).unwrap();
    let mut sim = Simulation::new(m, sched, 1).unwrap();
    let app: toml::Table = toml::from_str(&format!(
        "threads = 8\nphases = 50\nphase_cycles = 4000\ndedicated = {dedicated}"
    ))
    .unwrap();
    let bg: toml::Table = toml::from_str(
        "threads = 24\nbursts = 10\ncompute = { dist = \"exponential\", mean = 400000 }",
    )
    .unwrap();
    let a = sim.add_task("parallel");
    (workload("parallel").unwrap().build)(app)
        .unwrap()
        .install(&mut sim, a)
        .unwrap();
    let b = sim.add_task("background");
    (workload("synthetic").unwrap().build)(bg)
        .unwrap()
        .install(&mut sim, b)
        .unwrap();
    let r = sim.run().unwrap();
    r.check_conservation().unwrap();
    r.apps[0].clone()
}

#[test]
fn a_dedicated_processor_set_keeps_a_parallel_applications_phases_undisturbed() {
    let (shared, own) = (run(false), run(true));
    let phase = |a: &smpsched_sim::AppReport| a.recorded["phase_ms"];
    // On its own processors every phase takes its 2 ms of compute (4,000 cycles at 2 MHz) and
    // a barrier; time-shared, some phase waits for a preempted thread.
    assert!(phase(&own).max < 2.1, "{:?}", phase(&own));
    assert!(
        phase(&shared).max > 10.0 * phase(&own).max,
        "{:?}",
        phase(&shared)
    );
    assert!(own.recorded["run_ms"].sum < shared.recorded["run_ms"].sum);
}
