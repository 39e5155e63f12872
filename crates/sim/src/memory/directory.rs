//! The coherence directory: for every line ever touched, which caches hold it, whether one of
//! them owns it (Exclusive or Modified), and until when the line is busy (held by an atomic or a
//! miss in flight). This is the invalidation-based protocol Gupta et al. 1991 (section 3) assume,
//! and the per-line busy time is what turns a centralized lock or counter into the hot spot
//! George 1990 (section 2) measures.
//!
//! Evictions from fully (or highly) associative caches, the list form, are silent: such a cache
//! does not tell the directory, so a line's sharer set lists every cache that holds it and
//! perhaps some that held it. A miss prunes the listings left behind (a write miss invalidates
//! only the caches that still hold the line, a read miss drops the rest before it decides
//! Exclusive or Shared), so every decision and count is the one an exact directory gives, and a
//! sweep's eviction does not reach its victim's entry. Set-associative caches evict seldom and
//! share often (locks, bitmaps), so they tell the directory at once and keep listings exact,
//! sparing their read misses the pruning's look into every listed cache.
//!
//! Sharer sets stay compact for up to 65,536 processors: no sharer, one, a few inline, or a
//! bitset once more than [`FEW`] caches share a line. Entries live in a two-level table indexed
//! by line number (addresses come from a bump allocator, so line numbers are dense), allocated
//! one chunk at a time on first touch.

use crate::ids::Cycles;

/// Sharer sets up to this size are stored inline.
pub const FEW: usize = 4;

const CHUNK_SHIFT: u32 = 8;
const CHUNK_LINES: usize = 1 << CHUNK_SHIFT;

/// The set of caches holding a line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) enum Sharers {
    /// No cache holds the line.
    #[default]
    Empty,
    /// Exactly one cache holds it.
    One(u32),
    /// Two to [`FEW`] caches, in insertion order.
    Few { len: u8, ids: [u32; FEW] },
    /// More than [`FEW`] caches (the set may later shrink; it stays a bitset until empty).
    Many { count: u32, bits: Box<[u64]> },
}

impl Sharers {
    /// Number of caches holding the line.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        match self {
            Sharers::Empty => 0,
            Sharers::One(_) => 1,
            Sharers::Few { len, .. } => usize::from(*len),
            Sharers::Many { count, .. } => *count as usize,
        }
    }

    /// Whether no cache holds the line.
    pub(crate) fn is_empty(&self) -> bool {
        matches!(self, Sharers::Empty)
    }

    /// Whether no cache but perhaps `p`'s holds the line.
    #[inline]
    pub(crate) fn is_empty_but(&self, p: u32) -> bool {
        match self {
            Sharers::Empty => true,
            Sharers::One(q) => *q == p,
            _ => false,
        }
    }

    /// Whether processor `p`'s cache holds the line.
    pub(crate) fn contains(&self, p: u32) -> bool {
        match self {
            Sharers::Empty => false,
            Sharers::One(q) => *q == p,
            Sharers::Few { len, ids } => ids[..usize::from(*len)].contains(&p),
            Sharers::Many { bits, .. } => bits[(p / 64) as usize] >> (p % 64) & 1 == 1,
        }
    }

    /// The holder when exactly one cache holds the line.
    pub(crate) fn only(&self) -> Option<u32> {
        match self {
            Sharers::One(q) => Some(*q),
            Sharers::Few { len: 1, ids } => Some(ids[0]),
            Sharers::Many { count: 1, bits } => bits
                .iter()
                .enumerate()
                .find(|(_, &w)| w != 0)
                .map(|(i, w)| i as u32 * 64 + w.trailing_zeros()),
            _ => None,
        }
    }

    /// Adds `p` (a bitset, if needed, gets `words` 64-bit words).
    pub(crate) fn insert(&mut self, p: u32, words: usize) {
        if self.contains(p) {
            return;
        }
        match self {
            Sharers::Empty => *self = Sharers::One(p),
            Sharers::One(q) => {
                let mut ids = [0; FEW];
                ids[0] = *q;
                ids[1] = p;
                *self = Sharers::Few { len: 2, ids };
            }
            Sharers::Few { len, ids } if usize::from(*len) < FEW => {
                ids[usize::from(*len)] = p;
                *len += 1;
            }
            Sharers::Few { len, ids } => {
                let mut bits = vec![0u64; words].into_boxed_slice();
                for &q in ids[..usize::from(*len)].iter().chain([&p]) {
                    bits[(q / 64) as usize] |= 1 << (q % 64);
                }
                *self = Sharers::Many {
                    count: u32::from(*len) + 1,
                    bits,
                };
            }
            Sharers::Many { count, bits } => {
                bits[(p / 64) as usize] |= 1 << (p % 64);
                *count += 1;
            }
        }
    }

    /// Removes `p`; returns whether it was present.
    pub(crate) fn remove(&mut self, p: u32) -> bool {
        if !self.contains(p) {
            return false;
        }
        match self {
            Sharers::Empty => unreachable!("contains() was true"),
            Sharers::One(_) => *self = Sharers::Empty,
            Sharers::Few { len, ids } => {
                let n = usize::from(*len);
                let at = ids[..n].iter().position(|&q| q == p).expect("present");
                ids.copy_within(at + 1..n, at);
                *len -= 1;
                if *len == 1 {
                    *self = Sharers::One(ids[0]);
                }
            }
            Sharers::Many { count, bits } => {
                bits[(p / 64) as usize] &= !(1 << (p % 64));
                *count -= 1;
                if *count == 0 {
                    *self = Sharers::Empty;
                }
            }
        }
        true
    }

    /// Keeps, in their order, only the holders `still` says hold the line (the listings left
    /// by silent evictions go); the set ends as the same removals one by one would leave it.
    pub(crate) fn retain(&mut self, mut still: impl FnMut(u32) -> bool) {
        match self {
            Sharers::Empty => {}
            Sharers::One(q) => {
                if !still(*q) {
                    *self = Sharers::Empty;
                }
            }
            Sharers::Few { len, ids } => {
                let mut kept = 0;
                for i in 0..usize::from(*len) {
                    if still(ids[i]) {
                        ids[kept] = ids[i];
                        kept += 1;
                    }
                }
                match kept {
                    0 => *self = Sharers::Empty,
                    1 => *self = Sharers::One(ids[0]),
                    n => *len = n as u8,
                }
            }
            Sharers::Many { count, bits } => {
                for (i, word) in bits.iter_mut().enumerate() {
                    let mut w = *word;
                    while w != 0 {
                        let b = w.trailing_zeros();
                        if !still(i as u32 * 64 + b) {
                            *word &= !(1 << b);
                            *count -= 1;
                        }
                        w &= w - 1;
                    }
                }
                if *count == 0 {
                    *self = Sharers::Empty;
                }
            }
        }
    }

    /// Appends every holder except `keep` to `out` (ascending processor order for bitsets,
    /// insertion order otherwise), then leaves `keep` as the only holder.
    pub(crate) fn take_others(&mut self, keep: u32, out: &mut Vec<u32>) {
        let mut push = |q: u32| {
            if q != keep {
                out.push(q);
            }
        };
        match self {
            Sharers::Empty => {}
            Sharers::One(q) => push(*q),
            Sharers::Few { len, ids } => ids[..usize::from(*len)].iter().for_each(|&q| push(q)),
            Sharers::Many { bits, .. } => {
                for (i, &word) in bits.iter().enumerate() {
                    let mut w = word;
                    while w != 0 {
                        push(i as u32 * 64 + w.trailing_zeros());
                        w &= w - 1;
                    }
                }
            }
        }
        *self = Sharers::One(keep);
    }
}

/// Bytes of directory state per line touched (entries are allocated 256 lines at a time).
pub(crate) const ENTRY_BYTES: u64 = std::mem::size_of::<DirEntry>() as u64;

/// Directory state of one line.
#[derive(Clone, Debug, Default)]
pub(crate) struct DirEntry {
    /// The time until which the line is held by an atomic or (with `serialize_misses`) a miss.
    pub(crate) busy_until: Cycles,
    /// Caches holding the line.
    pub(crate) sharers: Sharers,
    /// True when the single holder has it Exclusive or Modified.
    pub(crate) owned: bool,
}

impl DirEntry {
    /// Drops `p` as a holder (eviction or flush); clears ownership with it.
    pub(crate) fn drop_holder(&mut self, p: u32) {
        if self.sharers.remove(p) {
            self.owned = false;
        }
    }
}

/// All directory entries, by line number.
#[derive(Clone, Debug, Default)]
pub(crate) struct Directory {
    chunks: Vec<Option<Box<[DirEntry]>>>,
}

impl Directory {
    /// The entry of `line`, created on first touch.
    #[inline(always)]
    pub(crate) fn entry_mut(&mut self, line: u64) -> &mut DirEntry {
        let chunk = (line >> CHUNK_SHIFT) as usize;
        if chunk >= self.chunks.len() {
            self.chunks.resize_with(chunk + 1, || None);
        }
        let entries = self.chunks[chunk].get_or_insert_with(|| {
            (0..CHUNK_LINES)
                .map(|_| DirEntry::default())
                .collect::<Vec<_>>()
                .into_boxed_slice()
        });
        &mut entries[(line as usize) & (CHUNK_LINES - 1)]
    }

    /// Calls `f` with every entry ever touched, in line order (for consistency checks).
    #[cfg(test)]
    pub(crate) fn for_each(&self, mut f: impl FnMut(u64, &DirEntry)) {
        for (c, chunk) in self.chunks.iter().enumerate() {
            for (i, e) in chunk.iter().flat_map(|c| c.iter().enumerate()) {
                f(((c as u64) << CHUNK_SHIFT) + i as u64, e);
            }
        }
    }

    /// The entry of `line`, if it was ever touched.
    pub(crate) fn get(&self, line: u64) -> Option<&DirEntry> {
        let chunk = (line >> CHUNK_SHIFT) as usize;
        self.chunks
            .get(chunk)?
            .as_ref()
            .map(|e| &e[(line as usize) & (CHUNK_LINES - 1)])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_from_one_to_few_to_many_and_back() {
        let words = 1024 / 64;
        let mut s = Sharers::default();
        assert!(s.is_empty());
        s.insert(7, words);
        assert_eq!(s, Sharers::One(7));
        assert_eq!(s.only(), Some(7));
        for p in [3, 900, 12] {
            s.insert(p, words);
        }
        assert!(matches!(s, Sharers::Few { len: 4, .. }));
        s.insert(3, words); // already there
        assert_eq!(s.len(), 4);
        s.insert(1000, words);
        assert!(matches!(s, Sharers::Many { count: 5, .. }));
        for p in [3, 7, 12, 900, 1000] {
            assert!(s.contains(p));
        }
        assert!(!s.contains(8));
        for p in [3, 7, 12, 900] {
            assert!(s.remove(p));
        }
        assert!(!s.remove(3));
        assert_eq!(s.only(), Some(1000));
        assert!(s.remove(1000));
        assert!(s.is_empty());
    }

    #[test]
    fn few_shrinks_to_one() {
        let mut s = Sharers::default();
        s.insert(1, 1);
        s.insert(2, 1);
        s.remove(1);
        assert_eq!(s, Sharers::One(2));
    }

    #[test]
    fn take_others_keeps_one_holder() {
        let mut s = Sharers::default();
        for p in [5, 1, 9, 2, 7, 3] {
            s.insert(p, 1);
        }
        let mut out = Vec::new();
        s.take_others(9, &mut out);
        assert_eq!(out, vec![1, 2, 3, 5, 7]);
        assert_eq!(s, Sharers::One(9));
        out.clear();
        let mut s = Sharers::One(4);
        s.take_others(4, &mut out);
        assert!(out.is_empty());
        let mut s = Sharers::Empty;
        s.take_others(4, &mut out);
        assert_eq!(s, Sharers::One(4));
    }

    /// A set's form and its holders in order (a `Few` list's slots past its length aside).
    fn shape(s: &Sharers) -> (u8, Vec<u32>) {
        match s {
            Sharers::Empty => (0, vec![]),
            Sharers::One(q) => (1, vec![*q]),
            Sharers::Few { len, ids } => (2, ids[..usize::from(*len)].to_vec()),
            Sharers::Many { count, .. } => {
                let mut out = Vec::new();
                s.clone().take_others(u32::MAX, &mut out);
                assert_eq!(out.len(), *count as usize, "a bitset's count");
                (3, out)
            }
        }
    }

    #[test]
    fn retain_leaves_what_removals_would() {
        for holders in [
            vec![4],
            vec![4, 8],
            vec![1, 4, 8, 2],
            vec![1, 4, 8, 2, 70, 9],
        ] {
            for gone in 0..1u32 << holders.len() {
                let mut set = Sharers::default();
                holders.iter().for_each(|&p| set.insert(p, 2));
                let mut removed = set.clone();
                let left = |i: usize| gone >> i & 1 == 0;
                for (i, &p) in holders.iter().enumerate() {
                    if !left(i) {
                        removed.remove(p);
                    }
                }
                set.retain(|q| left(holders.iter().position(|&p| p == q).unwrap()));
                assert_eq!(
                    shape(&set),
                    shape(&removed),
                    "holders {holders:?}, gone {gone:#b}"
                );
            }
        }
    }

    #[test]
    fn directory_entries_persist() {
        let mut d = Directory::default();
        assert!(d.get(10_000).is_none());
        d.entry_mut(10_000).busy_until = 42;
        assert_eq!(d.get(10_000).unwrap().busy_until, 42);
        assert_eq!(d.get(10_001).unwrap().busy_until, 0);
        assert!(d.get(1 << 40).is_none());
    }
}
