//! The engine against closed forms that hold to the cycle: K equal CPU-bound threads of W cycles
//! on P processors under round-robin (processor sharing in quanta), FCFS and batch (waves), with
//! and without dispatch costs, including work that is an exact multiple of the quantum (where a
//! thread must exit at its last quantum's end, not be requeued with nothing to do).

use smpsched_sim::sched::{policy, Scheduler};
use smpsched_sim::{MachineConfig, Op, RunReport, Script, Simulation};

/// A machine with `p` processors, quantum `q`, and a dispatch costing `sched` kernel cycles plus
/// a `switch`-cycle context switch.
fn machine(p: u32, q: u64, sched: u64, switch: u64) -> MachineConfig {
    let mut m = MachineConfig::tango_12();
    m.processors = p;
    m.slice_cycles = q;
    m.tick_cycles = q;
    m.sched_op_cycles = sched;
    m.context_switch_cycles = switch;
    m.memory = smpsched_sim::memory::MemoryConfig::none();
    m
}

fn run(policy_name: &str, m: MachineConfig, k: u32, w: u64) -> RunReport {
    let sched: Box<dyn Scheduler> = policy(policy_name)
        .unwrap()
        .make(&toml::Table::new())
        .unwrap();
    let mut sim = Simulation::new(m, sched, 1).unwrap();
    let task = sim.add_task("cpu");
    for _ in 0..k {
        sim.spawn(task, Box::new(Script::new([Op::Compute(w)])))
            .unwrap();
    }
    let r = sim.run().unwrap();
    r.check_conservation().unwrap();
    r
}

/// Round-robin, K = m P threads of n quanta each: every processor runs K n / P slots in lock
/// step, each a dispatch (o = kernel + switch: the next thread always differs) and a quantum.
#[test]
fn round_robin_in_lock_step_is_exact_when_work_is_a_multiple_of_the_quantum() {
    for (p, m, n, q, sched, switch) in [
        (1u64, 3u64, 8u64, 250_000u64, 0u64, 0u64),
        (4, 2, 8, 250_000, 0, 500),
        (4, 3, 5, 100_000, 60, 400),
        (12, 4, 8, 250_000, 0, 500),
        (16, 1, 3, 1_000, 7, 11),
    ] {
        let k = m * p;
        let o = sched + switch;
        let r = run(
            "round-robin",
            machine(p as u32, q, sched, switch),
            k as u32,
            n * q,
        );
        let want = if m == 1 {
            // No one waits: each thread keeps its processor for all its quanta.
            o + n * q
        } else {
            k * n / p * (o + q)
        };
        assert_eq!(r.elapsed_cycles, want, "P={p} K={k} n={n} q={q} o={o}");
        assert_eq!(r.total.useful, k * n * q);
        let dispatches = if m == 1 { k } else { k * n };
        assert_eq!(
            r.total.switch,
            dispatches * switch,
            "P={p} K={k}: one switch per slot"
        );
        assert_eq!(r.total.kernel, dispatches * sched);
        assert_eq!(r.apps[0].context_switches, dispatches);
    }
}

/// Round-robin with work not a multiple of the quantum: each thread's last slot is short.
#[test]
fn round_robin_with_a_short_last_quantum_is_exact() {
    // K = 2P threads of 2.5 quanta: slots of q, q, q/2 per thread, processors in lock step.
    let (p, q, o) = (3u64, 100_000u64, 500u64);
    let k = 2 * p;
    let r = run(
        "round-robin",
        machine(p as u32, q, 0, o),
        k as u32,
        5 * q / 2,
    );
    // Per processor: two threads x (2 full slots + a half slot), each slot paying o.
    assert_eq!(r.elapsed_cycles, 2 * (2 * (o + q) + o + q / 2));
}

/// Batch and FCFS: waves of P threads, each paying one dispatch, ceil(K / P) waves.
#[test]
fn batch_runs_in_waves() {
    for (p, k, w, sched, switch) in [
        (4u64, 10u64, 1_000_000u64, 0u64, 0u64),
        (4, 10, 1_000_000, 60, 400),
        (12, 48, 3_000_000, 0, 500),
        (7, 7, 12_345, 3, 5),
    ] {
        let o = sched + switch;
        let r = run(
            "batch",
            machine(p as u32, 250_000, sched, switch),
            k as u32,
            w,
        );
        assert_eq!(
            r.elapsed_cycles,
            k.div_ceil(p) * (o + w),
            "P={p} K={k} o={o}"
        );
        assert_eq!(r.apps[0].context_switches, k);
        assert_eq!(r.total.idle, (k.div_ceil(p) * p - k) * (o + w));
    }
}

/// The quick start's case: jobs of exactly 8 quanta. Each thread is dispatched 8 times, never a
/// ninth time with nothing left to do.
#[test]
fn a_thread_whose_work_ends_with_its_quantum_leaves_at_once() {
    let q = 250_000;
    let r = run("round-robin", machine(2, q, 0, 500), 6, 8 * q);
    assert_eq!(r.apps[0].context_switches, 6 * 8);
    assert_eq!(r.elapsed_cycles, 6 * 8 / 2 * (500 + q));
    let r = run("priority", machine(2, q, 0, 500), 6, 8 * q);
    assert_eq!(r.apps[0].context_switches, 6 * 8);
}

/// Context switches per slice per processor count slices of the quantum the policy uses, not
/// the machine's `slice_cycles` when the policy sets its own.
#[test]
fn switches_per_slice_use_the_policys_quantum() {
    let q = 100_000;
    for name in ["round-robin", "priority"] {
        let mut t = toml::Table::new();
        t.insert("quantum".into(), toml::Value::Integer(q as i64));
        let sched = policy(name).unwrap().make(&t).unwrap();
        // The machine's slice is 10x the policy's quantum.
        let mut sim = Simulation::new(machine(2, 10 * q, 0, 500), sched, 1).unwrap();
        let task = sim.add_task("cpu");
        for _ in 0..4 {
            sim.spawn(task, Box::new(Script::new([Op::Compute(8 * q)])))
                .unwrap();
        }
        let r = sim.run().unwrap();
        // 4 threads x 8 quanta = 32 slices of q on 2 processors: 16 slots each, one switch each.
        assert_eq!(r.elapsed_cycles, 16 * (500 + q), "{name}");
        let slices = r.elapsed_cycles as f64 / q as f64;
        let want = 32.0 / (slices * 2.0);
        assert!(
            (r.apps[0].switches_per_slice_per_proc - want).abs() < 1e-12,
            "{name}"
        );
    }
}
