//! The idle processors: a bitmap scanned lowest-numbered first, with their count beside it, so
//! that "is any processor idle?", asked after nearly every event, is one compare at any
//! machine size instead of a scan over `processors / 64` words (32 instructions per event at
//! 4,096 processors before; see `examples/engine_scaling.rs`).

/// A set of processor indices: membership, count, and the lowest member at or after an index.
pub(super) struct IdleSet {
    words: Vec<u64>,
    count: usize,
}

impl IdleSet {
    /// Every one of `n` processors idle.
    pub(super) fn all(n: usize) -> Self {
        let mut words = vec![0u64; n.div_ceil(64)];
        for p in 0..n {
            words[p / 64] |= 1 << (p % 64);
        }
        IdleSet { words, count: n }
    }

    /// Whether `p` is idle.
    #[inline]
    pub(super) fn contains(&self, p: usize) -> bool {
        self.words[p / 64] >> (p % 64) & 1 == 1
    }

    /// Whether no processor is idle.
    #[inline]
    pub(super) fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Marks `p` idle.
    #[inline]
    pub(super) fn insert(&mut self, p: usize) {
        let w = &mut self.words[p / 64];
        let bit = 1 << (p % 64);
        self.count += usize::from(*w & bit == 0);
        *w |= bit;
    }

    /// Marks `p` busy.
    #[inline]
    pub(super) fn remove(&mut self, p: usize) {
        let w = &mut self.words[p / 64];
        let bit = 1 << (p % 64);
        self.count -= usize::from(*w & bit != 0);
        *w &= !bit;
    }

    /// The lowest-numbered idle processor at or after `from`.
    pub(super) fn next_from(&self, from: usize) -> Option<usize> {
        let mut w = from / 64;
        let mut bits = *self.words.get(w)? & (!0u64 << (from % 64));
        loop {
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w += 1;
            bits = *self.words.get(w)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::IdleSet;

    #[test]
    fn the_count_follows_the_bits_and_the_scan_goes_up() {
        let mut s = IdleSet::all(130);
        assert!(!s.is_empty());
        for p in 0..130 {
            s.remove(p);
            s.remove(p); // twice: the count must not go down twice
        }
        assert!(s.is_empty());
        assert_eq!(s.next_from(0), None);
        s.insert(129);
        s.insert(129);
        s.insert(64);
        assert!(!s.is_empty() && s.contains(64) && !s.contains(63));
        assert_eq!(s.next_from(0), Some(64));
        assert_eq!(s.next_from(65), Some(129));
        assert_eq!(s.next_from(130), None);
        s.remove(64);
        s.remove(129);
        assert!(s.is_empty());
    }
}
