//! The shared second cache level of the memory model (Weibel's Cortex-A53, section 2: a 128 KB
//! L2 shared by the four cores): its configuration and validation. The level itself is a cache
//! of the same structure as the first level's, held by the memory system.

use serde::{Deserialize, Serialize};

use super::{latency, MemoryConfig, MAX_CACHE_BYTES};
use crate::ids::Cycles;
use crate::memory::MemoryError;

/// A shared second-level cache: a first-level miss that finds its line here costs `hit_cycles`;
/// one that misses here too costs the memory's `miss_cycles` (or the NUMA latency) and installs
/// the line. Not inclusive: first-level evictions and invalidations leave it alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct L2Config {
    /// Capacity in bytes, shared by all processors (default 131,072); lines are `line_bytes`.
    pub cache_bytes: u64,
    /// Ways per set as for the first level: 0 = fully associative, 1 = direct-mapped (default 16).
    pub associativity: u32,
    /// Total cycles of a first-level miss served by this level (default 12).
    pub hit_cycles: Cycles,
}

impl Default for L2Config {
    fn default() -> Self {
        L2Config {
            cache_bytes: 128 * 1024,
            associativity: 16,
            hit_cycles: 12,
        }
    }
}

impl L2Config {
    /// The first-level configuration `base` with this level's size and associativity, so the
    /// same cache structure (and geometry arithmetic) serves both levels.
    pub fn geometry(&self, base: &MemoryConfig) -> MemoryConfig {
        MemoryConfig {
            cache_bytes: self.cache_bytes,
            associativity: self.associativity,
            l2: None,
            ..base.clone()
        }
    }
}

impl MemoryConfig {
    /// Checks the second level: a size of whole lines that its associativity divides, and a
    /// latency between a first-level hit and a memory miss.
    pub(super) fn validate_l2(&self, l2: &L2Config) -> Result<(), MemoryError> {
        let line = u64::from(self.line_bytes);
        let bytes = l2.cache_bytes;
        if bytes < line || bytes > MAX_CACHE_BYTES || bytes % line != 0 {
            return Err(MemoryError::field(
                "l2.cache_bytes",
                format!(
                    "{bytes} is not valid; use a multiple of line_bytes ({line}) up to \
                     {MAX_CACHE_BYTES} bytes (1 GiB)"
                ),
            ));
        }
        let geo = l2.geometry(self);
        let (lines, assoc) = (geo.lines(), u64::from(l2.associativity));
        if assoc > lines || (assoc != 0 && lines % assoc != 0) {
            return Err(MemoryError::field(
                "l2.associativity",
                format!(
                    "{assoc} does not divide the {lines} lines of the second level; use 0 (fully \
                     associative), 1 (direct-mapped) or a divisor of {lines}"
                ),
            ));
        }
        latency("l2.hit_cycles", l2.hit_cycles, self.hit_cycles)?;
        if l2.hit_cycles > self.miss_cycles {
            return Err(MemoryError::field(
                "l2.hit_cycles",
                format!(
                    "{} cycles is slower than memory (miss_cycles = {}); use {} to {}",
                    l2.hit_cycles, self.miss_cycles, self.hit_cycles, self.miss_cycles
                ),
            ));
        }
        Ok(())
    }
}
