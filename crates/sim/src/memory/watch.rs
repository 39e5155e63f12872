//! Watching a line for a parked poller: a test-and-test-and-set waiter (DiBella et al. 1992,
//! section 2.1) whose reads of a held lock hit in its own cache makes no bus traffic and pays a
//! fixed cost per read, so the engine may stop stepping it until the line leaves its cache. The
//! memory system lists the processor once that happens (another processor's write invalidates
//! the copy, a flush drops it), and counts the hits the engine skipped.

use super::system::{MemorySystem, NONE};
use super::Charge;
use crate::ids::{Cycles, ProcId};

impl MemorySystem {
    /// Watches `addr`'s line in `p`'s cache: true when the model is on and the line is resident
    /// there (every read of it hits until it leaves), and then `p` is listed by
    /// [`take_woken`](Self::take_woken) once the line leaves `p`'s cache. False (nothing
    /// watched) otherwise.
    pub fn watch(&mut self, p: ProcId, addr: u64) -> bool {
        let pi = self.check(p, addr);
        if !self.cfg.enabled || self.line_state(p, addr).is_none() {
            return false;
        }
        self.watched[pi] = addr >> self.line_shift;
        true
    }

    /// Stops watching for `p` (its line is not listed when it leaves).
    pub fn unwatch(&mut self, p: ProcId) {
        let pi = self.check_proc(p);
        self.watched[pi] = NONE;
    }

    /// Whether some watched line has left its cache since the last [`take_woken`](Self::take_woken).
    #[inline]
    pub fn has_woken(&self) -> bool {
        !self.woken.is_empty()
    }

    /// The processors whose watched line left their cache, in order, swapped into `out`
    /// (cleared first).
    pub fn take_woken(&mut self, out: &mut Vec<u32>) {
        out.clear();
        std::mem::swap(out, &mut self.woken);
    }

    /// Counts `n` read hits by `p` (the polls a parked waiter made without an event) in its
    /// statistics, as [`access`](Self::access) would have; returns their summed charge.
    pub fn record_hits(&mut self, p: ProcId, n: u64) -> Charge {
        let pi = self.check_proc(p);
        let hit: Cycles = self.cfg.hit_cycles;
        let ch = Charge {
            useful: n * hit,
            refs: n,
            done: true,
            ..Charge::default()
        };
        self.stats[pi].record(&ch);
        ch
    }

    /// `p`'s watched line left its cache: list `p`.
    pub(crate) fn lost(&mut self, pi: usize) {
        if self.watched[pi] != NONE {
            self.watched[pi] = NONE;
            self.woken.push(pi as u32);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{AccessKind, MemoryConfig, Placement};

    #[test]
    fn a_watched_line_lists_its_processor_once_when_another_writes_it() {
        let cfg = MemoryConfig::sequent_symmetry();
        let mut m = MemorySystem::new(&cfg, 3).unwrap();
        let r = m.alloc(4096, Placement::Uma, None);
        let (p0, p1, p2) = (ProcId(0), ProcId(1), ProcId(2));
        // Not resident yet: nothing to watch.
        assert!(!m.watch(p0, r.base));
        m.access(p0, 0, r.base, AccessKind::Read);
        m.access(p2, 0, r.base, AccessKind::Read);
        assert!(m.watch(p0, r.base));
        // A read elsewhere, or a write to another line, leaves the copy.
        m.access(p1, 10, r.base, AccessKind::Read);
        m.access(p1, 20, r.base + 64, AccessKind::Write);
        assert!(!m.has_woken());
        m.access(p1, 30, r.base + 8, AccessKind::Write);
        let mut woken = Vec::new();
        m.take_woken(&mut woken);
        assert_eq!(woken, [0]);
        assert!(!m.has_woken());
        // A flush drops a watched line too; an unwatched processor is never listed.
        m.access(p0, 40, r.base, AccessKind::Read);
        assert!(m.watch(p0, r.base));
        m.unwatch(p0);
        m.flush(p0);
        assert!(!m.has_woken());
        m.access(p0, 50, r.base, AccessKind::Read);
        assert!(m.watch(p0, r.base));
        m.flush(p0);
        m.take_woken(&mut woken);
        assert_eq!(woken, [0]);
        let before = m.stats(p0).refs;
        let c = m.record_hits(p0, 5);
        assert_eq!(
            (m.stats(p0).refs - before, c.refs, c.useful),
            (5, 5, 5 * cfg.hit_cycles)
        );
    }
}
