//! Traces of runs for trace viewers (`smpsched run FILE --trace DIR`): each point's first
//! repetition as a Chrome trace file (JSON), which Perfetto (ui.perfetto.dev) and
//! chrome://tracing open. One track per processor; each stretch a thread held a processor is a
//! slice named by its application (viewers colour slices by name, so a gang's rows stand out),
//! with the thread in its arguments (`thread`, its number in its application as `threads.csv`
//! and `jobs.csv` give it, and `thread_id`, its number in the whole run); wake-ups, preemptions, blocks,
//! migrations and waits on synchronization objects are instant events. Times are microseconds
//! of simulated time on the nanosecond grid; `otherData` says which run the trace is of (the
//! experiment, the point and its values, the seed) and whether it stopped early.
//!
//! The folder is written whole or not at all, like results, and must be new or empty.

use std::path::{Path, PathBuf};

use smpsched_sim::trace::{Mark, Trace};
use smpsched_sim::{MachineConfig, RunReport};

use crate::exec::runner::RunRecord;
use crate::input::error::LabError;
use crate::spec::experiment::Experiment;
use crate::store::output::{folder_name, is_absent_or_empty, plain_name, unusable, Staging};

/// Bytes a run holds per recorded trace event (a stretch or a moment, with the vector's slack)
/// until the traces are written.
pub const RECORD_BYTES: u64 = 2 * std::mem::size_of::<smpsched_sim::trace::Stretch>() as u64;

/// Bytes of text per trace event while one trace is written (about 130 measured; a migration
/// or a wait a little more).
pub const TEXT_BYTES: u64 = 256;

/// Most events a trace may keep (`--trace-events`).
pub const MAX_EVENTS: usize = 20_000_000;

/// Memory the traces of `points` points with at most `events` events each take: every run's
/// record until the end, and one trace's text at a time.
pub fn trace_bytes(points: usize, events: usize) -> u64 {
    let events = events as u64;
    (points as u64)
        .saturating_mul(events)
        .saturating_mul(RECORD_BYTES)
        .saturating_add(events.saturating_mul(TEXT_BYTES))
}

/// Refuses traces that would not fit in `available` bytes beside the runs, naming
/// `--trace-events` and how many would fit.
pub fn check_budget(points: usize, events: usize, available: Option<u64>) -> Result<(), LabError> {
    let need = trace_bytes(points, events);
    let Some(avail) = available else {
        return Ok(());
    };
    if need <= avail / 2 {
        return Ok(());
    }
    let per = (points as u64).saturating_mul(RECORD_BYTES) + TEXT_BYTES;
    let fit = (avail / 2) / per.max(1);
    Err(LabError::Input(Box::new(crate::input::error::InputError {
        file: PathBuf::from("smpsched run"),
        line: None,
        field: "--trace-events".into(),
        message: format!(
            "traces of {points} points with up to {events} events each would need about {}, \
             more than half the {} available (set {} to state the memory smpsched may use); \
             at most {fit} events per trace fit",
            crate::input::budget::human(need),
            crate::input::budget::human(avail),
            crate::input::budget::MEMORY_ENV
        ),
    })))
}

/// A JSON number or string as serde_json writes it (floats in their shortest form).
fn js<T: serde::Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "null".into())
}

/// The track (Chrome trace `pid`) every processor's row belongs to: 1, since viewers treat
/// process 0 specially (Perfetto's importer and UI do).
const PID: u32 = 1;

/// Cycle `c` on the nanosecond grid (`clock_mhz` cycles a microsecond): every time written is a
/// whole number of nanoseconds, so that slices that meet in cycles meet in the viewer too
/// (Perfetto rounds each `ts` and `dur` to nanoseconds; times that are not on the grid made
/// back-to-back slices overlap by one, and it drops a slice that overlaps the one before).
fn ns(c: u64, clock_mhz: f64) -> u64 {
    (c as f64 * 1000.0 / clock_mhz).round() as u64
}

/// `ns` nanoseconds as microseconds in exact decimal text (`1274.049`, `12`).
fn us_text(ns: u64) -> String {
    let (whole, frac) = (ns / 1000, ns % 1000);
    if frac == 0 {
        whole.to_string()
    } else {
        format!("{whole}.{frac:03}")
            .trim_end_matches('0')
            .to_string()
    }
}

/// Which run a trace is of, written into its `otherData` (the file's name alone may not say:
/// a long or colliding point name is hashed).
pub struct About<'a> {
    /// The experiment's name.
    pub experiment: &'a str,
    /// The point's label.
    pub point: &'a str,
    /// The values the point sets, as (dotted path, value).
    pub params: &'a [(String, crate::input::param_value::ParamValue)],
    /// The run's seed.
    pub seed: u64,
    /// Why the run stopped before every thread exited, if it did.
    pub stopped: Option<String>,
}

/// The Chrome trace of one run, as JSON text, written event by event (a trace of a million
/// events holds its text, not a tree of values).
pub fn chrome_trace(
    trace: &Trace,
    report: &RunReport,
    machine: &MachineConfig,
    about: &About<'_>,
) -> String {
    use std::fmt::Write as _;
    let at = |c: u64| ns(c, machine.clock_mhz);
    let names: Vec<String> = report.apps.iter().map(|a| js(a.name.as_str())).collect();
    let app = |k: usize| names.get(k).map_or("\"?\"", String::as_str);
    let rank = |t: usize| {
        trace
            .ranks
            .get(t)
            .map_or("null".to_string(), u32::to_string)
    };
    let mut out = String::with_capacity(
        128 * (trace.stretches.len() + trace.moments.len() + report.processors.len() + 4),
    );
    let _ = write!(
        out,
        "{{\"traceEvents\":[{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{PID},\
         \"args\":{{\"name\":\"processors\"}}}}"
    );
    for p in 0..report.processors.len() {
        let _ = write!(
            out,
            ",{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{PID},\"tid\":{p},\
             \"args\":{{\"name\":\"processor {p}\"}}}}"
        );
    }
    for s in &trace.stretches {
        let (start, end) = (at(s.start), at(s.end));
        let _ = write!(
            out,
            ",{{\"name\":{},\"cat\":\"run\",\"ph\":\"X\",\"pid\":{PID},\"tid\":{},\"ts\":{},\
             \"dur\":{},\"args\":{{\"thread\":{},\"thread_id\":{},\"cycles\":{},\"start_cycle\":{}}}}}",
            app(s.task.index()),
            s.processor.0,
            us_text(start),
            us_text(end - start),
            rank(s.thread.index()),
            s.thread.0,
            s.end - s.start,
            s.start
        );
    }
    write_moments(&mut out, trace, &at, &rank);
    let config = trace.config();
    let until = if config.until == u64::MAX {
        "null".to_string()
    } else {
        config.until.to_string()
    };
    let params: serde_json::Map<String, serde_json::Value> = about
        .params
        .iter()
        .map(|(k, v)| (k.clone(), serde_json::to_value(v).unwrap_or_default()))
        .collect();
    let _ = write!(
        out,
        "],\"displayTimeUnit\":\"ms\",\"otherData\":{{\"experiment\":{},\"point\":{},\
         \"params\":{},\"seed\":{},\"machine\":{},\"clock_mhz\":{},\"elapsed_cycles\":{},\
         \"stopped\":{},\"max_events\":{},\"window_cycles\":[{},{until}],\
         \"truncated_at_cycle\":{}}}}}",
        js(about.experiment),
        js(about.point),
        js(&params),
        about.seed,
        js(machine.name.as_str()),
        js(&machine.clock_mhz),
        report.elapsed_cycles,
        js(&about.stopped),
        config.max_events,
        config.from,
        js(&trace.truncated_at)
    );
    out
}

/// The trace's moments as instant events, then, for a trace the event budget stopped, a
/// global instant at the stop.
fn write_moments(
    out: &mut String,
    trace: &Trace,
    at: &dyn Fn(u64) -> u64,
    rank: &dyn Fn(usize) -> String,
) {
    use std::fmt::Write as _;
    for m in &trace.moments {
        let (name, extra) = match m.mark {
            Mark::Woken => ("woken", String::new()),
            Mark::Preempted => ("preempted", String::new()),
            Mark::Blocked => ("blocked", String::new()),
            Mark::Migrated { from } => ("migrated", format!(",\"from\":{}", from.0)),
            Mark::Waits { object } => ("waits", format!(",\"object\":{object}")),
        };
        // A moment on a processor is a thread-scoped instant on its track; one off every
        // processor (a wake-up) is process-scoped.
        let place = match m.processor {
            Some(p) => format!("\"tid\":{},\"s\":\"t\"", p.0),
            None => "\"s\":\"p\"".to_string(),
        };
        let _ = write!(
            out,
            ",{{\"name\":\"{name}\",\"cat\":\"mark\",\"ph\":\"i\",\"pid\":{PID},\"ts\":{},\
             {place},\"args\":{{\"thread\":{},\"thread_id\":{},\"cycle\":{}{extra}}}}}",
            us_text(at(m.at)),
            rank(m.thread.index()),
            m.thread.0,
            m.at
        );
    }
    if let Some(c) = trace.truncated_at {
        let _ = write!(
            out,
            ",{{\"name\":\"trace stopped (--trace-events)\",\"cat\":\"mark\",\"ph\":\"i\",\
             \"pid\":{PID},\"ts\":{},\"s\":\"g\",\"args\":{{\"cycle\":{c},\"max_events\":{}}}}}",
            us_text(at(c)),
            trace.config().max_events
        );
    }
}

/// The file name of point `label`'s trace: its plain name, or, when another point's trace
/// already took that name (`taken`), a name of its own.
pub fn file_name(label: &str, taken: &[String]) -> String {
    let plain = format!("{}.trace.json", plain_name(label));
    if taken.contains(&plain) {
        format!("{}.trace.json", folder_name(label))
    } else {
        plain
    }
}

/// Checks before a run that `dir` can take the traces: absent or an empty folder.
pub fn check_destination(dir: &Path) -> Result<(), LabError> {
    crate::store::outdir::check_place(dir, "--trace")?;
    if dir.exists() && !dir.is_dir() {
        return Err(unusable(dir, "--trace", "it exists and is not a folder"));
    }
    if !is_absent_or_empty(dir) {
        return Err(unusable(
            dir,
            "--trace",
            "it already holds files: traces go to a new or empty folder",
        ));
    }
    Ok(())
}

/// Refuses a trace folder that is the results folder `out`, before anything runs (the traces
/// would find it holding the results, after the runs).
pub fn check_apart(dir: &Path, out: &Path) -> Result<(), LabError> {
    use crate::store::outdir::resolved;
    if resolved(dir) == resolved(out) {
        return Err(unusable(
            dir,
            "--trace",
            "it is the --out folder: traces go to a folder of their own (a new one inside it, \
             e.g. --trace OUT/traces, will do)",
        ));
    }
    Ok(())
}

/// What [`write_traces`] wrote.
pub struct Written {
    /// The trace files.
    pub files: Vec<PathBuf>,
    /// Each truncated trace's point and the cycle it stopped at.
    pub truncated: Vec<(String, u64)>,
}

/// Checks before a run that `dir` can take the traces and makes the hidden folder beside it
/// that they are written into (and the folders above it), so that an unusable place (under a
/// file, where nothing may be written) is found before anything runs.
pub fn prepare(dir: &Path) -> Result<Staging, LabError> {
    check_destination(dir)?;
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Staging::new(&parent, "--trace", dir)
}

/// Writes the traces of `runs` (their first repetitions) into `dir`, whole, through `staging`
/// (from [`prepare`]).
pub fn write_traces(
    exp: &Experiment,
    runs: &[RunRecord],
    dir: &Path,
    staging: Staging,
) -> Result<Written, LabError> {
    check_destination(dir)?;
    let mut files = Vec::new();
    let mut truncated = Vec::new();
    for run in runs.iter().filter(|r| r.repetition == 0) {
        let (Some(trace), Some(point)) = (
            run.report.trace.as_ref(),
            exp.points.iter().find(|p| p.label == run.point),
        ) else {
            continue;
        };
        // One trace's text at a time is held: written into the staging folder at once.
        let about = About {
            experiment: &exp.name,
            point: &run.point,
            params: &run.params,
            seed: run.seed,
            stopped: run.stopped.as_ref().map(|s| s.describe()),
        };
        let bytes = chrome_trace(trace, &run.report, &point.machine, &about).into_bytes();
        if let Some(at) = trace.truncated_at {
            truncated.push((run.point.clone(), at));
        }
        let name = file_name(&run.point, &files);
        staging.write_all(&[(name.clone(), bytes)])?;
        files.push(name);
    }
    // Absent or empty at the rename, or the traces are kept beside it and the error says where.
    let written = staging.rename_into(dir, "--trace")?;
    Ok(Written {
        files: files.iter().map(|n| written.join(n)).collect(),
        truncated,
    })
}
