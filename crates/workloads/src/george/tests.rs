//! George's loads on the simulated GP1000: the sieve finds every prime below its bound over
//! every structure; producer/consumer consumes every item; runs are deterministic; bad
//! parameters name their field.

use smpsched_sim::sched::policy;
use smpsched_sim::{Cycles, Limits, MachineConfig, RunReport, Simulation};

use super::{pc, sieve};
use crate::Workload;

fn build(info: &crate::WorkloadInfo, src: &str) -> Result<Box<dyn Workload>, toml::de::Error> {
    (info.build)(toml::from_str(src).unwrap())
}

fn run(w: &dyn Workload, processors: u32, seed: u64) -> RunReport {
    let sched = policy("batch").unwrap().make(&toml::Table::new()).unwrap();
    let mut m = MachineConfig::bbn_gp1000();
    m.processors = processors;
    let mut sim = Simulation::new(m, sched, seed).unwrap();
    let task = sim.add_task("app");
    w.install(&mut sim, task).unwrap();
    sim.set_limits(Limits {
        cycles: Cycles::MAX,
        events: 20_000_000,
        ..Limits::NONE
    });
    let report = sim.run().unwrap();
    report.check_conservation().unwrap();
    report
}

fn rec(r: &RunReport, name: &str) -> (u64, f64, f64) {
    let m = &r.apps[0].recorded[name];
    (m.count, m.sum, m.max)
}

#[test]
fn the_sieve_finds_every_prime_over_every_structure() {
    for (structure, procs) in [
        ("structure = \"central\"", 6),
        ("structure = \"ddq\"", 8),
        ("structure = \"ddq\"\nqueue_size = 4\ntrees = 2", 16),
        (
            "structure = \"ddq\"\nheight = 1\nascend = \"first-waiter\"",
            5,
        ),
        (
            "structure = \"ddq\"\nascend = \"eager\"\nlocal_first = false",
            3,
        ),
    ] {
        let w = build(&sieve::INFO, &format!("numbers = 300\n{structure}")).unwrap();
        let r = run(w.as_ref(), procs, 1);
        assert_eq!(rec(&r, "primes").2, 62.0, "{structure}: pi(300) = 62");
        // Every processor recorded its tasks once; one task per generator step and filter step.
        let (count, tasks, _) = rec(&r, "tasks");
        assert_eq!(count, u64::from(procs));
        assert!(tasks > 299.0, "{structure}: {tasks} tasks");
    }
}

#[test]
fn producer_consumer_consumes_every_item_and_costs_at_least_h_atomics() {
    let w = build(
        &pc::INFO,
        "items = 200\nstructure = \"ddq\"\nascend = \"eager\"\nlocal_first = false",
    )
    .unwrap();
    let r = run(w.as_ref(), 16, 3);
    // H = 4 on 16 processors with q = 1; the leaf's N makes it H + 1 uncontended.
    assert_eq!(rec(&r, "below_h").2, 0.0);
    let (n, sum, _) = rec(&r, "insert_atomics");
    assert!(
        sum / n as f64 >= 4.0,
        "{} atomics per insert",
        sum / n as f64
    );
    assert!(rec(&r, "root_cycles").1 > 0.0);
    let central = build(&pc::INFO, "items = 200\nstructure = \"central\"").unwrap();
    let r = run(central.as_ref(), 4, 3);
    assert!(rec(&r, "remove_us").0 > 0);
}

#[test]
fn runs_are_deterministic() {
    let w = build(
        &sieve::INFO,
        "numbers = 200\nstructure = \"ddq\"\nqueue_size = 2",
    )
    .unwrap();
    let a = run(w.as_ref(), 8, 5);
    let b = run(w.as_ref(), 8, 5);
    assert_eq!(a.elapsed_cycles, b.elapsed_cycles);
    assert_eq!(
        format!("{:?}", a.apps[0].recorded),
        format!("{:?}", b.apps[0].recorded)
    );
}

#[test]
fn bad_parameters_name_the_field() {
    let e = |info, src| build(info, src).err().unwrap().to_string();
    assert!(e(&sieve::INFO, "numbers = 1\nstructure = \"ddq\"").contains("numbers"));
    assert!(e(&sieve::INFO, "numbers = 10\nstructure = \"tree\"").contains("structure"));
    assert!(e(
        &sieve::INFO,
        "numbers = 10\nstructure = \"ddq\"\nqueue_size = 0"
    )
    .contains("queue_size"));
    assert!(e(&sieve::INFO, "numbers = 10\nstructure = \"ddq\"\ntrees = 0").contains("trees"));
    assert!(e(
        &sieve::INFO,
        "numbers = 10\nstructure = \"ddq\"\nqueue_sise = 2"
    )
    .contains("queue_sise"));
    assert!(e(&pc::INFO, "items = 0\nstructure = \"ddq\"").contains("items"));
    assert!(e(
        &pc::INFO,
        "items = 5\nstructure = \"ddq\"\npause_cycles = 0"
    )
    .contains("pause_cycles"));
}
