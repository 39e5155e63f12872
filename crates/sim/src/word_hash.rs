//! A fast deterministic hasher for the simulated words the programs operate on (the map from an
//! address to its word that every [`Op::Word`](crate::Op::Word) looks up: DiBella et al. 1992's
//! locks, bitmaps and mailboxes, George 1990's counters). The standard SipHash guards against
//! chosen keys, which simulated addresses are not, and cost about 7% of a DiBella run; this
//! mixes the address with a 64-bit finalizer (MurmurHash3's fmix64) instead. The map is only
//! looked up, never iterated, so the hasher changes no result.

use std::hash::{BuildHasherDefault, Hasher};

/// Hashes one `u64` key (an address) by MurmurHash3's 64-bit finalizer.
#[derive(Clone, Copy, Debug, Default)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        let mut z = self.0;
        z ^= z >> 33;
        z = z.wrapping_mul(0xff51_afd7_ed55_8ccd);
        z ^= z >> 33;
        z = z.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        z ^ (z >> 33)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 ^= n;
    }
}

/// A map from address to word with [`WordHasher`].
pub type WordMap = std::collections::HashMap<u64, u64, BuildHasherDefault<WordHasher>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn aligned_addresses_spread_over_the_low_bits() {
        let b = BuildHasherDefault::<WordHasher>::default();
        let mut seen = [0u32; 64];
        for k in 0..6400u64 {
            seen[(b.hash_one(k * 16) % 64) as usize] += 1;
        }
        assert!(seen.iter().all(|&n| (50..=150).contains(&n)), "{seen:?}");
        let mut m = WordMap::default();
        m.insert(64, 3);
        assert_eq!(m.get(&64), Some(&3));
        assert_eq!(m.get(&72), None);
    }
}
