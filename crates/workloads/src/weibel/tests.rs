//! Weibel's programs on the `rpi3` machine: spawn and join conserve time and work, user plus
//! kernel is the total of every unit, the work done is exactly what the parameters ask, runs
//! are repeatable, and bad parameters are refused naming the field.

use smpsched_sim::sched::policy;
use smpsched_sim::{Limits, MachineConfig, RunReport, Simulation};

use crate::{workload, Workload};

fn build(kind: &str, params: &str) -> Box<dyn Workload> {
    let table: toml::Table = toml::from_str(params).unwrap();
    (workload(kind).unwrap().build)(table).unwrap()
}

fn run(kind: &str, params: &str, sched: &str, seed: u64) -> RunReport {
    let w = build(kind, params);
    let table: toml::Table = toml::from_str(sched).unwrap();
    let sched = policy("per-core").unwrap().make(&table).unwrap();
    let mut sim = Simulation::new(MachineConfig::rpi3(), sched, seed).unwrap();
    let task = sim.add_task(kind);
    w.install(&mut sim, task).unwrap();
    sim.set_limits(Limits {
        cycles: u64::MAX,
        events: 5_000_000,
        ..Limits::NONE
    });
    let report = sim.run().unwrap();
    report.check_conservation().unwrap();
    report
}

/// Every unit's user and kernel parts sum to totals computed independently: cycles to the
/// processors' held time (idle counted as the kernel's idle loop on the rpi3), accesses and
/// refills to the memory model's own counters.
fn check_split(r: &RunReport) {
    let uk = r.user_kernel;
    let t = r.total;
    assert_eq!(uk.cycles.total(), t.total(), "cycles, idle loop included");
    assert_eq!(uk.cycles.kernel, t.kernel + t.switch + t.idle);
    assert_eq!(uk.accesses.total(), r.memory.refs);
    assert_eq!(uk.refills.total(), r.memory.misses);
    assert_eq!(
        uk.instructions.total() + r.memory.stall_cycles,
        uk.cycles.total(),
        "an instruction is every cycle that is not a memory stall"
    );
    assert!(uk.accesses.kernel > 0 && uk.refills.kernel > 0);
    assert!(uk.instructions.kernel > 0 && uk.cycles.kernel > 0);
}

const SCALAR: &str = "processes = 8\ndata_bytes = 65536\npasses = 20\nalu = 1.5\n";

#[test]
fn scalar_multiply_does_exactly_the_work_asked_and_splits_user_from_kernel() {
    for sched in ["global = true\npull = false", "pull = false"] {
        let r = run("weibel-scalar", SCALAR, sched, 1);
        check_split(&r);
        let app = &r.apps[0];
        // 16,384 elements, a read-modify-write each, 20 passes; the main process's joins and
        // the children's signals add one semaphore reference each.
        assert_eq!(app.refs, 16_384 * 2 * 20 + 8 + 8, "{sched}");
        assert_eq!(app.threads, 9);
        assert_eq!(app.jobs.jobs, 9);
    }
}

#[test]
fn register_work_is_alu_cycles_an_element_and_none_at_zero() {
    // One process, 2,048 elements, 10 passes: each cycle of `alu` adds 2,048 x 10 cycles of
    // user work, and `alu = 0` adds none (it did one cycle a pass, found by a probe).
    let useful = |alu: &str| {
        let p = format!("processes = 1\ndata_bytes = 8192\npasses = 10\nalu = {alu}\n");
        run("weibel-scalar", &p, "pull = false", 1).apps[0]
            .time
            .useful
    };
    let (zero, one, two) = (useful("0"), useful("1"), useful("2"));
    assert_eq!(one - zero, 2_048 * 10);
    assert_eq!(two - one, 2_048 * 10);
}

#[test]
fn affinity_keeps_each_part_in_its_cores_cache() {
    let pinned =
        "processes = 8\ndata_bytes = 65536\npasses = 1000\njoin = \"spin\"\naffinity = true\n";
    let global = run(
        "weibel-scalar",
        pinned.replace("affinity = true", "").as_str(),
        "global = true\npull = false",
        1,
    );
    let affinity = run("weibel-scalar", pinned, "pull = false", 1);
    // Pinned, each core's part (16 KB) stays in its L1 after the first pass; on the global
    // queue the spinning main process makes five runnable threads for four cores, so the FIFO
    // rotation moves the processes between cores and each refills its part.
    assert!(global.apps[0].migrations > 0);
    assert!(
        affinity.apps[0].migrations <= 8,
        "a process moves at most once, to its core"
    );
    assert!(
        global.user_kernel.refills.user > 3 * affinity.user_kernel.refills.user,
        "global {} against affinity {}",
        global.user_kernel.refills.user,
        affinity.user_kernel.refills.user
    );
}

#[test]
fn a_spinning_join_is_spin_time_not_useful_work() {
    let params = "processes = 8\ndata_bytes = 65536\npasses = 100\n";
    let block = run("weibel-scalar", params, "pull = false", 1);
    let spin = run(
        "weibel-scalar",
        &format!("{params}join = \"spin\"\n"),
        "pull = false",
        1,
    );
    assert_eq!(block.total.spin, 0);
    assert!(spin.total.spin > 0, "the busy-waiting main process spins");
    // The children's work is the same: what the spinning join adds is spin, not useful work.
    let diff = spin.total.useful.abs_diff(block.total.useful);
    assert!(
        diff * 100 < block.total.useful,
        "useful {} spinning, {} blocking",
        spin.total.useful,
        block.total.useful
    );
}

#[test]
fn spawning_and_joining_conserve_time_and_charge_the_kernel() {
    // The same work as 64 threads or as a pool of 16: the same user references, the thread
    // creations' kernel stacks as kernel references (4 KB each, one write per 64-byte line).
    let items = "items = 64\nmatrices = 4\nmatrix_bytes = 4096\npasses = 10\n";
    let unpooled = run("weibel-pool", &format!("{items}workers = 0\n"), "", 3);
    let pooled = run("weibel-pool", &format!("{items}workers = 16\n"), "", 3);
    for r in [&unpooled, &pooled] {
        check_split(r);
    }
    let elements = 64 * 1024 * 2 * 10;
    assert_eq!(unpooled.apps[0].refs, elements + 64 + 64);
    assert!(pooled.apps[0].refs >= elements + 2 * 64 + 16 + 16);
    let stacks = |threads: u64| threads * 64;
    assert!(unpooled.user_kernel.accesses.kernel >= stacks(64));
    assert!(pooled.user_kernel.accesses.kernel >= stacks(16));
    assert!(pooled.user_kernel.accesses.kernel < unpooled.user_kernel.accesses.kernel);
    assert_eq!(unpooled.apps[0].threads, 65);
    assert_eq!(pooled.apps[0].threads, 17);
}

#[test]
fn early_exits_leave_a_core_idle_without_pull() {
    let mix = "tasks = 24\ndata_bytes = 4096\nshort_passes = 5\norder = \"early-exit\"\n";
    let none = run("weibel-mix", mix, "pull = false", 2);
    let pulled = run("weibel-mix", mix, "pull = true", 2);
    check_split(&none);
    check_split(&pulled);
    assert_eq!(none.apps[0].refs, pulled.apps[0].refs);
    assert!(pulled.elapsed_cycles < none.elapsed_cycles);
    assert!(pulled.total.idle < none.total.idle);
}

#[test]
fn same_seed_same_run() {
    let mix = "tasks = 12\ndata_bytes = 8192\nshort_passes = 3\n";
    let a = run("weibel-mix", mix, "balance_ms = 2", 9);
    let b = run("weibel-mix", mix, "balance_ms = 2", 9);
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    assert_eq!(a.user_kernel, b.user_kernel);
}

#[test]
fn bad_parameters_name_their_field() {
    let cases = [
        (
            "weibel-scalar",
            "data_bytes = 10\npasses = 1\n",
            "data_bytes",
        ),
        (
            "weibel-scalar",
            "data_bytes = 65536\npasses = 0\n",
            "passes",
        ),
        (
            "weibel-scalar",
            "data_bytes = 65536\npasses = 1\nalu = -1\n",
            "alu",
        ),
        (
            "weibel-mix",
            "tasks = 0\ndata_bytes = 64\nshort_passes = 1\n",
            "tasks",
        ),
        (
            "weibel-mix",
            "tasks = 3\ndata_bytes = 64\nshort_passes = 1\norder = \"sideways\"\n",
            "sideways",
        ),
        (
            "weibel-pool",
            "items = 4\nworkers = 1\nmatrices = 0\nmatrix_bytes = 64\npasses = 1\n",
            "matrices",
        ),
    ];
    for (kind, params, field) in cases {
        let table: toml::Table = toml::from_str(params).unwrap();
        let err = match (workload(kind).unwrap().build)(table) {
            Ok(_) => panic!("{kind} accepted {params}"),
            Err(e) => e.to_string(),
        };
        assert!(err.contains(field), "{kind}: {err}");
    }
}
