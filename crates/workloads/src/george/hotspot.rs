//! The hot spot of George 1990: the centralized queue's lock, whose contention the DDQ
//! "drastically reduces" (introduction, item 3), and a DDQ tree's root, which "becomes a hot
//! spot" in its turn (section 2.4). `hotspot_wait` is what one queue operation spends there
//! beyond what the same accesses cost alone:
//!
//! - centralized queue: the cycles from its first test-and-set on the lock to holding it (the
//!   failed attempts and the exponential backoffs between them included) or, for a spawn's
//!   single attempt, to failing it, less one uncontended test-and-set;
//! - DDQ: on every access to a tree root's N field (an insert's poll reads it, its reservation
//!   and an ascend's increment are atomics on it), the cycles beyond that access's uncontended
//!   cost, summed over the operation. An operation that does not reach a root (a local insert,
//!   a remove whose ascend is deferred, section 2.3) waits 0 there.
//!
//! Atomics on one line serialize in the memory model (misses too, on the GP1000): an access
//! starts when the line is free, so its wait shows as latency beyond the uncontended cost, a
//! miss served by the word's home node (local or remote memory) plus, for an atomic, the cycles
//! it holds the line. A processor that still holds the line needs less (a hit) and has nothing
//! to wait for: that access counts 0.

use smpsched_sim::memory::MemoryConfig;
use smpsched_sim::readyq::ddq::{GeorgeLayout, Scheme};
use smpsched_sim::{Cycles, Op, ProcId, Simulation, WordOp};

/// Cycles of an access to a word from one processor when nothing else touches its line: a hit
/// without a memory model, else a miss served by the word's home (`local`: on the processor's
/// node; `None`: no home node) plus, for an atomic, the cycles it holds the line.
pub(crate) fn uncontended(cfg: &MemoryConfig, local: Option<bool>, atomic: bool) -> Cycles {
    if !cfg.enabled {
        return cfg.hit_cycles;
    }
    let miss = match (cfg.numa.as_ref(), local) {
        (Some(numa), Some(true)) => numa.local_cycles,
        (Some(numa), Some(false)) => numa.remote_cycles,
        _ => cfg.miss_cycles,
    };
    miss + if atomic { cfg.atomic_cycles } else { 0 }
}

/// One access to the hot spot: which, and what it costs uncontended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// A test-and-set on the centralized queue's lock.
    Lock(Cycles),
    /// A read or an atomic on a tree root's N field.
    Root(Cycles),
}

/// A processor's view of the hot spot: its words, and their uncontended costs from there.
#[derive(Clone, Debug)]
pub(crate) struct HotSpot {
    /// The centralized queue's lock, or every tree's root N field.
    words: Vec<u64>,
    central: bool,
    /// Uncontended cycles of a read and of an atomic on each word.
    costs: Vec<(Cycles, Cycles)>,
}

impl HotSpot {
    /// Processor `p`'s view of `layout`'s hot spot in `sim`'s memory.
    pub(crate) fn new(sim: &mut Simulation, layout: &GeorgeLayout, p: usize) -> Self {
        let (words, central) = match &layout.scheme {
            Scheme::Central(q) => (vec![q.lock()], true),
            Scheme::Trees(trees) => (trees.iter().map(|t| t.n[1]).collect(), false),
        };
        let cfg = sim.machine().memory.clone();
        let mem = sim.memory();
        let node = mem.node_of(ProcId(p as u32));
        let costs = words
            .iter()
            .map(|&w| {
                let local = mem.home_node(w).zip(node).map(|(h, n)| h == n);
                (
                    uncontended(&cfg, local, false),
                    uncontended(&cfg, local, true),
                )
            })
            .collect();
        HotSpot {
            words,
            central,
            costs,
        }
    }

    /// Whether `op` accesses the hot spot: a test-and-set on the centralized lock (its release
    /// is the holder's, not contention), any access to a root.
    pub(crate) fn access(&self, op: &Op) -> Option<Access> {
        let Op::Word { addr, op } = op else {
            return None;
        };
        let i = self.words.iter().position(|w| w == addr)?;
        let (read, atomic) = self.costs[i];
        match (self.central, op) {
            (true, WordOp::TestAndSet) => Some(Access::Lock(atomic)),
            (true, _) => None,
            (false, WordOp::Load) => Some(Access::Root(read)),
            (false, _) => Some(Access::Root(atomic)),
        }
    }
}

/// The hot-spot wait of the operation under way, accumulated access by access.
#[derive(Clone, Debug, Default)]
pub(crate) struct Wait {
    /// When the operation's first attempt on the lock issued.
    first: Option<Cycles>,
    /// The hot-spot access issued last and not yet complete, with its issue time.
    issued: Option<(Access, Cycles)>,
    cycles: Cycles,
}

impl Wait {
    /// `access` issues at `now`.
    pub(crate) fn issue(&mut self, access: Access, now: Cycles) {
        if matches!(access, Access::Lock(_)) && self.first.is_none() {
            self.first = Some(now);
        }
        self.issued = Some((access, now));
    }

    /// The operation issued last completed at `now` (nothing to do unless it was an access).
    pub(crate) fn complete(&mut self, now: Cycles) {
        match self.issued.take() {
            // The lock is held (or the single attempt failed): the wait since the first
            // attempt, replacing the one counted at an earlier failed attempt.
            Some((Access::Lock(alone), _)) => {
                let first = self.first.unwrap_or(now);
                self.cycles = (now - first).saturating_sub(alone);
            }
            Some((Access::Root(alone), at)) => self.cycles += (now - at).saturating_sub(alone),
            None => {}
        }
    }

    /// The operation's wait, and a fresh start for the next one.
    pub(crate) fn take(&mut self) -> Cycles {
        std::mem::take(self).cycles
    }
}
