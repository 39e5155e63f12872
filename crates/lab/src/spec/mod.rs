//! Stage 5, spec: an experiment file into its plan, every point loaded and validated up front,
//! with its `[reproduce]` section (written in the measures of `metric` and the claims of
//! `reproduce`). Imports `input`, `plan`, `metric` and `reproduce`.

pub mod experiment;
pub mod repro_spec;
