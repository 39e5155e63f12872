//! How a waiter paces its retries of a held lock ([`Pause`]) and what a retry is ([`Spin`]):
//! the parameter of a spin-lock acquisition and of the engine's poll of a lock word
//! ([`Op::Poll`](crate::program::Op::Poll)), after DiBella et al. 1992's test-and-test-and-set
//! queue locks (section 2.1). It sits below both the programs' operations and the ready-queue
//! protocols that issue them ([`crate::readyq::spin`] says why long waits are drawn at random).

use smpsched_policy::mix::splitmix;

use crate::ids::Cycles;

/// Pauses in one acquisition after which a waiter's pauses are drawn at random.
pub const STREAK: u32 = 64;

/// How a waiter retries a held spin lock.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Spin {
    /// Read the word (a cache hit while it stays held) and test-and-set only once it reads 0.
    #[default]
    TestAndTestAndSet,
    /// Test-and-set again at every retry: on a bus with locked atomics each retry is a bus
    /// transaction that delays every processor's memory traffic.
    TestAndSet,
}

/// How a waiter paces its retries of a held lock: `cycles` between them (at least 1); after
/// [`STREAK`] pauses in one acquisition, a pause drawn uniformly from `1..=2 * cycles` from a
/// stream seeded by `seed`, which should differ between the threads that contend for a lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pause {
    /// Cycles between retries of the held lock.
    pub cycles: Cycles,
    /// The seed of the waiter's draws once its wait is long.
    pub seed: u64,
    /// What a retry is.
    pub spin: Spin,
}

impl Pause {
    /// Pauses of `cycles` (at least 1), drawn from the stream `seed` once a wait is long.
    pub fn new(cycles: Cycles, seed: u64) -> Self {
        Pause {
            cycles: cycles.max(1),
            seed,
            spin: Spin::TestAndTestAndSet,
        }
    }

    /// The same pacing with retries of kind `spin`.
    pub fn with_spin(self, spin: Spin) -> Self {
        Pause { spin, ..self }
    }

    /// The `n`-th pause of one acquisition (from 0).
    pub fn nth(&self, n: u32) -> Cycles {
        if n < STREAK {
            return self.cycles;
        }
        let z = self.seed ^ u64::from(n).wrapping_mul(0xd1b5_4a32_d192_ed03);
        1 + splitmix(z) % (2 * self.cycles)
    }
}

impl From<Cycles> for Pause {
    fn from(cycles: Cycles) -> Self {
        Pause::new(cycles, 0)
    }
}
