//! Memory-system configuration: cache geometry, latencies, NUMA and bus options, presets and
//! validation. The defaults are the machine of Gupta, Tucker & Urushibara 1991, section 3 (the
//! Tango architecture simulator: 64 KB cache per CPU, 16-byte lines, hit 1 cycle, miss 20 cycles,
//! invalidation coherence, no bus contention); the NUMA preset follows George 1990, section 1.2
//! (BBN GP1000, remote:local access time 5:1).
//!
//! Every field has a default, so a TOML `[machine.memory]` table may override any one of them;
//! unknown fields are rejected.

use serde::{Deserialize, Serialize};

use super::MemoryError;

mod l2;
use crate::ids::Cycles;
pub use l2::L2Config;

/// Bytes per page: the allocation granularity of regions and of interleaved placement.
pub const PAGE_BYTES: u64 = 4096;
/// The largest cache the model accepts (1 GiB per processor).
pub const MAX_CACHE_BYTES: u64 = 1 << 30;
/// The smallest line size the model accepts, in bytes.
pub const MIN_LINE_BYTES: u32 = 4;
/// The largest line size the model accepts, in bytes (one page).
pub const MAX_LINE_BYTES: u32 = PAGE_BYTES as u32;
/// The largest latency (of any kind) the model accepts, in cycles.
pub const MAX_LATENCY: Cycles = 1_000_000;
/// Default most cycles of a bulk access the engine charges in one step.
pub const DEFAULT_CHUNK_CYCLES: Cycles = 10_000;
/// The largest `chunk_cycles` the model accepts.
pub const MAX_CHUNK_CYCLES: Cycles = 1 << 40;
/// The most processors (and NUMA nodes) the model accepts.
pub const MAX_PROCESSORS: u32 = 65_536;

/// Parameters of the memory model: one cache per processor, invalidation coherence, optional NUMA
/// home nodes and an optional shared bus. `Default` is [`MemoryConfig::tango`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MemoryConfig {
    /// When false there is no memory model at all: every reference (atomics included) costs
    /// `hit_cycles`, nothing misses and nothing contends. Default true.
    pub enabled: bool,
    /// Cache capacity per processor in bytes (default 65,536).
    pub cache_bytes: u64,
    /// Cache line size in bytes, a power of two from 4 to 4096 (default 16).
    pub line_bytes: u32,
    /// Ways per set: 0 = fully associative (Gupta's caches; the default), 1 = direct-mapped,
    /// N = N-way set associative. Must divide the number of lines.
    pub associativity: u32,
    /// Cycles of a reference that hits in the cache (default 1); this is the "useful" part of
    /// every reference.
    pub hit_cycles: Cycles,
    /// Total cycles of a reference that misses (default 20), used when NUMA is off or the line
    /// has no home node ([`Placement::Uma`](super::Placement::Uma)).
    pub miss_cycles: Cycles,
    /// Extra cycles an atomic read-modify-write holds its line, on top of the hit or miss
    /// (default 20, one more memory round trip).
    pub atomic_cycles: Cycles,
    /// When true (the default), misses by several processors to the same line serialize on the
    /// line's busy-until time, as atomics always do; when false misses never wait.
    pub serialize_misses: bool,
    /// NUMA home nodes with local / remote miss latencies; `None` (the default) is a UMA machine.
    pub numa: Option<NumaConfig>,
    /// A single shared bus every miss occupies; `None` (the default) models no bus contention.
    pub bus: Option<BusConfig>,
    /// A second cache level shared by every processor (Weibel's Cortex-A53: 128 KB); `None`
    /// (the default) is a machine whose first-level misses all go to memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub l2: Option<L2Config>,
    /// Most cycles the engine charges a bulk access in one step (default 10,000). Finer chunks
    /// interleave processors more faithfully (Tango's lowest-virtual-time-first rule, Gupta et
    /// al. 1991 section 2) at the cost of more engine events; preemption and quantum expiry are
    /// noticed between chunks.
    pub chunk_cycles: Cycles,
}

/// Non-uniform memory access: memory is split among `nodes` nodes, each processor belongs to one
/// node, and a miss costs `local_cycles` or `remote_cycles` depending on where the line's home is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NumaConfig {
    /// Number of memory nodes (default 1).
    pub nodes: u32,
    /// Total cycles of a miss served by the processor's own node (default 4).
    pub local_cycles: Cycles,
    /// Total cycles of a miss served by another node (default 20, i.e. 5:1 as on the GP1000).
    pub remote_cycles: Cycles,
    /// How processors are assigned to nodes (default contiguous blocks).
    pub mapping: NodeMapping,
}

/// How processors are assigned to NUMA nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeMapping {
    /// Contiguous blocks: processor `p` of `P` is on node `p * nodes / P` (processors 0..P/nodes
    /// on node 0, and so on). With one processor per node both mappings coincide.
    #[default]
    Blocks,
    /// Round robin: processor `p` is on node `p % nodes`.
    RoundRobin,
    /// One node per processor whatever `nodes` says: processor `p` is node `p` (George's GP1000,
    /// where every node is a processor with its own memory, from 2 to 256 of them).
    PerProcessor,
}

/// A single global bus that every miss (an ownership upgrade, which invalidates the other copies,
/// included) occupies for `transfer_cycles`; concurrent transactions queue for it in the order
/// they want it (a snoopy-bus machine with bus contention, unlike Gupta's contention-free bus).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BusConfig {
    /// Cycles one transaction holds the bus (default 4: a 16-byte line over a 32-bit bus).
    pub transfer_cycles: Cycles,
    /// Whether every atomic (test-and-set, ...) is a locked bus transaction even on a line its
    /// processor holds exclusive, as the Sequent Symmetry's locked read-modify-write cycles were
    /// (default false: an owned line's atomic completes in the cache).
    pub locked_atomics: bool,
}

impl Default for MemoryConfig {
    fn default() -> Self {
        Self::tango()
    }
}

impl Default for NumaConfig {
    fn default() -> Self {
        NumaConfig {
            nodes: 1,
            local_cycles: 4,
            remote_cycles: 20,
            mapping: NodeMapping::Blocks,
        }
    }
}

impl Default for BusConfig {
    fn default() -> Self {
        BusConfig {
            transfer_cycles: 4,
            locked_atomics: false,
        }
    }
}

impl MemoryConfig {
    /// Gupta et al.'s Tango machine: 64 KB fully associative LRU cache per processor, 16-byte
    /// lines, hit 1 cycle, miss 20 cycles, atomics hold the line 20 more cycles, misses to one
    /// line serialize, no NUMA, no bus contention.
    pub fn tango() -> Self {
        MemoryConfig {
            enabled: true,
            cache_bytes: 64 * 1024,
            line_bytes: 16,
            associativity: 0,
            hit_cycles: 1,
            miss_cycles: 20,
            atomic_cycles: 20,
            serialize_misses: true,
            numa: None,
            bus: None,
            l2: None,
            chunk_cycles: DEFAULT_CHUNK_CYCLES,
        }
    }

    /// A BBN GP1000-like NUMA machine with `nodes` memory nodes (George 1990); the preset
    /// [`MachineConfig::bbn_gp1000`](crate::MachineConfig::bbn_gp1000) maps one node to each
    /// processor ([`NodeMapping::PerProcessor`]) whatever the processor count. The real machine
    /// does not cache shared data; we model that as a tiny 1 KB fully associative cache (enough
    /// for a few spin variables, too small to keep a working set across scheduling), hit 1 cycle,
    /// local miss 4 cycles, remote miss 20 cycles (5:1), `miss_cycles` 20 for memory without a
    /// home node, atomics hold the line 20 more cycles, processors on nodes in contiguous blocks.
    pub fn bbn_gp1000(nodes: u32) -> Self {
        MemoryConfig {
            enabled: true,
            cache_bytes: 1024,
            line_bytes: 16,
            associativity: 0,
            hit_cycles: 1,
            miss_cycles: 20,
            atomic_cycles: 20,
            serialize_misses: true,
            numa: Some(NumaConfig {
                nodes,
                local_cycles: 4,
                remote_cycles: 20,
                mapping: NodeMapping::Blocks,
            }),
            bus: None,
            l2: None,
            chunk_cycles: DEFAULT_CHUNK_CYCLES,
        }
    }

    /// A Sequent Symmetry (DiBella et al. 1992): 64 KB two-way set-associative cache per
    /// processor with 16-byte lines, hit 1 cycle; a miss or an atomic's bus cycle about 0.75 µs
    /// (12 cycles at 16 MHz) over one shared bus that a miss holds 4 cycles, and every atomic is a
    /// locked bus transaction, whether or not it succeeds. Estimates from the
    /// Symmetry's published organisation, not fitted to the paper's tables.
    pub fn sequent_symmetry() -> Self {
        MemoryConfig {
            enabled: true,
            cache_bytes: 64 * 1024,
            line_bytes: 16,
            associativity: 2,
            hit_cycles: 1,
            miss_cycles: 12,
            atomic_cycles: 12,
            serialize_misses: true,
            numa: None,
            bus: Some(BusConfig {
                transfer_cycles: 4,
                locked_atomics: true,
            }),
            l2: None,
            chunk_cycles: DEFAULT_CHUNK_CYCLES,
        }
    }

    /// A quad-core Cortex-A53 as on the Raspberry Pi 3 (Weibel, section 2): a 16 KB four-way L1
    /// per core with 64-byte lines (hit 1 cycle), a shared 128 KB sixteen-way L2 (a first-level
    /// miss served there: 15 cycles), memory 120 cycles (100 ns at 1.2 GHz), atomics 20 cycles
    /// more. Latencies are estimates from ARM's published figures for the core, not fitted to
    /// the paper's tables.
    pub fn cortex_a53() -> Self {
        MemoryConfig {
            enabled: true,
            cache_bytes: 16 * 1024,
            line_bytes: 64,
            associativity: 4,
            hit_cycles: 1,
            miss_cycles: 120,
            atomic_cycles: 20,
            serialize_misses: true,
            numa: None,
            bus: None,
            l2: Some(L2Config {
                cache_bytes: 128 * 1024,
                associativity: 16,
                hit_cycles: 15,
            }),
            chunk_cycles: DEFAULT_CHUNK_CYCLES,
        }
    }

    /// No memory model: every reference and atomic costs `hit_cycles` (1), nothing misses,
    /// nothing contends. For experiments about scheduling alone.
    pub fn none() -> Self {
        MemoryConfig {
            enabled: false,
            ..Self::tango()
        }
    }

    /// Number of lines in one processor's cache.
    pub fn lines(&self) -> u64 {
        self.cache_bytes / u64::from(self.line_bytes.max(1))
    }

    /// Ways per set after resolving `associativity = 0` (fully associative) to the line count.
    pub fn ways(&self) -> u64 {
        if self.associativity == 0 {
            self.lines()
        } else {
            u64::from(self.associativity)
        }
    }

    /// Number of sets (1 for a fully associative cache, the line count for a direct-mapped one).
    pub fn sets(&self) -> u64 {
        self.lines() / self.ways().max(1)
    }

    /// Checks the cache's geometry: the line, the size and the associativity.
    fn validate_geometry(&self) -> Result<(), MemoryError> {
        let line = self.line_bytes;
        if !line.is_power_of_two() || !(MIN_LINE_BYTES..=MAX_LINE_BYTES).contains(&line) {
            return Err(MemoryError::field(
                "line_bytes",
                format!(
                    "{line} is not valid; use a power of two from {MIN_LINE_BYTES} to \
                     {MAX_LINE_BYTES}"
                ),
            ));
        }
        let bytes = self.cache_bytes;
        if bytes < u64::from(line) || bytes > MAX_CACHE_BYTES {
            return Err(MemoryError::field(
                "cache_bytes",
                format!(
                    "{bytes} is not valid; use from one line ({line} bytes) to \
                     {MAX_CACHE_BYTES} bytes (1 GiB)"
                ),
            ));
        }
        if bytes % u64::from(line) != 0 {
            return Err(MemoryError::field(
                "cache_bytes",
                format!("{bytes} is not a multiple of line_bytes ({line})"),
            ));
        }
        let lines = self.lines();
        let assoc = u64::from(self.associativity);
        if assoc > lines || (assoc != 0 && lines % assoc != 0) {
            return Err(MemoryError::field(
                "associativity",
                format!(
                    "{assoc} does not divide the {lines} lines of the cache; use 0 (fully \
                     associative), 1 (direct-mapped) or a divisor of {lines}"
                ),
            ));
        }
        Ok(())
    }

    /// Checks that this configuration describes a usable machine with `processors` processors;
    /// the error names the offending field and what would be valid.
    pub fn validate(&self, processors: u32) -> Result<(), MemoryError> {
        if processors == 0 || processors > MAX_PROCESSORS {
            return Err(MemoryError::InvalidProcessors {
                count: processors,
                max: MAX_PROCESSORS,
            });
        }
        latency("hit_cycles", self.hit_cycles, 1)?;
        if self.chunk_cycles == 0 || self.chunk_cycles > MAX_CHUNK_CYCLES {
            return Err(MemoryError::field(
                "chunk_cycles",
                format!(
                    "{} is not valid; use 1 to {MAX_CHUNK_CYCLES}",
                    self.chunk_cycles
                ),
            ));
        }
        if !self.enabled {
            return Ok(());
        }
        latency("miss_cycles", self.miss_cycles, self.hit_cycles)?;
        latency("atomic_cycles", self.atomic_cycles, 0)?;
        self.validate_geometry()?;
        if let Some(numa) = &self.numa {
            validate_numa(numa, processors, self.hit_cycles)?;
        }
        if let Some(bus) = &self.bus {
            latency("bus.transfer_cycles", bus.transfer_cycles, 1)?;
        }
        if let Some(l2) = &self.l2 {
            self.validate_l2(l2)?;
        }
        Ok(())
    }
}

/// Checks a NUMA configuration for `processors` processors whose cache hits take `hit_cycles`.
fn validate_numa(
    numa: &NumaConfig,
    processors: u32,
    hit_cycles: Cycles,
) -> Result<(), MemoryError> {
    if numa.nodes == 0 || numa.nodes > MAX_PROCESSORS {
        return Err(MemoryError::field(
            "numa.nodes",
            format!("{} is not valid; use 1 to {MAX_PROCESSORS}", numa.nodes),
        ));
    }
    // A node without a processor would hold memory no one is local to.
    if numa.mapping != NodeMapping::PerProcessor && numa.nodes > processors {
        return Err(MemoryError::field(
            "numa.nodes",
            format!(
                "{} nodes for {processors} processors; use 1 to {processors} (or \
                     mapping = \"per_processor\")",
                numa.nodes
            ),
        ));
    }
    latency("numa.local_cycles", numa.local_cycles, hit_cycles)?;
    latency("numa.remote_cycles", numa.remote_cycles, numa.local_cycles)?;
    Ok(())
}

/// Checks `min <= value <= MAX_LATENCY`, naming `field` otherwise.
pub(super) fn latency(field: &'static str, value: Cycles, min: Cycles) -> Result<(), MemoryError> {
    if value < min || value > MAX_LATENCY {
        return Err(MemoryError::field(
            field,
            format!("{value} cycles is not valid; use {min} to {MAX_LATENCY}"),
        ));
    }
    Ok(())
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
