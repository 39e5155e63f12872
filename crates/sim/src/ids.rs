//! Identifiers and simulated time: the small value types every part of the simulator shares.

use serde::{Deserialize, Serialize};

/// Simulated time and durations, counted in processor cycles. Nothing in the simulator reads the
/// wall clock.
pub type Cycles = u64;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        pub struct $name(pub u32);

        impl $name {
            /// The identifier as an index into a dense table.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

id_type!(
    /// A simulated processor, numbered from 0.
    ProcId
);
id_type!(
    /// A simulated thread (a Gupta "process"), numbered from 0 in creation order.
    ThreadId
);
id_type!(
    /// A task (an application: a set of threads sharing an address space), numbered from 0.
    TaskId
);
