//! `smpsched._native`: the PyO3 extension module under the `smpsched` Python package.
//!
//! A thin layer over smpsched-lab, as the `smpsched` command is: experiments are loaded, run and
//! turned into `results.json` by the lab ([`smpsched_lab::Experiment`],
//! [`smpsched_lab::run_experiment`], [`smpsched_lab::results::to_json`]), papers reproduced by
//! [`smpsched_lab::app::papers::run_paper`]. Results cross into Python as JSON text; the
//! Python side (`python/smpsched/`) turns it into data frames.

use pyo3::prelude::*;

mod catalog;
mod errors;
mod remote;
mod reproduce;
mod run;
mod shard;
mod wait;

/// The module: `run_experiment`, `reproduce_paper`, the cluster's `shard_plan`, `run_task` and
/// `run_shipped`, the catalogs and `ExperimentError`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add(
        "ExperimentError",
        m.py().get_type::<errors::ExperimentError>(),
    )?;
    m.add_function(wrap_pyfunction!(run::run_experiment, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce::reproduce_paper, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce::reproduce_seeds, m)?)?;
    m.add_function(wrap_pyfunction!(reproduce::reproduce_vary, m)?)?;
    m.add_function(wrap_pyfunction!(shard::shard_plan, m)?)?;
    m.add_function(wrap_pyfunction!(shard::run_task, m)?)?;
    m.add_function(wrap_pyfunction!(shard::run_shipped, m)?)?;
    m.add_function(wrap_pyfunction!(catalog::policies_json, m)?)?;
    m.add_function(wrap_pyfunction!(catalog::workloads_json, m)?)?;
    m.add_function(wrap_pyfunction!(catalog::presets_json, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
