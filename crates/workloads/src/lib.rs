//! smpsched-workloads: the programs simulated threads run, and the registry of workloads by name.
//!
//! A workload is an application: it installs threads into a [`Simulation`] through the `sim`
//! crate's [`Program`](smpsched_sim::Program) trait only (design.md: `sim` never knows a workload
//! by name). Each workload is one module registered in [`WORKLOADS`] with its name, summary,
//! paper section and parameters, which `smpsched list` shows.

#![forbid(unsafe_code)]

use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{SimError, Simulation, TaskId};

pub mod arrivals;
pub mod control;
pub mod dibella;
pub mod dist;
pub mod gang_server;
pub mod george;
pub mod gupta;
pub mod input;
pub mod locks;
pub mod parallel;
pub mod pingpong;
pub mod psets;
pub mod rpc;
pub mod rtapp;
pub mod shipped;
pub mod sweep;
pub mod synthetic;
pub mod taskqueue;
pub mod weibel;

/// An application ready to be installed into a simulation.
pub trait Workload: Send + Sync {
    /// Threads the workload will create (checked against limits before anything is built).
    fn threads(&self) -> u64;

    /// The field of its `[[workload]]` table that sets [`Workload::threads`], for an error
    /// that refuses too many (`None`: no single field does; the table itself is named).
    fn threads_field(&self) -> Option<&'static str> {
        Some("threads")
    }

    /// Unit operations the workload performs (synchronizations, exchanges, requests), so the lab
    /// can report time per operation; `None` if it has no such unit.
    fn operations(&self) -> Option<u64> {
        None
    }

    /// Bytes of simulated address space the workload allocates (and may touch) in the memory
    /// model, so the lab can estimate the model's memory before a run; 0 if it allocates none.
    fn memory_bytes(&self) -> u64 {
        0
    }

    /// Whether the workload places its data on NUMA nodes (a home node per region, interleaved,
    /// or the allocating processor's node). Those that do not allocate every region with no home
    /// (`Placement::Uma`), as the bus machines of their papers had it: on a NUMA machine their
    /// misses cost the same from every processor, which the lab notes.
    fn places_on_nodes(&self) -> bool {
        false
    }

    /// What the workload needs of the machine and the policy to make progress, checked before
    /// any run so that a run that could never finish is refused with the reason.
    fn needs(&self) -> Needs {
        Needs::default()
    }

    /// Checks the workload against a machine of `processors` processors before any run:
    /// `Err((field, message))` names the field of its `[[workload]]` table at fault (a file's
    /// own line is in the message). For what only the machine shows: an rt-app task pinned to
    /// a CPU the machine lacks.
    fn check_machine(&self, processors: u32) -> Result<(), (&'static str, String)> {
        let _ = processors;
        Ok(())
    }

    /// Notes for the user that do not stop the runs, each a line starting `note: ` that names
    /// where it is: what the workload's input says that it reads otherwise than written (an
    /// rt-app CPU number's fraction, dropped as rt-app drops it).
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// Creates the workload's threads (and any shared state) as task `task` of `sim`.
    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError>;
}

/// What a workload needs to make progress ([`Workload::needs`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// Processors the machine must have at least (0: any).
    pub processors: u32,
    /// Processors the workload moves into processor sets of its own at once; the default set
    /// keeps at least one processor, so the workloads of a point together take fewer than the
    /// machine has.
    pub set_processors: u32,
    /// It asks the kernel for processor sets (Black 1990, section 6): the policy must provide
    /// them.
    pub processor_sets: bool,
}

/// A registered workload: its name, documentation and constructor.
#[derive(Clone, Copy)]
pub struct WorkloadInfo {
    /// Name as written in `[[workload]] kind = "..."`.
    pub name: &'static str,
    /// One-line summary.
    pub summary: &'static str,
    /// What the workload does, a short paragraph.
    pub description: &'static str,
    /// The paper and section it models.
    pub paper: &'static str,
    /// Its parameters.
    pub params: &'static [ParamInfo],
    /// Builds the workload from its parameter table (without the `kind` and `name` keys).
    pub build: fn(toml::Table) -> Result<Box<dyn Workload>, toml::de::Error>,
}

/// Every workload, in the order `smpsched list` shows them.
pub const WORKLOADS: &[WorkloadInfo] = &[
    synthetic::INFO,
    pingpong::INFO,
    rpc::INFO,
    sweep::INFO,
    arrivals::INFO,
    psets::INFO,
    gang_server::INFO,
    taskqueue::INFO,
    locks::INFO,
    parallel::INFO,
    gupta::mp3d::INFO,
    gupta::lu::INFO,
    gupta::maxflow::INFO,
    gupta::matmul::INFO,
    dibella::INFO,
    rtapp::INFO,
    weibel::scalar::INFO,
    weibel::mix::INFO,
    weibel::pool::INFO,
    george::pc::INFO,
    george::sieve::INFO,
];

/// The registered workload of that name.
pub fn workload(name: &str) -> Option<&'static WorkloadInfo> {
    WORKLOADS.iter().find(|w| w.name == name)
}
