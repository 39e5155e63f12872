//! The simulated address space: a bump allocator handing out page-aligned [`Region`]s that are
//! never reused, and the table recording where each region's memory lives (its NUMA home). Who
//! may touch a region — private to a thread, shared by a task, shared across tasks — is the
//! caller's choice of who gets which `Region`; the memory model only sees addresses.

use serde::{Deserialize, Serialize};

use super::config::PAGE_BYTES;
use super::numa::Home;

/// The first address handed out; address 0 and the page after it are never valid.
pub const BASE_ADDRESS: u64 = 0x1_0000;

/// A contiguous range of simulated addresses `[base, base + len)`.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Region {
    /// First address.
    pub base: u64,
    /// Length in bytes.
    pub len: u64,
}

impl Region {
    /// The range `[base, base + len)`.
    pub fn new(base: u64, len: u64) -> Self {
        Region { base, len }
    }

    /// One past the last address.
    pub fn end(&self) -> u64 {
        self.base + self.len
    }

    /// Whether the region has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether `addr` lies inside the region.
    pub fn contains(&self, addr: u64) -> bool {
        addr >= self.base && addr < self.end()
    }

    /// The sub-range of `len` bytes starting `offset` bytes into this region.
    ///
    /// # Panics
    /// If the sub-range does not lie inside this region (a workload programming error).
    pub fn slice(&self, offset: u64, len: u64) -> Region {
        assert!(
            offset.checked_add(len).is_some_and(|e| e <= self.len),
            "slice of {len} bytes at offset {offset} exceeds a region of {} bytes",
            self.len
        );
        Region {
            base: self.base + offset,
            len,
        }
    }

    /// The number of cache lines of `line_bytes` the region touches.
    pub fn lines(&self, line_bytes: u64) -> u64 {
        if self.len == 0 {
            return 0;
        }
        (self.end() - 1) / line_bytes - self.base / line_bytes + 1
    }
}

/// One allocated region (page-rounded) and where its memory lives.
#[derive(Clone, Copy, Debug)]
struct RegionRecord {
    base: u64,
    end: u64,
    home: Home,
}

/// The bump allocator and the region table, sorted by base address by construction.
#[derive(Clone, Debug)]
pub(crate) struct AddressSpace {
    next: u64,
    records: Vec<RegionRecord>,
    /// The record the previous lookup found: consecutive misses usually fall in one region.
    last: usize,
}

impl Default for AddressSpace {
    fn default() -> Self {
        AddressSpace {
            next: BASE_ADDRESS,
            records: Vec::new(),
            last: 0,
        }
    }
}

impl AddressSpace {
    /// One past the highest address handed out so far.
    pub(crate) fn top(&self) -> u64 {
        self.next
    }

    /// Whether `addr` was handed out (it lies in an allocated region or its page padding).
    pub(crate) fn is_allocated(&self, addr: u64) -> bool {
        (BASE_ADDRESS..self.next).contains(&addr)
    }

    /// Hands out `bytes` bytes at the next page boundary with home `home`.
    ///
    /// # Panics
    /// If the 64-bit address space is exhausted.
    pub(crate) fn alloc(&mut self, bytes: u64, home: Home) -> Region {
        let base = self.next;
        if bytes == 0 {
            return Region { base, len: 0 };
        }
        let rounded = bytes
            .checked_next_multiple_of(PAGE_BYTES)
            .and_then(|r| base.checked_add(r))
            .expect("simulated address space exhausted");
        self.records.push(RegionRecord {
            base,
            end: rounded,
            home,
        });
        self.next = rounded;
        Region { base, len: bytes }
    }

    /// The home of the region containing `addr`, if any, remembering the region found so that
    /// the next lookup in it is a single comparison.
    pub(crate) fn home_of(&mut self, addr: u64) -> Option<Home> {
        if let Some(r) = self.records.get(self.last) {
            if addr >= r.base && addr < r.end {
                return Some(r.home);
            }
        }
        let i = self.find(addr)?;
        self.last = i;
        Some(self.records[i].home)
    }

    /// The home of the region containing `addr`, if any (no hint update).
    pub(crate) fn home(&self, addr: u64) -> Option<Home> {
        self.find(addr).map(|i| self.records[i].home)
    }

    fn find(&self, addr: u64) -> Option<usize> {
        let i = self
            .records
            .partition_point(|r| r.base <= addr)
            .checked_sub(1)?;
        (addr < self.records[i].end).then_some(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regions_are_page_aligned_and_never_reused() {
        let mut s = AddressSpace::default();
        let a = s.alloc(100, Home::Uma);
        let b = s.alloc(PAGE_BYTES, Home::Node(1));
        let z = s.alloc(0, Home::Uma);
        let c = s.alloc(1, Home::Node(2));
        assert_eq!(a, Region::new(BASE_ADDRESS, 100));
        assert_eq!(b.base, BASE_ADDRESS + PAGE_BYTES);
        assert_eq!(z, Region::new(b.end(), 0));
        assert_eq!(c.base, b.end());
        assert_eq!(s.top(), c.base + PAGE_BYTES);
        assert_eq!(s.home_of(a.base + 200), Some(Home::Uma)); // page padding
        assert_eq!(s.home_of(b.base), Some(Home::Node(1)));
        assert_eq!(s.home_of(c.base + 5), Some(Home::Node(2)));
        assert_eq!(s.home_of(0), None);
        assert_eq!(s.home_of(s.top()), None);
        assert_eq!(s.home(b.base + 1), Some(Home::Node(1)));
        assert_eq!(s.home(8), None);
        assert!(s.is_allocated(c.base) && !s.is_allocated(s.top()) && !s.is_allocated(8));
    }

    #[test]
    fn slices_and_lines() {
        let r = Region::new(4096, 100);
        assert_eq!(r.slice(10, 20), Region::new(4106, 20));
        assert_eq!(r.slice(100, 0).len, 0);
        assert_eq!(r.lines(16), 7);
        assert_eq!(Region::new(4100, 16).lines(16), 2);
        assert_eq!(Region::new(4100, 0).lines(16), 0);
        assert!(r.contains(4096) && r.contains(4195) && !r.contains(4196));
    }

    #[test]
    #[should_panic(expected = "exceeds a region")]
    fn slice_out_of_range_panics() {
        Region::new(0, 10).slice(5, 6);
    }
}
