//! Seed derivation: one independent random stream per purpose, derived from the experiment seed.
//!
//! Determinism rule (design.md): every consumer of randomness owns its own stream, so adding a
//! thread or a workload never shifts the numbers another one draws.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The purposes that own a random stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum Stream {
    /// A simulated thread's program.
    Thread = 1,
    /// A workload's setup (sizes, placements).
    Workload = 2,
    /// A processor (random choices made by scheduling mechanisms).
    Processor = 3,
    /// A repetition of an experiment point.
    Repetition = 4,
}

/// SplitMix64 finaliser: a bijective mix of 64 bits.
#[inline]
pub fn mix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The seed of stream `index` of kind `stream` under experiment seed `seed`.
pub fn derive_seed(seed: u64, stream: Stream, index: u64) -> u64 {
    mix64(mix64(seed ^ mix64(stream as u64)) ^ index)
}

/// A random generator for stream `index` of kind `stream`.
pub fn stream_rng(seed: u64, stream: Stream, index: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(derive_seed(seed, stream, index))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_and_repeat() {
        assert_eq!(
            derive_seed(1, Stream::Thread, 5),
            derive_seed(1, Stream::Thread, 5)
        );
        assert_ne!(
            derive_seed(1, Stream::Thread, 5),
            derive_seed(1, Stream::Thread, 6)
        );
        assert_ne!(
            derive_seed(1, Stream::Thread, 5),
            derive_seed(2, Stream::Thread, 5)
        );
        assert_ne!(
            derive_seed(1, Stream::Thread, 5),
            derive_seed(1, Stream::Workload, 5)
        );
    }
}
