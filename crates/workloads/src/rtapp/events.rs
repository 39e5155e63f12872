//! An event of a phase read from its key and value, as rt-app's parser reads it
//! (`parse_task_event_data` and `obj_is_event`, rt-app_parse_config.c): the key is the first
//! event whose name begins it, and each event's value has its type (an integer of
//! microseconds or bytes, a name, an object). A key that begins with no event's name and is no
//! property of a task or phase is refused as a misspelling (rt-app passes it over).

use super::json::Json;
use super::spec::{At, Event, RtAppError, MAX_BYTES};
use super::values::{field, micros, object, string, whole};

/// rt-app's events, in the order its parser tests a key against them
/// (`parse_task_event_data`, rt-app_parse_config.c): a key is the first event whose name
/// begins it (`strncmp(name, event, strlen(event))`), whatever follows (`run0`, `run_first`,
/// `timer_a`). `runtime` comes before `run` (rt-app takes a key beginning with `run` as a
/// `runtime` when it begins with `runtime`), `memrun` before `mem` (tested first).
const EVENTS: [&str; 20] = [
    "runtime", "run", "sleep", "memrun", "mem", "iorun", "lock", "unlock", "signal", "broad",
    "wait", "sync", "barrier", "timer", "resume", "suspend", "yield", "fork", "sem_post",
    "sem_wait",
];

/// The event a key names ([`EVENTS`]), if any.
fn event_name(key: &str) -> Option<&'static str> {
    EVENTS.iter().copied().find(|e| key.starts_with(e))
}

/// The properties of a task or a phase that are no event.
const PROPERTIES: [&str; 8] = [
    "loop", "instance", "delay", "phases", "cpus", "priority", "nice", "policy",
];

/// rt-app properties smpsched does not model, refused by name.
const UNSUPPORTED: [&str; 10] = [
    "dl-runtime",
    "dl-period",
    "dl-deadline",
    "util_min",
    "util_max",
    // rt-app's key, and the name this module's guide once gave it.
    "nodes_membind",
    "membind_nodes",
    "taskgroup",
    "period",
    "deadline",
];

/// A `timer` event's object: its `ref`, `period` and `mode`.
fn timer(at: &At, key: &str, v: &Json) -> Result<Event, RtAppError> {
    let f = object(at, key, v)?;
    let mode = match f.iter().find(|(k, _)| k == "mode") {
        None => "relative".to_string(),
        Some((_, m)) => string(at, key, m)?,
    };
    if mode != "relative" && mode != "absolute" {
        return Err(at.error(
            key,
            v.line,
            format!("mode `{mode}`: valid are relative, absolute"),
        ));
    }
    let period = micros(at, key, field(at, key, f, "period", v.line)?)?;
    if period == 0.0 {
        return Err(at.error(key, v.line, "a timer's period must be above 0"));
    }
    Ok(Event::Timer {
        name: string(at, key, field(at, key, f, "ref", v.line)?)?,
        period,
        absolute: mode == "absolute",
    })
}

/// One event from its key and value, the key naming the first event of [`EVENTS`] that begins
/// it; `None` for a property of the task or the phase.
pub(super) fn event(at: &At, key: &str, v: &Json) -> Result<Option<Event>, RtAppError> {
    if PROPERTIES.contains(&key) {
        return Ok(None);
    }
    if UNSUPPORTED.contains(&key) {
        return Err(at.error(key, v.line, "smpsched does not model this rt-app property"));
    }
    let Some(name) = event_name(key) else {
        return Err(at.error(
            key,
            v.line,
            "unknown event: no event's name begins it (run, runtime, sleep, timer, lock, \
             unlock, wait, signal, broad, sync, barrier, suspend, resume, yield, fork, mem, \
             iorun; a name may go on, as in `run0` or `run_first`)",
        ));
    };
    let bytes =
        |v: &Json| -> Result<u64, RtAppError> { Ok(whole(at, key, v, 0.0, MAX_BYTES)? as u64) };
    let pair = |v: &Json| -> Result<(String, String), RtAppError> {
        let f = object(at, key, v)?;
        Ok((
            string(at, key, field(at, key, f, "ref", v.line)?)?,
            string(at, key, field(at, key, f, "mutex", v.line)?)?,
        ))
    };
    Ok(Some(match name {
        "run" => Event::Run(micros(at, key, v)?),
        "runtime" => Event::Runtime(micros(at, key, v)?),
        "sleep" => Event::Sleep(micros(at, key, v)?),
        "timer" => timer(at, key, v)?,
        "lock" => Event::Lock(string(at, key, v)?),
        "unlock" => Event::Unlock(string(at, key, v)?),
        "wait" => {
            let (cond, mutex) = pair(v)?;
            Event::Wait { cond, mutex }
        }
        "sync" => {
            let (cond, mutex) = pair(v)?;
            Event::Sync {
                cond,
                mutex,
                held: false,
            }
        }
        "signal" => Event::Signal(string(at, key, v)?),
        "broad" => Event::Broad(string(at, key, v)?),
        "barrier" => Event::Barrier(string(at, key, v)?),
        // rt-app ignores the string: a thread suspends on its own task's name, which `resume`
        // names (tutorial: "String is ignored").
        "suspend" => {
            string(at, key, v)?;
            Event::Suspend(at.task.clone().unwrap_or_default())
        }
        "resume" => Event::Resume(string(at, key, v)?),
        "yield" => Event::Yield,
        "fork" => Event::Fork(string(at, key, v)?),
        "mem" => Event::Mem(bytes(v)?),
        "iorun" => Event::IoRun(bytes(v)?),
        // The events of rt-app's smpsched does not model, refused by name: `memrun`,
        // `sem_post`, `sem_wait`.
        other => {
            return Err(at.error(
                key,
                v.line,
                format!("rt-app's `{other}` event: smpsched does not model it"),
            ))
        }
    }))
}

/// The events of a phase object (or of a task holding its events directly), and the line of
/// each.
pub(super) fn events(
    at: &At,
    fields: &[(String, Json)],
) -> Result<(Vec<Event>, Vec<usize>), RtAppError> {
    let mut out = (Vec::new(), Vec::new());
    for (k, v) in fields {
        if let Some(e) = event(at, k, v)? {
            out.0.push(e);
            out.1.push(v.line);
        }
    }
    Ok(out)
}
