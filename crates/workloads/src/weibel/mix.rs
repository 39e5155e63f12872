//! `weibel-mix`: Weibel's task mixes, Tables 5-9 (section 4): a main process spawns `tasks`
//! tasks of three classes, short, medium and long, each class 10 times the runtime of the
//! previous (`short_passes`, 10x, 100x passes over the task's own `data_bytes`), and joins
//! them. `order = "mixed"` spawns the classes in turn (an even distribution); `"early-exit"`
//! makes every P-th task short and the rest long, so that under per-core placement (new tasks
//! go to the shortest queue in turn) one core's tasks all exit early (Figure 3); `"uniform"`
//! makes every task medium (no imbalance).

use serde::Deserialize;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{Program, SimError, Simulation, TaskId};

use super::{
    check_alu, check_bytes, check_range, check_total, data, spawn_main, Join, JoinBy, Multiply,
    Process,
};
use crate::{Workload, WorkloadInfo};

/// In what order the classes are spawned.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    /// Short, medium, long, short, ...: an even distribution.
    Mixed,
    /// Every P-th task short, the others long (Figure 3).
    EarlyExit,
    /// Every task medium: no imbalance but what placement makes.
    Uniform,
}

/// Parameters of `weibel-mix`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mix {
    /// Tasks in all.
    pub tasks: u32,
    /// Bytes of data of each task.
    pub data_bytes: u64,
    /// Passes of a short task (medium: 10 times, long: 100 times).
    pub short_passes: u64,
    /// Cycles of register work per element and pass.
    #[serde(default)]
    pub alu: f64,
    /// How the main process joins its children: "block" (the default) or "spin" (busy-waits on
    /// the children's semaphore, its cycles spin time).
    #[serde(default)]
    pub join: JoinBy,
    /// The order of the classes.
    #[serde(default = "mixed")]
    pub order: Order,
}

fn mixed() -> Order {
    Order::Mixed
}

impl Mix {
    /// Passes of task `k` on a machine of `processors` processors.
    pub fn passes(&self, k: u32, processors: u32) -> u64 {
        let class = match self.order {
            Order::Mixed => k % 3,
            Order::EarlyExit if k % processors == 0 => 0,
            Order::EarlyExit => 2,
            Order::Uniform => 1,
        };
        self.short_passes * 10u64.pow(class)
    }
}

impl Workload for Mix {
    fn threads(&self) -> u64 {
        u64::from(self.tasks) + 1
    }

    fn threads_field(&self) -> Option<&'static str> {
        Some("tasks")
    }

    fn memory_bytes(&self) -> u64 {
        self.data_bytes * u64::from(self.tasks)
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        let procs = sim.machine().processors;
        let done = Join::new(sim, self.join);
        let children = (0..self.tasks)
            .map(|k| {
                let work = vec![Multiply {
                    region: data(sim, self.data_bytes),
                    passes: self.passes(k, procs),
                    alu: self.alu,
                }];
                Box::new(Process::new(work, done.clone(), None)) as Box<dyn Program>
            })
            .collect();
        spawn_main(sim, task, children, done)
    }
}

/// Registry entry of `weibel-mix`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "weibel-mix",
    summary: "short, medium and long tasks (10x apart) spawned and joined; Figure 3's early exits",
    description: "A main process spawns `tasks` tasks and joins them; each multiplies its own \
                  `data_bytes` of 32-bit elements (read-modify-write plus `alu` cycles each) for \
                  `short_passes`, 10x or 100x passes by class. `order = \"mixed\"` spawns short, \
                  medium and long in turn; `\"early-exit\"` makes every P-th task short and the \
                  rest long, so that one core's tasks all exit early under per-core placement; \
                  `\"uniform\"` makes every task medium.",
    paper: "Weibel, section 4, Tables 5-9 and Figure 3 (task mixes with and without pull \
            migration)",
    params: &[
        ParamInfo {
            name: "tasks",
            default: "(required)",
            doc: "tasks in all",
        },
        ParamInfo {
            name: "data_bytes",
            default: "(required)",
            doc: "bytes of data of each task",
        },
        ParamInfo {
            name: "short_passes",
            default: "(required)",
            doc: "passes of a short task (medium 10x, long 100x)",
        },
        super::ALU_PARAM,
        super::JOIN_PARAM,
        ParamInfo {
            name: "order",
            default: "mixed",
            doc:
                "\"mixed\" (classes in turn), \"early-exit\" (every P-th task short, Figure 3) or \
                  \"uniform\" (all medium)",
        },
    ],
    build: |t| {
        let w: Mix = toml::Value::Table(t).try_into()?;
        check_range("tasks", u64::from(w.tasks), 1, 100_000)?;
        check_bytes("data_bytes", w.data_bytes)?;
        check_range("short_passes", w.short_passes, 1, 1_000_000)?;
        check_alu(w.alu)?;
        check_total("data_bytes", w.data_bytes, u64::from(w.tasks), "tasks")?;
        Ok(Box::new(w))
    },
};
