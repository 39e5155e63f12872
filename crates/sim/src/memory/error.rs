//! Errors of the memory model: a configuration that cannot describe a real machine (a cache of
//! zero bytes, a line size that is not a power of two, ...) is rejected before a simulation is
//! built, with a message that names the offending field.

use thiserror::Error;

/// Why a [`MemoryConfig`](super::MemoryConfig) or a processor count was rejected.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum MemoryError {
    /// A field of `[machine.memory]` has a value the model cannot use; `field` is its dotted path
    /// inside that table (e.g. `line_bytes`, `numa.remote_cycles`).
    #[error("memory.{field}: {reason}")]
    InvalidConfig {
        /// Dotted path of the field inside the memory table.
        field: &'static str,
        /// What is wrong and what would be valid.
        reason: String,
    },
    /// The processor count is zero or beyond what the model supports.
    #[error("processors: {count} is not valid; the memory model supports 1 to {max} processors")]
    InvalidProcessors {
        /// The rejected count.
        count: u32,
        /// The largest supported count.
        max: u32,
    },
}

impl MemoryError {
    /// Shorthand for [`MemoryError::InvalidConfig`].
    pub(crate) fn field(field: &'static str, reason: impl Into<String>) -> Self {
        MemoryError::InvalidConfig {
            field,
            reason: reason.into(),
        }
    }
}
