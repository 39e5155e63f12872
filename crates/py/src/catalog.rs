//! The catalogs `smpsched list` and `smpsched explain` show, as JSON rows: scheduling policies
//! and workloads with their parameters, machine presets with every field they set.

use pyo3::prelude::*;
use serde_json::{json, Value};
use smpsched_sim::sched::{ParamInfo, POLICIES};
use smpsched_sim::MachineConfig;
use smpsched_workloads::WORKLOADS;

fn params(ps: &[ParamInfo]) -> Value {
    ps.iter()
        .map(|p| json!({"name": p.name, "default": p.default, "doc": p.doc}))
        .collect()
}

/// Every scheduling policy (`[scheduler] policy = ...`): name, summary, description, paper
/// section and parameters.
#[pyfunction]
pub fn policies_json() -> String {
    let rows: Vec<Value> = POLICIES
        .iter()
        .map(|p| {
            json!({"name": p.name, "summary": p.summary, "description": p.description,
                   "paper": p.paper, "params": params(p.params),
                   "processor_sets": p.processor_sets})
        })
        .collect();
    Value::Array(rows).to_string()
}

/// Every workload (`[[workload]] kind = ...`): name, summary, description, paper section and
/// parameters.
#[pyfunction]
pub fn workloads_json() -> String {
    let rows: Vec<Value> = WORKLOADS
        .iter()
        .map(|w| {
            json!({"name": w.name, "summary": w.summary, "description": w.description,
                   "paper": w.paper, "params": params(w.params)})
        })
        .collect();
    Value::Array(rows).to_string()
}

/// Every machine preset (`[machine] preset = ...`): name, summary and the fields it sets.
#[pyfunction]
pub fn presets_json() -> String {
    let rows: Vec<Value> = MachineConfig::PRESETS
        .iter()
        .map(|p| {
            let fields = serde_json::to_value((p.build)()).unwrap_or(Value::Null);
            json!({"name": p.name, "summary": p.summary, "fields": fields})
        })
        .collect();
    Value::Array(rows).to_string()
}
