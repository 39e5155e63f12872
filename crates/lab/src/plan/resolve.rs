//! One point of an experiment resolved: its document (the file with the point's values set)
//! turned into a validated [`Point`] — the machine (a preset and overrides), the policy and its
//! parameters, the workloads, the bounds — with every bad value reported by file, line and
//! field, and a run that would not fit in memory refused.

use std::sync::Arc;

use smpsched_sim::config::MAX_THREADS;
use smpsched_sim::sched;
use smpsched_sim::{Cycles, Limits, MachineConfig};
use smpsched_workloads as workloads;
use smpsched_workloads::WorkloadInfo;

use crate::input::error::InputError;
use crate::input::param_value::ParamValue;
use crate::input::source::{split_de_error, Source};
use crate::input::sweep::{deep_merge, Override};
use crate::plan::point::{App, Point};

/// The top-level fields of an experiment file, in the order the guide lists them: one list for
/// the file's schema (a test checks it against the parser's), the guide's table and the tests.
pub const FIELDS: &[&str] = &[
    "name",
    "description",
    "seed",
    "repetitions",
    "time_limit_cycles",
    "event_limit",
    "reference_limit",
    "until",
    "machine",
    "scheduler",
    "workload",
    "sweep",
    "point",
    "reproduce",
];

/// Maps a deserialization error of the value at `root` to an input error with its line.
pub(crate) fn de_error(
    src: &Source,
    root: &str,
    e: &toml::de::Error,
    overrides: &[Override],
) -> InputError {
    let (key, message) = split_de_error(e);
    let field = match (root.is_empty(), key.is_empty()) {
        (true, _) => key,
        (false, true) => root.to_string(),
        (false, false) => format!("{root}.{key}"),
    };
    located(src, &field, message, overrides)
}

/// An input error about `field`, at the line of the override that set it if any.
fn located(src: &Source, field: &str, message: String, overrides: &[Override]) -> InputError {
    let from_override = overrides.iter().rev().find(|o| {
        field == o.path
            || field.starts_with(&format!("{}.", o.path))
            || o.path.starts_with(&format!("{field}."))
    });
    match from_override {
        Some(o) => src.error_at(o.line, field, message),
        None => src.error(field, message),
    }
}

fn take_string(
    src: &Source,
    table: &mut toml::Table,
    root: &str,
    key: &str,
    overrides: &[Override],
) -> Result<Option<String>, InputError> {
    match table.remove(key) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(located(
            src,
            &format!("{root}.{key}"),
            format!("must be a string, got {other}"),
            overrides,
        )),
    }
}

fn section(
    src: &Source,
    doc: &mut toml::Table,
    key: &str,
    overrides: &[Override],
) -> Result<toml::Table, InputError> {
    match doc.remove(key) {
        None => Ok(toml::Table::new()),
        Some(toml::Value::Table(t)) => Ok(t),
        Some(_) => Err(located(src, key, "must be a table".into(), overrides)),
    }
}

/// Turns one point's document into a validated [`Point`] whose runs fit in `memory` bytes (when
/// known).
pub(crate) fn resolve(
    src: &Source,
    mut doc: toml::Table,
    label: String,
    overrides: &[Override],
    memory: Option<u64>,
) -> Result<Point, InputError> {
    let mut key = src.folder().to_string_lossy().to_string();
    key.push('\n');
    canonical(&toml::Value::Table(doc.clone()), &mut key);
    let mut machine = resolve_machine(src, &mut doc, overrides)?;
    let (policy, settings, idle_handoff) = resolve_scheduler(src, &mut doc, &machine, overrides)?;
    // The deprecated `[scheduler] idle_handoff = true` still turns the kernel's handoff on.
    machine.kernel.idle_handoff |= idle_handoff;
    let apps = resolve_apps(src, &mut doc, &machine, overrides, memory)?;
    crate::plan::progress::check_needs(&machine, policy, &apps)
        .map_err(|(field, message)| located(src, &field, message, overrides))?;
    let limits = Limits {
        cycles: positive(
            src,
            &mut doc,
            "time_limit_cycles",
            Limits::DEFAULT_CYCLES,
            MAX_TIME_LIMIT,
            overrides,
        )?,
        events: positive(
            src,
            &mut doc,
            "event_limit",
            Limits::DEFAULT_EVENTS,
            u64::MAX >> 1,
            overrides,
        )?,
        references: positive(
            src,
            &mut doc,
            "reference_limit",
            Limits::DEFAULT_REFERENCES,
            u64::MAX >> 1,
            overrides,
        )?,
    };
    let until = resolve_until(src, &mut doc, &apps, overrides)?;
    let threads = crate::plan::threads::thread_limit(&machine, &apps, memory);
    if let Some((k, _)) = doc.iter().next() {
        // A known field left over here is one of the file's own, which a sweep or a point
        // set (the file's own copy was taken out before the points were made).
        let message = if FIELDS.contains(&k.as_str()) {
            format!(
                "`{k}` is the file's own (as are name, description, seed, repetitions, sweep, \
                 point and reproduce): a sweep or a point cannot set it; they set machine.*, \
                 scheduler.*, workload.N.*, until and the limits"
            )
        } else {
            format!(
                "unknown field; valid top-level fields: {}",
                FIELDS.join(", ")
            )
        };
        return Err(located(src, k, message, overrides));
    }
    Ok(Point {
        label,
        params: overrides
            .iter()
            .map(|o| (o.path.clone(), ParamValue::new(o.value.clone())))
            .collect(),
        machine,
        policy,
        settings,
        apps,
        limits,
        until,
        threads,
        key,
        measure_threads: false,
    })
}

/// The `[machine]` table: a preset, then the file's overrides, validated.
fn resolve_machine(
    src: &Source,
    doc: &mut toml::Table,
    overrides: &[Override],
) -> Result<MachineConfig, InputError> {
    // Machine: a preset, then the file's overrides.
    let mut m = section(src, doc, "machine", overrides)?;
    let preset_name =
        take_string(src, &mut m, "machine", "preset", overrides)?.ok_or_else(|| {
            located(
                src,
                "machine.preset",
                format!(
                    "missing: every experiment names its machine, `[machine] preset = \"...\"`; \
                     valid presets: {} (smpsched explain PRESET shows one)",
                    MachineConfig::preset_names().join(", ")
                ),
                overrides,
            )
        })?;
    let preset = MachineConfig::preset(&preset_name).ok_or_else(|| {
        located(
            src,
            "machine.preset",
            format!(
                "unknown preset `{preset_name}`; valid presets: {}",
                MachineConfig::preset_names().join(", ")
            ),
            overrides,
        )
    })?;
    let mut merged = match toml::Value::try_from(&preset) {
        Ok(toml::Value::Table(t)) => t,
        _ => return Err(src.error("machine", "internal: preset did not serialize")),
    };
    let slice_ms = take_slice_ms(src, &mut m, overrides)?;
    let cycles_given = m.contains_key("slice_cycles");
    deep_merge(&mut merged, m);
    let mut machine: MachineConfig = toml::Value::Table(merged)
        .try_into()
        .map_err(|e| de_error(src, "machine", &e, overrides))?;
    // The slice is in milliseconds (the preset's too, as `explain` prints it): at another
    // clock it is as many cycles as that clock makes in its milliseconds.
    let preset_ms = || preset.slice_cycles as f64 / (preset.clock_mhz * 1000.0);
    match slice_ms {
        Some(ms) => machine.slice_cycles = machine.ms(ms).max(1),
        None if !cycles_given && machine.clock_mhz != preset.clock_mhz => {
            machine.slice_cycles = machine.ms(preset_ms()).max(1);
        }
        None => {}
    }
    machine.validate().map_err(|e| {
        located(
            src,
            &format!("machine.{}", e.field),
            e.message.clone(),
            overrides,
        )
    })?;

    Ok(machine)
}

/// `[machine] slice_ms`, the machine's default time slice in milliseconds (converted at its clock
/// once the table is read), taken out of `m`; refused beside the deprecated `slice_cycles`.
fn take_slice_ms(
    src: &Source,
    m: &mut toml::Table,
    overrides: &[Override],
) -> Result<Option<f64>, InputError> {
    let Some(v) = m.remove("slice_ms") else {
        return Ok(None);
    };
    let bad = |message: String| Err(located(src, "machine.slice_ms", message, overrides));
    let ms = match v {
        toml::Value::Float(f) => f,
        toml::Value::Integer(i) => i as f64,
        other => return bad(format!("must be a number of milliseconds, got {other}")),
    };
    let max = smpsched_sim::sched::params::MAX_SLICE_MS;
    if !(ms.is_finite() && ms > 0.0 && ms <= max) {
        return bad(format!(
            "a slice must be more than 0 and at most {max} ms, got {ms}"
        ));
    }
    if m.contains_key("slice_cycles") {
        return bad(
            "write the slice once: `slice_ms`, or the deprecated `slice_cycles`, not both".into(),
        );
    }
    Ok(Some(ms))
}

/// The `[scheduler]` table: a registered policy, its parameters (checked by the policy) and the
/// deprecated `idle_handoff` (now the machine's `kernel.idle_handoff`).
fn resolve_scheduler(
    src: &Source,
    doc: &mut toml::Table,
    machine: &MachineConfig,
    overrides: &[Override],
) -> Result<(&'static sched::PolicyInfo, Arc<dyn sched::Settings>, bool), InputError> {
    // Scheduler: a registered policy and its parameters.
    let mut s = section(src, doc, "scheduler", overrides)?;
    let names: Vec<&str> = sched::POLICIES.iter().map(|p| p.name).collect();
    let policy_name =
        take_string(src, &mut s, "scheduler", "policy", overrides)?.ok_or_else(|| {
            located(
                src,
                "scheduler.policy",
                format!("missing; valid policies: {}", names.join(", ")),
                overrides,
            )
        })?;
    let policy = sched::policy(&policy_name).ok_or_else(|| {
        located(
            src,
            "scheduler.policy",
            format!(
                "unknown policy `{policy_name}`; valid policies: {}",
                names.join(", ")
            ),
            overrides,
        )
    })?;
    let idle_handoff = match s.remove("idle_handoff") {
        None => false,
        Some(toml::Value::Boolean(b)) => b,
        Some(v) => {
            return Err(located(
                src,
                "scheduler.idle_handoff",
                format!("must be true or false, got {v}"),
                overrides,
            ))
        }
    };
    // The policy parses its table once into its own parameters, kept typed for every run; an
    // error names its field.
    let settings = (policy.parse)(&s).map_err(|e| {
        let field = match e.field.as_str() {
            "" => "scheduler".to_string(),
            f => format!("scheduler.{f}"),
        };
        located(src, &field, e.message, overrides)
    })?;
    crate::plan::progress::check_slice(machine, settings.build().as_ref(), &s, policy.params)
        .map_err(|(field, message)| located(src, &field, message, overrides))?;

    Ok((policy, settings, idle_handoff))
}

/// A workload table's `kind`: its name and the registered workload.
fn workload_kind(
    src: &Source,
    t: &mut toml::Table,
    root: &str,
    overrides: &[Override],
) -> Result<(String, &'static WorkloadInfo), InputError> {
    let kinds: Vec<&str> = workloads::WORKLOADS.iter().map(|w| w.name).collect();
    let kind_name = take_string(src, t, root, "kind", overrides)?.ok_or_else(|| {
        located(
            src,
            &format!("{root}.kind"),
            format!("missing; valid workloads: {}", kinds.join(", ")),
            overrides,
        )
    })?;
    let kind = workloads::workload(&kind_name).ok_or_else(|| {
        located(
            src,
            &format!("{root}.kind"),
            format!(
                "unknown workload `{kind_name}`; valid workloads: {}",
                kinds.join(", ")
            ),
            overrides,
        )
    })?;
    Ok((kind_name, kind))
}

/// Workload `i`'s application name (`name`, by default `KIND-i`): a valid name no earlier
/// workload has.
fn app_name(
    src: &Source,
    t: &mut toml::Table,
    (i, root): (usize, &str),
    kind_name: &str,
    apps: &[App],
    overrides: &[Override],
) -> Result<String, InputError> {
    let name =
        take_string(src, t, root, "name", overrides)?.unwrap_or_else(|| format!("{kind_name}-{i}"));
    check_app_name(&name).map_err(|m| located(src, &format!("{root}.name"), m, overrides))?;
    if let Some(j) = apps.iter().position(|a| a.name == name) {
        return Err(located(
            src,
            &format!("{root}.name"),
            format!(
                "workload {j} is already called `{name}`; each application needs its own \
                 name (results and measures such as `app_util:{name}` are per name)"
            ),
            overrides,
        ));
    }
    Ok(name)
}

/// The `[[workload]]` tables: one application each, with unique names, within the thread
/// bound and the memory available.
fn resolve_apps(
    src: &Source,
    doc: &mut toml::Table,
    machine: &MachineConfig,
    overrides: &[Override],
    memory: Option<u64>,
) -> Result<Vec<App>, InputError> {
    // Workloads: one application each.
    let list = match doc.remove("workload") {
        Some(toml::Value::Array(a)) => a,
        _ => return Err(src.error("workload", "must be a list of [[workload]] tables")),
    };
    // The file is checked for one at load; a value set over it (`--set`, a sweep) is too.
    if list.is_empty() {
        return Err(located(
            src,
            "workload",
            "an experiment needs at least one [[workload]] table".into(),
            overrides,
        ));
    }
    let mut apps: Vec<App> = Vec::with_capacity(list.len());
    let mut threads: u64 = 0;
    let mut touched: u64 = 0;
    for (i, w) in list.into_iter().enumerate() {
        let root = format!("workload.{i}");
        let mut t = match w {
            toml::Value::Table(t) => t,
            _ => return Err(located(src, &root, "must be a table".into(), overrides)),
        };
        let (kind_name, kind) = workload_kind(src, &mut t, &root, overrides)?;
        let name = app_name(src, &mut t, (i, &root), &kind_name, &apps, overrides)?;
        // A trace or rt-app file is written relative to the experiment file.
        for key in ["trace", "file"] {
            if let Some(toml::Value::String(path)) = t.get_mut(key) {
                let full = src.folder().join(&*path);
                *path = full.to_string_lossy().to_string();
            }
        }
        let workload = (kind.build)(t).map_err(|e| de_error(src, &root, &e, overrides))?;
        // The field that sets the workload's thread count, named when there are too many.
        let count_field = workload
            .threads_field()
            .map_or_else(|| root.clone(), |f| format!("{root}.{f}"));
        threads = threads.saturating_add(workload.threads());
        if threads > MAX_THREADS {
            return Err(located(
                src,
                &count_field,
                format!("the experiment would create more than {MAX_THREADS} threads"),
                overrides,
            ));
        }
        // Each thread's creation also writes `kernel.thread_bytes` of fresh memory.
        let own = workload
            .memory_bytes()
            .saturating_add(crate::plan::threads::kernel_bytes(
                machine,
                workload.threads(),
            ));
        touched = touched.saturating_add(own);
        let fields = (root.as_str(), count_field.as_str());
        if let Some((field, message)) =
            crate::plan::threads::memory_refusal(machine, fields, own, threads, touched, memory)
        {
            return Err(located(src, &field, message, overrides));
        }
        apps.push(App {
            name,
            kind,
            workload: Arc::from(workload),
        });
    }
    Ok(apps)
}

/// `until`: the name of an application of the point whose completion ends the run.
fn resolve_until(
    src: &Source,
    doc: &mut toml::Table,
    apps: &[App],
    overrides: &[Override],
) -> Result<Option<String>, InputError> {
    Ok(match doc.remove("until") {
        None => None,
        Some(toml::Value::String(app)) if apps.iter().any(|a| a.name == app) => Some(app),
        Some(v) => {
            let names: Vec<String> = apps.iter().map(|a| format!("`{}`", a.name)).collect();
            return Err(located(
                src,
                "until",
                format!(
                    "must name an application of the point, got {v}; its applications: {}",
                    names.join(", ")
                ),
                overrides,
            ));
        }
    })
}

/// Writes `v` as text with every table's keys in sorted order, so that equal documents give
/// equal text whatever order their keys were written or set in.
fn canonical(v: &toml::Value, out: &mut String) {
    match v {
        toml::Value::Table(t) => {
            let mut keys: Vec<&String> = t.keys().collect();
            keys.sort();
            out.push('{');
            for k in keys {
                out.push_str(&format!("{k:?}="));
                canonical(&t[k.as_str()], out);
                out.push(',');
            }
            out.push('}');
        }
        toml::Value::Array(a) => {
            out.push('[');
            for x in a {
                canonical(x, out);
                out.push(',');
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Longest application name (it heads columns and names measures such as `app_util:NAME`).
pub const MAX_APP_NAME: usize = 64;

/// An application's name: 1 to [`MAX_APP_NAME`] characters, none a control character, and
/// not `*` (the machine's row in `results.csv`).
pub(crate) fn check_app_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > MAX_APP_NAME {
        return Err(format!(
            "must be 1 to {MAX_APP_NAME} characters, got {} characters",
            name.len()
        ));
    }
    if name == "*" {
        return Err("`*` names the whole machine in results.csv; choose another name".into());
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return Err(format!(
            "`{}` holds the control character {c:?}",
            name.escape_debug()
        ));
    }
    Ok(())
}

/// Largest `time_limit_cycles` (2^62): sums of processor times stay far from overflow.
pub const MAX_TIME_LIMIT: Cycles = 1 << 62;

/// A whole number between 1 and `max` at top-level `key`, or `default` when absent.
fn positive(
    src: &Source,
    doc: &mut toml::Table,
    key: &str,
    default: u64,
    max: u64,
    overrides: &[Override],
) -> Result<u64, InputError> {
    match doc.remove(key) {
        None => Ok(default),
        Some(toml::Value::Integer(n)) if n > 0 && (n as u64) <= max => Ok(n as u64),
        Some(v) => Err(located(
            src,
            key,
            format!("must be a whole number between 1 and {max}, got {v}"),
            overrides,
        )),
    }
}
