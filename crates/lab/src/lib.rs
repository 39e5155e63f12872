//! smpsched-lab: experiment files (TOML) to runs to tables, CSV/JSON results, reproductions,
//! reports and plots.
//!
//! The flow is [`Experiment::load`] (parse and validate every point up front), then
//! [`run_experiment`] (all points and repetitions in parallel, each deterministic), then
//! [`Outbox::deliver`] (results written whole into a fresh folder) and [`terminal_table`].
//!
//! `ls src` is the pipeline. Each stage is a folder and imports only from the stages before it
//! (tests/layers.rs fails on an import against this order, and on any cycle between modules):
//!
//! 1. [`input`]: errors naming file, line and field, the file's source, formatting, the memory
//!    budget, deprecation notes, sweeps and their typed values;
//! 2. [`plan`]: a validated point resolved from its tables, and the record of one run;
//! 3. [`metric`]: the one table of measures (name, unit, doc, how computed, CSV and terminal
//!    columns) and everything generated from it;
//! 4. [`reproduce`]: the claim language (syntax, parser, evaluator), tolerances, verdicts and
//!    reports as data, in Markdown and on the terminal;
//! 5. [`spec`]: an experiment file into its points and its `[reproduce]` section;
//! 6. [`exec`]: points into runs ([`RunOptions`]), and runs made elsewhere merged back;
//! 7. [`store`]: files written so that nothing is lost, the outbox's folders, traces;
//! 8. [`svg`] and [`results`]: charts, JSON, CSV, per-job rows, the terminal table, the outbox;
//! 9. [`app`]: the commands the CLI calls, one file's and one paper's reproduction, `list` and
//!    `explain`.

#![forbid(unsafe_code)]

pub mod app;
pub mod exec;
pub mod input;
pub mod metric;
pub mod plan;
pub mod reproduce;
pub mod results;
pub mod spec;
pub mod store;
pub mod svg;

pub use exec::runner::{
    plan_jobs, run_experiment, stopped_error, JobPlan, RunOptions, RunRecord, Stopped,
};
pub use input::error::{InputError, LabError};
pub use plan::point::SimOptions;
pub use results::{terminal_table, Delivered, Destination, Outbox};
pub use spec::experiment::{Experiment, Point};
