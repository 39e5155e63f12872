//! Arrivals: an open workload. Jobs arrive over time — Poisson (exponential interarrival
//! times), fixed or uniform intervals — each a thread that computes its service demand and
//! exits. With FCFS scheduling on `c` processors and no dispatch costs it is the M/M/c queue
//! of queueing theory (Erlang C), the yardstick for response-time studies and for the request
//! loads of DiBella et al. 1992 (section 4).

use serde::Deserialize;
use smpsched_sim::config::MAX_THREADS;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{Op, Script, SimError, Simulation, TaskId};

use crate::dist::Dist;
use crate::{Workload, WorkloadInfo};

/// Parameters of `arrivals`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Arrivals {
    /// Jobs that arrive in all.
    pub jobs: u64,
    /// Time between two arrivals (exponential: a Poisson process).
    pub interarrival: Dist,
    /// Each job's processor demand.
    pub service: Dist,
    /// Cycle of the first arrival's clock origin (the first job arrives one interarrival
    /// time after it).
    #[serde(default)]
    pub start: u64,
}

impl Arrivals {
    fn validate(&self) -> Result<(), String> {
        if self.jobs == 0 || self.jobs > MAX_THREADS {
            return Err(format!(
                "jobs: must be between 1 and {MAX_THREADS}, got {}",
                self.jobs
            ));
        }
        self.interarrival
            .validate()
            .map_err(|e| format!("interarrival: {e}"))?;
        self.service
            .validate()
            .map_err(|e| format!("service: {e}"))?;
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
        self.jobs
    }

    fn operations(&self) -> Option<u64> {
        Some(self.jobs)
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        // Arrival times and demands come from the workload's own stream, drawn up front, so
        // they do not depend on the scheduling.
        let mut rng = sim.workload_rng(task);
        let mut at = self.start;
        for _ in 0..self.jobs {
            at = at.saturating_add(self.interarrival.sample(&mut rng));
            let demand = self.service.sample(&mut rng);
            sim.spawn_at(at, task, Box::new(Script::new([Op::Compute(demand)])))?;
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
            default: "(required)",
            doc: "jobs that arrive in all",
        },
        ParamInfo {
            name: "interarrival",
            default: "(required)",
            doc: "time between arrivals: { dist = \"exponential\", mean } (Poisson) | fixed | \
                  uniform",
        },
        ParamInfo {
            name: "service",
            default: "(required)",
            doc: "each job's processor demand, same forms",
        },
        ParamInfo {
            name: "start",
            default: "0",
            doc: "cycle from which arrivals are counted",
        },
    ],
    build: |t| {
        let w: Arrivals = toml::Value::Table(t).try_into()?;
        w.validate().map_err(serde::de::Error::custom)?;
        Ok(Box::new(w))
    },
};
