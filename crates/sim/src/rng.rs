//! Seed derivation: one independent random stream per purpose, derived from the experiment seed.
//!
//! Determinism rule (design.md): every consumer of randomness owns its own stream, so adding a
//! thread or a workload never shifts the numbers another one draws.

use rand::{RngCore, SeedableRng};
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

/// A thread's random stream ([`Stream::Thread`]), made at its first draw: a stream's state is
/// 320 bytes, and the threads of many loads never draw (their work was drawn by the workload
/// that made them), so a run of 400,000 threads or a million jobs keeps 16 bytes for each that
/// does not. It draws exactly what [`stream_rng`] would.
#[derive(Clone, Debug)]
pub struct ThreadRng {
    seed: u64,
    stream: Option<Box<ChaCha8Rng>>,
}

impl ThreadRng {
    /// Thread `index`'s stream under experiment seed `seed`, not made yet.
    pub fn new(seed: u64, index: u64) -> Self {
        ThreadRng {
            seed: derive_seed(seed, Stream::Thread, index),
            stream: None,
        }
    }

    /// Whether the stream was made (the thread has drawn).
    pub fn made(&self) -> bool {
        self.stream.is_some()
    }

    #[inline]
    fn stream(&mut self) -> &mut ChaCha8Rng {
        let seed = self.seed;
        self.stream
            .get_or_insert_with(|| Box::new(ChaCha8Rng::seed_from_u64(seed)))
    }
}

impl RngCore for ThreadRng {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        self.stream().next_u32()
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.stream().next_u64()
    }

    #[inline]
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        self.stream().fill_bytes(dst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn a_thread_stream_is_made_at_its_first_draw_and_draws_what_stream_rng_does() {
        for (seed, index) in [(1, 0), (1, 7), (42, 123_456)] {
            let mut lazy = ThreadRng::new(seed, index);
            assert!(!lazy.made());
            let mut eager = stream_rng(seed, Stream::Thread, index);
            // Mixed widths, so that the buffered halves of 64-bit words line up as well.
            for i in 0..300u32 {
                match i % 4 {
                    0 => assert_eq!(lazy.next_u32(), eager.next_u32()),
                    1 => assert_eq!(lazy.next_u64(), eager.next_u64()),
                    2 => {
                        let (mut a, mut b) = ([0u8; 13], [0u8; 13]);
                        lazy.fill_bytes(&mut a);
                        eager.fill_bytes(&mut b);
                        assert_eq!(a, b);
                    }
                    _ => assert_eq!(
                        lazy.random_range(0..1_000u64),
                        eager.random_range(0..1_000u64)
                    ),
                }
            }
            assert!(lazy.made());
        }
    }

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
