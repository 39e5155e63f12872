//! The conformance suite: every registered policy (and the guide's FIFO example) run through the
//! same checks, so that a new policy gets all of them by being registered — determinism,
//! conservation of time and work, every thread exits, masks honoured, handoffs, depression,
//! processor-set requests refused where unsupported, open arrivals, and traces that agree with
//! the measures.

mod fifo;

use std::cell::RefCell;
use std::rc::Rc;

use smpsched_sim::sched::{Depression, PolicyInfo, POLICIES};
use smpsched_sim::trace::TraceConfig;
use smpsched_sim::{
    CpuMask, Cycles, Hint, MachineConfig, Op, Outcome, ProcId, ProcessorSetCall, Program, Reply,
    Request, RunReport, Script, Simulation, ThreadAttrs, ThreadCtx, ThreadId,
};

/// Every policy the suite covers: the registry, then the guide's example.
fn policies() -> Vec<PolicyInfo> {
    POLICIES.iter().copied().chain([fifo::INFO]).collect()
}

fn machine(p: u32) -> MachineConfig {
    let mut m = MachineConfig::tango_12();
    m.processors = p;
    m.memory = smpsched_sim::memory::MemoryConfig::none();
    m
}

fn sim(info: &PolicyInfo, m: MachineConfig, seed: u64) -> Simulation {
    let sched = info.make(&toml::Table::new()).unwrap();
    Simulation::new(m, sched, seed).unwrap()
}

/// `n` bursts of `compute` cycles separated by sleeps and yields.
fn bursts(n: usize, compute: Cycles) -> Vec<Op> {
    let ops = (0..n).flat_map(|i| {
        let pause = if i % 2 == 0 {
            Op::Sleep(30_000)
        } else {
            Op::Yield
        };
        [Op::Compute(compute + 1_000 * i as u64), pause]
    });
    ops.collect()
}

/// Two applications of five threads each, optionally all masked to processors 0 and 2.
fn mix(info: &PolicyInfo, seed: u64, masked: bool, trace: bool) -> (RunReport, Cycles) {
    let mut s = sim(info, machine(4), seed);
    if trace {
        s.set_trace(TraceConfig::default());
    }
    let mut work = 0;
    for name in ["a", "b"] {
        let task = s.add_task(name);
        for i in 0..5u64 {
            let ops = bursts(6, 200_000 + 37_000 * i);
            work += script_work(&ops);
            let attrs = ThreadAttrs {
                mask: masked.then(|| CpuMask::of([ProcId(0), ProcId(2)])),
                base_priority: 0,
            };
            s.spawn_with(task, Box::new(Script::new(ops)), attrs)
                .unwrap();
        }
    }
    let r = s.run().unwrap_or_else(|e| panic!("{}: {e}", info.name));
    (r, work)
}

fn script_work(ops: &[Op]) -> Cycles {
    ops.iter()
        .map(|op| match op {
            Op::Compute(c) => *c,
            _ => 0,
        })
        .sum()
}

/// Every application finished, time is conserved, and the useful time is the work asked for.
fn check_complete(info: &PolicyInfo, r: &RunReport, work: Cycles) {
    r.check_conservation()
        .unwrap_or_else(|e| panic!("{}: {e}", info.name));
    assert_eq!(
        r.total.useful, work,
        "{}: useful time is the work",
        info.name
    );
    for app in &r.apps {
        assert!(
            app.completion_cycles > 0,
            "{}: {} never finished",
            info.name,
            app.name
        );
    }
}

#[test]
fn every_policy_is_deterministic() {
    for info in policies() {
        let a = format!("{:?}", mix(&info, 7, false, false).0);
        let b = format!("{:?}", mix(&info, 7, false, false).0);
        assert_eq!(a, b, "{}: same seed, different run", info.name);
    }
}

#[test]
fn every_policy_conserves_time_and_work_and_every_thread_exits() {
    for info in policies() {
        let (r, work) = mix(&info, 1, false, false);
        check_complete(&info, &r, work);
    }
}

#[test]
fn every_policy_honours_affinity_masks() {
    // The engine refuses a dispatch outside a thread's mask (a run error), so a policy that
    // ignores masks fails here; threads masked to processors 0 and 2 leave 1 and 3 without
    // work of theirs.
    for info in policies() {
        let (r, work) = mix(&info, 1, true, false);
        check_complete(&info, &r, work);
        for p in [1, 3] {
            assert_eq!(
                r.processors[p].useful, 0,
                "{}: processor {p} ran masked work",
                info.name
            );
        }
    }
}

#[test]
fn every_policy_traces_agree_with_its_measures() {
    for info in policies() {
        let (r, _) = mix(&info, 1, false, true);
        let trace = r.trace.as_ref().expect("traced");
        assert!(trace.truncated_at.is_none());
        for q in 0..4 {
            let mut on: Vec<_> = trace
                .stretches
                .iter()
                .filter(|s| s.processor.0 == q)
                .collect();
            on.sort_by_key(|s| s.start);
            assert!(
                on.windows(2).all(|w| w[0].end <= w[1].start),
                "{}: overlap",
                info.name
            );
        }
        for (k, app) in r.apps.iter().enumerate() {
            let held: u64 = trace
                .stretches
                .iter()
                .filter(|s| s.task.index() == k)
                .map(|s| s.end - s.start)
                .sum();
            let name = info.name;
            assert!(
                held >= app.time.useful + app.time.stall + app.time.spin,
                "{name}"
            );
            assert!(held <= app.time.held(), "{name}");
        }
    }
}

/// Runs one processor with three threads of one application: the first computes, then hands
/// off to the third; returns the order the threads finished in.
fn handoff_order(info: &PolicyInfo) -> Vec<usize> {
    let mut s = sim(info, machine(1), 1);
    let task = s.add_task("handoff");
    let (w, third) = (100_000, ThreadId(2));
    let scripts = [
        Script::new([
            Op::Compute(w),
            Op::Hint(Hint::Handoff(third)),
            Op::Compute(w),
        ]),
        Script::new([Op::Compute(w)]),
        Script::new([Op::Compute(w)]),
    ];
    let ids: Vec<_> = scripts
        .into_iter()
        .map(|sc| s.spawn(task, Box::new(sc)).unwrap())
        .collect();
    assert_eq!(ids[2], third);
    s.set_trace(TraceConfig::default());
    let r = s.run().unwrap();
    r.check_conservation().unwrap();
    assert_eq!(r.total.useful, 4 * w, "{}", info.name);
    let trace = r.trace.unwrap();
    let mut last: Vec<(Cycles, usize)> = (0..3)
        .map(|i| {
            let end = trace
                .stretches
                .iter()
                .filter(|s| s.thread.index() == i)
                .map(|s| s.end);
            (end.max().unwrap(), i)
        })
        .collect();
    last.sort();
    last.into_iter().map(|(_, i)| i).collect()
}

#[test]
fn a_handoff_runs_its_target_next_where_the_policy_gives_it_up() {
    // Batch refuses handoffs (one could start a thread of an application that does not own
    // the machine); there the handoff falls back to an ordinary pick and nothing is lost.
    for info in policies() {
        let order = handoff_order(&info);
        if info.name != "batch" {
            assert_eq!(
                order[0], 2,
                "{}: the handoff's target did not run next",
                info.name
            );
        }
    }
}

#[test]
fn a_depressed_thread_runs_only_when_nothing_else_is_ready() {
    for info in policies() {
        let depression = info
            .make(&toml::Table::new())
            .unwrap()
            .shape(&machine(1))
            .depression;
        let mut s = sim(&info, machine(1), 1);
        let task = s.add_task("depress");
        let w = 2_000_000;
        let depressed = Script::new([
            Op::Compute(1_000),
            Op::Hint(Hint::Strong { timeout: 100 * w }),
            Op::Compute(w),
        ]);
        s.spawn(task, Box::new(depressed)).unwrap();
        s.spawn(task, Box::new(Script::new([Op::Compute(w)])))
            .unwrap();
        s.set_trace(TraceConfig::default());
        let r = s.run().unwrap();
        r.check_conservation().unwrap();
        let end = |i: usize| {
            let trace = r.trace.as_ref().unwrap();
            trace
                .stretches
                .iter()
                .filter(|s| s.thread.index() == i)
                .map(|s| s.end)
                .max()
        };
        if depression != Depression::Ignored {
            assert!(
                end(1) < end(0),
                "{}: the depressed thread ran first",
                info.name
            );
        }
    }
}

/// Asks for a processor set and records the reply.
struct AskForSet(Rc<RefCell<Option<Reply>>>, bool);

impl Program for AskForSet {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        if let Some(Outcome::Kernel(r)) = cx.take_outcome() {
            *self.0.borrow_mut() = Some(r);
        }
        if std::mem::replace(&mut self.1, true) {
            Op::Exit
        } else {
            Op::Kernel(Request::ProcessorSet(ProcessorSetCall::Create))
        }
    }
}

#[test]
fn a_policy_without_processor_sets_refuses_them() {
    for info in policies() {
        let reply = Rc::new(RefCell::new(None));
        let mut s = sim(&info, machine(2), 1);
        let task = s.add_task("psets");
        s.spawn(task, Box::new(AskForSet(reply.clone(), false)))
            .unwrap();
        s.run().unwrap().check_conservation().unwrap();
        let reply = reply.borrow().clone().expect("a reply");
        let refused = matches!(reply, Reply::Refused(_));
        assert_eq!(refused, !info.processor_sets, "{}: {reply:?}", info.name);
    }
}

#[test]
fn every_policy_serves_open_arrivals() {
    for info in policies() {
        let mut s = sim(&info, machine(2), 1);
        let task = s.add_task("open");
        let jobs = 12u64;
        for j in 0..jobs {
            let script =
                Script::new([Op::Compute(150_000), Op::Sleep(10_000), Op::Compute(50_000)]);
            s.spawn_at(j * 90_000, task, Box::new(script)).unwrap();
        }
        let r = s.run().unwrap_or_else(|e| panic!("{}: {e}", info.name));
        r.check_conservation().unwrap();
        assert_eq!(r.total.useful, jobs * 200_000, "{}", info.name);
        assert_eq!(r.apps[0].jobs.jobs, jobs, "{}", info.name);
        assert!(r.elapsed_cycles >= 11 * 90_000 + 200_000, "{}", info.name);
    }
}

#[test]
fn every_documented_default_is_the_default() {
    // Writing each parameter's documented default explicitly changes nothing: the run is the
    // one the empty table gives. A default written as a sentence names the machine's slice or
    // its clock tick.
    let m = machine(4);
    for info in POLICIES {
        let run = |table: toml::Table| {
            let sched = info
                .make(&table)
                .unwrap_or_else(|e| panic!("{}: {e}", info.name));
            let mut s = Simulation::new(m.clone(), sched, 3).unwrap();
            let task = s.add_task("a");
            for i in 0..6 {
                s.spawn(
                    task,
                    Box::new(Script::new(bursts(12, 1_500_000 + 200_000 * i))),
                )
                .unwrap();
            }
            format!("{:?}", s.run().unwrap())
        };
        let plain = run(toml::Table::new());
        for param in info.params {
            let value = match toml::from_str::<toml::Table>(&format!("v = {}", param.default)) {
                Ok(mut t) => t.remove("v").unwrap(),
                Err(_) => {
                    let cycles = match param.default {
                        "the machine's slice" => m.slice_cycles,
                        "one clock tick" => m.tick_cycles,
                        other => panic!("{}.{}: default {other}", info.name, param.name),
                    };
                    toml::Value::Float(cycles as f64 / (m.clock_mhz * 1000.0))
                }
            };
            let mut table = toml::Table::new();
            table.insert(param.name.to_string(), value);
            assert_eq!(
                run(table),
                plain,
                "{}.{}: documented default {}",
                info.name,
                param.name,
                param.default
            );
        }
    }
}

#[test]
fn a_bad_parameter_is_a_typed_error_naming_its_field() {
    let one = |key: &str, value: toml::Value| {
        let mut t = toml::Table::new();
        t.insert(key.to_string(), value);
        t
    };
    for info in policies() {
        let t = one("no_such_field", toml::Value::Boolean(true));
        let e = info.make(&t).err().expect("an unknown field is refused");
        assert_eq!(e.field, "no_such_field", "{}: {e}", info.name);
        assert!(e.message.starts_with("unknown field"), "{}: {e}", info.name);
        // Every parameter is a number or a flag: a string is the wrong type for each.
        for param in info.params {
            let t = one(param.name, toml::Value::String("x".into()));
            let e = info.make(&t).err().expect("a wrong type is refused");
            assert_eq!(e.field, param.name, "{}: {e}", info.name);
        }
    }
    // Values of the right type that the policy's own checks refuse name their field too.
    for (policy, field, value) in [
        ("gang", "slice_ms", toml::Value::Float(-1.0)),
        ("mach", "quantum_ticks", toml::Value::Integer(0)),
        ("priority", "decay", toml::Value::Float(2.0)),
        ("round-robin", "quantum", toml::Value::Integer(0)),
        ("round-robin", "slice_ms", toml::Value::Float(0.0)),
        ("mach", "slice_ms", toml::Value::Float(f64::INFINITY)),
        ("affinity", "c", toml::Value::Float(f64::NAN)),
    ] {
        let info = smpsched_sim::sched::policy(policy).unwrap();
        let e = info.make(&one(field, value)).err().expect("refused");
        assert_eq!(e.field, field, "{policy}: {e}");
    }
}

/// The slice has one name and unit wherever a policy takes one (`slice_ms`); the old names
/// still work, are listed as deprecated, and may not be written beside the new one.
#[test]
fn every_slice_is_slice_ms_and_the_old_names_still_work() {
    use smpsched_sim::sched::params::deprecation;
    let machine = MachineConfig::tango_12();
    let shape = |policy: &str, text: &str| {
        let t: toml::Table = toml::from_str(text).unwrap();
        let info = smpsched_sim::sched::policy(policy).unwrap();
        info.make(&t).map(|s| {
            let shape = s.shape(&machine);
            // Mach's quantum is counted in ticks, so its shape is unsliced with a nominal slice.
            shape.slice.or(Some(shape.nominal_slice))
        })
    };
    for info in policies() {
        for p in info.params {
            let old = deprecation("scheduler", p.name);
            assert!(
                old.is_none(),
                "{}: {} is documented and deprecated",
                info.name,
                p.name
            );
            assert!(
                !p.name.contains("quantum") && !p.name.starts_with("slice") || p.name == "slice_ms",
                "{}: a slice named {}",
                info.name,
                p.name
            );
        }
    }
    // 0.4 ms at 25 MHz is 10,000 cycles, the same slice the deprecated `quantum` wrote.
    for policy in ["round-robin", "priority", "per-core"] {
        let new = shape(policy, "slice_ms = 0.4").unwrap();
        assert_eq!(new, shape(policy, "quantum = 10000").unwrap(), "{policy}");
        assert_eq!(new, Some(10_000), "{policy}");
        let both = shape(policy, "slice_ms = 0.4\nquantum = 10000")
            .err()
            .unwrap();
        assert_eq!(both.field, "slice_ms", "{policy}: {both}");
        assert!(deprecation("scheduler", "quantum").is_some());
    }
    // Mach counts its quantum in clock ticks: slice_ms is rounded to whole ticks.
    let tick_ms = machine.tick_cycles as f64 / (machine.clock_mhz * 1000.0);
    let three = shape("mach", &format!("slice_ms = {}", 3.2 * tick_ms)).unwrap();
    assert_eq!(three, shape("mach", "quantum_ticks = 3").unwrap());
    assert_eq!(three, Some(3 * machine.tick_cycles));
    assert_eq!(
        shape("mach", "slice_ms = 0.001").unwrap(),
        Some(machine.tick_cycles)
    );
    assert!(shape("mach", "slice_ms = 1\nquantum_ticks = 2").is_err());
    assert!(deprecation("scheduler", "quantum_ticks").is_some());
}
