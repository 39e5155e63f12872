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

/// Two parallel applications of 7 threads, each in a processor set of its own, on 16
/// processors: each set gets processors of its own (1-7 and 8-14), so both run their phases
/// undisturbed. (Both sets took processors 1-7 before: the second took the first's away, which
/// left it deadlocked, livelocked or on one processor.)
#[test]
fn two_applications_get_disjoint_processor_sets() {
    let mut m = MachineConfig::multimax();
    m.processors = 16;
    let sched = policy("mach").unwrap().make(&toml::Table::new()).unwrap();
    let mut sim = Simulation::new(m, sched, 1).unwrap();
    for name in ["A", "B"] {
        let app: toml::Table = toml::from_str(
            "threads = 7\nphases = 50\nphase_cycles = 4000\ndedicated = true\nspin_cycles = 500",
        )
        .unwrap();
        let t = sim.add_task(name);
        (workload("parallel").unwrap().build)(app)
            .unwrap()
            .install(&mut sim, t)
            .unwrap();
    }
    let r = sim.run().unwrap();
    r.check_conservation().unwrap();
    for a in &r.apps {
        // Each phase is its 2 ms of compute and a barrier on processors of its own.
        let phase = a.recorded["phase_ms"];
        assert!(phase.max < 2.1, "{}: {phase:?}", a.name);
    }
    // A third set of 2 would need processor 15 and 16: refused, naming the machine's size.
    let app: toml::Table =
        toml::from_str("threads = 2\nphases = 1\nphase_cycles = 10\ndedicated = true").unwrap();
    let (mut sim, task) = sim_with_two_sets();
    let e = (workload("parallel").unwrap().build)(app)
        .unwrap()
        .install(&mut sim, task)
        .unwrap_err();
    assert!(e.to_string().contains("machine has 16"), "{e}");
}

/// A 16-processor Mach machine whose processors 1-14 are reserved by two sets of 7, and a task
/// to install a third application in.
fn sim_with_two_sets() -> (Simulation, smpsched_sim::TaskId) {
    let mut m = MachineConfig::multimax();
    m.processors = 16;
    let sched = policy("mach").unwrap().make(&toml::Table::new()).unwrap();
    let mut sim = Simulation::new(m, sched, 1).unwrap();
    assert_eq!(sim.reserve_processors(7).unwrap().0, 1);
    assert_eq!(sim.reserve_processors(7).unwrap().0, 8);
    let task = sim.add_task("C");
    (sim, task)
}
