//! smpsched-lab: experiment files (TOML) to runs to tables, CSV/JSON results, reproductions,
//! reports and plots.
//!
//! The flow is [`Experiment::load`] (parse and validate every point up front), then
//! [`run_experiment`] (all points and repetitions in parallel, each deterministic), then
//! [`Outbox::deliver`] (results written whole into a fresh folder) and [`terminal_table`].
//!
//! Imports go one way, from the bottom up (tests/layers.rs fails on a cycle):
//!
//! - input: `error`, `source` (reading and finding files), `format`, `budget`;
//! - spec: `point` (a validated point), `sweep`, `progress`, `resolve` (a point's tables),
//!   `repro_spec` (the `[reproduce]` section), `experiment` (a file into its points);
//! - exec: `record` (one run's outcome), `runner` ([`RunOptions`]), `shard` (runs made
//!   elsewhere, merged back), `metric` (the measure table and what is generated from it);
//! - render and store: `svg`, `output` and `outdir`, `results` (JSON, CSV, charts, the terminal
//!   table, the outbox), `traces`, `reproduce` (claims, tolerances, reports as data, Markdown
//!   and terminal), `reproduction` (one file), `papers` (one paper on disk), `catalog` (`list`,
//!   `explain`);
//! - `app`: the commands the CLI calls.

pub mod app;
pub mod budget;
pub mod catalog;
pub mod deprecated;
pub mod error;
pub mod experiment;
pub mod format;
pub mod metric;
pub mod outdir;
pub mod output;
pub mod papers;
pub mod param_value;
pub mod point;
pub(crate) mod progress;
pub mod record;
pub mod repro_spec;
pub mod reproduction;
pub(crate) mod resolve;
pub mod results;
pub mod runner;
pub mod shard;
pub mod source;
pub mod svg;
pub(crate) mod sweep;
pub mod traces;

pub use error::{InputError, LabError};
pub use experiment::{Experiment, Point};
pub use point::SimOptions;
pub use results::{terminal_table, Delivered, Destination, Outbox};
pub use runner::{
    plan_jobs, run_experiment, stopped_error, JobPlan, RunOptions, RunRecord, Stopped,
};
pub mod reproduce;
