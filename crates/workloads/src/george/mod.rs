//! George 1990's loads (section 3) over the queue under test: the centralized dual queue with
//! exponential backoff (section 1) or Distributed Dual Queues (section 2), laid out in the
//! simulated GP1000's NUMA memory by [`smpsched_sim::readyq::ddq`]. One thread per processor,
//! pinned there (the GP1000 runs one process per processor, section 1.2).
//!
//! - `george-pc` ([`pc`]): the artificial load of section 3: half the processors (the even
//!   ones) insert `items` items each, backing off exponentially while every root shows a full
//!   tree; the other half remove.
//! - `george-sieve` ([`sieve`]): the prime sieve of section 3.1 with the fine-grained task
//!   structure of CoF's compiled code: a task per filter step, every task spawned through the
//!   queue under test, a failed spawn run by its spawner (section 1).
//!
//! Termination: the processor that consumes the last item (or finishes the last task) writes
//! the termination value into every other processor's spin word; a processor that finds the
//! run over before a remove stops. Producers remove too once their items are inserted, so the
//! items an insert left in a producer's home leaf are drained (the paper's producers stop; its
//! items at their leaves are never counted).
//!
//! Measures (recorded per processor at its end): `backoffs` (failed lock attempts, Figure 1),
//! `failed_inserts` (inserts that found no room or, on a single attempt, a busy lock),
//! `insert_us` and `remove_us` (mean time per operation), `insert_atomics` and
//! `remove_atomics` (mean atomics on N fields per operation), `below_h` (tree operations with
//! fewer than H atomics, section 2.4), `root_cycles` (mean cycles of an atomic on a root, the
//! hot spot: 40 uncontended from another node), `root_ops` (atomics on a root), `retries`
//! (re-reads in the starvation case), `local_inserts`, and for the sieve `tasks` and `primes`.
//! One measure is recorded per queue operation instead, as the operation ends: `hotspot_wait`,
//! the cycles it spent contending for the hot spot beyond the uncontended cost of its accesses
//! there (the centralized queue's lock: from the first attempt to holding it; a DDQ: its
//! accesses to a tree root), the introduction's item 3 (`hotspot.rs`).

mod hotspot;
pub mod pc;
mod port;
pub mod sieve;
#[cfg(test)]
mod tests;

use std::rc::Rc;

use serde::Deserialize;
use smpsched_policy::ddq;
use smpsched_sim::memory::Placement;
use smpsched_sim::readyq::ddq::{GeorgeLayout, Tuning};
use smpsched_sim::readyq::dual::{Ascend, Backoff};
use smpsched_sim::sched::ParamInfo;
use smpsched_sim::{CpuMask, ProcId, SimError, Simulation, ThreadAttrs};

/// Which structure the tasks go through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Structure {
    /// One dual queue with one lock (section 1).
    Central,
    /// Distributed Dual Queues (section 2).
    Ddq,
}

/// When a remove's ascend is made (section 2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AscendParam {
    /// Every remove ascends.
    Eager,
    /// The remove that takes a leaf's last item ascends for the deferred ones (the paper's).
    LastData,
    /// The first processor to wait in an empty leaf ascends for them.
    FirstWaiter,
}

/// The queue parameters both loads share.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueParams {
    /// `central` or `ddq`.
    pub structure: Structure,
    /// Processors per leaf and items a leaf queue buffers (q); ignored when `height` is set.
    #[serde(default = "d_one")]
    pub queue_size: u32,
    /// A fixed tree height (1: two queues, section 3.1): q = ceil(processors per tree / 2^H).
    #[serde(default)]
    pub height: Option<u32>,
    /// Trees (clusters), polled round robin by inserts (section 2.4).
    #[serde(default = "d_one")]
    pub trees: u32,
    /// `eager`, `last-data` (the paper's) or `first-waiter`.
    #[serde(default = "d_ascend")]
    pub ascend: AscendParam,
    /// Inserts first try a lazily freed slot of the home leaf (section 2.3).
    #[serde(default = "d_true")]
    pub local_first: bool,
    /// Tasks the centralized queue buffers.
    #[serde(default = "d_capacity")]
    pub capacity: u32,
    /// Mean cycles of the first backoff after a failed lock (doubling each time).
    #[serde(default = "d_backoff")]
    pub backoff_cycles: u64,
    /// Doublings after which a backoff stops growing.
    #[serde(default = "d_max_exp")]
    pub backoff_max_exp: u32,
    /// Cycles between two reads of a spin word (and of children in the starvation case).
    #[serde(default = "d_pause")]
    pub pause_cycles: u64,
}

fn d_one() -> u32 {
    1
}
fn d_true() -> bool {
    true
}
fn d_ascend() -> AscendParam {
    AscendParam::LastData
}
fn d_capacity() -> u32 {
    4096
}
fn d_backoff() -> u64 {
    20
}
fn d_max_exp() -> u32 {
    10
}
fn d_pause() -> u64 {
    100
}

/// The parameter docs of [`QueueParams`], shared by both loads' registry entries.
pub(crate) const QUEUE_PARAMS: [ParamInfo; 10] = [
    ParamInfo {
        name: "structure",
        default: "(required)",
        doc: "central (one dual queue, one lock, section 1) | ddq (section 2)",
    },
    ParamInfo {
        name: "queue_size",
        default: "1",
        doc: "q: processors per leaf and items per leaf queue (H = ceil(log2(P/q))) (ddq; ignored when height is given)",
    },
    ParamInfo {
        name: "height",
        default: "(none)",
        doc: "a fixed tree height instead (1: two queues); q = ceil(P per tree / 2^height) (ddq; past log2(P per tree), q = 1 as at that height)",
    },
    ParamInfo {
        name: "trees",
        default: "1",
        doc: "trees (clusters) polled round robin by inserts (2.4) (ddq; at most one per processor: more are as many as processors)",
    },
    ParamInfo {
        name: "ascend",
        default: "last-data",
        doc: "eager | last-data (2.3, the paper's) | first-waiter (ddq)",
    },
    ParamInfo {
        name: "local_first",
        default: "true",
        doc: "inserts first use a lazily freed slot of the home leaf (2.3) (ddq)",
    },
    ParamInfo {
        name: "capacity",
        default: "4096",
        doc: "tasks the centralized queue buffers (central)",
    },
    ParamInfo {
        name: "backoff_cycles",
        default: "20",
        doc: "mean first backoff after a failed lock, doubling",
    },
    ParamInfo {
        name: "backoff_max_exp",
        default: "10",
        doc: "doublings after which backoffs stop growing",
    },
    ParamInfo {
        name: "pause_cycles",
        default: "100",
        doc: "cycles between reads of a spin word",
    },
];

impl QueueParams {
    fn validate(&self) -> Result<(), String> {
        if self.queue_size == 0 || self.queue_size > 4096 {
            return Err(format!(
                "queue_size: must be between 1 and 4096, got {}",
                self.queue_size
            ));
        }
        if matches!(self.height, Some(h) if h > 16) {
            return Err("height: must be at most 16".into());
        }
        if self.trees == 0 || self.trees > 4096 {
            return Err(format!(
                "trees: must be between 1 and 4096, got {}",
                self.trees
            ));
        }
        if self.capacity == 0 || self.capacity > 1 << 20 {
            return Err(format!(
                "capacity: must be between 1 and 1048576, got {}",
                self.capacity
            ));
        }
        for (name, v) in [
            ("backoff_cycles", self.backoff_cycles),
            ("pause_cycles", self.pause_cycles),
        ] {
            if v == 0 || v > 1 << 30 {
                return Err(format!(
                    "{name}: must be between 1 and 2^30 cycles, got {v}"
                ));
            }
        }
        if self.backoff_max_exp > 30 {
            return Err(format!(
                "backoff_max_exp: must be at most 30, got {}",
                self.backoff_max_exp
            ));
        }
        Ok(())
    }

    /// The tuning of processor `p`'s protocols (its own backoff stream).
    fn tuning(&self, p: usize, seed: u64) -> Tuning {
        Tuning {
            backoff: Backoff {
                base: self.backoff_cycles,
                max_exp: self.backoff_max_exp,
                seed: seed ^ (p as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15),
            },
            pause: self.pause_cycles,
            ascend: match self.ascend {
                AscendParam::Eager => Ascend::Eager,
                AscendParam::LastData => Ascend::LastData,
                AscendParam::FirstWaiter => Ascend::FirstWaiter,
            },
            local_first: self.local_first,
            once: false,
        }
    }

    /// q for `workers` processors.
    fn q(&self, workers: usize) -> usize {
        let per_tree = workers.div_ceil(self.trees.max(1) as usize);
        match self.height {
            Some(h) => per_tree.div_ceil(1 << h).max(1),
            None => self.queue_size as usize,
        }
    }

    /// Lays the structure out in `sim`'s memory for `workers` processors; gives the layout and
    /// each processor's H.
    fn build(&self, sim: &mut Simulation, workers: usize) -> (Rc<GeorgeLayout>, Vec<u32>) {
        let mut alloc = |bytes: u64, p: usize| {
            let place = Placement::Node(p as u32);
            sim.memory()
                .alloc(bytes, place, Some(ProcId(p as u32)))
                .base
        };
        let layout = match self.structure {
            Structure::Central => {
                GeorgeLayout::central(workers, u64::from(self.capacity), &mut alloc)
            }
            Structure::Ddq => {
                let trees = (self.trees as usize).min(workers);
                GeorgeLayout::trees(workers, self.q(workers), trees, &mut alloc)
            }
        };
        let heights = (0..workers)
            .map(|p| match &layout.scheme {
                smpsched_sim::readyq::Scheme::Trees(t) => t[layout.home[p].0].height,
                smpsched_sim::readyq::Scheme::Central(_) => 0,
            })
            .collect();
        (Rc::new(layout), heights)
    }

    /// Bytes of simulated memory for `workers` processors.
    fn memory_bytes(&self, workers: usize) -> u64 {
        let trees = match self.structure {
            Structure::Central => 0,
            Structure::Ddq => self.trees as usize,
        };
        GeorgeLayout::bytes(workers, self.q(workers), trees, u64::from(self.capacity))
    }
}

/// Splits a workload's parameter table into the queue's parameters and the load's own, then
/// reads both (each refusing keys it does not know, naming them).
pub(crate) fn split<T: serde::de::DeserializeOwned>(
    mut t: toml::Table,
) -> Result<(T, QueueParams), toml::de::Error> {
    let mut q = toml::Table::new();
    for p in QUEUE_PARAMS {
        if let Some(v) = t.remove(p.name) {
            q.insert(p.name.into(), v);
        }
    }
    let own: T = toml::Value::Table(t).try_into()?;
    let queue: QueueParams = toml::Value::Table(q).try_into()?;
    queue.validate().map_err(serde::de::Error::custom)?;
    Ok((own, queue))
}

/// Pins a program on processor `p`.
fn pin(p: usize) -> ThreadAttrs {
    ThreadAttrs {
        mask: Some(CpuMask::of([ProcId(p as u32)])),
        base_priority: 0,
    }
}

/// The machine's processors, checked.
fn processors(sim: &Simulation, what: &str) -> Result<usize, SimError> {
    let p = sim.machine().processors as usize;
    if p < 2 && what == "george-pc" {
        return Err(SimError::Workload(format!(
            "{what}: needs at least 2 processors (one producer, one consumer), the machine has {p}"
        )));
    }
    Ok(p)
}

/// Tree height for `workers` processors and queue size `q` (for docs and tests).
pub fn tree_height(workers: usize, q: usize) -> u32 {
    ddq::height(workers, q)
}
