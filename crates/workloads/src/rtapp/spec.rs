//! An rt-app file read into tasks, phases and events, checked: the grammar of rt-app's
//! `doc/tutorial.txt` (global, tasks with instance, loop, delay, cpus, policy and priority or
//! nice, phases with their loops, and the events), with rt-app's units (whole microseconds;
//! `run` in calibrated loops) and its parser's rules (`src/rt-app_parse_config.c`: an event is
//! the key's beginning, a phase needs an event). Every error names the task, the phase and the
//! event.

use std::collections::BTreeMap;
use std::fmt;

use super::events::{event, events};
use super::json::{Json, Value};
use super::values::{cpu, micros, object, shown, string, whole};

/// Most threads an rt-app file may start at once (instances summed over tasks).
pub const MAX_INSTANCES: u64 = 100_000;

/// Longest duration an event may give, in microseconds (about 11.6 days).
pub const MAX_US: f64 = 1e12;

/// Largest `mem` or `iorun` write, in bytes (1 GiB).
pub const MAX_BYTES: f64 = 1_073_741_824.0;

/// An error in an rt-app file: where (task, phase, event, line) and what.
#[derive(Clone, Debug, PartialEq)]
pub struct RtAppError {
    /// The task, when the error is inside one.
    pub task: Option<String>,
    /// The phase, when the error is inside one.
    pub phase: Option<String>,
    /// The event or property at fault.
    pub event: Option<String>,
    /// The line of the value at fault.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for RtAppError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}", self.line)?;
        if let Some(t) = &self.task {
            write!(f, ", task `{t}`")?;
        }
        if let Some(p) = &self.phase {
            write!(f, ", phase `{p}`")?;
        }
        if let Some(e) = &self.event {
            write!(f, ", event `{e}`")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// One event of a phase, in rt-app's units.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// `run`: calibrated loops standing for this many microseconds of work.
    Run(f64),
    /// `runtime`: this many microseconds of work, whatever the calibration.
    Runtime(f64),
    /// `sleep`: this many microseconds off the processor.
    Sleep(f64),
    /// `timer`: wake up `period` microseconds after the timer's last expiry (absolute mode
    /// keeps missed expiries as the reference; relative mode restarts from now).
    Timer {
        /// The timer's name (one timer per name per thread).
        name: String,
        /// Its period in microseconds.
        period: f64,
        /// Absolute mode.
        absolute: bool,
    },
    /// `lock`: take the mutex.
    Lock(String),
    /// `unlock`: release the mutex.
    Unlock(String),
    /// `wait`: wait on a condition, releasing the mutex meanwhile.
    Wait {
        /// The condition.
        cond: String,
        /// The mutex held.
        mutex: String,
    },
    /// `signal`: wake the first waiter of a condition, if any.
    Signal(String),
    /// `broad`: wake every waiter of a condition.
    Broad(String),
    /// `sync`: signal the condition and wait on it, under the mutex.
    Sync {
        /// The condition.
        cond: String,
        /// The mutex.
        mutex: String,
        /// Whether the thread holds the mutex already (a `lock` before it, as rt-app's own
        /// examples write it): then the sync neither takes nor releases it. Set by the checks.
        held: bool,
    },
    /// `barrier`: wait until every user of the barrier has arrived.
    Barrier(String),
    /// `suspend`: wait until another thread resumes this task.
    Suspend(String),
    /// `resume`: wake the suspended threads of a task.
    Resume(String),
    /// `yield`: give up the processor.
    Yield,
    /// `fork`: start a new thread of the named task.
    Fork(String),
    /// `mem`: write this many bytes into the thread's memory buffer.
    Mem(u64),
    /// `iorun`: write this many bytes to the I/O buffer (memory traffic here).
    IoRun(u64),
}

/// Scheduling attributes a task or a phase sets.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attrs {
    /// Processors it may run on (`cpus`).
    pub cpus: Option<Vec<u32>>,
    /// The line of `cpus` in the file (0 without it).
    pub cpus_line: usize,
    /// Base priority for the simulator (larger is more important), from policy and
    /// priority or nice.
    pub priority: Option<i32>,
}

/// The scheduling policies of rt-app's that smpsched gives a class (`policy`,
/// `global.default_policy`).
pub(super) const POLICIES: [&str; 5] = [
    "SCHED_OTHER",
    "SCHED_BATCH",
    "SCHED_IDLE",
    "SCHED_FIFO",
    "SCHED_RR",
];

/// Why SCHED_DEADLINE, a policy rt-app knows, is refused.
pub(super) const NO_DEADLINE: &str =
    "SCHED_DEADLINE has no class in smpsched; use SCHED_OTHER, SCHED_IDLE, SCHED_FIFO or SCHED_RR";

/// A phase: its events, run `loops` times.
#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    /// Its name.
    pub name: String,
    /// Times it runs before the next phase.
    pub loops: u64,
    /// Attributes set when it starts.
    pub attrs: Attrs,
    /// Its events, in order.
    pub events: Vec<Event>,
    /// The line of each event in the file (for the messages of the whole-file checks).
    pub lines: Vec<usize>,
}

/// A task: `instances` threads, each running the phases `loops` times (`None`: until the
/// file's duration ends).
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// Its name.
    pub name: String,
    /// Threads started at time 0 (after `delay`).
    pub instances: u64,
    /// Microseconds before a thread starts.
    pub delay: f64,
    /// Times the phases run; `None` for as long as the file's duration.
    pub loops: Option<u64>,
    /// Attributes set when a thread starts.
    pub attrs: Attrs,
    /// Its phases.
    pub phases: Vec<Phase>,
}

/// A whole rt-app file.
#[derive(Clone, Debug, PartialEq)]
pub struct Spec {
    /// `global.duration` in seconds; `None` (rt-app's -1) for until every thread ends.
    pub duration: Option<f64>,
    /// Nanoseconds per calibration loop (`run` t does floor(t * 1000 / ns) loops), or `None`
    /// for an exact `run`.
    pub ns_per_loop: Option<f64>,
    /// Bytes of each thread's memory buffer (`global.mem_buffer_size`).
    pub mem_buffer: u64,
    /// Its tasks, in file order.
    pub tasks: Vec<Task>,
    /// Parties of each barrier: every thread whose task refers to it.
    pub barriers: BTreeMap<String, u64>,
    /// Threads a run creates: the tasks' instances and the threads their forks make, each
    /// forking thread running its loops to the end (set by the whole-file checks).
    pub threads: u64,
    /// Values read otherwise than written, as rt-app reads them (a CPU number's fraction
    /// dropped), each where it is: told as notes, the runs going on.
    pub notes: Vec<RtAppError>,
}

impl Spec {
    /// Each task's index in file order, by name.
    pub(super) fn task_indices(&self) -> BTreeMap<&str, usize> {
        self.tasks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.as_str(), i))
            .collect()
    }
}

/// Where the reader is, for errors.
#[derive(Clone, Default)]
pub(super) struct At {
    pub(super) task: Option<String>,
    pub(super) phase: Option<String>,
}

impl At {
    pub(super) fn error(&self, event: &str, line: usize, message: impl Into<String>) -> RtAppError {
        RtAppError {
            task: self.task.clone(),
            phase: self.phase.clone(),
            event: (!event.is_empty()).then(|| event.to_string()),
            line,
            message: message.into(),
        }
    }
}

/// Why a phase without an event is refused, as rt-app refuses it (`parse_task_phase_data`:
/// "No events found. Task must have events or it's useless").
const NO_EVENT: &str = "has no event (rt-app refuses a phase without one: \"No events found. \
                        Task must have events or it's useless\")";

/// Reads the `cpus`, `policy`, `priority` and `nice` of an object into attributes. A task
/// (`task_level`) without them takes `policy_default`; a phase without them changes nothing.
/// A CPU number read otherwise than written adds to `notes`.
fn attrs(
    at: &At,
    fields: &[(String, Json)],
    policy_default: &str,
    task_level: bool,
    notes: &mut Vec<RtAppError>,
) -> Result<Attrs, RtAppError> {
    let mut out = Attrs::default();
    let get = |k: &str| fields.iter().find(|(key, _)| key == k).map(|(_, v)| v);
    if let Some(v) = get("cpus") {
        let Value::Array(items) = &v.value else {
            return Err(at.error("cpus", v.line, "must be an array of CPU numbers"));
        };
        let mut cpus = Vec::new();
        for i in items {
            let (c, cut) = cpu(at, i)?;
            if let Some(written) = cut {
                notes.push(at.error(
                    "cpus",
                    i.line,
                    format!(
                        "{} is read as CPU {c}, as rt-app reads it (json-c's integer of a \
                         number with a fraction, toward zero)",
                        shown(written)
                    ),
                ));
            }
            cpus.push(c);
        }
        if cpus.is_empty() {
            return Err(at.error("cpus", v.line, "must name at least one CPU"));
        }
        out.cpus = Some(cpus);
        out.cpus_line = v.line;
    }
    let policy = match get("policy") {
        Some(v) => string(at, "policy", v)?,
        None => policy_default.to_string(),
    };
    let level = match (get("priority"), get("nice")) {
        (Some(v), _) => Some(whole(at, "priority", v, -20.0, 99.0)? as i32),
        (None, Some(v)) => Some(whole(at, "nice", v, -20.0, 19.0)? as i32),
        (None, None) => None,
    };
    let line = get("policy").map_or(0, |v| v.line);
    if !task_level && get("policy").is_none() && level.is_none() {
        return Ok(out);
    }
    out.priority = match policy.as_str() {
        // For SCHED_OTHER the priority is the nice value: lower is more important. SCHED_BATCH
        // is SCHED_OTHER to the simulator (Linux only spares it wake-up preemption).
        "SCHED_OTHER" | "SCHED_BATCH" => level.map(|n| -n),
        "SCHED_IDLE" => Some(-40),
        // Real-time classes run before every SCHED_OTHER thread.
        "SCHED_FIFO" | "SCHED_RR" => Some(100 + level.unwrap_or(10)),
        "SCHED_DEADLINE" => return Err(at.error("policy", line, NO_DEADLINE)),
        other => {
            return Err(at.error(
                "policy",
                line,
                format!("unknown policy `{other}`; valid: {}", POLICIES.join(", ")),
            ))
        }
    };
    Ok(out)
}

/// A `loop` count: a whole number of at least 1, or -1 (forever) where `forever` is allowed.
fn loops(
    at: &At,
    fields: &[(String, Json)],
    default: Option<u64>,
    forever: bool,
) -> Result<Option<u64>, RtAppError> {
    let Some((_, v)) = fields.iter().find(|(k, _)| k == "loop") else {
        return Ok(default);
    };
    let n = whole(at, "loop", v, -1.0, 1e9)?;
    match n as i64 {
        -1 if forever => Ok(None),
        n if n >= 1 => Ok(Some(n as u64)),
        _ => Err(at.error(
            "loop",
            v.line,
            "must be at least 1 (or -1, forever, for a task)",
        )),
    }
}

/// The phases of a task with `phases` (`p`), in file order, each with events (rt-app refuses
/// a phase without: [`NO_EVENT`]); `fields` are the task's, beside `phases`.
fn phases(
    at: &At,
    fields: &[(String, Json)],
    p: &Json,
    policy: &str,
    notes: &mut Vec<RtAppError>,
) -> Result<Vec<Phase>, RtAppError> {
    // A phase's `priority` without a `policy` keeps the thread's policy (rt-app's `same`): the
    // task's, or the last one a phase before it set.
    let mut current = match fields.iter().find(|(k, _)| k == "policy") {
        Some((_, v)) => string(at, "policy", v)?,
        None => policy.to_string(),
    };
    let mut out = Vec::new();
    for (pname, pv) in object(at, "phases", p)? {
        let at = At {
            task: at.task.clone(),
            phase: Some(pname.clone()),
        };
        let pf = object(&at, "", pv)?;
        let (events, lines) = events(&at, pf)?;
        if events.is_empty() {
            return Err(at.error("", pv.line, NO_EVENT));
        }
        if let Some((_, v)) = pf.iter().find(|(k, _)| k == "policy") {
            current = string(&at, "policy", v)?;
        }
        out.push(Phase {
            name: pname.clone(),
            loops: loops(&at, pf, Some(1), false)?.unwrap_or(1),
            attrs: attrs(&at, pf, &current, false, notes)?,
            events,
            lines,
        });
    }
    // Beside `phases` a task takes its own properties only: an event is not rt-app's grammar
    // there, and an unknown or unmodelled key is refused as in a phase.
    for (k, v) in fields {
        if event(at, k, v)?.is_some() {
            return Err(at.error(
                k,
                v.line,
                "events go inside `phases` when a task has phases",
            ));
        }
    }
    Ok(out)
}

fn task(
    name: &str,
    v: &Json,
    policy: &str,
    notes: &mut Vec<RtAppError>,
) -> Result<Task, RtAppError> {
    let at = At {
        task: Some(name.to_string()),
        phase: None,
    };
    let fields = object(&at, "", v)?;
    let get = |k: &str| fields.iter().find(|(key, _)| key == k).map(|(_, v)| v);
    let instances = match get("instance") {
        Some(v) => whole(&at, "instance", v, 0.0, MAX_INSTANCES as f64)? as u64,
        None => 1,
    };
    let delay = get("delay")
        .map(|v| micros(&at, "delay", v))
        .transpose()?
        .unwrap_or(0.0);
    let attrs = attrs(&at, fields, policy, true, notes)?;
    let phases = match get("phases") {
        Some(p) => phases(&at, fields, p, policy, notes)?,
        None => {
            let (events, lines) = events(&at, fields)?;
            vec![Phase {
                name: "phase0".into(),
                loops: 1,
                attrs: Attrs::default(),
                events,
                lines,
            }]
        }
    };
    // A task without `phases` is its own phase, refused without an event as a phase is; so is
    // an empty `phases`.
    if phases.iter().all(|p| p.events.is_empty()) {
        return Err(at.error("", v.line, NO_EVENT));
    }
    Ok(Task {
        name: name.to_string(),
        instances,
        delay,
        loops: loops(&at, fields, None, true)?,
        attrs,
        phases,
    })
}

/// Reads an rt-app document.
pub fn read(doc: &Json) -> Result<Spec, RtAppError> {
    let top = At::default();
    let fields = object(&top, "", doc)?;
    let get = |k: &str| fields.iter().find(|(key, _)| key == k).map(|(_, v)| v);
    super::top::check_keys(&top, fields)?;
    let mut spec = Spec {
        duration: None,
        ns_per_loop: None,
        mem_buffer: 4 << 20,
        tasks: Vec::new(),
        barriers: BTreeMap::new(),
        threads: 0,
        notes: Vec::new(),
    };
    let mut policy = "SCHED_OTHER".to_string();
    if let Some(g) = get("global") {
        super::top::global(&top, g, &mut spec, &mut policy)?;
    }
    let Some(tasks) = get("tasks") else {
        return Err(top.error("tasks", doc.line, "an rt-app file needs a `tasks` object"));
    };
    // A set of the names seen, not a scan of the tasks read: a file of thousands of tasks.
    let mut names = std::collections::BTreeSet::new();
    for (name, v) in object(&top, "tasks", tasks)? {
        if !names.insert(name.as_str()) {
            return Err(top.error("tasks", v.line, format!("two tasks are called `{name}`")));
        }
        spec.tasks.push(task(name, v, &policy, &mut spec.notes)?);
    }
    if spec.tasks.iter().all(|t| t.instances == 0) {
        return Err(top.error(
            "tasks",
            tasks.line,
            "no thread to run: the file has no task, or every task has `instance: 0`",
        ));
    }
    super::checks::check_references(&mut spec, tasks.line)?;
    Ok(spec)
}
