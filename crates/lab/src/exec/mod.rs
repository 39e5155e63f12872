//! Stage 6, exec: an experiment's points into runs, in parallel and deterministic
//! ([`runner::RunOptions`]), and runs made elsewhere merged back ([`shard`]). Imports the
//! stages before it.

pub mod pool;
pub mod runner;
pub mod shard;
