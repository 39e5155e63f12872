//! Results on disk and on the terminal: `results.json` (everything, per run, [`json`]),
//! `results.csv` (one row per run and application, plus a machine row, [`csv`]),
//! `jobs.csv` (one row per job, when asked, [`jobs`]), `threads.csv` (one row per thread, when
//! asked, [`threads`]), `time-split.svg` (where the machine's
//! time went, per point, [`charts`]), written whole by
//! the [`outbox`], and a readable table of means per point ([`table`]).
//!
//! Output is a pure function of the records: no timestamps, no absolute paths, no hash-map
//! order, so the same experiment and seed give byte-identical files. The files of a run are
//! written together into a fresh folder and renamed into place whole ([`crate::store::output`]): by
//! default `results/NAME/seedS-HASH/` with `results/NAME/latest` pointing at it, so earlier
//! results are never replaced.

pub mod charts;
pub mod csv;
pub mod jobs;
pub mod json;
pub mod outbox;
pub mod table;
pub mod threads;

use crate::exec::runner::RunRecord;
use crate::input::error::LabError;
use crate::spec::experiment::Experiment;

pub use charts::{app_split_chart, time_split_chart};
pub use csv::to_csv;
pub use json::to_json;
pub use outbox::{Delivered, Destination, Outbox};
pub use table::{format_table, terminal_table};

/// The files of an experiment's results, by name, in the order they are listed; `threads.csv`
/// when `threads` (asked for with `--per-thread`).
pub fn result_files(
    exp: &Experiment,
    runs: &[RunRecord],
    threads: bool,
) -> Result<Vec<(String, Vec<u8>)>, LabError> {
    let title = format!("{}: where the machine's time went", exp.name);
    let mut files = vec![
        ("results.json".into(), to_json(exp, runs).into_bytes()),
        ("results.csv".into(), to_csv(runs)?.into_bytes()),
    ];
    if jobs::kept(runs) {
        files.push(("jobs.csv".into(), jobs::to_csv(runs)?.into_bytes()));
    }
    if threads {
        files.push(("threads.csv".into(), threads::to_csv(runs)?.into_bytes()));
    }
    files.push((
        "time-split.svg".into(),
        time_split_chart(&title, exp, runs)?.into_bytes(),
    ));
    Ok(files)
}
