//! Affinity masks (Black 1990, section 5: binding threads to processors): a set of processors,
//! one bit each. Its own module so that `outcome` (a mask request) and `thread` (a thread's
//! mask) both use it without importing each other.

use crate::ids::ProcId;

/// A set of processors (an affinity mask), one bit per processor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuMask {
    bits: Box<[u64]>,
}

impl CpuMask {
    /// The mask holding exactly `processors`.
    pub fn of(processors: impl IntoIterator<Item = ProcId>) -> CpuMask {
        let mut bits: Vec<u64> = Vec::new();
        for p in processors {
            let (w, b) = (p.index() / 64, p.index() % 64);
            if bits.len() <= w {
                bits.resize(w + 1, 0);
            }
            bits[w] |= 1 << b;
        }
        CpuMask {
            bits: bits.into_boxed_slice(),
        }
    }

    /// Whether processor `p` is in the mask.
    #[inline]
    pub fn allows(&self, p: ProcId) -> bool {
        self.bits
            .get(p.index() / 64)
            .is_some_and(|w| w >> (p.index() % 64) & 1 == 1)
    }

    /// The processors in the mask, in increasing order.
    pub fn processors(&self) -> impl Iterator<Item = ProcId> + '_ {
        self.bits.iter().enumerate().flat_map(|(w, &word)| {
            (0..64)
                .filter(move |b| word >> b & 1 == 1)
                .map(move |b| ProcId((w * 64 + b) as u32))
        })
    }
}
