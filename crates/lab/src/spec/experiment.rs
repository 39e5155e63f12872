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

use serde::Deserialize;

use crate::input::budget;
pub use crate::plan::point::{App, Point};

use crate::input::error::{InputError, LabError};
use crate::input::setting::{apply, overlap, Setting};
use crate::input::source::Source;
use crate::input::sweep::{expand, set_path, RawPoint};
use crate::plan::resolve::{de_error, resolve};
pub use crate::plan::resolve::{FIELDS, MAX_TIME_LIMIT};

/// Most repetitions of one point.
pub const MAX_REPETITIONS: u32 = 10_000;

pub use crate::input::sweep::MAX_POINTS;

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
    // The bounds are checked per point, where a wrong value's message gives their range.
    #[serde(default)]
    time_limit_cycles: Option<toml::Value>,
    #[serde(default)]
    event_limit: Option<toml::Value>,
    #[serde(default)]
    reference_limit: Option<toml::Value>,
    #[serde(default)]
    until: Option<String>,
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

fn one_u64() -> u64 {
    1
}

fn one_u32() -> u32 {
    1
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
    pub reproduce: Option<crate::spec::repro_spec::Spec>,
    /// Notes for the user that do not stop the runs: deprecated names the file writes, with
    /// file, line and what to write instead ([`crate::input::deprecated`]), then what its
    /// workloads read otherwise than written (`Workload::notes`).
    pub notes: Vec<String>,
    /// Values set over the file from the command line (`--set`), which its results record.
    pub settings: Vec<Setting>,
    /// The line of each run bound the file writes at its top (`time_limit_cycles`,
    /// `event_limit`, `reference_limit`), so that a run stopped at one is told where to raise
    /// it ([`crate::stopped_error`]).
    pub limit_lines: Vec<(&'static str, usize)>,
}

impl Experiment {
    /// Reads and validates the experiment file at `path`.
    pub fn load(path: &Path) -> Result<Experiment, LabError> {
        Self::load_scaled(path, 1.0)
    }

    /// Reads and validates the file at `path`, multiplying the sizes its `[reproduce] scale`
    /// lists by `scale` (for quick looks and CI).
    pub fn load_scaled(path: &Path, scale: f64) -> Result<Experiment, LabError> {
        Self::load_set(path, scale, &[])
    }

    /// [`Experiment::load_scaled`] with `settings` applied over the file (`run --set`).
    pub fn load_set(path: &Path, scale: f64, settings: &[Setting]) -> Result<Experiment, LabError> {
        let text = crate::input::source::read_experiment(path)?;
        Ok(Self::parse_set(path, text, scale, settings)?)
    }

    /// Validates an experiment given as text (`path` is used in messages).
    pub fn parse(path: &Path, text: String) -> Result<Experiment, InputError> {
        Self::parse_scaled(path, text, 1.0)
    }

    /// Validates an experiment given as text, scaling the sizes `[reproduce] scale` lists.
    pub fn parse_scaled(path: &Path, text: String, scale: f64) -> Result<Experiment, InputError> {
        Self::parse_set(path, text, scale, &[])
    }

    /// [`Experiment::parse_scaled`] with `settings` applied over the file (`--set`, `--vary`:
    /// [`crate::input::setting`]), validated as if the file had written them.
    pub fn parse_set(
        path: &Path,
        text: String,
        scale: f64,
        settings: &[Setting],
    ) -> Result<Experiment, InputError> {
        let (src, table) = Source::parse(path, text)?;
        let mut notes = crate::input::deprecated::notes(&src, &table);
        notes.extend(crate::input::deprecated::setting_notes(settings));
        let raw: RawFile = toml::Value::Table(table.clone())
            .try_into()
            .map_err(|e| de_error(&src, "", &e, &[]))?;
        check_raw(&src, &raw)?;
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
        apply_settings(&src, &raw, &mut base, settings)?;
        let (scaled, repetitions) = scaled_paths(&raw, scale);
        // Asked once per file: reading the machine's memory is not free, and a sweep may have
        // many points.
        let memory = budget::available()?;
        let mut points = resolve_points(&src, &raw, &base, &scaled, scale, memory)
            .map_err(|e| from_settings(e, settings))?;
        // What a workload reads otherwise than written (an rt-app CPU number's fraction), told
        // once however many points build it.
        for p in &points {
            for app in &p.apps {
                for n in app.workload.notes().into_iter().chain(uma_note(p, app)) {
                    if !notes.contains(&n) {
                        notes.push(n);
                    }
                }
            }
        }
        // A reproduction reading threads' wake-up latencies measures every point's threads
        // (rt-app's always are; other workloads' only when asked).
        if raw
            .reproduce
            .as_ref()
            .is_some_and(|t| t.to_string().contains(":wake_lat_us"))
        {
            for p in &mut points {
                p.measure_threads = true;
                p.key.push_str("\nmeasure_threads");
            }
        }
        let reproduce = match raw.reproduce {
            Some(t) => Some(crate::spec::repro_spec::parse_spec(&src, t, &points)?),
            None => None,
        };
        check_records(&src, &points, repetitions, memory)?;
        let limit_lines = crate::plan::record::LIMIT_FIELDS
            .iter()
            .filter_map(|&f| Some((f, src.line_of_key(f)?)))
            .collect();
        Ok(Experiment {
            limit_lines,
            reproduce,
            name: raw.name,
            description: raw.description,
            recorded_path: recorded_path(path),
            path: path.to_path_buf(),
            seed: raw.seed,
            repetitions,
            points,
            notes,
            settings: settings.to_vec(),
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
/// Applies the command line's settings to the file's document, refusing one whose path the
/// file's sweep or points set themselves (they would override it at every point).
fn apply_settings(
    src: &Source,
    raw: &RawFile,
    base: &mut toml::Table,
    settings: &[Setting],
) -> Result<(), InputError> {
    let swept = raw
        .sweep
        .keys()
        .map(|k| (k.as_str(), format!("sweep.{k}")))
        .chain(raw.point.iter().enumerate().flat_map(|(i, p)| {
            p.set
                .keys()
                .map(move |k| (k.as_str(), format!("point.{i}.set.{k}")))
        }))
        .collect::<Vec<_>>();
    for s in settings {
        if let Some((p, key)) = swept.iter().find(|(p, _)| overlap(p, &s.path)) {
            return Err(src.error(
                key,
                format!(
                    "the file sets `{p}` itself, at every point, so `{}` (--set or --vary) \
                     cannot change it",
                    s.path
                ),
            ));
        }
    }
    apply(base, settings).map_err(|(path, m)| src.error_at(None, &path, m))
}

/// An error about a value the command line set says so: the file does not hold it.
fn from_settings(mut e: InputError, settings: &[Setting]) -> InputError {
    // The field is the setting's, or holds it; or the message names its path (a size that
    // `[reproduce] scale` lists, set to a value that is no integer).
    let about = |s: &&Setting| {
        e.field.ends_with(&s.path)
            || s.path.starts_with(&format!("{}.", e.field))
            || e.message.contains(&format!("`{}`", s.path))
    };
    if let Some(s) = settings.iter().find(about) {
        e.message.push_str(&format!(
            " (the value is set by the command line: {})",
            s.arg()
        ));
    }
    e
}

/// The checks on the raw file before any point: a usable name, repetitions in bounds, and at
/// least one workload.
fn check_raw(src: &Source, raw: &RawFile) -> Result<(), InputError> {
    if raw.name.trim().is_empty() || raw.name.chars().any(char::is_control) {
        return Err(src.error(
            "name",
            "must be a name for the experiment (its results go to results/NAME/), not \
             empty and without control characters",
        ));
    }
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
    Ok(())
}

/// The paths `[reproduce] scale` names, and the repetitions at `scale` (`repetitions` may be
/// listed too).
fn scaled_paths(raw: &RawFile, scale: f64) -> (Vec<String>, u32) {
    let mut scaled: Vec<String> = raw
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
    // `repetitions` may be listed too: it is scaled like a size but never refused, only
    // kept at 1 or more (fewer repetitions are a quicker, noisier look, not a smaller run).
    let mut repetitions = raw.repetitions;
    if let Some(i) = scaled.iter().position(|p| p == "repetitions") {
        scaled.remove(i);
        repetitions = ((f64::from(raw.repetitions) * scale).round() as u32).max(1);
    }
    (scaled, repetitions)
}

/// Every point of the sweep, its values set, scaled and resolved, with distinct labels.
fn resolve_points(
    src: &Source,
    raw: &RawFile,
    base: &toml::Table,
    scaled: &[String],
    scale: f64,
    memory: Option<u64>,
) -> Result<Vec<Point>, InputError> {
    let variants = expand(src, &raw.point, &raw.sweep)?;
    let mut points = Vec::with_capacity(variants.len());
    for (label, overrides) in variants {
        let mut doc = base.clone();
        for o in &overrides {
            set_path(&mut doc, &o.path, o.value.clone())
                .map_err(|m| src.error_at(o.line, &o.path, m))?;
        }
        // Checked at every scale; on a refused scale, every point's document is asked for.
        crate::reproduce::scale::scale_paths(src, &mut doc, scaled, scale, &label, || {
            let every = expand(src, &raw.point, &raw.sweep)
                .unwrap_or_default()
                .into_iter();
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
        points.push(resolve(src, doc, label, &overrides, memory)?);
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
    Ok(points)
}

/// The results of every run must fit in the memory available.
fn check_records(
    src: &Source,
    points: &[Point],
    repetitions: u32,
    memory: Option<u64>,
) -> Result<(), InputError> {
    let runs = (points.len() as u64).saturating_mul(u64::from(repetitions));
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
                repetitions,
                budget::human(need),
                budget::human(avail),
                budget::MEMORY_ENV,
            ),
        ));
    }
    Ok(())
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

#[cfg(test)]
#[path = "experiment_tests.rs"]
mod tests;

/// A note when `app` allocates memory with no home node on a point whose machine has NUMA
/// nodes: its misses then cost the same from every processor, so the machine's local and
/// remote latencies do not apply to it (the Gupta, DiBella and Weibel workloads model the bus
/// machines of their papers).
fn uma_note(p: &crate::plan::point::Point, app: &crate::plan::point::App) -> Option<String> {
    let nodes = p.machine.memory.numa.as_ref().map_or(1, |n| n.nodes);
    let uma = app.workload.memory_bytes() > 0 && !app.workload.places_on_nodes();
    (uma && nodes > 1 && p.machine.memory.enabled).then(|| {
        format!(
            "note: `{}` ({}) places its data on no NUMA node, as its paper's bus machine had \
             it: on `{}`, with {nodes} nodes, its misses cost machine.memory.miss_cycles from \
             every processor and none is remote (sweep's `placement`, george's workloads and \
             rt-app's `mem` place data on nodes)",
            app.name, app.kind.name, p.machine.name
        )
    })
}
