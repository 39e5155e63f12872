//! Sweep: threads that walk a memory region with a stride, pass after pass, through the memory
//! model — the smallest load on which cache effects show: a working set that fits the cache or
//! not, sharing (invalidations) against private data, and the reload stall a thread pays when it
//! is rescheduled away from the cache it warmed (Gupta, Tucker & Urushibara 1991, section 3).

use serde::Deserialize;
use smpsched_sim::config::MAX_THREADS;
use smpsched_sim::memory::{AccessKind, BulkAccess, Placement, Region};
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{Op, Program, SimError, Simulation, TaskId, ThreadCtx};

use crate::dist::Dist;
use crate::{Workload, WorkloadInfo};

/// Largest region one sweep may allocate (1 GiB).
pub const MAX_BYTES: u64 = 1 << 30;
/// Most passes one sweeping thread may make.
pub const MAX_PASSES: u32 = 1_000_000_000;
/// Most bytes all of one sweep's regions may take together (64 GiB of address space).
pub const MAX_TOTAL_BYTES: u64 = 1 << 36;

/// What each reference of a pass does, as written in a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepKind {
    /// Loads.
    Read,
    /// Stores.
    Write,
    /// A load then a store to each element.
    Rmw,
}

impl SweepKind {
    fn access(self) -> AccessKind {
        match self {
            SweepKind::Read => AccessKind::Read,
            SweepKind::Write => AccessKind::Write,
            SweepKind::Rmw => AccessKind::ReadModifyWrite,
        }
    }
}

/// Where a sweep's memory lives on a NUMA machine, as written in a file (ignored without NUMA).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SweepPlacement {
    /// No home node: every miss costs `miss_cycles`.
    Uma,
    /// Page by page round robin over the nodes.
    #[default]
    Interleaved,
    /// Thread `i`'s private region on the node of processor `i` (modulo the processor count);
    /// a shared region interleaved.
    Local,
}

/// Parameters of `sweep`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    /// Threads in the application.
    pub threads: u64,
    /// Bytes of the region each pass covers.
    pub bytes: u64,
    /// Bytes between consecutive references.
    #[serde(default = "default_stride")]
    pub stride: u64,
    /// Passes over the region each thread makes.
    #[serde(default = "default_passes")]
    pub passes: u32,
    /// What every reference does (default read); exclusive with `write_fraction`. (Named
    /// `access` because `kind` names the workload in a `[[workload]]` table.)
    #[serde(default)]
    pub access: Option<SweepKind>,
    /// Fraction of passes that write (spread evenly, the rest read); exclusive with `access`.
    #[serde(default)]
    pub write_fraction: Option<f64>,
    /// One region for the whole task (true) or one private region per thread (false).
    #[serde(default)]
    pub shared: bool,
    /// Compute cycles between two passes (none when absent).
    #[serde(default)]
    pub compute: Option<Dist>,
    /// NUMA placement of the regions.
    #[serde(default)]
    pub placement: SweepPlacement,
}

fn default_stride() -> u64 {
    16
}

fn default_passes() -> u32 {
    1
}

impl Sweep {
    fn validate(&self) -> Result<(), String> {
        if self.threads == 0 || self.threads > MAX_THREADS {
            return Err(format!(
                "threads: must be between 1 and {MAX_THREADS}, got {}",
                self.threads
            ));
        }
        if self.bytes == 0 || self.bytes > MAX_BYTES {
            return Err(format!(
                "bytes: must be between 1 and {MAX_BYTES} (1 GiB), got {}",
                self.bytes
            ));
        }
        let regions = if self.shared { 1 } else { self.threads };
        if regions.saturating_mul(self.bytes) > MAX_TOTAL_BYTES {
            return Err(format!(
                "bytes: {} private regions of {} bytes exceed {MAX_TOTAL_BYTES} bytes in all",
                regions, self.bytes
            ));
        }
        if self.stride == 0 || self.stride > self.bytes {
            return Err(format!(
                "stride: must be between 1 and bytes ({}), got {}",
                self.bytes, self.stride
            ));
        }
        if self.passes == 0 || self.passes > MAX_PASSES {
            return Err(format!(
                "passes: must be between 1 and {MAX_PASSES}, got {}",
                self.passes
            ));
        }
        if let Some(f) = self.write_fraction {
            if self.access.is_some() {
                return Err(
                    "write_fraction: give either access or write_fraction, not both".into(),
                );
            }
            if !(0.0..=1.0).contains(&f) {
                return Err(format!("write_fraction: must be between 0 and 1, got {f}"));
            }
        }
        if let Some(c) = &self.compute {
            c.validate().map_err(|e| format!("compute: {e}"))?;
        }
        Ok(())
    }

    /// The kind of pass `i`: `access`, or with `write_fraction` f a write when `floor((i+1)f)`
    /// exceeds `floor(i f)` (f of the passes, spread evenly), else a read.
    fn pass_kind(&self, i: u32) -> AccessKind {
        match self.write_fraction {
            Some(f) => {
                let i = f64::from(i);
                if ((i + 1.0) * f).floor() > (i * f).floor() {
                    AccessKind::Write
                } else {
                    AccessKind::Read
                }
            }
            None => self.access.unwrap_or(SweepKind::Read).access(),
        }
    }
}

impl Workload for Sweep {
    fn threads(&self) -> u64 {
        self.threads
    }

    fn memory_bytes(&self) -> u64 {
        let regions = if self.shared { 1 } else { self.threads };
        regions.saturating_mul(self.bytes)
    }

    fn places_on_nodes(&self) -> bool {
        self.placement != SweepPlacement::Uma
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        let processors = sim.machine().processors;
        let placement = |owner: Option<u64>| match (self.placement, owner) {
            (SweepPlacement::Uma, _) => (Placement::Uma, None),
            (SweepPlacement::Local, Some(i)) => (
                Placement::Local,
                Some(smpsched_sim::ProcId((i % u64::from(processors)) as u32)),
            ),
            _ => (Placement::Interleaved, None),
        };
        let shared = if self.shared {
            let (pl, owner) = placement(None);
            Some(sim.memory().alloc(self.bytes, pl, owner))
        } else {
            None
        };
        // Uniform passes with nothing between them go to the engine as one access.
        let whole = self.write_fraction.is_none() && self.compute.is_none();
        for i in 0..self.threads {
            let region = match shared {
                Some(r) => r,
                None => {
                    let (pl, owner) = placement(Some(i));
                    sim.memory().alloc(self.bytes, pl, owner)
                }
            };
            sim.spawn(
                task,
                Box::new(Sweeper {
                    params: self.clone(),
                    region,
                    pass: 0,
                    compute_next: false,
                    whole,
                }),
            )?;
        }
        Ok(())
    }
}

/// One sweeping thread: `passes` passes over its region, with compute between them.
struct Sweeper {
    params: Sweep,
    region: Region,
    pass: u32,
    compute_next: bool,
    whole: bool,
}

impl Program for Sweeper {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        let p = &self.params;
        if std::mem::take(&mut self.compute_next) {
            if let Some(c) = &p.compute {
                return Op::Compute(c.sample(cx.rng));
            }
        }
        if self.pass >= p.passes {
            return Op::Exit;
        }
        if self.whole {
            self.pass = p.passes;
            return Op::Mem(BulkAccess::over(
                self.region,
                p.stride,
                p.pass_kind(0),
                p.passes,
            ));
        }
        let kind = p.pass_kind(self.pass);
        self.pass += 1;
        self.compute_next = self.pass < p.passes;
        Op::Mem(BulkAccess::over(self.region, p.stride, kind, 1))
    }
}

/// Registry entry of `sweep`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "sweep",
    summary: "threads sweeping a memory region through the cache model",
    description: "Each of `threads` threads makes `passes` strided passes over a region of \
                  `bytes` bytes (one region shared by the task, or a private one per thread), \
                  reading, writing or read-modify-writing it, optionally computing between \
                  passes. Working sets that fit the cache or not, sharing misses and \
                  invalidations, and reload stall after rescheduling all emerge from the memory \
                  model (enable it with a preset such as tango-12 or [machine.memory]).",
    paper: "Gupta, Tucker & Urushibara 1991 section 3 (cache behaviour); no single figure",
    params: &[
        ParamInfo {
            name: "threads",
            default: "(required)",
            doc: "threads in the application",
        },
        ParamInfo {
            name: "bytes",
            default: "(required)",
            doc: "bytes of the region one pass covers (at most 1 GiB)",
        },
        ParamInfo {
            name: "stride",
            default: "16",
            doc: "bytes between consecutive references",
        },
        ParamInfo {
            name: "passes",
            default: "1",
            doc: "passes each thread makes over its region",
        },
        ParamInfo {
            name: "access",
            default: "\"read\"",
            doc: "what each reference does: \"read\", \"write\" or \"rmw\"",
        },
        ParamInfo {
            name: "write_fraction",
            default: "none",
            doc: "fraction of passes that write, spread evenly (instead of access); whole passes, rounded down (0.1 of 8 passes writes none)",
        },
        ParamInfo {
            name: "shared",
            default: "false",
            doc: "one region for all the task's threads (true) or one per thread (false)",
        },
        ParamInfo {
            name: "compute",
            default: "none",
            doc: "compute cycles between passes: a distribution as in synthetic",
        },
        ParamInfo {
            name: "placement",
            default: "\"interleaved\"",
            doc: "NUMA placement: \"uma\", \"interleaved\" or \"local\" (thread i's region on \
                  processor i's node)",
        },
    ],
    build: |t| {
        let w: Sweep = toml::Value::Table(t).try_into()?;
        w.validate().map_err(serde::de::Error::custom)?;
        Ok(Box::new(w))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use smpsched_sim::sched::policy;
    use smpsched_sim::{MachineConfig, RunReport};

    fn build(src: &str) -> Result<Box<dyn Workload>, toml::de::Error> {
        (INFO.build)(toml::from_str(src).unwrap())
    }

    fn run(src: &str, processors: u32) -> RunReport {
        let w = build(src).unwrap();
        let mut m = MachineConfig::tango_12();
        m.processors = processors;
        m.context_switch_cycles = 0;
        let s = policy("round-robin")
            .unwrap()
            .make(&toml::Table::new())
            .unwrap();
        let mut sim = Simulation::new(m, s, 1).unwrap();
        let t = sim.add_task("sweep");
        w.install(&mut sim, t).unwrap();
        let r = sim.run().unwrap();
        r.check_conservation().unwrap();
        r
    }

    #[test]
    fn private_region_that_fits_misses_once_per_line() {
        // 2 threads, 4 KB each (256 lines of 16 bytes), 3 passes, on their own processors.
        let r = run("threads = 2\nbytes = 4096\npasses = 3", 2);
        let a = &r.apps[0];
        assert_eq!(a.refs, 2 * 3 * 256);
        assert_eq!(a.misses, 2 * 256);
        assert_eq!(a.invalidations, 0);
        assert_eq!(a.stall, 2 * 256 * 19);
        assert_eq!(a.time.stall, a.stall);
        assert_eq!(r.memory.misses, a.misses);
    }

    #[test]
    fn shared_writes_invalidate() {
        let r = run(
            "threads = 2\nbytes = 1024\npasses = 4\naccess = \"write\"\nshared = true\n\
             compute = { dist = \"fixed\", value = 100 }",
            2,
        );
        assert!(r.apps[0].invalidations > 0);
        let p = run(
            "threads = 2\nbytes = 1024\npasses = 4\naccess = \"write\"\n\
             compute = { dist = \"fixed\", value = 100 }",
            2,
        );
        assert_eq!(p.apps[0].invalidations, 0);
        assert!(r.apps[0].misses > p.apps[0].misses);
    }

    #[test]
    fn write_fraction_spreads_writes() {
        let w = Sweep {
            threads: 1,
            bytes: 16,
            stride: 16,
            passes: 4,
            access: None,
            write_fraction: Some(0.5),
            shared: false,
            compute: None,
            placement: SweepPlacement::Interleaved,
        };
        let kinds: Vec<AccessKind> = (0..4).map(|i| w.pass_kind(i)).collect();
        assert_eq!(
            kinds,
            [
                AccessKind::Read,
                AccessKind::Write,
                AccessKind::Read,
                AccessKind::Write
            ]
        );
    }

    #[test]
    fn bad_parameters_name_the_field() {
        for (src, field) in [
            ("threads = 0\nbytes = 16", "threads"),
            ("threads = 1\nbytes = 0", "bytes"),
            ("threads = 1\nbytes = 16\nstride = 0", "stride"),
            ("threads = 1\nbytes = 16\npasses = 0", "passes"),
            (
                "threads = 1\nbytes = 16\nwrite_fraction = 1.5",
                "write_fraction",
            ),
            (
                "threads = 1\nbytes = 16\naccess = \"read\"\nwrite_fraction = 0.5",
                "write_fraction",
            ),
            ("threads = 1\nbytes = 16\naccess = \"modify\"", "modify"),
            ("threads = 1\nbytes = 16\nbite = 1", "bite"),
        ] {
            let e = build(src).err().unwrap().to_string();
            assert!(e.contains(field), "{src}: {e}");
        }
    }
}
