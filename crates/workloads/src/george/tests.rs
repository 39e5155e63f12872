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

/// The sieve over 2..=`numbers` on `procs` processors: its `hotspot_wait` (count, mean, max)
/// and the tasks it ran.
fn sieve_wait(structure: &str, numbers: u64, procs: u32) -> ((u64, f64, f64), f64) {
    let w = build(
        &sieve::INFO,
        &format!("numbers = {numbers}\nstructure = \"{structure}\"\nqueue_size = 4"),
    )
    .unwrap();
    let r = run(w.as_ref(), procs, 1);
    let (n, sum, max) = rec(&r, "hotspot_wait");
    ((n, sum / n as f64, max), rec(&r, "tasks").1)
}

#[test]
fn the_hotspot_wait_is_nothing_alone_and_grows_with_contention_on_the_central_lock() {
    // Alone, a processor waits for nothing, on either structure: every uncontended access costs
    // exactly what `uncontended` says (or less, a line still held), never more.
    for structure in ["central", "ddq"] {
        let ((n, _, max), tasks) = sieve_wait(structure, 300, 1);
        assert_eq!(max, 0.0, "{structure}: one processor waited {max} cycles");
        // One record per operation: an insert per task but the first, a remove per task taken.
        assert!(
            n as f64 >= tasks - 1.0,
            "{structure}: {n} operations, {tasks} tasks"
        );
    }
    let mut last = 0.0;
    for procs in [2, 4, 15] {
        let ((n, mean, _), tasks) = sieve_wait("central", 1000, procs);
        assert!(
            mean > last,
            "{procs} processors: {mean} cycles, after {last}"
        );
        // Every spawn is an insert; a remove gets a task or the end (one per processor at most).
        assert!(n as f64 >= tasks - 1.0 && n as f64 <= 2.0 * tasks + f64::from(procs));
        last = mean;
    }
    // At Figure 1's 15 processors the trees' roots are far quieter than the lock.
    let ((_, ddq, _), _) = sieve_wait("ddq", 1000, 15);
    assert!(ddq < last / 10.0, "ddq {ddq} against central {last}");
}

#[test]
fn producer_consumer_records_one_hotspot_wait_per_operation() {
    let w = build(&pc::INFO, "items = 100\nstructure = \"ddq\"").unwrap();
    let r = run(w.as_ref(), 8, 2);
    let items = 4.0 * 100.0;
    let failed = rec(&r, "failed_inserts").1;
    // Every item is inserted (after any failed attempts, each an operation) and removed; each
    // consumer's last remove gets the end instead.
    let (n, _, _) = rec(&r, "hotspot_wait");
    let lo = 2.0 * items + failed;
    assert!(
        n as f64 >= lo && n as f64 <= lo + 7.0,
        "{n} operations, {failed} failed"
    );
}

#[test]
fn uncontended_accesses_cost_a_miss_from_home_plus_the_atomic() {
    use super::hotspot::uncontended;
    let mut m = MachineConfig::bbn_gp1000().memory;
    // The GP1000: local 4, remote 20 (5:1), an atomic holds the line 20 more.
    assert_eq!(uncontended(&m, Some(true), true), 24);
    assert_eq!(uncontended(&m, Some(false), true), 40);
    assert_eq!(uncontended(&m, Some(false), false), 20);
    assert_eq!(uncontended(&m, None, true), m.miss_cycles + m.atomic_cycles);
    m.enabled = false;
    assert_eq!(uncontended(&m, Some(false), true), m.hit_cycles);
}

#[test]
fn the_wait_counts_the_lock_from_its_first_attempt_and_each_root_access_beyond_its_cost() {
    use super::hotspot::{Access, Wait};
    // A lock taken at the third attempt: issued at 100, held at 1,000, 24 alone.
    let mut w = Wait::default();
    w.issue(Access::Lock(24), 100);
    w.complete(140);
    w.complete(400); // the backoff, no access
    w.issue(Access::Lock(24), 400);
    w.complete(440);
    w.issue(Access::Lock(24), 960);
    w.complete(1_000);
    assert_eq!(w.take(), 1_000 - 100 - 24);
    // The next operation starts afresh: a root read alone (20), then an atomic that waited 60.
    w.issue(Access::Root(20), 0);
    w.complete(20);
    w.issue(Access::Root(40), 20);
    w.complete(120);
    // A hit on a line still held costs less than a miss: nothing waited.
    w.issue(Access::Root(40), 200);
    w.complete(221);
    assert_eq!(w.take(), 60);
    assert_eq!(w.take(), 0);
}

#[test]
fn each_processor_sees_the_hot_spot_from_its_node() {
    use super::hotspot::{Access, HotSpot};
    use smpsched_sim::readyq::ddq::Scheme;
    use smpsched_sim::{Op, WordOp};
    let layout = |src: &str| {
        let sched = policy("batch").unwrap().make(&toml::Table::new()).unwrap();
        let mut m = MachineConfig::bbn_gp1000();
        m.processors = 8;
        let mut sim = Simulation::new(m, sched, 1).unwrap();
        let q: super::QueueParams = toml::from_str(src).unwrap();
        let (layout, _) = q.build(&mut sim, 8);
        (sim, layout)
    };
    let at = |addr, op| Op::Word { addr, op };
    // The centralized queue's lock lies on processor 0: a test-and-set on it is contention, the
    // holder's release is not.
    let (mut sim, central) = layout("structure = \"central\"");
    let Scheme::Central(q) = &central.scheme else {
        unreachable!()
    };
    let tas = at(q.lock(), WordOp::TestAndSet);
    let on = |sim: &mut Simulation, p| HotSpot::new(sim, &central, p);
    assert_eq!(on(&mut sim, 0).access(&tas), Some(Access::Lock(24)));
    assert_eq!(on(&mut sim, 5).access(&tas), Some(Access::Lock(40)));
    assert_eq!(
        on(&mut sim, 5).access(&at(q.lock(), WordOp::Store(0))),
        None
    );
    assert_eq!(on(&mut sim, 5).access(&at(q.count(), WordOp::Load)), None);
    // A tree's root N field, read or changed; not the N fields below it.
    let (mut sim, trees) = layout("structure = \"ddq\"");
    let Scheme::Trees(t) = &trees.scheme else {
        unreachable!()
    };
    let (root, home) = (t[0].n[1], t[0].n_home[1]);
    let other = (home + 1) % 8;
    let add = at(root, WordOp::FetchAdd(1));
    let hot = HotSpot::new(&mut sim, &trees, home);
    assert_eq!(hot.access(&at(root, WordOp::Load)), Some(Access::Root(4)));
    assert_eq!(hot.access(&add), Some(Access::Root(24)));
    let hot = HotSpot::new(&mut sim, &trees, other);
    assert_eq!(hot.access(&at(root, WordOp::Load)), Some(Access::Root(20)));
    assert_eq!(hot.access(&add), Some(Access::Root(40)));
    assert_eq!(hot.access(&at(t[0].n[2], WordOp::FetchAdd(1))), None);
    assert_eq!(hot.access(&Op::Compute(5)), None);
}
