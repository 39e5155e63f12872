//! A set of processors as a bitmap scanned lowest-numbered first, with their count beside it:
//! the engine's idle processors, so that "is any processor idle?", asked after nearly every
//! event, is one compare at any machine size instead of a scan over `processors / 64` words (32
//! instructions per event at 4,096 processors before; see `examples/engine_scaling.rs`); and
//! [`SchedCtx`](crate::sched::SchedCtx)'s vacant processors, which sched_ext's idle-CPU pick
//! reads 64 at a time instead of scanning every processor.

/// A set of processor indices: membership, count, and the lowest member at or after an index.
#[derive(Clone, Debug, Default)]
pub(crate) struct ProcSet {
    words: Vec<u64>,
    count: usize,
}

impl ProcSet {
    /// Every one of `n` processors in the set.
    pub(crate) fn all(n: usize) -> Self {
        let mut words = vec![0u64; n.div_ceil(64)];
        for p in 0..n {
            words[p / 64] |= 1 << (p % 64);
        }
        ProcSet { words, count: n }
    }

    /// None of `n` processors in the set.
    pub(crate) fn none(n: usize) -> Self {
        ProcSet {
            words: vec![0u64; n.div_ceil(64)],
            count: 0,
        }
    }

    /// Whether `p` is in the set.
    #[inline]
    pub(crate) fn contains(&self, p: usize) -> bool {
        self.words[p / 64] >> (p % 64) & 1 == 1
    }

    /// How many processors the set holds.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Whether the set is empty.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Adds `p`.
    #[inline]
    pub(crate) fn insert(&mut self, p: usize) {
        let w = &mut self.words[p / 64];
        let bit = 1 << (p % 64);
        self.count += usize::from(*w & bit == 0);
        *w |= bit;
    }

    /// Removes `p`. An empty set returns at once: a busy machine's dispatches find it so.
    #[inline]
    pub(crate) fn remove(&mut self, p: usize) {
        if self.count == 0 {
            return;
        }
        let w = &mut self.words[p / 64];
        let bit = 1 << (p % 64);
        self.count -= usize::from(*w & bit != 0);
        *w &= !bit;
    }

    /// The lowest-numbered processor of the set at or after `from`.
    pub(crate) fn next_from(&self, from: usize) -> Option<usize> {
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

    /// The lowest-numbered processor of the set at or after `from` that `other` lacks, 64 at a
    /// time (`other` may be smaller: past its end it holds nothing).
    pub(crate) fn next_from_outside(&self, other: &ProcSet, from: usize) -> Option<usize> {
        let mut w = from / 64;
        let mut mask = !0u64 << (from % 64);
        loop {
            let bits = *self.words.get(w)? & !other.words.get(w).copied().unwrap_or(0) & mask;
            if bits != 0 {
                return Some(w * 64 + bits.trailing_zeros() as usize);
            }
            w += 1;
            mask = !0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ProcSet;

    #[test]
    fn the_count_follows_the_bits_and_the_scan_goes_up() {
        let mut s = ProcSet::all(130);
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

    #[test]
    fn the_scan_outside_another_set_skips_its_members() {
        let all = ProcSet::all(200);
        let mut taken = ProcSet::none(200);
        for p in (0..70).chain([130, 131]) {
            taken.insert(p);
        }
        assert_eq!(all.next_from_outside(&taken, 0), Some(70));
        assert_eq!(all.next_from_outside(&taken, 129), Some(129));
        assert_eq!(all.next_from_outside(&taken, 130), Some(132));
        assert_eq!(all.next_from_outside(&taken, 200), None);
        // A smaller set holds nothing past its end.
        assert_eq!(all.next_from_outside(&ProcSet::none(10), 150), Some(150));
        let mut full = ProcSet::none(200);
        (0..200).for_each(|p| full.insert(p));
        assert_eq!(all.next_from_outside(&full, 0), None);
    }
}
