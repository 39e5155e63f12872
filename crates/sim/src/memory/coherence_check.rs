//! The test-only consistency check of the memory system (system.rs): the directory's listings
//! against what the caches hold.

use super::MemorySystem;
use crate::memory::cache::{Cache, LineState};

impl MemorySystem {
    /// Asserts that the directory and the caches agree: every resident line is listed (and,
    /// without silent evictions, only those), an owned line has at most one holder, the
    /// one listed, in Exclusive or Modified state, and unowned lines are Shared everywhere.
    pub(crate) fn check_coherence(&self) {
        if !self.cfg.enabled {
            return;
        }
        let mut listed = 0u64;
        self.dir.for_each(|line, e| {
            let holders: Vec<usize> = (0..self.caches.len())
                .filter(|&p| self.caches[p].find(line).is_some())
                .collect();
            for (p, cache) in self.caches.iter().enumerate() {
                // Without silent evictions the listing is exact.
                let here = e.sharers.contains(p as u32);
                let held = cache.find(line);
                assert!(
                    here == held.is_some() || self.silent && here,
                    "line {line} cpu {p}"
                );
                if let Some(slot) = held {
                    let owned_state = cache.state(slot) != LineState::Shared;
                    assert_eq!(owned_state, e.owned, "line {line} processor {p}");
                }
            }
            if e.owned {
                assert!(e.sharers.len() == 1, "owned line {line}");
            }
            listed += holders.len() as u64;
        });
        let resident: u64 = self.caches.iter().map(Cache::resident).sum();
        assert_eq!(listed, resident, "lines resident but not in the directory");
    }
}
