//! Bulk accesses — the fast path. A workload describes a stream of references ("read 4 KB at A
//! with stride 16, twice") as one [`BulkAccess`]; [`MemorySystem::run`] walks it line by line,
//! not reference by reference, charging Tango's costs (Gupta et al. 1991, section 3: hit 1 cycle,
//! miss 20), and stops once a cycle budget is spent so the engine can interleave processors in
//! virtual-time order. All references that fall in one line are charged together: the first may
//! miss, the rest hit.

use serde::{Deserialize, Serialize};

use super::region::Region;
use super::stats::Charge;
use super::system::{AccessKind, MemorySystem};
use crate::ids::{Cycles, ProcId};

/// A strided sweep over `[base, base + len)`, repeated `passes` times, that can be run in pieces.
/// References are made at `base`, `base + stride`, ... below `base + len` on every pass. Do not
/// change the public fields once it has started (call [`reset`](Self::reset) after changing them).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BulkAccess {
    /// First address.
    pub base: u64,
    /// Bytes covered by one pass.
    pub len: u64,
    /// Bytes between consecutive references (0 is treated as 1).
    pub stride: u64,
    /// What each reference does.
    pub kind: AccessKind,
    /// How many times the range is swept.
    pub passes: u32,
    /// Passes completed.
    pass: u32,
    /// Offset of the next reference within the current pass.
    offset: u64,
}

impl BulkAccess {
    /// A sweep of `len` bytes at `base` with `stride`, `passes` times, not started yet.
    pub fn new(base: u64, len: u64, stride: u64, kind: AccessKind, passes: u32) -> Self {
        BulkAccess {
            base,
            len,
            stride,
            kind,
            passes,
            pass: 0,
            offset: 0,
        }
    }

    /// A sweep of a whole region.
    pub fn over(region: Region, stride: u64, kind: AccessKind, passes: u32) -> Self {
        Self::new(region.base, region.len, stride, kind, passes)
    }

    /// Whether every pass is complete (an empty range or zero passes is done at once).
    pub fn is_done(&self) -> bool {
        self.pass >= self.passes || self.len == 0
    }

    /// Elements (reference sites) in one pass: `ceil(len / stride)`.
    pub fn elements_per_pass(&self) -> u64 {
        self.len.div_ceil(self.stride.max(1))
    }

    /// References the whole access makes (read-modify-write elements count two).
    pub fn total_refs(&self) -> u64 {
        self.elements_per_pass() * u64::from(self.passes) * self.kind.refs()
    }

    /// References made so far.
    pub fn completed_refs(&self) -> u64 {
        self.completed_elements() * self.kind.refs()
    }

    /// Starts over from the first reference of the first pass.
    pub fn reset(&mut self) {
        self.pass = 0;
        self.offset = 0;
    }

    fn completed_elements(&self) -> u64 {
        if self.is_done() {
            return self.elements_per_pass() * u64::from(self.passes);
        }
        u64::from(self.pass) * self.elements_per_pass() + self.offset / self.stride.max(1)
    }

    /// Moves the position to `elements` elements from the start.
    fn seek(&mut self, elements: u64) {
        let epp = self.elements_per_pass();
        self.pass = u32::try_from(elements / epp).unwrap_or(u32::MAX);
        self.offset = (elements % epp) * self.stride.max(1);
    }
}

impl MemorySystem {
    /// Walks `access` for processor `p`, starting at simulated time `now`, from where it stopped,
    /// until at least `budget` cycles are charged or it is done; it overshoots by less than one
    /// element (at least one element is made even with a zero budget). Reference `i` of the call
    /// is issued at `now` plus the cycles charged before it, so running an access in chunks, each
    /// starting where the previous ended, charges exactly what one uninterrupted run would.
    /// Misses book their line (and the bus) at their own issue times, which may lie ahead of
    /// other processors' clocks; keep budgets short when processors share data, as Tango's
    /// lowest-virtual-time-first rule assumes.
    ///
    /// # Panics
    /// If `p` is not a processor of this machine or the range was never allocated.
    pub fn run(
        &mut self,
        p: ProcId,
        now: Cycles,
        access: &mut BulkAccess,
        budget: Cycles,
    ) -> Charge {
        let pi = self.check_proc(p);
        if access.is_done() {
            return Charge {
                done: true,
                ..Charge::default()
            };
        }
        self.check(p, access.base);
        self.check(p, access.base + access.len - 1);
        let per_elem = access.kind.refs();
        let elem_cost = per_elem * self.cfg.hit_cycles;
        let mut ch = Charge::default();
        let elements = if self.cfg.enabled {
            self.walk(pi, now, access, budget, elem_cost, &mut ch)
        } else {
            let done = access.completed_elements();
            let left = access.elements_per_pass() * u64::from(access.passes) - done;
            let n = left.min(budget.div_ceil(elem_cost).max(1));
            access.seek(done + n);
            n
        };
        ch.refs = elements * per_elem;
        ch.useful = elements * elem_cost;
        ch.done = access.is_done();
        self.stats[pi].record(&ch);
        ch
    }

    /// The line-by-line walk; returns the elements made and adds misses and stall to `ch`.
    fn walk(
        &mut self,
        p: usize,
        now: Cycles,
        acc: &mut BulkAccess,
        budget: Cycles,
        elem_cost: Cycles,
        ch: &mut Charge,
    ) -> u64 {
        let stride = acc.stride.max(1);
        let stride_shift = stride.is_power_of_two().then(|| stride.trailing_zeros());
        let write = acc.kind.writes();
        let shift = self.line_shift;
        let pass_end = acc.base + acc.len;
        let mut consumed: Cycles = 0;
        let mut elements = 0;
        loop {
            let addr = acc.base + acc.offset;
            let line = addr >> shift;
            let stop = ((line + 1) << shift).min(pass_end);
            let span = stop - addr + stride - 1;
            let in_line = match stride_shift {
                Some(s) => span >> s,
                None => span / stride,
            };
            let stall = self.reference(p, now + consumed, line, write, ch);
            ch.stall += stall;
            consumed += elem_cost + stall;
            // The rest of this line's elements hit; take as many as the budget allows.
            let mut take = in_line;
            if in_line > 1 {
                let rest = (in_line - 1) * elem_cost;
                if consumed + rest <= budget {
                    consumed += rest;
                } else {
                    let more = budget.saturating_sub(consumed).div_ceil(elem_cost);
                    take = 1 + more;
                    consumed += more * elem_cost;
                }
            }
            elements += take;
            acc.offset += take * stride;
            if acc.offset >= acc.len {
                acc.offset = 0;
                acc.pass += 1;
                if acc.pass >= acc.passes {
                    break;
                }
            }
            if consumed >= budget {
                break;
            }
        }
        elements
    }
}
