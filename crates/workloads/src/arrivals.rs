//! Arrivals: an open workload. Jobs arrive over time — Poisson (exponential interarrival
//! times), fixed or uniform intervals, or the arrival times and demands of a trace file — each
//! a thread that computes its service demand and exits. With FCFS scheduling on `c` processors and no dispatch costs it is the M/M/c queue
//! of queueing theory (Erlang C), the yardstick for response-time studies and for the request
//! loads of DiBella et al. 1992 (section 4).

use serde::Deserialize;
use smpsched_sim::config::MAX_THREADS;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{Op, Script, SimError, Simulation, TaskId};

use crate::dist::Dist;
use crate::{Workload, WorkloadInfo};

/// Parameters of `arrivals`: `jobs`, `interarrival` and `service`, or a `trace`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arrivals {
    /// Jobs that arrive in all.
    #[serde(default)]
    pub jobs: Option<u64>,
    /// Time between two arrivals (exponential: a Poisson process).
    #[serde(default)]
    pub interarrival: Option<Dist>,
    /// Each job's processor demand.
    #[serde(default)]
    pub service: Option<Dist>,
    /// A CSV file of jobs, one a row: `arrival_cycles,demand_cycles` (a header row is
    /// allowed; arrivals never decrease). Relative to the experiment file.
    #[serde(default)]
    pub trace: Option<String>,
    /// The trace's jobs, read when the workload is built.
    #[serde(skip)]
    jobs_from_trace: Vec<(u64, u64)>,
    /// Cycle of the first arrival's clock origin (the first job arrives one interarrival
    /// time after it).
    #[serde(default)]
    pub start: u64,
}

impl Arrivals {
    fn validate(&mut self) -> Result<(), String> {
        if let Some(path) = &self.trace {
            if self.jobs.is_some() || self.interarrival.is_some() || self.service.is_some() {
                return Err(
                    "trace: a trace gives the jobs; leave out jobs, interarrival and service"
                        .into(),
                );
            }
            self.jobs_from_trace = read_trace(path).map_err(|e| format!("trace: {e}"))?;
        } else {
            let (Some(jobs), Some(gap), Some(service)) =
                (self.jobs, &self.interarrival, &self.service)
            else {
                return Err("jobs: give jobs, interarrival and service, or a trace".into());
            };
            if jobs == 0 || jobs > MAX_THREADS {
                return Err(format!(
                    "jobs: must be between 1 and {MAX_THREADS}, got {jobs}"
                ));
            }
            gap.validate().map_err(|e| format!("interarrival: {e}"))?;
            service.validate().map_err(|e| format!("service: {e}"))?;
        }
        if self.start > MAX_START {
            return Err(format!(
                "start: must be at most 2^50 cycles, got {}",
                self.start
            ));
        }
        Ok(())
    }
}

/// Largest `start` (2^50 cycles): arrival times stay far from overflow.
const MAX_START: u64 = 1 << 50;

impl Workload for Arrivals {
    fn threads(&self) -> u64 {
        self.jobs.unwrap_or(self.jobs_from_trace.len() as u64)
    }

    fn threads_field(&self) -> Option<&'static str> {
        Some(if self.jobs.is_some() { "jobs" } else { "trace" })
    }

    fn operations(&self) -> Option<u64> {
        Some(self.threads())
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        let job = |demand| Box::new(Script::new([Op::Compute(demand)]));
        if let (Some(jobs), Some(gap), Some(service)) =
            (self.jobs, &self.interarrival, &self.service)
        {
            // Arrival times and demands come from the workload's own stream, drawn up front,
            // so they do not depend on the scheduling.
            let mut rng = sim.workload_rng(task);
            let mut at = self.start;
            for _ in 0..jobs {
                at = at.saturating_add(gap.sample(&mut rng));
                let demand = service.sample(&mut rng);
                sim.spawn_at(at, task, job(demand))?;
            }
        }
        for &(at, demand) in &self.jobs_from_trace {
            sim.spawn_at(self.start.saturating_add(at), task, job(demand))?;
        }
        Ok(())
    }
}

/// Registry entry of `arrivals`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "arrivals",
    summary: "an open workload: jobs arriving over time, each computing its demand",
    description: "`jobs` jobs arrive one after another, separated by times drawn from \
                  `interarrival` (exponential: a Poisson process); each is a thread that \
                  computes a demand drawn from `service` and exits. Per-job measures \
                  (response, waiting, slowdown, percentiles) are reported for it like for \
                  any application. Under FCFS on c processors with no dispatch costs it is \
                  the M/M/c queue (Erlang C).",
    paper: "queueing theory (M/M/c); the request loads of DiBella et al. 1992 section 4",
    params: &[
        ParamInfo {
            name: "jobs",
            default: "(required without trace)",
            doc: "jobs that arrive in all",
        },
        ParamInfo {
            name: "interarrival",
            default: "(required without trace)",
            doc: "time between arrivals: { dist = \"exponential\", mean } (Poisson) | fixed | \
                  uniform",
        },
        ParamInfo {
            name: "service",
            default: "(required without trace)",
            doc: "each job's processor demand, same forms",
        },
        ParamInfo {
            name: "start",
            default: "0",
            doc: "cycle from which arrivals are counted",
        },
        ParamInfo {
            name: "trace",
            default: "none",
            doc: "instead of jobs, interarrival and service: a CSV file of \
                  `arrival_cycles,demand_cycles` rows, relative to the experiment file",
        },
    ],
    build: |t| {
        let mut w: Arrivals = toml::Value::Table(t).try_into()?;
        w.validate().map_err(serde::de::Error::custom)?;
        Ok(Box::new(w))
    },
};

/// Reads a trace of jobs: rows of `arrival_cycles,demand_cycles`, an optional header, arrivals
/// never decreasing, at most `MAX_THREADS` jobs; errors name the row.
fn read_trace(path: &str) -> Result<Vec<(u64, u64)>, String> {
    let text = crate::input::read_bytes(std::path::Path::new(path), crate::input::MAX_TRACE_BYTES)
        .map_err(|e| format!("cannot read `{path}`: {e}"))?;
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_slice());
    let mut jobs: Vec<(u64, u64)> = Vec::new();
    for (i, row) in reader.records().enumerate() {
        let row = row.map_err(|e| format!("`{path}` row {}: {e}", i + 1))?;
        let field = |k: usize| row.get(k).unwrap_or("").parse::<u64>();
        match (field(0), field(1)) {
            (Ok(at), Ok(demand)) => {
                if jobs.last().is_some_and(|&(last, _)| at < last) {
                    return Err(format!(
                        "`{path}` row {}: arrival {at} is before the previous one",
                        i + 1
                    ));
                }
                if at > MAX_START || demand > crate::dist::MAX_CYCLES {
                    return Err(format!("`{path}` row {}: a time is too large", i + 1));
                }
                jobs.push((at, demand));
            }
            // A header row.
            _ if i == 0 => {}
            _ => {
                return Err(format!(
                    "`{path}` row {}: expected `arrival_cycles,demand_cycles` (whole numbers)",
                    i + 1
                ))
            }
        }
        if jobs.len() as u64 > MAX_THREADS {
            return Err(format!("`{path}`: more than {MAX_THREADS} jobs"));
        }
    }
    if jobs.is_empty() {
        return Err(format!("`{path}` holds no job"));
    }
    Ok(jobs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(name: &str, text: &str) -> String {
        let p =
            std::env::temp_dir().join(format!("smpsched-trace-{name}-{}.csv", std::process::id()));
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().to_string()
    }

    fn build(src: &str) -> Result<Box<dyn Workload>, toml::de::Error> {
        (INFO.build)(toml::from_str(src).unwrap())
    }

    #[test]
    fn a_trace_gives_arrival_times_and_demands() {
        let p = trace(
            "ok",
            "arrival_cycles,demand_cycles\n0,1000\n500, 2000\n500,10\n",
        );
        let w = build(&format!("trace = {p:?}")).unwrap();
        assert_eq!(w.threads(), 3);
        let m = smpsched_sim::MachineConfig::tango_12();
        let policy = smpsched_sim::sched::policy("batch").unwrap();
        let mut sim = Simulation::new(m, policy.make(&toml::Table::new()).unwrap(), 1).unwrap();
        let t = sim.add_task("trace");
        w.install(&mut sim, t).unwrap();
        let r = sim.run().unwrap();
        assert_eq!(r.total.useful, 3010);
        assert_eq!(r.apps[0].jobs.jobs, 3);
    }

    #[test]
    fn bad_traces_name_the_row() {
        let p = trace("back", "0,1\n10,1\n5,1\n");
        let e = build(&format!("trace = {p:?}")).err().unwrap().to_string();
        assert!(e.contains("trace") && e.contains("row 3"), "{e}");
        let p = trace("junk", "0,1\nx,y\n");
        let e = build(&format!("trace = {p:?}")).err().unwrap().to_string();
        assert!(e.contains("row 2"), "{e}");
        let e = build("trace = \"/nonexistent/t.csv\"")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("cannot read"), "{e}");
        let p = trace("both", "0,1\n");
        let e = build(&format!("trace = {p:?}\njobs = 3"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("leave out"), "{e}");
        let e = build("jobs = 3").err().unwrap().to_string();
        assert!(e.contains("interarrival"), "{e}");
    }
}
