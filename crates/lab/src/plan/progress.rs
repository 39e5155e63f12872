//! Checks, before anything runs, that a point can make progress as its file describes it:
//! every workload finds the processors, the processor sets and the policy it needs, and the
//! policy's slice is longer than one dispatch. A run that could never finish is refused here,
//! naming the field, instead of running to its event limit.

use smpsched_sim::sched::{PolicyInfo, Scheduler};
use smpsched_sim::MachineConfig;

use crate::plan::point::App;

/// A field at fault and what is wrong with it.
pub(crate) type Fault = (String, String);

/// Checks each workload's needs ([`smpsched_workloads::Workload::needs`]) against the machine
/// and the policy: the processors it needs, processor sets from the policy, and room for every
/// set beside the default set's last processor. `Err` names the workload's field.
pub(crate) fn check_needs(
    machine: &MachineConfig,
    policy: &PolicyInfo,
    apps: &[App],
) -> Result<(), Fault> {
    let mut in_sets = 0u64;
    for (i, app) in apps.iter().enumerate() {
        let needs = app.workload.needs();
        let root = format!("workload.{i}");
        app.workload
            .check_machine(machine.processors)
            .map_err(|(field, message)| (format!("{root}.{field}"), message))?;
        if needs.processor_sets && !policy.processor_sets {
            let with: Vec<&str> = smpsched_sim::sched::POLICIES
                .iter()
                .filter(|p| p.processor_sets)
                .map(|p| p.name)
                .collect();
            return Err((
                format!("{root}.kind"),
                format!(
                    "`{}` asks the kernel for processor sets, which policy `{}` does not \
                     provide; use a policy with processor sets: {}",
                    app.kind.name,
                    policy.name,
                    with.join(", ")
                ),
            ));
        }
        if machine.processors < needs.processors {
            return Err((
                root,
                format!(
                    "`{}` needs at least {} processors as given (`smpsched explain {}` says \
                     why), the machine has {} (machine.processors)",
                    app.kind.name, needs.processors, app.kind.name, machine.processors
                ),
            ));
        }
        in_sets += u64::from(needs.set_processors);
        if in_sets >= u64::from(machine.processors) {
            return Err((
                root,
                format!(
                    "the workloads up to this one move {in_sets} processors into processor \
                     sets of their own, but the machine has {}: the default set must keep at \
                     least one (raise machine.processors or ask for fewer)",
                    machine.processors
                ),
            ));
        }
    }
    Ok(())
}

/// Checks that the policy's slice and tick are each longer than one dispatch (a context switch
/// and the scheduler's own work): shorter, the machine would do nothing but switch. `Err` names
/// the policy's field that sets the slice (`fields` is its parameter table; `params`, the
/// fields the policy has, whose default applies when the table leaves one out), else the
/// machine's.
pub(crate) fn check_slice(
    machine: &MachineConfig,
    sched: &dyn Scheduler,
    fields: &toml::Table,
    params: &[smpsched_sim::sched::ParamInfo],
) -> Result<(), Fault> {
    let dispatch = machine
        .context_switch_cycles
        .saturating_add(machine.sched_op_cycles)
        .max(1);
    let shape = sched.shape(machine);
    let (slice, tick) = (shape.nominal_slice, shape.tick);
    // What is too short, and the policy's fields that set it (else the machine's).
    let (what, cycles, own, default_field) = match tick {
        Some(t) if t < slice => (
            "tick",
            t,
            &["decay_interval", "pull_ms", "balance_ms"][..],
            "machine.tick_cycles",
        ),
        _ => (
            "slice",
            slice,
            &["slice_ms", "quantum", "quantum_ticks", "balance_ms"][..],
            "machine.slice_ms",
        ),
    };
    if cycles > dispatch {
        return Ok(());
    }
    // A field the file sets, else one the policy has at its default (at this clock), else the
    // machine's. A default that is not a positive number ("the machine's slice", "0": off)
    // does not set it.
    let defaulted = || {
        own.iter()
            .find_map(|f| params.iter().find(|p| p.name == *f))
            .filter(|p| p.default.parse::<f64>().is_ok_and(|d| d > 0.0))
            .map(|p| {
                let clock = match p.name.ends_with("_ms") {
                    true => format!(" ms at clock_mhz = {}", machine.clock_mhz),
                    false => String::new(),
                };
                (
                    format!("scheduler.{}", p.name),
                    format!(
                        " (`{}` is left at its default, {}{clock})",
                        p.name, p.default
                    ),
                )
            })
    };
    let (field, why) = match own.iter().find(|f| fields.contains_key(**f)) {
        Some(f) => (format!("scheduler.{f}"), String::new()),
        None => defaulted().unwrap_or_else(|| (default_field.to_string(), String::new())),
    };
    Err((
        field,
        format!(
            "the policy's {what} ({cycles} cycles) is no longer than one dispatch \
             (context_switch_cycles + sched_op_cycles = {dispatch} cycles): the machine would \
             do nothing but switch{why}"
        ),
    ))
}
