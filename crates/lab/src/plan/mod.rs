//! Stage 2, plan: a validated point (machine, policy settings, applications, limits) resolved
//! from one point's tables, the checks across them, and the record one run of it leaves.
//! Imports only `input`.

pub mod point;
pub(crate) mod progress;
pub mod record;
pub(crate) mod resolve;
pub(crate) mod threads;
