//! Experiment files: TOML in, a validated plan of points out.
//!
//! Parsing follows ripgrep's "low args to high args": the file is first read raw (a value tree
//! plus a key-to-line index), then every point of its sweep is resolved and validated into a
//! typed [`Point`] before anything runs, so a bad value anywhere is reported with file, line and
//! field and no run starts.
//!
//! ```toml
//! name = "quickstart"
//! seed = 1
//! repetitions = 1
//!
//! [machine]            # a preset, then any field overridden
//! preset = "tango-12"
//! processors = 4
//!
//! [scheduler]
//! policy = "priority"  # plus the policy's parameters
//!
//! [[workload]]         # one per application
//! kind = "synthetic"
//! name = "A"
//! threads = 8
//! bursts = 20
//! compute = { dist = "exponential", mean = 200000 }
//!
//! [sweep]              # cartesian product over dotted paths
//! "scheduler.policy" = ["batch", "round-robin", "priority"]
//!
//! [[point]]            # or explicit named points (each combined with the sweep)
//! name = "small"
//! set = { "machine.processors" = 2 }
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use smpsched_sim::config::MAX_THREADS;
use smpsched_sim::sched::{self, PolicyInfo};
use smpsched_sim::{Cycles, Limits, MachineConfig, Progress, RunReport, SimError, Simulation};
use smpsched_workloads::{self as workloads, Workload, WorkloadInfo};

use crate::budget;

use crate::error::{InputError, LabError};
use crate::source::{split_de_error, Source};

/// Most repetitions of one point.
pub const MAX_REPETITIONS: u32 = 10_000;

/// Most points one experiment may expand to.
pub const MAX_POINTS: usize = 100_000;

/// The raw top level of an experiment file. Some fields are read from the value tree per point;
/// they are declared here so that their types are checked once, with the file's lines.
#[derive(Debug, Deserialize)]
#[allow(dead_code)]
#[serde(deny_unknown_fields)]
struct RawFile {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default = "one_u64")]
    seed: u64,
    #[serde(default = "one_u32")]
    repetitions: u32,
    #[serde(default)]
    time_limit_cycles: Option<Cycles>,
    #[serde(default)]
    event_limit: Option<u64>,
    #[serde(default)]
    machine: toml::Table,
    scheduler: toml::Table,
    #[serde(default)]
    workload: Vec<toml::Table>,
    #[serde(default)]
    sweep: toml::Table,
    #[serde(default)]
    point: Vec<RawPoint>,
    #[serde(default)]
    reproduce: Option<toml::Table>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPoint {
    name: String,
    #[serde(default)]
    set: toml::Table,
}

fn one_u64() -> u64 {
    1
}

fn one_u32() -> u32 {
    1
}

/// A value set at a dotted path for one point, and the line it was written on.
#[derive(Clone, Debug)]
struct Override {
    path: String,
    value: toml::Value,
    line: Option<usize>,
}

/// One application of a point: its name and its validated workload.
#[derive(Clone)]
pub struct App {
    /// Name of the application in reports.
    pub name: String,
    /// The registered workload kind.
    pub kind: &'static WorkloadInfo,
    /// The validated workload.
    pub workload: Arc<dyn Workload>,
}

/// One fully resolved configuration of an experiment: everything needed to simulate it.
#[derive(Clone)]
pub struct Point {
    /// Human-readable label (`policy=priority/processors=8`), unique within the experiment.
    pub label: String,
    /// The values this point sets, as (dotted path, value) in file order.
    pub params: Vec<(String, String)>,
    /// The machine.
    pub machine: MachineConfig,
    /// The kernel scheduling policy.
    pub policy: &'static PolicyInfo,
    /// The policy's parameters.
    pub policy_params: toml::Table,
    /// The applications, in task order.
    pub apps: Vec<App>,
    /// Bounds on simulated time and events (`time_limit_cycles`, `event_limit`), defaults
    /// applied.
    pub limits: Limits,
    /// Dispatch threads that become ready straight to idle processors (Black 1990, 3.1); a
    /// `[scheduler]` key common to every policy.
    pub idle_handoff: bool,
}

impl Point {
    /// Unit operations of all applications (synchronizations, exchanges), if any declares them.
    pub fn operations(&self) -> Option<u64> {
        let ops: Vec<u64> = self
            .apps
            .iter()
            .filter_map(|a| a.workload.operations())
            .collect();
        (!ops.is_empty()).then(|| ops.iter().sum())
    }
}

impl Point {
    /// Builds and runs the simulation of this point with `seed`.
    pub fn simulate(&self, seed: u64) -> Result<RunReport, SimError> {
        self.simulate_observed(seed, u64::MAX, &mut |_| {})
    }

    /// Builds and runs the simulation of this point with `seed`, showing `observe` the run's
    /// progress every `every` events.
    pub fn simulate_observed(
        &self,
        seed: u64,
        every: u64,
        observe: &mut dyn FnMut(Progress),
    ) -> Result<RunReport, SimError> {
        let sched = (self.policy.build)(self.policy_params.clone())
            .expect("policy parameters were validated when the experiment was loaded");
        let mut sim = Simulation::new(self.machine.clone(), sched, seed)?;
        sim.set_limits(self.limits);
        sim.set_idle_handoff(self.idle_handoff);
        for app in &self.apps {
            let task = sim.add_task(app.name.clone());
            app.workload.install(&mut sim, task)?;
        }
        sim.run_observed(every, observe)
    }
}

/// A loaded, validated experiment.
#[derive(Clone)]
pub struct Experiment {
    /// The experiment's name (also the default results folder).
    pub name: String,
    /// What it is about.
    pub description: String,
    /// The file it was read from, as given (for messages).
    pub path: PathBuf,
    /// The file as recorded in results and reports: relative to the repository (the nearest
    /// folder above it with a `.git` or `Cargo.toml`), else its bare name, so the same file
    /// reached by another path gives the same bytes.
    pub recorded_path: String,
    /// Base seed; repetition `r > 0` derives its own seed from it.
    pub seed: u64,
    /// Runs per point.
    pub repetitions: u32,
    /// Every point of the sweep, in order.
    pub points: Vec<Point>,
    /// The `[reproduce]` section, for files that reproduce a table or figure of a paper.
    pub reproduce: Option<crate::reproduction::Spec>,
}

impl Experiment {
    /// Reads and validates the experiment file at `path`.
    pub fn load(path: &Path) -> Result<Experiment, LabError> {
        Self::load_scaled(path, 1.0)
    }

    /// Reads and validates the file at `path`, multiplying the sizes its `[reproduce] scale`
    /// lists by `scale` (for quick looks and CI).
    pub fn load_scaled(path: &Path, scale: f64) -> Result<Experiment, LabError> {
        let text = std::fs::read_to_string(path).map_err(|e| InputError {
            file: path.to_path_buf(),
            line: None,
            field: String::new(),
            message: format!("cannot read the experiment file: {e}"),
        })?;
        Ok(Self::parse_scaled(path, text, scale)?)
    }

    /// Validates an experiment given as text (`path` is used in messages).
    pub fn parse(path: &Path, text: String) -> Result<Experiment, InputError> {
        Self::parse_scaled(path, text, 1.0)
    }

    /// Validates an experiment given as text, scaling the sizes `[reproduce] scale` lists.
    pub fn parse_scaled(path: &Path, text: String, scale: f64) -> Result<Experiment, InputError> {
        let (src, table) = Source::parse(path, text)?;
        let raw: RawFile = toml::Value::Table(table.clone())
            .try_into()
            .map_err(|e| de_error(&src, "", &e, &[]))?;
        if raw.repetitions == 0 || raw.repetitions > MAX_REPETITIONS {
            return Err(src.error(
                "repetitions",
                format!(
                    "must be between 1 and {MAX_REPETITIONS}, got {}",
                    raw.repetitions
                ),
            ));
        }
        if raw.workload.is_empty() {
            return Err(src.error(
                "workload",
                "an experiment needs at least one [[workload]] table",
            ));
        }
        let mut base = table;
        for key in [
            "name",
            "description",
            "seed",
            "repetitions",
            "sweep",
            "point",
            "reproduce",
        ] {
            base.remove(key);
        }
        let scaled: Vec<String> = raw
            .reproduce
            .as_ref()
            .and_then(|r| r.get("scale"))
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        let variants = expand(&src, &raw)?;
        // Asked once per file: reading the machine's memory is not free, and a sweep may have
        // many points.
        let memory = budget::available()?;
        let mut points = Vec::with_capacity(variants.len());
        for (label, overrides) in variants {
            let mut doc = base.clone();
            for o in &overrides {
                set_path(&mut doc, &o.path, o.value.clone())
                    .map_err(|m| src.error_at(o.line, &o.path, m))?;
            }
            // Checked at every scale; on a refused scale, every point's document is asked for.
            crate::reproduce::scale::scale_paths(&src, &mut doc, &scaled, scale, &label, || {
                let every = expand(&src, &raw).unwrap_or_default().into_iter();
                every
                    .map(|(name, sets)| {
                        let mut d = base.clone();
                        for o in sets {
                            let _ = set_path(&mut d, &o.path, o.value);
                        }
                        (name, d)
                    })
                    .collect()
            })?;
            points.push(resolve(&src, doc, label, &overrides, memory)?);
        }
        let mut seen = std::collections::BTreeSet::new();
        for p in &points {
            if !seen.insert(p.label.as_str()) {
                return Err(src.error(
                    "point",
                    format!(
                        "two points have the label `{}`; give them distinct names",
                        p.label
                    ),
                ));
            }
        }
        let reproduce = match raw.reproduce {
            Some(t) => Some(crate::reproduction::parse_spec(&src, t, &points)?),
            None => None,
        };
        let runs = (points.len() as u64).saturating_mul(u64::from(raw.repetitions));
        let widest = points
            .iter()
            .map(|p| p.machine.processors)
            .max()
            .unwrap_or(1);
        let apps = points.iter().map(|p| p.apps.len()).max().unwrap_or(1);
        let need = budget::records_bytes(runs, widest, apps);
        if let Some(avail) = memory.filter(|&a| need > a) {
            return Err(src.error(
                "repetitions",
                format!(
                    "the results of {runs} runs ({} points x {} repetitions) would need about \
                     {} of memory, more than the {} available; run fewer points or repetitions \
                     (or set {} to state the memory smpsched may use)",
                    points.len(),
                    raw.repetitions,
                    budget::human(need),
                    budget::human(avail),
                    budget::MEMORY_ENV,
                ),
            ));
        }
        Ok(Experiment {
            reproduce,
            name: raw.name,
            description: raw.description,
            recorded_path: recorded_path(path),
            path: path.to_path_buf(),
            seed: raw.seed,
            repetitions: raw.repetitions,
            points,
        })
    }

    /// The seed of repetition `r`: the base seed for the first, a derived one for the others.
    pub fn seed_of(&self, r: u32) -> u64 {
        if r == 0 {
            self.seed
        } else {
            smpsched_sim::rng::derive_seed(
                self.seed,
                smpsched_sim::rng::Stream::Repetition,
                r as u64,
            )
        }
    }
}

/// `path` as results record it: relative to the repository that holds it (the nearest folder
/// above it with a `.git` or a `Cargo.toml`), `/`-separated; else the file's bare name.
fn recorded_path(path: &Path) -> String {
    let name = || {
        path.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().to_string())
    };
    let Ok(full) = path.canonicalize() else {
        return name();
    };
    let root = full
        .ancestors()
        .skip(1)
        .find(|d| d.join(".git").exists() || d.join("Cargo.toml").exists());
    match root.and_then(|r| full.strip_prefix(r).ok()) {
        Some(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().to_string())
            .collect::<Vec<_>>()
            .join("/"),
        None => name(),
    }
}

/// Expands named points and the sweep into labelled lists of overrides.
fn expand(src: &Source, raw: &RawFile) -> Result<Vec<(String, Vec<Override>)>, InputError> {
    let mut bases: Vec<(String, Vec<Override>)> = Vec::new();
    if raw.point.is_empty() {
        bases.push((String::new(), Vec::new()));
    }
    for (i, p) in raw.point.iter().enumerate() {
        let overrides = p
            .set
            .iter()
            .map(|(k, v)| Override {
                path: k.clone(),
                value: v.clone(),
                line: src.line_of_key(&format!("point.{i}.set.{k}")),
            })
            .collect();
        bases.push((p.name.clone(), overrides));
    }
    let mut axes: Vec<(String, Vec<toml::Value>, Option<usize>)> = Vec::new();
    for (k, v) in &raw.sweep {
        let line = src.line_of_key(&format!("sweep.{k}"));
        match v {
            toml::Value::Array(a) if !a.is_empty() => axes.push((k.clone(), a.clone(), line)),
            _ => {
                return Err(src.error_at(
                    line,
                    &format!("sweep.{k}"),
                    "a sweep entry must be a non-empty list of values",
                ))
            }
        }
    }
    let mut total = bases.len();
    for (k, vals, line) in &axes {
        total = total.saturating_mul(vals.len());
        if total > MAX_POINTS {
            return Err(src.error_at(
                *line,
                &format!("sweep.{k}"),
                format!("the sweep expands to more than {MAX_POINTS} points"),
            ));
        }
    }
    let mut out = bases;
    for (path, vals, line) in axes {
        let mut next = Vec::with_capacity(out.len() * vals.len());
        for (label, overrides) in &out {
            for v in &vals {
                let mut o = overrides.clone();
                o.push(Override {
                    path: path.clone(),
                    value: v.clone(),
                    line,
                });
                let part = format!("{}={}", short_key(&path), value_label(v));
                let l = if label.is_empty() {
                    part
                } else {
                    format!("{label}/{part}")
                };
                next.push((l, o));
            }
        }
        out = next;
    }
    for (label, _) in &mut out {
        if label.is_empty() {
            *label = "base".into();
        }
    }
    Ok(out)
}

fn short_key(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

/// A short label for a value: strings bare, tables by their `policy`, `kind` or `name`.
fn value_label(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        toml::Value::Table(t) => ["name", "policy", "kind"]
            .iter()
            .find_map(|k| t.get(*k).and_then(|x| x.as_str()).map(str::to_string))
            .unwrap_or_else(|| v.to_string()),
        other => other.to_string(),
    }
}

/// Sets `value` at dotted `path` in `doc`, creating tables on the way; numeric segments index
/// arrays (`workload.0.threads`).
fn set_path(doc: &mut toml::Table, path: &str, value: toml::Value) -> Result<(), String> {
    let segs: Vec<&str> = path.split('.').collect();
    if segs.iter().any(|s| s.is_empty()) {
        return Err(format!("`{path}` is not a valid dotted path"));
    }
    let (first, rest) = segs
        .split_first()
        .expect("split yields at least one segment");
    if rest.is_empty() {
        doc.insert(first.to_string(), value);
        return Ok(());
    }
    let child = doc
        .entry(first.to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    set_in(child, rest, value, path)
}

fn set_in(
    node: &mut toml::Value,
    segs: &[&str],
    value: toml::Value,
    path: &str,
) -> Result<(), String> {
    let Some((seg, rest)) = segs.split_first() else {
        *node = value;
        return Ok(());
    };
    match node {
        toml::Value::Table(t) if rest.is_empty() => {
            t.insert(seg.to_string(), value);
            Ok(())
        }
        toml::Value::Table(t) => {
            let child = t
                .entry(seg.to_string())
                .or_insert_with(|| toml::Value::Table(toml::Table::new()));
            set_in(child, rest, value, path)
        }
        toml::Value::Array(a) => {
            let len = a.len();
            let child = seg
                .parse::<usize>()
                .ok()
                .and_then(|i| a.get_mut(i))
                .ok_or_else(|| {
                    format!("`{seg}` in `{path}` is not an index into a list of {len}")
                })?;
            set_in(child, rest, value, path)
        }
        _ => Err(format!(
            "`{path}`: `{seg}` is inside a value that is not a table"
        )),
    }
}

/// Overrides `base` with `over`, merging nested tables key by key (so `[machine.memory]` with one
/// field keeps the preset's other memory settings).
fn deep_merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => deep_merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// Maps a deserialization error of the value at `root` to an input error with its line.
fn de_error(src: &Source, root: &str, e: &toml::de::Error, overrides: &[Override]) -> InputError {
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
fn resolve(
    src: &Source,
    mut doc: toml::Table,
    label: String,
    overrides: &[Override],
    memory: Option<u64>,
) -> Result<Point, InputError> {
    // Machine: a preset, then the file's overrides.
    let mut m = section(src, &mut doc, "machine", overrides)?;
    let preset_name = take_string(src, &mut m, "machine", "preset", overrides)?
        .unwrap_or_else(|| "tango-12".into());
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
    deep_merge(&mut merged, m);
    let machine: MachineConfig = toml::Value::Table(merged)
        .try_into()
        .map_err(|e| de_error(src, "machine", &e, overrides))?;
    machine.validate().map_err(|e| {
        located(
            src,
            &format!("machine.{}", e.field),
            e.message.clone(),
            overrides,
        )
    })?;

    // Scheduler: a registered policy and its parameters.
    let mut s = section(src, &mut doc, "scheduler", overrides)?;
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
    (policy.build)(s.clone()).map_err(|e| de_error(src, "scheduler", &e, overrides))?;

    // Workloads: one application each.
    let list = match doc.remove("workload") {
        Some(toml::Value::Array(a)) => a,
        _ => return Err(src.error("workload", "must be a list of [[workload]] tables")),
    };
    let kinds: Vec<&str> = workloads::WORKLOADS.iter().map(|w| w.name).collect();
    let mut apps: Vec<App> = Vec::with_capacity(list.len());
    let mut threads: u64 = 0;
    let mut touched: u64 = 0;
    for (i, w) in list.into_iter().enumerate() {
        let root = format!("workload.{i}");
        let mut t = match w {
            toml::Value::Table(t) => t,
            _ => return Err(located(src, &root, "must be a table".into(), overrides)),
        };
        let kind_name = take_string(src, &mut t, &root, "kind", overrides)?.ok_or_else(|| {
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
        let name = take_string(src, &mut t, &root, "name", overrides)?
            .unwrap_or_else(|| format!("{kind_name}-{i}"));
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
        // A trace file is written relative to the experiment file.
        if let Some(toml::Value::String(trace)) = t.get_mut("trace") {
            let full = src.folder().join(&*trace);
            *trace = full.to_string_lossy().to_string();
        }
        let workload = (kind.build)(t).map_err(|e| de_error(src, &root, &e, overrides))?;
        threads = threads.saturating_add(workload.threads());
        if threads > MAX_THREADS {
            return Err(located(
                src,
                &format!("{root}.threads"),
                format!("the experiment would create more than {MAX_THREADS} threads"),
                overrides,
            ));
        }
        touched = touched.saturating_add(workload.memory_bytes());
        let engine = budget::run_bytes(threads, machine.processors);
        let model =
            smpsched_sim::memory::footprint_bytes(&machine.memory, machine.processors, touched);
        let need = engine.saturating_add(model);
        if let Some(avail) = memory.filter(|&a| need > a) {
            let field = if model > engine && workload.memory_bytes() > 0 {
                root.clone()
            } else {
                format!("{root}.threads")
            };
            return Err(located(
                src,
                &field,
                format!(
                    "a run of this point would need about {} of memory ({} for {threads} \
                     threads on {} processors, {} for the memory model: caches and the \
                     directory of {} of regions), more than the {} available (set {} to \
                     state the memory smpsched may use)",
                    budget::human(need),
                    budget::human(engine),
                    machine.processors,
                    budget::human(model),
                    budget::human(touched),
                    budget::human(avail),
                    budget::MEMORY_ENV,
                ),
                overrides,
            ));
        }
        apps.push(App {
            name,
            kind,
            workload: Arc::from(workload),
        });
    }
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
    };
    if let Some((k, _)) = doc.iter().next() {
        return Err(located(
            src,
            k,
            "unknown field; valid top-level fields: name, description, seed, repetitions, \
             time_limit_cycles, event_limit, machine, scheduler, workload, sweep, point, \
             reproduce"
                .into(),
            overrides,
        ));
    }
    Ok(Point {
        label,
        params: overrides
            .iter()
            .map(|o| (o.path.clone(), value_label(&o.value)))
            .collect(),
        machine,
        policy,
        policy_params: s,
        apps,
        limits,
        idle_handoff,
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
name = "t"
seed = 3

[machine]
preset = "tango-12"
processors = 4

[scheduler]
policy = "round-robin"

[[workload]]
kind = "synthetic"
name = "A"
threads = 4
bursts = 3
compute = { dist = "fixed", value = 1000 }

[sweep]
"scheduler.policy" = ["batch", "priority"]
"machine.processors" = [1, 2]
"#;

    fn parse(text: &str) -> Result<Experiment, InputError> {
        Experiment::parse(Path::new("exp.toml"), text.to_string())
    }

    #[test]
    fn sweep_is_a_cartesian_product_in_file_order() {
        let e = parse(GOOD).unwrap();
        let labels: Vec<&str> = e.points.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "policy=batch/processors=1",
                "policy=batch/processors=2",
                "policy=priority/processors=1",
                "policy=priority/processors=2"
            ]
        );
        assert_eq!(e.points[3].machine.processors, 2);
        assert_eq!(e.points[3].policy.name, "priority");
    }

    #[test]
    fn named_points_combine_with_the_sweep() {
        let text = GOOD.replace(
            "[sweep]",
            "[[point]]\nname = \"slow\"\nset = { \"machine.clock_mhz\" = 1.0 }\n\n[sweep]",
        );
        let e = parse(&text).unwrap();
        assert_eq!(e.points.len(), 4);
        assert!(e.points[0].label.starts_with("slow/policy=batch"));
        assert_eq!(e.points[0].machine.clock_mhz, 1.0);
    }

    fn err(text: &str) -> InputError {
        match parse(text) {
            Ok(_) => panic!("accepted"),
            Err(e) => e,
        }
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let base = &GOOD[..GOOD.find("[sweep]").unwrap()];
        let e = err(&base.replace("policy = \"round-robin\"", "policy = \"lottery\""));
        assert_eq!(e.field, "scheduler.policy");
        assert_eq!(e.line, Some(10));
        assert!(e.message.contains("round-robin"), "{e}");

        let e = err(&GOOD.replace("\"batch\", \"priority\"", "\"batch\", \"lottery\""));
        assert_eq!((e.field.as_str(), e.line), ("scheduler.policy", Some(20)));

        let e = err(&base.replace("processors = 4", "processors = 100000"));
        assert_eq!((e.field.as_str(), e.line), ("machine.processors", Some(7)));

        let e = err(&base.replace("processors = 4", "procesors = 4"));
        assert_eq!(e.field, "machine.procesors");
        assert_eq!(e.line, Some(7));

        let e = err(&GOOD.replace("threads = 4", "threads = -4"));
        assert_eq!((e.field.as_str(), e.line), ("workload.0.threads", Some(15)));

        let e = err(&GOOD.replace("kind = \"synthetic\"", "kind = \"mp4d\""));
        assert_eq!((e.field.as_str(), e.line), ("workload.0.kind", Some(13)));

        let e = err(&GOOD.replace("[1, 2]", "[1, 70000]"));
        assert_eq!(e.field, "machine.processors");
        assert_eq!(
            e.line,
            Some(21),
            "a swept value is reported at its sweep line"
        );

        let e = err(&GOOD.replace("seed = 3", "seed = 3\ncolour = 1"));
        assert_eq!((e.field.as_str(), e.line), ("colour", Some(4)));

        let e = err(&GOOD.replace("threads = 4", "threads = 20000000"));
        assert_eq!(e.field, "workload.0.threads");

        let e = err("name = \"x\"\n[scheduler]\npolicy = \"batch\"\n");
        assert_eq!(e.field, "workload");
        assert!(e.to_string().starts_with("exp.toml"), "{e}");
    }

    #[test]
    fn two_applications_with_one_name_are_refused() {
        let base = &GOOD[..GOOD.find("[sweep]").unwrap()];
        let twice = format!("{base}\n[[workload]]\nkind = \"synthetic\"\nname = \"A\"\nthreads = 1\nbursts = 1\ncompute = {{ dist = \"fixed\", value = 1 }}\n");
        let e = err(&twice);
        assert_eq!((e.field.as_str(), e.line), ("workload.1.name", Some(22)));
        assert!(e.message.contains("already called `A`"), "{e}");
    }

    #[test]
    fn runs_are_bounded_by_default_and_bounds_are_checked() {
        let e = parse(GOOD).unwrap();
        assert_eq!(
            e.points[0].limits,
            Limits {
                cycles: Limits::DEFAULT_CYCLES,
                events: Limits::DEFAULT_EVENTS,
            }
        );
        let e = parse(&GOOD.replace(
            "seed = 3",
            "seed = 3\nevent_limit = 5000\ntime_limit_cycles = 7",
        ))
        .unwrap();
        assert_eq!(
            e.points[0].limits,
            Limits {
                cycles: 7,
                events: 5000
            }
        );
        for bad in [
            "event_limit = 0",
            "time_limit_cycles = -1",
            "time_limit_cycles = 9223372036854775807",
            "event_limit = \"lots\"",
        ] {
            let e = err(&GOOD.replace("seed = 3", &format!("seed = 3\n{bad}")));
            assert_eq!(e.line, Some(4), "{bad}: {e}");
            assert!(bad.starts_with(&e.field), "{bad}: {e}");
        }
    }

    #[test]
    fn points_simulate_deterministically() {
        let e = parse(GOOD).unwrap();
        let a = e.points[2].simulate(1).unwrap();
        let b = e.points[2].simulate(1).unwrap();
        assert_eq!(format!("{a:?}"), format!("{b:?}"));
        a.check_conservation().unwrap();
    }

    #[test]
    fn nested_machine_overrides_keep_the_presets_other_fields() {
        let text = GOOD[..GOOD.find("[sweep]").unwrap()].replace(
            "processors = 4",
            "processors = 4\n\n[machine.memory]\nchunk_cycles = 500",
        );
        let e = parse(&text).unwrap();
        let mem = &e.points[0].machine.memory;
        assert_eq!(mem.chunk_cycles, 500);
        assert_eq!(mem, &{
            let mut t = MachineConfig::tango_12().memory;
            t.chunk_cycles = 500;
            t
        });
    }

    #[test]
    fn set_path_handles_arrays_and_rejects_bad_indices() {
        let mut doc: toml::Table = toml::from_str("[[workload]]\nthreads = 1\n").unwrap();
        set_path(&mut doc, "workload.0.threads", toml::Value::Integer(5)).unwrap();
        assert_eq!(doc["workload"][0]["threads"].as_integer(), Some(5));
        assert!(set_path(&mut doc, "workload.3.threads", toml::Value::Integer(5)).is_err());
        assert!(set_path(&mut doc, "workload.x.threads", toml::Value::Integer(5)).is_err());
        set_path(&mut doc, "scheduler.decay", toml::Value::Float(0.5)).unwrap();
        assert_eq!(doc["scheduler"]["decay"].as_float(), Some(0.5));
    }
}
