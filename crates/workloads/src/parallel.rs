//! A parallel application in phases (the kind Black's processor sets were made for, 1990
//! section 6): `threads` workers compute `phase_cycles` each, then meet at a barrier, `phases`
//! times. With `dedicated`, its first worker first asks the kernel for a processor set of
//! `threads` processors (creating the set, assigning processors to it and its task to the set;
//! the processors are the next `threads` that no other application of the run took for a set,
//! from processor 1 up), so the workers run on processors of their own while other applications
//! time-share the rest (the processors go back to the default set when it is done); without,
//! it competes with them. Each phase's time is recorded as
//! `phase_ms` and the phases' total as `run_ms`; a barrier wait may spin (the default, as fine-grained parallel code does) or
//! block.

use serde::Deserialize;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{
    Op, Outcome, ProcId, ProcessorSetCall, Program, Reply, Request, SimError, Simulation, SyncId,
    SyncKind, TaskId, ThreadCtx, WaitPolicy,
};

use crate::{Workload, WorkloadInfo};

/// Parameters of `parallel`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Parallel {
    /// Worker threads.
    pub threads: u32,
    /// Phases (compute, then a barrier).
    pub phases: u32,
    /// Cycles each worker computes per phase.
    pub phase_cycles: u64,
    /// Ask for a processor set of `threads` processors first.
    #[serde(default)]
    pub dedicated: bool,
    /// Cycles a barrier waiter spins before blocking (absent: spin until released).
    #[serde(default)]
    pub spin_cycles: Option<u64>,
}

impl Workload for Parallel {
    fn threads(&self) -> u64 {
        u64::from(self.threads)
    }

    fn operations(&self) -> Option<u64> {
        Some(u64::from(self.phases))
    }

    fn needs(&self) -> crate::Needs {
        if !self.dedicated {
            return crate::Needs::default();
        }
        // Processors 1 to `threads` go into its set; processor 0 stays in the default set.
        crate::Needs {
            processors: self.threads.saturating_add(1),
            set_processors: self.threads,
            processor_sets: true,
        }
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        let policy = match self.spin_cycles {
            Some(c) => WaitPolicy::spin_then_block(c),
            None => WaitPolicy::SPIN,
        };
        let barrier = sim.create_sync(
            SyncKind::Barrier {
                parties: self.threads,
                arrived: 0,
                generation: 0,
            },
            policy,
        );
        let cycles_per_ms = sim.machine().ms(1.0).max(1) as f64;
        let first = if self.dedicated {
            sim.reserve_processors(self.threads)?.0
        } else {
            0
        };
        for rank in 0..self.threads {
            let stage = if self.dedicated && rank == 0 {
                Stage::Setup(0)
            } else {
                Stage::Start
            };
            sim.spawn(
                task,
                Box::new(Worker {
                    rank,
                    w: self.clone(),
                    barrier,
                    stage,
                    first,
                    set: 0,
                    phase: 0,
                    phase_start: 0,
                    started: 0,
                    cycles_per_ms,
                }),
            )?;
        }
        Ok(())
    }
}

/// Where a worker is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    /// The first worker's processor-set requests: the set, then processor k, then the task.
    Setup(u32),
    /// Everyone meets before the first phase.
    Start,
    /// Computing a phase.
    Compute,
    /// Meeting at the barrier after a phase.
    Barrier,
    /// The first worker records the phase's time.
    Record,
    /// The first worker, done, records the whole run's time.
    Done,
    /// The first worker gives processor k back to the default set.
    Release(u32),
}

struct Worker {
    rank: u32,
    w: Parallel,
    barrier: SyncId,
    stage: Stage,
    /// The first of the processors reserved for its set (with `dedicated`).
    first: u32,
    set: u32,
    phase: u32,
    phase_start: u64,
    /// When the first phase began.
    started: u64,
    cycles_per_ms: f64,
}

impl Program for Worker {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        if let Some(Outcome::Kernel(Reply::ProcessorSet(s))) = cx.take_outcome() {
            self.set = s;
        }
        match self.stage {
            Stage::Setup(0) => {
                self.stage = Stage::Setup(1);
                Op::Kernel(Request::ProcessorSet(ProcessorSetCall::Create))
            }
            Stage::Setup(k) if k <= self.w.threads => {
                self.stage = Stage::Setup(k + 1);
                Op::Kernel(Request::ProcessorSet(ProcessorSetCall::AssignProcessor {
                    set: self.set,
                    processor: ProcId(self.first + k - 1),
                }))
            }
            Stage::Setup(_) => {
                self.stage = Stage::Start;
                Op::Kernel(Request::ProcessorSet(ProcessorSetCall::AssignTask {
                    set: self.set,
                }))
            }
            Stage::Start => {
                self.stage = Stage::Compute;
                Op::Wait(self.barrier)
            }
            Stage::Compute => {
                if self.phase == self.w.phases {
                    if self.rank == 0 {
                        self.stage = Stage::Done;
                        let ms = (cx.now - self.started) as f64 / self.cycles_per_ms;
                        return Op::Record {
                            name: "run_ms",
                            value: ms,
                        };
                    }
                    return Op::Exit;
                }
                if self.phase == 0 {
                    self.started = cx.now;
                }
                self.phase_start = cx.now;
                self.stage = Stage::Barrier;
                Op::Compute(self.w.phase_cycles)
            }
            Stage::Barrier => {
                self.phase += 1;
                self.stage = if self.rank == 0 {
                    Stage::Record
                } else {
                    Stage::Compute
                };
                Op::Wait(self.barrier)
            }
            Stage::Done if self.w.dedicated => {
                // Out of the set first (its last processor must not leave with us in it).
                self.stage = Stage::Release(1);
                Op::Kernel(Request::ProcessorSet(ProcessorSetCall::AssignTask {
                    set: 0,
                }))
            }
            Stage::Done => Op::Exit,
            Stage::Release(k) if k <= self.w.threads => {
                self.stage = Stage::Release(k + 1);
                Op::Kernel(Request::ProcessorSet(ProcessorSetCall::AssignProcessor {
                    set: 0,
                    processor: ProcId(self.first + k - 1),
                }))
            }
            Stage::Release(_) => Op::Exit,
            Stage::Record => {
                self.stage = Stage::Compute;
                let ms = (cx.now - self.phase_start) as f64 / self.cycles_per_ms;
                Op::Record {
                    name: "phase_ms",
                    value: ms,
                }
            }
        }
    }
}

/// Registry entry of `parallel`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "parallel",
    summary: "a parallel application in phases meeting at barriers, on dedicated processors or not",
    description: "`threads` workers compute `phase_cycles` and meet at a barrier, `phases` times. \
                  With `dedicated` the first worker first creates a processor set of `threads` \
                  processors (the next `threads` no other application took for a set, from \
                  processor 1 up) and moves its task there (needs `mach`); processor 0 stays in \
                  the default set, so the machine needs at least `threads` + 1 processors. \
                  Barrier waiters spin, or spin `spin_cycles` then block.",
    paper: "Black 1990 section 6 (processor sets for parallel applications)",
    params: &[
        ParamInfo {
            name: "threads",
            default: "(required)",
            doc: "worker threads",
        },
        ParamInfo {
            name: "phases",
            default: "(required)",
            doc: "compute phases",
        },
        ParamInfo {
            name: "phase_cycles",
            default: "(required)",
            doc: "cycles per worker per phase",
        },
        ParamInfo {
            name: "dedicated",
            default: "false",
            doc: "ask for a processor set first",
        },
        ParamInfo {
            name: "spin_cycles",
            default: "spin forever",
            doc: "spin before blocking at a barrier",
        },
    ],
    build: |t| {
        let w: Parallel = toml::Value::Table(t).try_into()?;
        if w.threads == 0 || w.threads > 100_000 {
            return Err(serde::de::Error::custom(format!(
                "threads: must be between 1 and 100000, got {}",
                w.threads
            )));
        }
        if w.phases == 0 || w.phases > 10_000_000 {
            return Err(serde::de::Error::custom(format!(
                "phases: must be between 1 and 1e7, got {}",
                w.phases
            )));
        }
        if w.phase_cycles == 0 || w.phase_cycles > smpsched_sim::config::MAX_COST_CYCLES {
            return Err(serde::de::Error::custom(format!(
                "phase_cycles: must be between 1 and {}, got {}",
                smpsched_sim::config::MAX_COST_CYCLES,
                w.phase_cycles
            )));
        }
        Ok(Box::new(w))
    },
};
