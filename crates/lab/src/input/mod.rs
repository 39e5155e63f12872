//! Stage 1, input: reading experiment files and what every later stage shares: errors that name
//! file, line and field, the file's source text, number formatting, the memory budget,
//! deprecation notes, sweeps and their typed values. Imports nothing else of the lab.

pub mod budget;
pub mod deprecated;
pub mod error;
pub mod format;
pub mod hash;
pub mod param_value;
pub mod setting;
pub mod source;
pub(crate) mod sweep;
