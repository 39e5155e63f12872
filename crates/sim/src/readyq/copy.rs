//! Copying a request's words into or out of a box under its lock (DiBella et al. 1992,
//! section 2.1: "the remainder of the request information is processed while a process has
//! sole access to an IN-box or OUT-box lock"; section 2.2: a FCFS queue lets one process at a
//! time post or remove a request). A request is more than the word that marks its box full: its
//! other words are stored by the poster and loaded by the taker, word by word, as one
//! [`Op::Mem`] sweep through the memory model (a miss per line not cached, a hit per other
//! word), so a lock hold grows with the request's size and with the bus's queue.

use crate::memory::{AccessKind, BulkAccess};
use crate::program::Op;

/// The body of a request, `words` words from `base`, stored (posting) or loaded (taking).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Copy {
    base: u64,
    words: u32,
    kind: AccessKind,
}

impl Copy {
    /// Storing `words` words from `base` (a poster fills the body).
    pub fn store(base: u64, words: u32) -> Self {
        Copy {
            base,
            words,
            kind: AccessKind::Write,
        }
    }

    /// Loading `words` words from `base` (a taker reads the body).
    pub fn load(base: u64, words: u32) -> Self {
        Copy {
            kind: AccessKind::Read,
            ..Copy::store(base, words)
        }
    }

    /// The operation copying every word, one reference per word; `None` for no words.
    #[inline]
    pub fn op(&self) -> Option<Op> {
        (self.words > 0).then(|| {
            let len = 8 * u64::from(self.words);
            Op::Mem(BulkAccess::new(self.base, len, 8, self.kind, 1))
        })
    }
}

/// Bytes a body of `words` words occupies, whole blocks of `stride` bytes (none for 0 words).
pub fn body_bytes(words: u32, stride: u64) -> u64 {
    (8 * u64::from(words)).div_ceil(stride) * stride
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_one_sweep_of_its_words() {
        let Some(Op::Mem(b)) = Copy::store(64, 3).op() else {
            panic!("a copy of 3 words is a sweep");
        };
        assert_eq!((b.base, b.len, b.stride), (64, 24, 8));
        assert_eq!(b.kind, AccessKind::Write);
        let Some(Op::Mem(l)) = Copy::load(64, 2).op() else {
            panic!("a copy of 2 words is a sweep");
        };
        assert_eq!(l.kind, AccessKind::Read);
        assert_eq!(Copy::load(0, 0).op(), None);
        assert_eq!(body_bytes(0, 16), 0);
        assert_eq!(body_bytes(3, 16), 32);
    }
}
