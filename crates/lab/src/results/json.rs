//! `results.json`: everything, per run (parameters, seed, the simulator's whole report, why a
//! run stopped), in the points' order, with the values the command line set over the file.

use serde::Serialize;

use crate::exec::runner::{RunRecord, Stopped};
use crate::spec::experiment::Experiment;

#[derive(Serialize)]
struct JsonFile<'a> {
    experiment: &'a str,
    description: &'a str,
    file: String,
    seed: u64,
    repetitions: u32,
    /// Values set over the file from the command line (`--set`), as `path = value`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    settings: Vec<String>,
    runs: Vec<JsonRun<'a>>,
}

#[derive(Serialize)]
struct JsonRun<'a> {
    point: &'a str,
    params: serde_json::Map<String, serde_json::Value>,
    repetition: u32,
    seed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    stopped: Option<JsonStopped<'a>>,
    #[serde(flatten)]
    report: std::borrow::Cow<'a, smpsched_sim::RunReport>,
}

/// Why a run stopped: the bound and its field, and `message`, the line `results.csv`'s
/// `stopped` cell holds.
#[derive(Serialize)]
struct JsonStopped<'a> {
    #[serde(flatten)]
    stopped: &'a Stopped,
    message: String,
}

/// The JSON document of an experiment's runs.
pub fn to_json(exp: &Experiment, runs: &[RunRecord]) -> String {
    let doc = JsonFile {
        experiment: &exp.name,
        description: &exp.description,
        file: exp.recorded_path.clone(),
        seed: exp.seed,
        repetitions: exp.repetitions,
        settings: exp.settings.iter().map(|s| s.label()).collect(),
        runs: runs
            .iter()
            .map(|r| JsonRun {
                point: &r.point,
                params: r
                    .params
                    .iter()
                    .map(|(k, v)| (k.clone(), serde_json::Value::String(v.label().to_string())))
                    .collect(),
                repetition: r.repetition,
                seed: r.seed,
                stopped: r.stopped.as_ref().map(|stopped| JsonStopped {
                    stopped,
                    message: stopped.describe(),
                }),
                report: super::jobs::summary_only(&r.report),
            })
            .collect(),
    };
    let mut s = serde_json::to_string_pretty(&doc).expect("results serialize");
    s.push('\n');
    s
}
