//! The memory system proper: per-processor caches, the coherence directory, NUMA homes, per-line
//! and bus contention, and the single-reference and atomic entry points. The cost rule is Tango's
//! (Gupta et al. 1991, section 3): a reference costs the hit time when it hits and the miss time
//! when it misses; a remote CPU is not stalled when its copy is invalidated. Atomics hold their
//! line, so atomics on one line serialize — the hot spot of a centralized queue (George 1990,
//! section 1 and Figure 1).
//!
//! A shared second level, when configured, sits between the first-level caches and memory: a
//! first-level miss (an ownership upgrade included) looks the line up there first (Weibel's
//! Cortex-A53, section 2).
//!
//! Protocol: MESI-style invalidation. A read miss gets Exclusive when no other cache holds the
//! line, else Shared (downgrading an Exclusive/Modified owner to Shared). A write to a line not
//! held Exclusive/Modified is a miss (an ownership upgrade of a Shared copy counts as one) and
//! invalidates every other copy. Set-associative caches tell the directory of their evictions;
//! fully associative ones evict silently and a miss prunes the listings they leave (see the
//! directory), so every decision is an exact directory's either way. Write-backs cost nothing, as
//! coherence overhead cost nothing in Tango.

use serde::{Deserialize, Serialize};

use super::cache::{Cache, LineState, SCAN_MAX_WAYS};
use super::config::MemoryConfig;
use super::directory::{DirEntry, Directory, Sharers};
use super::numa::{Home, NumaMap, Placement};
use super::region::{AddressSpace, Region};
use super::stats::{Charge, MemoryStats};
use super::MemoryError;
use crate::ids::{Cycles, ProcId};

/// What a reference does to its line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessKind {
    /// A load.
    Read,
    /// A store.
    Write,
    /// A load then a store to the same address (two references); the line is fetched for
    /// ownership on the load's miss, so the store always hits.
    ReadModifyWrite,
}

impl AccessKind {
    /// References one element of this kind makes (2 for read-modify-write, else 1).
    #[inline]
    pub fn refs(self) -> u64 {
        match self {
            AccessKind::ReadModifyWrite => 2,
            AccessKind::Read | AccessKind::Write => 1,
        }
    }

    /// Whether this kind needs the line in an exclusive state.
    #[inline]
    pub fn writes(self) -> bool {
        self != AccessKind::Read
    }
}

/// The atomic read-modify-write instructions; all cost the same (the line is taken exclusive and
/// held for `atomic_cycles`), the kind is recorded for the caller's benefit only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AtomicKind {
    /// Fetch-and-add (George's atomic increment / decrement of tree counters).
    FetchAdd,
    /// Compare-and-swap (takes the line exclusive even when the comparison fails).
    CompareSwap,
    /// Test-and-set (spin locks).
    TestAndSet,
    /// Unconditional exchange.
    Swap,
}

/// The memory of the simulated machine: caches, directory, address space and statistics. Every
/// call is deterministic; the caller supplies the simulated time of each access.
#[derive(Clone, Debug)]
pub struct MemorySystem {
    pub(crate) cfg: MemoryConfig,
    processors: u32,
    pub(crate) line_shift: u32,
    /// Bitset words for a sharer set of `processors` processors.
    words: usize,
    /// Whether evictions are silent (the caches take the list form: fully or highly
    /// associative, where a sweep's every miss evicts); set-associative caches tell the
    /// directory at once, so their listings are exact and a read miss needs no pruning.
    silent: bool,
    caches: Vec<Cache>,
    /// The shared second level, when the machine has one.
    l2: Option<Cache>,
    dir: Directory,
    space: AddressSpace,
    numa: Option<NumaMap>,
    bus_busy_until: Cycles,
    pub(crate) stats: Vec<MemoryStats>,
    scratch: Vec<u32>,
    /// Per processor, the line a parked poller watches ([`NONE`]: none).
    pub(crate) watched: Vec<u64>,
    /// Processors whose watched line left their cache, in the order it happened.
    pub(crate) woken: Vec<u32>,
}

/// A processor's watched line when it watches none (`watch`).
pub(crate) const NONE: u64 = u64::MAX;

/// Bytes a cache slot may take at most in any store (tag, state, LRU stamp or links, and its
/// place in the line index at half load).
const CACHE_SLOT_BYTES: u64 = 48;

/// Estimated bytes the memory model of `cfg` takes on `processors` processors when programs
/// touch `touched_bytes` of address space: the caches (filled) and a directory entry per line
/// touched. Zero when the model is off. For refusing, before a run, one that would not fit.
pub fn footprint_bytes(cfg: &MemoryConfig, processors: u32, touched_bytes: u64) -> u64 {
    if !cfg.enabled {
        return 0;
    }
    let caches = u64::from(processors)
        .saturating_mul(cfg.lines())
        .saturating_mul(CACHE_SLOT_BYTES);
    let lines = touched_bytes.div_ceil(u64::from(cfg.line_bytes.max(1)));
    let directory = lines.saturating_mul(super::directory::ENTRY_BYTES);
    caches.saturating_add(directory)
}

impl MemorySystem {
    /// Builds the memory of a machine with `processors` processors, after validating `cfg`.
    /// Caches are allocated lazily, on each processor's first miss.
    pub fn new(cfg: &MemoryConfig, processors: u32) -> Result<Self, MemoryError> {
        cfg.validate(processors)?;
        let caches = if cfg.enabled {
            let empty = Cache::new(cfg);
            vec![empty; processors as usize]
        } else {
            Vec::new()
        };
        let l2 = match (&cfg.l2, cfg.enabled) {
            (Some(l2), true) => Some(Cache::new(&l2.geometry(cfg))),
            _ => None,
        };
        let numa = match (&cfg.numa, cfg.enabled) {
            (Some(n), true) => Some(NumaMap::new(n, processors)),
            _ => None,
        };
        Ok(MemorySystem {
            cfg: cfg.clone(),
            processors,
            line_shift: cfg.line_bytes.max(1).trailing_zeros(),
            words: processors.div_ceil(64) as usize,
            silent: cfg.ways() > SCAN_MAX_WAYS,
            caches,
            l2,
            dir: Directory::default(),
            space: AddressSpace::default(),
            numa,
            bus_busy_until: 0,
            stats: vec![MemoryStats::default(); processors as usize],
            scratch: Vec::new(),
            watched: vec![NONE; processors as usize],
            woken: Vec::new(),
        })
    }

    /// The configuration this system was built from.
    pub fn config(&self) -> &MemoryConfig {
        &self.cfg
    }

    /// Number of processors.
    pub fn processors(&self) -> u32 {
        self.processors
    }

    /// Cache line size in bytes.
    pub fn line_bytes(&self) -> u64 {
        1 << self.line_shift
    }

    /// Allocates `bytes` of fresh address space (page-aligned, never reused) placed as
    /// `placement` says; `owner` is the allocating processor, used by [`Placement::Local`].
    /// Placement is ignored when NUMA is off.
    pub fn alloc(&mut self, bytes: u64, placement: Placement, owner: Option<ProcId>) -> Region {
        let base = self.space.top();
        let home = match &self.numa {
            Some(numa) => numa.resolve(placement, owner, base),
            None => Home::Uma,
        };
        self.space.alloc(bytes, home)
    }

    /// Whether `addr` lies in a region allocated from this memory system.
    pub fn is_allocated(&self, addr: u64) -> bool {
        self.space.is_allocated(addr)
    }

    /// The NUMA node of processor `p` (`None` when NUMA is off).
    pub fn node_of(&self, p: ProcId) -> Option<u32> {
        self.numa.as_ref().map(|n| n.node_of(p.index()))
    }

    /// The NUMA node whose memory holds `addr` (`None` when NUMA is off, the memory is UMA, or
    /// the address was never allocated).
    pub fn home_node(&self, addr: u64) -> Option<u32> {
        let numa = self.numa.as_ref()?;
        numa.home_node(self.space.home(addr)?, addr)
    }

    /// One reference by processor `p` at time `now` to `addr`. A read-modify-write makes two
    /// references (load and store).
    ///
    /// # Panics
    /// If `p` is not a processor of this machine or `addr` was never allocated.
    pub fn access(&mut self, p: ProcId, now: Cycles, addr: u64, kind: AccessKind) -> Charge {
        let pi = self.check(p, addr);
        let refs = kind.refs();
        let mut ch = Charge {
            useful: refs * self.cfg.hit_cycles,
            refs,
            done: true,
            ..Charge::default()
        };
        if self.cfg.enabled {
            ch.stall = self.reference(pi, now, addr >> self.line_shift, kind.writes(), &mut ch);
        }
        self.stats[pi].record(&ch);
        ch
    }

    /// An atomic read-modify-write by `p` at `now` on `addr`. It starts when the line is free
    /// (`max(now, busy_until)`), costs a miss unless `p` holds the line Exclusive/Modified (a hit
    /// otherwise), plus `atomic_cycles`, and keeps the line busy until it ends. A miss takes a bus
    /// slot, and so does every atomic on a bus with `locked_atomics`. The charge's
    /// `useful` is one hit; `stall` is the rest of the latency, waiting included.
    ///
    /// # Panics
    /// If `p` is not a processor of this machine or `addr` was never allocated.
    pub fn atomic(&mut self, p: ProcId, now: Cycles, addr: u64, _kind: AtomicKind) -> Charge {
        let pi = self.check(p, addr);
        let hit = self.cfg.hit_cycles;
        let mut ch = Charge {
            useful: hit,
            refs: 1,
            done: true,
            ..Charge::default()
        };
        let mut wait = 0;
        if self.cfg.enabled {
            let line = addr >> self.line_shift;
            let start = now.max(self.dir.entry_mut(line).busy_until);
            wait = start - now;
            let cache = &mut self.caches[pi];
            let (owned, upgrade) = match cache.touch(line) {
                Some(slot) => match cache.state(slot) {
                    LineState::Modified => (true, false),
                    LineState::Exclusive => {
                        cache.set_state(slot, LineState::Modified);
                        (true, false)
                    }
                    LineState::Shared => (false, true),
                },
                None => (false, false),
            };
            let locked = self.cfg.bus.as_ref().is_some_and(|b| b.locked_atomics);
            let end = if owned && locked {
                self.bus_slot(start) + hit + self.cfg.atomic_cycles
            } else if owned {
                start + hit + self.cfg.atomic_cycles
            } else {
                let (latency, _) = self.fill(pi, line, true, upgrade, &mut ch);
                self.bus_slot(start) + latency + self.cfg.atomic_cycles
            };
            self.dir.entry_mut(line).busy_until = end;
            ch.stall = end - now - hit;
        }
        let stats = &mut self.stats[pi];
        stats.record(&ch);
        stats.atomics += 1;
        stats.atomic_wait_cycles += wait;
        ch
    }

    /// Drops every line from `p`'s cache (for experiments: a cold start, a cache flush at a gang
    /// slice, ...). No cost is charged.
    pub fn flush(&mut self, p: ProcId) {
        let pi = self.check_proc(p);
        if !self.cfg.enabled {
            return;
        }
        let Self { caches, dir, .. } = self;
        caches[pi].for_each_line(|line| dir.entry_mut(line).drop_holder(p.0));
        caches[pi].clear();
        self.lost(pi);
    }

    /// How many lines of `region` are resident in `p`'s cache — the footprint left there, which
    /// the affinity experiments measure.
    pub fn lines_resident(&self, p: ProcId, region: Region) -> u64 {
        let pi = self.check_proc(p);
        if !self.cfg.enabled || region.is_empty() {
            return 0;
        }
        let cache = &self.caches[pi];
        let first = region.base >> self.line_shift;
        let last = (region.end() - 1) >> self.line_shift;
        if last - first < cache.resident() {
            (first..=last).filter(|&l| cache.find(l).is_some()).count() as u64
        } else {
            let mut n = 0;
            cache.for_each_line(|l| n += u64::from((first..=last).contains(&l)));
            n
        }
    }

    /// The state of `addr`'s line in `p`'s cache, or `None` when it is not resident.
    pub fn line_state(&self, p: ProcId, addr: u64) -> Option<LineState> {
        let pi = self.check_proc(p);
        let cache = self.caches.get(pi)?;
        cache.find(addr >> self.line_shift).map(|s| cache.state(s))
    }

    /// The time until which `addr`'s line is held by an atomic or a miss (0 if never).
    pub fn busy_until(&self, addr: u64) -> Cycles {
        self.dir
            .get(addr >> self.line_shift)
            .map_or(0, |e| e.busy_until)
    }

    /// Statistics of processor `p` since construction or the last [`reset_stats`](Self::reset_stats).
    pub fn stats(&self, p: ProcId) -> MemoryStats {
        self.stats[self.check_proc(p)]
    }

    /// Statistics summed over all processors.
    pub fn total_stats(&self) -> MemoryStats {
        let mut total = MemoryStats::default();
        for s in &self.stats {
            total += *s;
        }
        total
    }

    /// References made by all processors (since construction or the last reset), summed
    /// without the other counters: what the engine compares with its reference bound.
    pub fn total_refs(&self) -> u64 {
        self.stats.iter().map(|s| s.refs).sum()
    }

    /// Whether references are walked through caches (else every one is a hit, charged in one
    /// step however many there are).
    pub fn enabled(&self) -> bool {
        self.cfg.enabled
    }

    /// Zeroes the statistics (cache and directory contents are kept).
    pub fn reset_stats(&mut self) {
        self.stats.fill(MemoryStats::default());
    }

    /// Validates a processor id, returning its index.
    #[inline]
    pub(crate) fn check_proc(&self, p: ProcId) -> usize {
        assert!(
            p.0 < self.processors,
            "processor {p} does not exist (the machine has {} processors)",
            self.processors
        );
        p.index()
    }

    /// Validates a processor id and an address, returning the processor's index.
    #[inline]
    pub(crate) fn check(&self, p: ProcId, addr: u64) -> usize {
        assert!(
            self.space.is_allocated(addr),
            "address {addr:#x} lies outside every region allocated from this memory system"
        );
        self.check_proc(p)
    }

    /// One reference by processor index `p` at time `t` to `line`; returns the stall beyond a hit
    /// and counts misses / invalidations / remote misses into `ch`.
    #[inline(always)]
    pub(crate) fn reference(
        &mut self,
        p: usize,
        t: Cycles,
        line: u64,
        write: bool,
        ch: &mut Charge,
    ) -> Cycles {
        let cache = &mut self.caches[p];
        let upgrade = match cache.touch(line) {
            Some(slot) => match cache.state(slot) {
                LineState::Modified => return 0,
                LineState::Exclusive => {
                    if write {
                        cache.set_state(slot, LineState::Modified);
                    }
                    return 0;
                }
                LineState::Shared if !write => return 0,
                LineState::Shared => true,
            },
            None => false,
        };
        self.miss(p, t, line, write, upgrade, ch)
    }

    /// A miss (or ownership upgrade) by `p` at `t`: coherence, fill, and timing with the line's
    /// and the bus's busy times. Returns the stall beyond a hit.
    #[inline(never)]
    fn miss(
        &mut self,
        p: usize,
        t: Cycles,
        line: u64,
        write: bool,
        upgrade: bool,
        ch: &mut Charge,
    ) -> Cycles {
        let (latency, busy_until) = self.fill(p, line, write, upgrade, ch);
        let serialize = self.cfg.serialize_misses;
        let mut start = t;
        if serialize {
            start = start.max(busy_until);
        }
        start = self.bus_slot(start);
        let end = start + latency;
        if serialize {
            self.dir.entry_mut(line).busy_until = end;
        }
        end - t - self.cfg.hit_cycles
    }

    /// The coherence part of a miss by `p` on `line`: invalidate other copies (write) or
    /// downgrade an owner (read), install the line in `p`'s cache (evicting its LRU victim), and
    /// return the miss latency: the shared second level's when it holds the line (else it is
    /// installed there), otherwise memory's (local, remote or UMA); with it, until when the
    /// line was busy (read from its directory entry while that is at hand).
    fn fill(
        &mut self,
        p: usize,
        line: u64,
        write: bool,
        upgrade: bool,
        ch: &mut Charge,
    ) -> (Cycles, Cycles) {
        let pid = p as u32;
        let Self {
            dir,
            caches,
            stats,
            scratch,
            words,
            watched,
            woken,
            silent,
            ..
        } = self;
        let entry = dir.entry_mut(line);
        let busy_until = entry.busy_until;
        // With silent evictions (see the directory) a listed cache may no longer hold the line.
        let state = if write {
            scratch.clear();
            entry.sharers.take_others(pid, scratch);
            entry.owned = true;
            for &q in scratch.iter() {
                if !caches[q as usize].remove(line) {
                    continue; // evicted since
                }
                stats[q as usize].invalidated += 1;
                ch.invalidations += 1;
                if watched[q as usize] == line {
                    watched[q as usize] = NONE;
                    woken.push(q);
                }
            }
            LineState::Modified
        } else if entry.sharers.is_empty_but(pid) {
            // A read miss on a line no other cache is listed for (our own listing, if any, is
            // left from an eviction): private data's every miss, decided without pruning.
            entry.sharers = Sharers::One(pid);
            entry.owned = true;
            LineState::Exclusive
        } else {
            read_shared(entry, caches, pid, line, *words, *silent)
        };
        let cache = &mut caches[p];
        if upgrade {
            let slot = cache.find(line).expect("an upgraded line is resident");
            cache.set_state(slot, state);
        } else if let Some(victim) = cache.insert(line, state) {
            // Silently, the victim's directory entry keeps listing `p` until a miss prunes it.
            if !*silent {
                dir.entry_mut(victim).drop_holder(pid);
            }
            if watched[p] == victim {
                watched[p] = NONE;
                woken.push(pid);
            }
        }
        ch.misses += 1;
        (self.miss_latency(p, line, ch), busy_until)
    }

    /// The latency of `p`'s miss on `line`: the shared second level's when it holds the line
    /// (else it is installed there), otherwise memory's (local, remote or UMA).
    #[inline]
    fn miss_latency(&mut self, p: usize, line: u64, ch: &mut Charge) -> Cycles {
        if let Some(l2) = &mut self.l2 {
            if l2.touch(line).is_some() {
                return self.cfg.l2.as_ref().map_or(0, |c| c.hit_cycles);
            }
            l2.insert(line, LineState::Shared);
            ch.l2_misses += 1;
        }
        match &self.numa {
            None => self.cfg.miss_cycles,
            Some(numa) => {
                let addr = line << self.line_shift;
                let node = self
                    .space
                    .home_of(addr)
                    .and_then(|h| numa.home_node(h, addr));
                let (latency, remote) = numa.miss_latency(p, node, self.cfg.miss_cycles);
                ch.remote += u64::from(remote);
                latency
            }
        }
    }

    /// When a transfer wanting the bus at `start` gets it (and books it); `start` without a bus.
    #[inline]
    fn bus_slot(&mut self, start: Cycles) -> Cycles {
        match &self.cfg.bus {
            None => start,
            Some(bus) => {
                let s = start.max(self.bus_busy_until);
                self.bus_busy_until = s + bus.transfer_cycles;
                s
            }
        }
    }
}

/// A read miss by `pid` on `line` that other caches are listed for: with `silent` evictions our
/// own listing, if any, is left from an eviction; drop it and the other caches' that evicted the
/// line too; then take the line Shared, downgrading its owner, or Exclusive if none holds it.
/// Out of line, so that a private line's miss (a sweep's every miss) runs in a small `fill`
/// (the trade measured in docs/performance.md).
#[inline(never)]
fn read_shared(
    entry: &mut DirEntry,
    caches: &mut [Cache],
    pid: u32,
    line: u64,
    words: usize,
    silent: bool,
) -> LineState {
    if silent {
        entry.sharers.remove(pid);
        entry
            .sharers
            .retain(|q| caches[q as usize].find(line).is_some());
    } else {
        debug_assert!(
            !entry.sharers.contains(pid),
            "a read miss on a line it listed"
        );
    }
    let state = if entry.sharers.is_empty() {
        entry.owned = true;
        LineState::Exclusive
    } else {
        if entry.owned {
            if let Some(owner) = entry.sharers.only() {
                let cache = &mut caches[owner as usize];
                if let Some(slot) = cache.find(line) {
                    cache.set_state(slot, LineState::Shared);
                }
            }
            entry.owned = false;
        }
        LineState::Shared
    };
    entry.sharers.insert(pid, words);
    state
}

#[cfg(test)]
#[path = "coherence_check.rs"]
mod coherence_check;
