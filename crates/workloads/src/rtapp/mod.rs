//! `rt-app`: a load written in rt-app's JSON, the workload format of Linux's scheduler tests,
//! of LISA and of scx_simulator (rt-app's `doc/tutorial.txt`). Each task's `instance` threads
//! start at time 0 (after `delay`) and run their phases' events `loop` times, or until the
//! file's `duration`: `run` and `runtime` compute, `sleep` and `timer` (relative or absolute)
//! leave the processor, `lock`/`unlock` take the file's mutexes, `wait`/`signal`/`broad`/`sync`
//! use condition variables, `barrier` meets the other users, `suspend`/`resume` park and wake
//! a task's threads, `fork` starts a thread of another task, `yield` gives up the processor,
//! `mem` and `iorun` write the thread's buffer through the memory model. `cpus` are affinity
//! masks; `policy` with `priority` or `nice` a base priority (SCHED_FIFO and SCHED_RR above
//! every SCHED_OTHER thread). Each timer wake-up records its latency (`wu_lat_us`), as rt-app
//! logs `wu_lat`. The file is read as rt-app reads it (its `src/rt-app_parse_config.c`): a key
//! is the event whose name begins it, every number an integer; the run lasts the `duration`,
//! as rt-app's main process sleeps it out.

mod checks;
mod code;
mod events;
pub mod json;
mod objects;
pub mod program;
pub mod spec;
mod top;
mod values;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use serde::Deserialize;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{CpuMask, ProcId, SimError, Simulation, TaskId, ThreadAttrs};

use crate::{Workload, WorkloadInfo};
use program::{RtAppThread, Shared};
use spec::{Event, Spec};

/// Largest rt-app file read (1 MiB).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// Parameters of `rt-app`: the file (relative to the experiment file).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RtApp {
    /// The rt-app JSON file.
    pub file: String,
    /// The file read and checked.
    #[serde(skip)]
    spec: Option<Spec>,
}

/// Reads and checks an rt-app document from `text` (`name` is used in messages).
pub fn read(name: &str, text: &str) -> Result<Spec, String> {
    let doc = json::parse(text).map_err(|e| format!("`{name}`: {e}"))?;
    let mut spec = spec::read(&doc).map_err(|e| format!("`{name}`: {e}"))?;
    checks::check_mutexes(&mut spec).map_err(|e| format!("`{name}`: {e}"))?;
    Ok(spec)
}

impl RtApp {
    fn spec(&self) -> &Spec {
        self.spec
            .as_ref()
            .expect("the file is read when the workload is built")
    }

    /// Whether any task writes memory (and so needs buffers).
    pub(crate) fn writes(task: &spec::Task) -> bool {
        task.phases
            .iter()
            .flat_map(|p| &p.events)
            .any(|e| matches!(e, Event::Mem(_) | Event::IoRun(_)))
    }
}

impl Workload for RtApp {
    fn threads(&self) -> u64 {
        self.spec().threads
    }

    fn threads_field(&self) -> Option<&'static str> {
        Some("file")
    }

    fn memory_bytes(&self) -> u64 {
        let s = self.spec();
        s.tasks
            .iter()
            .filter(|t| Self::writes(t))
            .map(|t| t.instances.max(1) * s.mem_buffer)
            .sum()
    }

    fn places_on_nodes(&self) -> bool {
        true
    }

    fn check_machine(&self, processors: u32) -> Result<(), (&'static str, String)> {
        objects::check_cpus(self.spec(), processors)
            .map_err(|e| ("file", format!("`{}`: {e}", self.file)))
    }

    fn notes(&self) -> Vec<String> {
        let file = &self.file;
        self.spec()
            .notes
            .iter()
            .map(|n| format!("note: `{file}`: {n}"))
            .collect()
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        // The figures scx_simulator's users read: per-thread dispatches, runtime, wake-ups.
        sim.measure_threads(task);
        let spec = self.spec();
        self.check_machine(sim.machine().processors)
            .map_err(|(_, e)| SimError::Workload(format!("rt-app {e}")))?;
        let (mutexes, conds, barriers) = objects::sync_objects(sim, spec);
        let buffers = objects::buffers(sim, spec);
        let cycles_per_us = sim.machine().clock_mhz;
        // rt-app's main process sleeps out the duration, whatever its threads do, and then
        // kills those still live (rt-app.c, main: `sleep(opts.duration)`, `__shutdown(true)`):
        // the run lasts the duration and ends there, normally.
        if let Some(d) = spec.duration {
            sim.end_at((d * 1e6 * cycles_per_us).round() as u64);
            sim.last_until_end();
        }
        let cond_numbers: BTreeMap<String, usize> = conds
            .keys()
            .enumerate()
            .map(|(i, c)| (c.clone(), i))
            .collect();
        let names = code::Names {
            mutexes: &mutexes,
            conds: &cond_numbers,
            barriers: &barriers,
        };
        let processors = sim.machine().processors;
        let code = Rc::new(code::compile(spec, cycles_per_us, processors, &names));
        let tasks = &spec.tasks;
        let shared = Rc::new(RefCell::new(Shared {
            started: vec![0; tasks.len()],
            conds: conds.into_values().collect(),
            buffers,
            zero: None,
        }));
        for (k, t) in tasks.iter().enumerate() {
            let attrs = ThreadAttrs {
                mask: t
                    .attrs
                    .cpus
                    .as_ref()
                    .map(|c| CpuMask::of(c.iter().map(|&p| ProcId(p)))),
                base_priority: t.attrs.priority.unwrap_or(0),
            };
            for _ in 0..t.instances {
                let thread = RtAppThread::new(Rc::clone(&shared), Rc::clone(&code), k, true);
                sim.spawn_with(task, Box::new(thread), attrs.clone())?;
            }
        }
        Ok(())
    }
}

/// Registry entry of `rt-app`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "rt-app",
    summary: "a load written in rt-app's JSON (Linux's scheduler tests, LISA, scx_simulator)",
    description: "Reads `file`, an rt-app JSON description (comments and repeated keys as \
                  rt-app accepts them): tasks with instance, loop, delay, cpus, policy and \
                  priority or nice, phases with their loops, and the events run, runtime, sleep, \
                  timer (relative or absolute), lock, unlock, wait, signal, broad, sync, \
                  barrier, suspend, resume, yield, fork, mem and iorun (writes through the \
                  memory model), each key read as the event whose name begins it (run0, \
                  run_first). Numbers are integers, as rt-app reads them: times in whole \
                  microseconds, the duration in whole seconds, which the run lasts; `run` in \
                  calibrated loops when global.calibration is a number of ns per loop. Timer \
                  wake-ups record their latency as `wu_lat_us` (recorded_mean:APP:wu_lat_us); \
                  every wake-up's wake-to-run latency is `wake_lat_us` (recorded_mean, \
                  recorded_p50, recorded_p99), and each thread's dispatches, runtime and \
                  latencies are in the results' per_thread. SCHED_DEADLINE, util_min/max, \
                  nodes_membind and taskgroups are refused by name; a timer is each thread's \
                  own (rt-app's `unique` timers) and counts from the thread's start.",
    paper: "rt-app (Linux scheduler tests, LISA, scx_simulator); not one of the papers",
    params: &[ParamInfo {
        name: "file",
        default: "(required)",
        doc: "the rt-app JSON file, relative to the experiment file",
    }],
    build: |t| {
        let mut w: RtApp = toml::Value::Table(t).try_into()?;
        let text = crate::input::read_text(std::path::Path::new(&w.file), MAX_FILE_BYTES).map_err(
            |e| serde::de::Error::custom(format!("file: cannot read `{}`: {e}", w.file)),
        )?;
        let spec =
            read(&w.file, &text).map_err(|e| serde::de::Error::custom(format!("file: {e}")))?;
        w.spec = Some(spec);
        Ok(Box::new(w))
    },
};

#[cfg(test)]
mod readings_tests;
#[cfg(test)]
mod tests;
