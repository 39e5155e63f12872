//! Traces of runs for trace viewers (`smpsched run FILE --trace DIR`): each point's first
//! repetition as a Chrome trace file (JSON), which Perfetto (ui.perfetto.dev) and
//! chrome://tracing open. One track per processor; each stretch a thread held a processor is a
//! slice named by its application (viewers colour slices by name, so a gang's rows stand out),
//! with the thread in its arguments; wake-ups, preemptions, blocks, migrations and waits on
//! synchronization objects are instant events. Times are in microseconds of simulated time.
//!
//! The folder is written whole or not at all, like results, and must be new or empty.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use smpsched_sim::trace::{Mark, Trace};
use smpsched_sim::{MachineConfig, RunReport};

use crate::output::{folder_name, is_absent_or_empty, unusable, Staging};
use crate::{Experiment, LabError, RunRecord};

/// The Chrome trace of one run.
pub fn chrome_trace(trace: &Trace, report: &RunReport, machine: &MachineConfig) -> Value {
    let us = |c: u64| c as f64 / machine.clock_mhz;
    let app = |k: usize| report.apps.get(k).map_or("?", |a| a.name.as_str());
    let mut events = vec![json!({
        "name": "process_name", "ph": "M", "pid": 0, "args": { "name": "processors" }
    })];
    for p in 0..report.processors.len() {
        events.push(json!({
            "name": "thread_name", "ph": "M", "pid": 0, "tid": p,
            "args": { "name": format!("processor {p}") }
        }));
    }
    for s in &trace.stretches {
        events.push(json!({
            "name": app(s.task.index()),
            "cat": "run",
            "ph": "X",
            "pid": 0,
            "tid": s.processor.0,
            "ts": us(s.start),
            "dur": us(s.end - s.start),
            "args": { "thread": s.thread.0, "cycles": s.end - s.start, "start_cycle": s.start },
        }));
    }
    for m in &trace.moments {
        let (name, extra) = match m.mark {
            Mark::Woken => ("woken", json!({})),
            Mark::Preempted => ("preempted", json!({})),
            Mark::Blocked => ("blocked", json!({})),
            Mark::Migrated { from } => ("migrated", json!({ "from": from.0 })),
            Mark::Waits { object } => ("waits", json!({ "object": object })),
        };
        let mut args = json!({ "thread": m.thread.0, "cycle": m.at });
        if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
            a.extend(e.clone());
        }
        let mut ev = json!({
            "name": name, "cat": "mark", "ph": "i", "pid": 0, "ts": us(m.at), "args": args,
        });
        match m.processor {
            Some(p) => ev["tid"] = json!(p.0),
            None => ev["s"] = json!("p"),
        }
        if m.processor.is_some() {
            ev["s"] = json!("t");
        }
        events.push(ev);
    }
    let config = trace.config();
    json!({
        "traceEvents": events,
        "displayTimeUnit": "ms",
        "otherData": {
            "machine": machine.name,
            "clock_mhz": machine.clock_mhz,
            "elapsed_cycles": report.elapsed_cycles,
            "max_events": config.max_events,
            "window_cycles": [config.from, if config.until == u64::MAX { Value::Null } else { json!(config.until) }],
            "truncated_at_cycle": trace.truncated_at,
        }
    })
}

/// The file name of point `label`'s trace.
pub fn file_name(label: &str) -> String {
    format!("{}.trace.json", folder_name(label))
}

/// Checks before a run that `dir` can take the traces: absent or an empty folder.
pub fn check_destination(dir: &Path) -> Result<(), LabError> {
    if !is_absent_or_empty(dir) {
        return Err(unusable(
            dir,
            "--trace",
            "it already holds files: traces go to a new or empty folder",
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

/// Writes the traces of `runs` (their first repetitions) into `dir`, whole.
pub fn write_traces(exp: &Experiment, runs: &[RunRecord], dir: &Path) -> Result<Written, LabError> {
    check_destination(dir)?;
    let parent = match dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let staging = Staging::new(&parent, "--trace", dir)?;
    let mut files = Vec::new();
    let mut truncated = Vec::new();
    for run in runs.iter().filter(|r| r.repetition == 0) {
        let (Some(trace), Some(point)) = (
            run.report.trace.as_ref(),
            exp.points.iter().find(|p| p.label == run.point),
        ) else {
            continue;
        };
        let value = chrome_trace(trace, &run.report, &point.machine);
        let bytes = serde_json::to_vec(&value)
            .map_err(|e| LabError::Internal(format!("trace of {}: {e}", run.point)))?;
        if let Some(at) = trace.truncated_at {
            truncated.push((run.point.clone(), at));
        }
        files.push((file_name(&run.point), bytes));
    }
    staging.write_all(&files)?;
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| unusable(dir, "--trace", "it does not name a folder"))?;
    let written = if dir.exists() {
        staging.replace(dir)?
    } else {
        staging.commit(name)?
    };
    Ok(Written {
        files: files.iter().map(|(n, _)| written.join(n)).collect(),
        truncated,
    })
}
