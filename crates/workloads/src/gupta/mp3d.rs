//! MP3D (Gupta, Tucker and Urushibara 1991, section 3.1): a particle-based simulator of rarefied
//! flow. Particles (25,000 in the paper) are divided statically among the processes; the space
//! is an array of cells (64 x 8 x 8 in the paper, 48 bytes each: 192 KB) shared by all.
//!
//! Each time step is a particle-move phase followed by seven barriers. Moving a particle reads
//! and rewrites its record twice (position, then velocity after a collision), reads and updates
//! the cell it lands in (shared: cells bounce between caches) and uses a few private words (the
//! move routine's locals). The paper does not say how much of a cell a move touches; one line
//! (`cell_touch_bytes`) is calibrated on Table 1's misses at twelve processors (2.75 M against
//! the paper's 2.7 M; the whole 48-byte cell gave 3.9 M), which leaves one processor's a
//! prediction. Between the first two barriers each process updates its slice of the
//! cells (the collision bookkeeping); the other phases are short. A process's particles do not
//! fit its 64 KB cache, so they miss on every step, as the paper expects.
//!
//! Particles move by a random walk over neighbouring cells, drawn from each process's own
//! deterministic stream; the cell a particle touches is the one it is in.

use serde::Deserialize;
use smpsched_sim::memory::{AccessKind, Placement};
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{Op, Program, SimError, Simulation, SyncId, SyncKind, TaskId, ThreadCtx};

use rand::Rng;

use super::anl::{AnlBarrier, Pass};
use super::{check_count, check_cpr, wait_policy, Plan};
use crate::{Workload, WorkloadInfo};

/// Cells along each axis of the paper's space array.
const DIMS: [u32; 3] = [64, 8, 8];

/// Parameters of `mp3d`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Mp3d {
    /// Particles.
    pub particles: u64,
    /// Time steps.
    pub steps: u32,
    /// Bytes of a particle record.
    pub particle_bytes: u64,
    /// Bytes of a space cell.
    pub cell_bytes: u64,
    /// Bytes of its cell a particle's move reads and updates (from the cell's start), making as
    /// many references as two passes over the whole cell would.
    pub cell_touch_bytes: u64,
    /// Barriers after each move phase.
    pub barriers: u32,
    /// Particles moved between two looks at the clock (a chunk of records swept together).
    pub chunk: u32,
    /// Processes.
    pub processes: u32,
    /// Spin before blocking at a barrier (absent: busy-wait).
    pub spin_cycles: Option<u64>,
    /// Accepted for uniformity; a barrier has no single process to hand off to.
    pub handoff: bool,
    /// Compute cycles per reference (Table 1: (160 x 0.66 - 35.3) / 38).
    pub compute_per_ref: f64,
    /// How the barriers are built.
    pub barrier: BarrierKind,
}

/// How MP3D's barriers are built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BarrierKind {
    /// The simulator's barrier: a process passes as soon as the last one has arrived.
    #[default]
    Counter,
    /// The ANL macro package's barrier of two locks and a counter ([`AnlBarrier`]): every
    /// process must leave one episode before any enters the next.
    Anl,
}

/// A barrier of either kind.
#[derive(Clone, Debug)]
enum Barrier {
    Counter(SyncId),
    Anl(AnlBarrier),
}

impl Default for Mp3d {
    fn default() -> Self {
        Mp3d {
            particles: 25_000,
            steps: 25,
            particle_bytes: 48,
            cell_bytes: 48,
            cell_touch_bytes: 16,
            barriers: 7,
            chunk: 8,
            processes: 12,
            spin_cycles: None,
            handoff: false,
            compute_per_ref: 1.85,
            barrier: BarrierKind::Counter,
        }
    }
}

impl Mp3d {
    fn cells(&self) -> u64 {
        DIMS.iter().map(|&d| u64::from(d)).product()
    }
}

impl Workload for Mp3d {
    fn threads(&self) -> u64 {
        u64::from(self.processes)
    }

    fn threads_field(&self) -> Option<&'static str> {
        Some("processes")
    }

    fn memory_bytes(&self) -> u64 {
        self.particles * self.particle_bytes
            + self.cells() * self.cell_bytes
            + u64::from(self.processes) * self.particle_bytes
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        let particles = sim
            .memory()
            .alloc(self.particles * self.particle_bytes, Placement::Uma, None)
            .base;
        let cells = sim
            .memory()
            .alloc(self.cells() * self.cell_bytes, Placement::Uma, None)
            .base;
        let policy = wait_policy(self.spin_cycles, false);
        let barrier = match self.barrier {
            BarrierKind::Counter => Barrier::Counter(sim.create_sync(
                SyncKind::Barrier {
                    parties: self.processes,
                    arrived: 0,
                    generation: 0,
                },
                policy,
            )),
            BarrierKind::Anl => Barrier::Anl(AnlBarrier::install(sim, self.processes, policy)),
        };
        let p = u64::from(self.processes);
        for rank in 0..self.processes {
            let r = u64::from(rank);
            let (lo, hi) = (self.particles * r / p, self.particles * (r + 1) / p);
            let private = sim
                .memory()
                .alloc(self.particle_bytes, Placement::Uma, None)
                .base;
            sim.spawn(
                task,
                Box::new(Process {
                    cfg: self.clone(),
                    rank: r,
                    first: lo,
                    cell_of: Vec::new(),
                    count: hi - lo,
                    particles,
                    cells,
                    private,
                    barrier: barrier.clone(),
                    pass: None,
                    step: 0,
                    next: 0,
                    phase: 0,
                    plan: Plan::default(),
                }),
            )?;
        }
        Ok(())
    }
}

/// One MP3D process and the particles it owns.
struct Process {
    cfg: Mp3d,
    rank: u64,
    /// Its first particle.
    first: u64,
    /// The cell each of its particles is in (drawn at its first operation).
    cell_of: Vec<u32>,
    count: u64,
    particles: u64,
    cells: u64,
    private: u64,
    barrier: Barrier,
    /// Where the process is in an ANL barrier's pass, while in one.
    pass: Option<Pass>,
    step: u32,
    /// The next particle to move in this step.
    next: u64,
    /// 0: moving particles; 1..=barriers: the barrier phases.
    phase: u32,
    plan: Plan,
}

impl Process {
    /// A random neighbouring cell of `c` (wrapping at the edges), or `c` itself.
    fn walk(c: u32, rng: &mut impl Rng) -> u32 {
        let mut xyz = [
            c % DIMS[0],
            (c / DIMS[0]) % DIMS[1],
            c / (DIMS[0] * DIMS[1]),
        ];
        let axis = rng.random_range(0..3usize);
        let d = DIMS[axis];
        xyz[axis] = match rng.random_range(0..3u32) {
            0 => (xyz[axis] + d - 1) % d,
            1 => xyz[axis],
            _ => (xyz[axis] + 1) % d,
        };
        xyz[0] + DIMS[0] * (xyz[1] + DIMS[1] * xyz[2])
    }

    /// Plans the move of the next chunk of particles.
    fn move_chunk(&mut self, cx: &mut ThreadCtx<'_>) {
        let c = &self.cfg;
        let n = (self.count - self.next).min(u64::from(c.chunk.max(1)));
        let start = self.particles + (self.first + self.next) * c.particle_bytes;
        let mut refs = self
            .plan
            .sweep(start, n * c.particle_bytes, AccessKind::ReadModifyWrite, 2);
        for i in self.next..self.next + n {
            let cell = &mut self.cell_of[i as usize];
            *cell = Self::walk(*cell, cx.rng);
            let at = self.cells + u64::from(*cell) * c.cell_bytes;
            let passes = (2 * c.cell_bytes).div_ceil(c.cell_touch_bytes);
            refs += self.plan.sweep(
                at,
                c.cell_touch_bytes,
                AccessKind::ReadModifyWrite,
                passes as u32,
            );
        }
        refs += self.plan.sweep(
            self.private,
            c.particle_bytes,
            AccessKind::ReadModifyWrite,
            n as u32,
        );
        self.plan.compute(refs, c.compute_per_ref);
        self.next += n;
    }

    /// Plans the work of barrier phase `phase` (1-based) and the barrier.
    fn barrier_phase(&mut self) {
        let c = &self.cfg;
        if self.phase == 1 {
            // Each process updates its slice of the space cells.
            let cells = c.cells();
            let p = u64::from(c.processes);
            let (lo, hi) = (cells * self.rank / p, cells * (self.rank + 1) / p);
            let refs = self.plan.sweep(
                self.cells + lo * c.cell_bytes,
                (hi - lo) * c.cell_bytes,
                AccessKind::ReadModifyWrite,
                1,
            );
            self.plan.compute(refs, c.compute_per_ref);
        } else {
            self.plan.push(Op::Compute(200));
        }
        match &self.barrier {
            Barrier::Counter(id) => self.plan.push(Op::Wait(*id)),
            Barrier::Anl(_) => self.pass = Some(Pass::Enter),
        }
    }
}

impl Program for Process {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        if self.cell_of.is_empty() && self.count > 0 {
            let cells = self.cfg.cells() as u32;
            self.cell_of = (0..self.count)
                .map(|_| cx.rng.random_range(0..cells))
                .collect();
        }
        loop {
            if let Some(op) = self.plan.pop() {
                return op;
            }
            if let (Some(pass), Barrier::Anl(b)) = (self.pass, &self.barrier) {
                let next = b.step(pass, &mut self.plan);
                self.pass = (next != Pass::Done).then_some(next);
                continue;
            }
            if self.step >= self.cfg.steps {
                return Op::Exit;
            }
            if self.phase == 0 {
                if self.next < self.count {
                    self.move_chunk(cx);
                    continue;
                }
                self.next = 0;
                self.phase = 1;
            }
            if self.phase > self.cfg.barriers {
                self.phase = 0;
                self.step += 1;
                continue;
            }
            self.barrier_phase();
            self.phase += 1;
        }
    }
}

/// Registry entry of `mp3d`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "mp3d",
    summary: "Gupta et al.'s MP3D: particles moved through a shared cell array, 7 barriers a step",
    description: "Particles divided statically among the processes move each time step through \
                  a shared 64 x 8 x 8 array of space cells (each move rewrites the particle's \
                  record and updates its cell), then the processes pass seven barriers, the \
                  first phase updating each process's slice of the cells.",
    paper: "Gupta, Tucker and Urushibara 1991, section 3.1",
    params: crate::gupta_params!(
        "1.85",
        ParamInfo {
            name: "particles",
            default: "25000",
            doc: "particles",
        },
        ParamInfo {
            name: "steps",
            default: "25",
            doc: "time steps (Table 1's 38 M references at 25,000 particles)",
        },
        ParamInfo {
            name: "particle_bytes",
            default: "48",
            doc: "bytes of a particle record",
        },
        ParamInfo {
            name: "cell_bytes",
            default: "48",
            doc: "bytes of a space cell (192 KB of cells)",
        },
        ParamInfo {
            name: "cell_touch_bytes",
            default: "16",
            doc: "bytes of its cell a particle's move reads and updates (one line: calibrated on \
                  Table 1's misses), in as many references as two passes over the cell",
        },
        ParamInfo {
            name: "barriers",
            default: "7",
            doc: "barriers after each move phase",
        },
        ParamInfo {
            name: "barrier",
            default: "counter",
            doc: "how the barriers are built: counter (the simulator's) or anl (the ANL macros' \
                  two locks and a counter: all leave one episode before any enters the next)",
        },
        ParamInfo {
            name: "chunk",
            default: "8",
            doc: "particles swept together",
        },
    ),
    build: |t| {
        let w: Mp3d = toml::Value::Table(t).try_into()?;
        check_count("particles", w.particles, 10_000_000)?;
        check_count("steps", u64::from(w.steps), 1_000_000)?;
        check_count("particle_bytes", w.particle_bytes, 4096)?;
        check_count("cell_bytes", w.cell_bytes, 4096)?;
        check_count("cell_touch_bytes", w.cell_touch_bytes, w.cell_bytes)?;
        check_count("chunk", u64::from(w.chunk), 4096)?;
        check_count("processes", u64::from(w.processes), 4096)?;
        if w.barriers == 0 {
            return Err(serde::de::Error::custom("barriers: must be at least 1"));
        }
        check_cpr(w.compute_per_ref)?;
        Ok(Box::new(w))
    },
};
