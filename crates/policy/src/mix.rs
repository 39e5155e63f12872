//! A stateless 64-bit mixer for decisions that need a cheap, well-spread draw from a seed and a
//! counter without carrying a generator: SplitMix64's output step (Steele, Lea and Flood 2014).
//! The real queues seed their clients' streams with it; the simulator's spin locks draw a long
//! wait's pauses with it.

/// SplitMix64 applied to `z`: one step of the generator whose state was `z`.
#[inline]
pub fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_sequence() {
        // The first outputs of SplitMix64 seeded with 0 (the reference implementation's).
        assert_eq!(splitmix(0), 0xe220_a839_7b1d_cdaf);
        assert_eq!(splitmix(0x9e37_79b9_7f4a_7c15), 0x6e78_9e6a_a1b9_65f4);
    }
}
