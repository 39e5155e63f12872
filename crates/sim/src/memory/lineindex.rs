//! A small open-addressing hash table from line number to cache slot, used by highly associative
//! caches (Gupta's fully associative 64 KB cache, section 3) so that finding a line is O(1)
//! instead of a scan of every way. Linear probing with backward-shift deletion (no tombstones);
//! only lookups are ever made, so no iteration order can leak into results.

/// Map from line number to slot index; `keys` holds `line + 1` (0 = empty).
#[derive(Clone, Debug, Default)]
pub(crate) struct LineIndex {
    keys: Vec<u64>,
    vals: Vec<u32>,
    /// `64 - log2(capacity)`: the multiplicative hash keeps the top bits.
    shift: u32,
    len: usize,
}

const MIN_CAPACITY: usize = 16;

impl LineIndex {
    /// Number of lines in the table.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.keys.len() - 1
    }

    #[inline(always)]
    fn home(&self, line: u64) -> usize {
        (line.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The slot holding `line`, if any.
    #[inline(always)]
    pub(crate) fn get(&self, line: u64) -> Option<u32> {
        if self.keys.is_empty() {
            return None;
        }
        let key = line + 1;
        let mask = self.mask();
        let mut i = self.home(line);
        loop {
            let k = self.keys[i];
            if k == key {
                return Some(self.vals[i]);
            }
            if k == 0 {
                return None;
            }
            i = (i + 1) & mask;
        }
    }

    /// Records that `line` lives in `slot`; the line must not be present already.
    pub(crate) fn insert(&mut self, line: u64, slot: u32) {
        if (self.len + 1) * 2 > self.keys.len() {
            self.grow();
        }
        let mask = self.mask();
        let mut i = self.home(line);
        while self.keys[i] != 0 {
            debug_assert_ne!(self.keys[i], line + 1, "line {line} inserted twice");
            i = (i + 1) & mask;
        }
        self.keys[i] = line + 1;
        self.vals[i] = slot;
        self.len += 1;
    }

    /// Removes `line`, returning its slot if it was present.
    pub(crate) fn remove(&mut self, line: u64) -> Option<u32> {
        if self.keys.is_empty() {
            return None;
        }
        let key = line + 1;
        let mask = self.mask();
        let mut hole = self.home(line);
        loop {
            let k = self.keys[hole];
            if k == key {
                break;
            }
            if k == 0 {
                return None;
            }
            hole = (hole + 1) & mask;
        }
        let slot = self.vals[hole];
        // Backward shift: pull later members of the probe run into the hole when their home
        // position allows it, so lookups never need tombstones.
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            let k = self.keys[j];
            if k == 0 {
                break;
            }
            let home = self.home(k - 1);
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                self.keys[hole] = k;
                self.vals[hole] = self.vals[j];
                hole = j;
            }
        }
        self.keys[hole] = 0;
        self.len -= 1;
        Some(slot)
    }

    fn grow(&mut self) {
        let cap = (self.keys.len() * 2).max(MIN_CAPACITY);
        let old_keys = std::mem::replace(&mut self.keys, vec![0; cap]);
        let old_vals = std::mem::replace(&mut self.vals, vec![0; cap]);
        self.shift = 64 - cap.trailing_zeros();
        self.len = 0;
        for (k, v) in old_keys.into_iter().zip(old_vals) {
            if k != 0 {
                self.insert(k - 1, v);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn insert_get_remove() {
        let mut ix = LineIndex::default();
        assert_eq!(ix.get(5), None);
        assert_eq!(ix.remove(5), None);
        for line in 0..1000u64 {
            ix.insert(line * 7, line as u32);
        }
        assert_eq!(ix.len(), 1000);
        for line in 0..1000u64 {
            assert_eq!(ix.get(line * 7), Some(line as u32));
            assert_eq!(ix.get(line * 7 + 1), None);
        }
        for line in (0..1000u64).step_by(2) {
            assert_eq!(ix.remove(line * 7), Some(line as u32));
        }
        for line in 0..1000u64 {
            let want = (line % 2 == 1).then_some(line as u32);
            assert_eq!(ix.get(line * 7), want);
        }
    }

    proptest! {
        #[test]
        fn behaves_like_a_map(ops in proptest::collection::vec((any::<bool>(), 0u64..64), 0..400)) {
            let mut ix = LineIndex::default();
            let mut model = BTreeMap::new();
            for (n, (insert, line)) in ops.into_iter().enumerate() {
                if insert && !model.contains_key(&line) {
                    ix.insert(line, n as u32);
                    model.insert(line, n as u32);
                } else {
                    prop_assert_eq!(ix.remove(line), model.remove(&line));
                }
                for probe in 0..64u64 {
                    prop_assert_eq!(ix.get(probe), model.get(&probe).copied());
                }
            }
        }
    }
}
