//! Weibel's user / kernel split (section 4, Tables 1-11) and the kernel work it counts: a
//! thread creation's kernel memory, exit, timer interrupts; exact figures on one processor,
//! and user + kernel = total for every unit.

use smpsched_sim::sched::policy;
use smpsched_sim::{MachineConfig, Op, RunReport, Script, Simulation, Spawner};

fn rpi3_one_core() -> MachineConfig {
    let mut m = MachineConfig::rpi3();
    m.processors = 1;
    m
}

fn run(m: MachineConfig, ops: Vec<Op>) -> RunReport {
    let table: toml::Table = toml::from_str("pull = false").unwrap();
    let sched = policy("per-core").unwrap().make(&table).unwrap();
    let mut sim = Simulation::new(m, sched, 1).unwrap();
    let task = sim.add_task("t");
    sim.spawn(task, Box::new(Script::new(ops))).unwrap();
    let r = sim.run().unwrap();
    r.check_conservation().unwrap();
    r
}

#[test]
fn timer_interrupts_and_exit_are_kernel_cycles_exactly() {
    let m = rpi3_one_core();
    let slice = m.slice_cycles;
    // Five and a half quanta of work: five timer interrupts that find nobody else to run.
    let work = 5 * slice + slice / 2;
    let kernel_with = |timer: u64, exit: u64, ops: Vec<Op>| {
        let mut m = m.clone();
        m.kernel.timer = timer;
        m.kernel.exit = exit;
        let r = run(m, ops);
        let uk = r.user_kernel;
        assert_eq!(uk.cycles.total(), r.elapsed_cycles, "one core, never idle");
        assert_eq!(
            uk.instructions.total() + r.memory.stall_cycles,
            uk.cycles.total()
        );
        uk
    };
    let plain = kernel_with(0, 0, vec![Op::Compute(work)]);
    let timed = kernel_with(500, 0, vec![Op::Compute(work)]);
    assert_eq!(timed.cycles.user, work);
    assert_eq!(timed.cycles.kernel - plain.cycles.kernel, 5 * 500);
    assert_eq!(
        timed.instructions.kernel - plain.instructions.kernel,
        5 * 500
    );
    assert_eq!(timed.accesses, plain.accesses);
    // A child that exits before its parent, then the parent: each exit is kernel work, the
    // last one's too (the run ends when the kernel has torn the last thread down).
    let child = || Spawner::new(|| Box::new(Script::new([Op::Compute(1000)])));
    let parent = || vec![Op::Spawn(child()), Op::Compute(10 * slice)];
    let no_exit = kernel_with(0, 0, parent());
    let exits = kernel_with(0, 6000, parent());
    assert_eq!(exits.cycles.kernel - no_exit.cycles.kernel, 2 * 6000);
}

#[test]
fn a_spawn_writes_its_kernel_stack_and_the_child_costs_a_dispatch() {
    let m = rpi3_one_core();
    let lines = m.kernel.thread_bytes / u64::from(m.memory.line_bytes);
    let child = Spawner::new(|| Box::new(Script::new([Op::Compute(1000)])));
    let alone = run(m.clone(), vec![Op::Compute(1000)]);
    let with = run(m.clone(), vec![Op::Spawn(child), Op::Compute(1000)]);
    let (a, w) = (alone.user_kernel, with.user_kernel);
    assert_eq!(w.cycles.user, 2 * a.cycles.user);
    // The stack: one write per line, every one a refill (fresh memory); the child's dispatch:
    // its queue lock's three references.
    assert_eq!(w.accesses.kernel - a.accesses.kernel, lines + 3);
    assert!(w.refills.kernel - a.refills.kernel >= lines);
    assert!(
        w.cycles.kernel - a.cycles.kernel
            >= m.kernel.spawn + m.kernel.exit + m.context_switch_cycles + lines
    );
    for r in [&alone, &with] {
        let uk = r.user_kernel;
        assert_eq!(uk.accesses.total(), r.memory.refs);
        assert_eq!(uk.refills.total(), r.memory.misses);
        assert_eq!(uk.cycles.total(), r.total.total());
    }
}

#[test]
fn without_kernel_memory_or_an_idle_loop_nothing_is_counted_twice() {
    let mut m = MachineConfig::tango_12();
    m.processors = 2;
    let r = run(m, vec![Op::Compute(10_000)]);
    let uk = r.user_kernel;
    // One processor idles throughout: not a cycle of either kind on this machine.
    assert_eq!(uk.cycles.total(), r.total.total() - r.total.idle);
    assert_eq!(uk.accesses.kernel, 3);
}

#[test]
fn a_thread_has_exited_once_its_exit_is_paid() {
    // Two threads of 10,000 cycles on one processor, each exit 1,000 cycles of kernel work, no
    // other cost: each job's exit follows all the time it held, and the run ends when the last
    // exit is paid (the exit was stamped before its cost, and the last one's cost was dropped).
    let mut m = rpi3_one_core();
    m.kernel.exit = 1000;
    m.kernel.timer = 0;
    m.kernel.thread_bytes = 0;
    m.context_switch_cycles = 0;
    m.sched_op_cycles = 0;
    m.memory.enabled = false;
    let sched = policy("round-robin")
        .unwrap()
        .make(&toml::Table::new())
        .unwrap();
    let mut sim = Simulation::new(m, sched, 1).unwrap();
    sim.keep_job_times();
    let task = sim.add_task("t");
    for _ in 0..2 {
        sim.spawn(task, Box::new(Script::new([Op::Compute(10_000)])))
            .unwrap();
    }
    let r = sim.run().unwrap();
    assert_eq!(r.elapsed_cycles, 22_000);
    assert_eq!(r.total.kernel, 2_000);
    let jobs = &r.apps[0].job_times;
    assert_eq!(
        jobs.iter().map(|j| j.exited).collect::<Vec<_>>(),
        [11_000, 22_000]
    );
    assert!(jobs.iter().all(|j| j.held <= j.response()), "{jobs:?}");
    assert_eq!(r.apps[0].completion_cycles, 22_000);
}
