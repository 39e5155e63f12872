//! Threads contending for locks, for studying how lock waiters should wait (Gupta, Tucker and
//! Urushibara 1991, section 4: busy-waiting against blocking, and spinning a while before
//! blocking): each of `threads` threads works `outside` cycles, takes one of `locks` locks
//! (drawn at random for each critical section), holds it `hold` cycles and lets it go,
//! `sections` times. A waiter spins, blocks at once, or spins `spin_cycles` and then blocks.
//!
//! Each acquisition's wait, from asking for the lock to holding it (the acquisition's own
//! memory traffic included), is recorded in microseconds as `lock_wait_us` (a measure `recorded_mean:APP:lock_wait_us`); the lab's `lock_waits`,
//! `lock_spin_grants` and `lock_blocks_per_slice` say how the waits were settled. With the
//! memory model on, each lock's word lives on node 0 (on a NUMA machine, local to processor 0's
//! node and remote to the others), so a contended lock's line moves between caches as a real
//! one does.

use serde::Deserialize;
use smpsched_sim::memory::Placement;
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{
    Op, Program, SimError, Simulation, SyncId, SyncKind, TaskId, ThreadCtx, WaitPolicy,
};

use crate::dist::Dist;
use crate::{Workload, WorkloadInfo};

/// Parameters of `locks`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Locks {
    /// Threads contending.
    pub threads: u32,
    /// Critical sections each thread runs.
    pub sections: u64,
    /// Cycles a critical section holds its lock.
    pub hold: Dist,
    /// Cycles of work between two critical sections (none: back to back).
    #[serde(default)]
    pub outside: Option<Dist>,
    /// Locks the sections are spread over, each section's drawn at random.
    #[serde(default = "one")]
    pub locks: u32,
    /// How a waiter waits: absent, it spins until the lock is free; 0, it blocks at once; N,
    /// it spins N cycles, then blocks.
    #[serde(default)]
    pub spin_cycles: Option<u64>,
}

fn one() -> u32 {
    1
}

impl Workload for Locks {
    fn threads(&self) -> u64 {
        u64::from(self.threads)
    }

    fn operations(&self) -> Option<u64> {
        Some(u64::from(self.threads).saturating_mul(self.sections))
    }

    fn memory_bytes(&self) -> u64 {
        // A line of its own for each lock's word (at most 256 bytes a line).
        u64::from(self.locks) * 256
    }

    fn places_on_nodes(&self) -> bool {
        true
    }

    fn install(&self, sim: &mut Simulation, task: TaskId) -> Result<(), SimError> {
        let policy = match self.spin_cycles {
            None => WaitPolicy::SPIN,
            Some(0) => WaitPolicy::BLOCK,
            Some(c) => WaitPolicy::spin_then_block(c),
        };
        let lines = sim.machine().memory.enabled;
        let locks: Vec<SyncId> = (0..self.locks)
            .map(|_| {
                let kind = SyncKind::Lock { holder: None };
                if lines {
                    let bytes = sim.memory().line_bytes();
                    let word = sim.memory().alloc(bytes, Placement::Node(0), None).base;
                    sim.create_sync_at(kind, policy, Some(word))
                } else {
                    sim.create_sync(kind, policy)
                }
            })
            .collect();
        let us_per_cycle = 1.0 / sim.machine().clock_mhz;
        for _ in 0..self.threads {
            sim.spawn(
                task,
                Box::new(Contender {
                    w: self.clone(),
                    locks: locks.clone(),
                    left: self.sections,
                    step: Step::Outside,
                    asked: 0,
                    held: None,
                    us_per_cycle,
                }),
            )?;
        }
        Ok(())
    }
}

/// Where a contender is in its loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    /// Working outside, then asking for a lock.
    Outside,
    /// Asking for a lock.
    Ask,
    /// Just got the lock: record the wait.
    Got,
    /// Holding the lock for the critical section.
    Hold,
    /// Letting it go.
    Release,
}

struct Contender {
    w: Locks,
    locks: Vec<SyncId>,
    left: u64,
    step: Step,
    /// When the lock was asked for.
    asked: u64,
    /// The lock of the section under way.
    held: Option<SyncId>,
    us_per_cycle: f64,
}

impl Program for Contender {
    fn next(&mut self, cx: &mut ThreadCtx<'_>) -> Op {
        loop {
            match self.step {
                Step::Outside => {
                    if self.left == 0 {
                        return Op::Exit;
                    }
                    self.step = Step::Ask;
                    if let Some(d) = self.w.outside {
                        let c = d.sample(cx.rng);
                        if c > 0 {
                            return Op::Compute(c);
                        }
                    }
                }
                Step::Ask => {
                    let i = if self.locks.len() > 1 {
                        rand::Rng::random_range(cx.rng, 0..self.locks.len())
                    } else {
                        0
                    };
                    let lock = self.locks[i];
                    self.held = Some(lock);
                    self.asked = cx.now;
                    self.step = Step::Got;
                    return Op::Wait(lock);
                }
                Step::Got => {
                    self.step = Step::Hold;
                    return Op::Record {
                        name: "lock_wait_us",
                        value: (cx.now - self.asked) as f64 * self.us_per_cycle,
                    };
                }
                Step::Hold => {
                    self.step = Step::Release;
                    let c = self.w.hold.sample(cx.rng);
                    if c > 0 {
                        return Op::Compute(c);
                    }
                }
                Step::Release => {
                    self.left -= 1;
                    self.step = Step::Outside;
                    if let Some(lock) = self.held.take() {
                        return Op::Signal(lock);
                    }
                }
            }
        }
    }
}

/// Registry entry of `locks`.
pub const INFO: WorkloadInfo = WorkloadInfo {
    name: "locks",
    summary: "threads contending for locks held a set time, waiters spinning, blocking or both",
    description: "Each of `threads` threads runs `sections` critical sections: it works \
                  `outside` cycles, takes one of `locks` locks (drawn at random each time), \
                  holds it `hold` cycles and lets it go. A waiter spins until the lock is free \
                  (no `spin_cycles`), blocks at once (`spin_cycles = 0`) or spins `spin_cycles` \
                  and then blocks. Each acquisition's wait (asking to holding, its own memory \
                  traffic included) is recorded as `lock_wait_us`; \
                  `lock_waits`, `lock_spin_grants` and `lock_blocks_per_slice` say how waits \
                  were settled. With the memory model on, each lock's word lives on node 0.",
    paper: "Gupta et al. 1991 section 4 (busy-waiting against blocking locks); no paper's \
            application",
    params: &[
        ParamInfo {
            name: "threads",
            default: "(required)",
            doc: "threads contending",
        },
        ParamInfo {
            name: "sections",
            default: "(required)",
            doc: "critical sections per thread",
        },
        ParamInfo {
            name: "hold",
            default: "(required)",
            doc: "cycles a section holds its lock (a distribution)",
        },
        ParamInfo {
            name: "outside",
            default: "none",
            doc: "cycles of work between sections (a distribution)",
        },
        ParamInfo {
            name: "locks",
            default: "1",
            doc: "locks the sections are spread over, 1 to 65536",
        },
        ParamInfo {
            name: "spin_cycles",
            default: "none (spin until free)",
            doc: "cycles a waiter spins before blocking; 0 blocks at once",
        },
    ],
    build: |t| {
        let w: Locks = toml::Value::Table(t).try_into()?;
        let err = |m: String| Err(serde::de::Error::custom(m));
        if !(1..=100_000).contains(&w.threads) {
            return err(format!(
                "threads: must be between 1 and 100000, got {}",
                w.threads
            ));
        }
        if !(1..=1_000_000_000).contains(&w.sections) {
            return err(format!(
                "sections: must be between 1 and 1e9, got {}",
                w.sections
            ));
        }
        if !(1..=65_536).contains(&w.locks) {
            return err(format!(
                "locks: must be between 1 and 65536, got {}",
                w.locks
            ));
        }
        if let Some(c) = w.spin_cycles.filter(|&c| c > crate::dist::MAX_CYCLES) {
            return err(format!(
                "spin_cycles: {c} exceeds {} cycles",
                crate::dist::MAX_CYCLES
            ));
        }
        for (field, d) in [("hold", Some(w.hold)), ("outside", w.outside)] {
            if let Some(Err(e)) = d.map(|d| d.validate()) {
                return err(format!("{field}: {e}"));
            }
        }
        Ok(Box::new(w))
    },
};

#[cfg(test)]
mod tests {
    use smpsched_sim::sched::policy;
    use smpsched_sim::{MachineConfig, RunReport, Simulation};

    fn run(params: &str, processors: u32) -> RunReport {
        let w = (super::INFO.build)(toml::from_str(params).unwrap()).unwrap();
        let sched = policy("round-robin")
            .unwrap()
            .make(&toml::Table::new())
            .unwrap();
        let mut m = MachineConfig::tango_12();
        m.processors = processors;
        let mut sim = Simulation::new(m, sched, 1).unwrap();
        let task = sim.add_task("locks");
        w.install(&mut sim, task).unwrap();
        let r = sim.run().unwrap();
        r.check_conservation().unwrap();
        r
    }

    const HOLD: &str = "sections = 50\nhold = { dist = \"fixed\", value = 2000 }\n\
                        outside = { dist = \"fixed\", value = 1000 }\n";

    #[test]
    fn a_thread_alone_never_waits() {
        let r = run(&format!("threads = 1\n{HOLD}"), 2);
        let w = r.apps[0].recorded["lock_wait_us"];
        assert_eq!(w.count, 50);
        // The acquisition's own cost (its atomic through the memory model), no more: at 25 MHz
        // a miss and an atomic take about a microsecond.
        assert!(w.max < 2.0, "{w:?}");
        assert_eq!(r.locks.contended, 0);
    }

    #[test]
    fn waiters_spin_block_or_spin_then_block_as_asked() {
        // Four threads on two processors, each section holding its lock twice as long as the
        // work between: most acquisitions wait.
        let spin = run(&format!("threads = 4\n{HOLD}"), 2);
        let block = run(&format!("threads = 4\n{HOLD}spin_cycles = 0\n"), 2);
        let both = run(&format!("threads = 4\n{HOLD}spin_cycles = 500\n"), 2);
        for r in [&spin, &block, &both] {
            assert_eq!(r.apps[0].recorded["lock_wait_us"].count, 200);
            assert!(r.locks.contended > 50, "{:?}", r.locks);
        }
        assert_eq!(spin.locks.blocks, 0);
        assert!(spin.total.spin > 0);
        assert_eq!(block.locks.spin_grants, 0);
        assert!(block.locks.blocks > 0);
        // Spinning 500 cycles settles no wait for a lock held 2,000: they block after spinning.
        assert!(both.locks.blocks > 0 && both.total.spin > 0);
        assert_eq!(block.total.spin, 0, "a blocking waiter never spins");
        let mean = |r: &RunReport| r.apps[0].recorded["lock_wait_us"].mean();
        assert!(mean(&spin) > 0.0 && mean(&block) > 0.0);
    }

    /// Mutual exclusion against its closed form: four threads on four processors doing nothing
    /// but 50 sections of 2,000 cycles each under one lock take at least the 400,000 cycles of
    /// the sections one after another (overlapping sections would take a quarter of that), and
    /// little more: each handover costs a few memory accesses.
    #[test]
    fn one_lock_serializes_its_sections() {
        let r = run(
            "threads = 4\nsections = 50\nhold = { dist = \"fixed\", value = 2000 }\n",
            4,
        );
        let serial = 4 * 50 * 2000;
        assert!(r.elapsed_cycles >= serial, "{}", r.elapsed_cycles);
        assert!(
            r.elapsed_cycles < serial + serial / 10,
            "{}",
            r.elapsed_cycles
        );
        assert!(r.total.useful >= serial, "{:?}", r.total);
    }

    #[test]
    fn more_locks_spread_the_waits() {
        let one = run(&format!("threads = 4\n{HOLD}"), 4);
        let many = run(&format!("threads = 4\n{HOLD}locks = 64\n"), 4);
        assert!(
            many.locks.contended < one.locks.contended / 2,
            "{:?} {:?}",
            many.locks,
            one.locks
        );
    }

    #[test]
    fn bad_parameters_are_refused_by_name() {
        for (bad, field) in [
            (
                "threads = 0\nsections = 1\nhold = { dist = \"fixed\", value = 1 }",
                "threads",
            ),
            (
                "threads = 1\nsections = 0\nhold = { dist = \"fixed\", value = 1 }",
                "sections",
            ),
            (
                "threads = 1\nsections = 1\nlocks = 0\nhold = { dist = \"fixed\", value = 1 }",
                "locks",
            ),
            (
                "threads = 1\nsections = 1\nhold = { dist = \"uniform\", min = 5, max = 1 }",
                "hold",
            ),
        ] {
            let e = (super::INFO.build)(toml::from_str(bad).unwrap())
                .err()
                .unwrap();
            assert!(e.to_string().starts_with(field), "{bad}: {e}");
        }
    }
}
