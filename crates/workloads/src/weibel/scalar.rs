//! `weibel-scalar`: Weibel's Tables 1-4 (section 4). A main process spawns `processes`
//! processes, each scalar-multiplying its own part of a data set of `data_bytes` `passes`
//! times, and joins them. With `affinity`, process `i` pins itself to processor `i mod P`
//! ("per-core run-queue with evenly distributed CPU affinity").

use serde::Deserialize;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{ProcId, Program, SimError, Simulation, TaskId};

use super::{
    check_alu, check_bytes, check_range, data, spawn_main, Join, JoinBy, Multiply, Process,
};
use crate::{Workload, WorkloadInfo};

/// Parameters of `weibel-scalar`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scalar {
    /// Processes, each on an equal part of the data.
    #[serde(default = "one")]
    pub processes: u32,
    /// Bytes of data in all (Weibel: the L1's size, 16 KB, or 4 times it).
    pub data_bytes: u64,
    /// Passes each process makes over its part.
    pub passes: u64,
    /// Cycles of register work per element and pass.
    #[serde(default)]
    pub alu: f64,
    /// How the main process joins its children: "block" (the default) or "spin" (busy-waits on
    /// the children's semaphore, its cycles spin time).
    #[serde(default)]
    pub join: JoinBy,
    /// Process `i` pins itself to processor `i mod P`.
    #[serde(default)]
    pub affinity: bool,
}

fn one() -> u32 {
    1
}

impl Scalar {
    /// Why each process's equal part of the data is unusable (under 64 bytes, or not whole
    /// elements), if it is.
    fn part_error(&self) -> Option<String> {
        let part = self.data_bytes / u64::from(self.processes.max(1));
        (part < 64 || part % super::ELEMENT_BYTES != 0).then(|| {
            format!(
                "data_bytes: {} bytes split among {} processes leaves {part} bytes each; use a \
                 multiple of {} bytes of at least 64 per process",
                self.data_bytes,
                self.processes,
                4 * self.processes
            )
        })
    }
}

impl Workload for Scalar {
    fn threads(&self) -> u64 {
        u64::from(self.processes) + 1
    }

    fn threads_field(&self) -> Option<&'static str> {
        Some("processes")
    }

    fn memory_bytes(&self) -> u64 {
        self.data_bytes
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        // Refused at load (`INFO.build`); checked again for a workload built in code.
        if let Some(e) = self.part_error() {
            return Err(SimError::Workload(format!("weibel-scalar: {e}")));
        }
        let part = self.data_bytes / u64::from(self.processes);
        let procs = sim.machine().processors;
        let done = Join::new(sim, self.join);
        let children = (0..self.processes)
            .map(|i| {
                let region = data(sim, part);
                let work = vec![Multiply {
                    region,
                    passes: self.passes,
                    alu: self.alu,
                }];
                let pin = self.affinity.then_some(ProcId(i % procs));
                Box::new(Process::new(work, done.clone(), pin)) as Box<dyn Program>
            })
            .collect();
        spawn_main(sim, task, children, done)
    }
}

/// Registry entry of `weibel-scalar`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "weibel-scalar",
    summary: "processes scalar-multiplying their part of a data set, spawned and joined",
    description: "A main process spawns `processes` processes and joins them; each multiplies \
                  every 32-bit element of its equal part of `data_bytes` (a read-modify-write \
                  and `alu` cycles of register work) `passes` times. With `affinity`, process \
                  i pins itself to processor i mod P. Thread creation and exit are kernel work.",
    paper: "Weibel, section 4, Tables 1-4 (single core 1x and 4x the L1; global queue against \
            per-core queues with affinity)",
    params: &[
        ParamInfo {
            name: "processes",
            default: "1",
            doc: "processes, each on an equal part of the data",
        },
        ParamInfo {
            name: "data_bytes",
            default: "(required)",
            doc: "bytes of data in all",
        },
        ParamInfo {
            name: "passes",
            default: "(required)",
            doc: "passes each process makes over its part",
        },
        super::ALU_PARAM,
        super::JOIN_PARAM,
        ParamInfo {
            name: "affinity",
            default: "false",
            doc: "process i pins itself to processor i mod P",
        },
    ],
    build: |t| {
        let w: Scalar = toml::Value::Table(t).try_into()?;
        check_range("processes", u64::from(w.processes), 1, 4096)?;
        check_bytes("data_bytes", w.data_bytes)?;
        check_range("passes", w.passes, 1, 100_000_000)?;
        check_alu(w.alu)?;
        if let Some(e) = w.part_error() {
            return Err(serde::de::Error::custom(e));
        }
        Ok(Box::new(w))
    },
};
