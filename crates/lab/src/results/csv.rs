//! `results.csv`: one row per run and application plus a machine row, its measure columns
//! generated from the measure table ([`crate::metric::views::csv_columns`]).

use crate::exec::runner::RunRecord;
use crate::input::error::LabError;
use crate::metric;

/// The CSV table of an experiment's runs: one row per run and application, and one row per run
/// for the whole machine (`app` = `*`, with the per-application columns empty). Every row has
/// the header's width (the `csv` writer refuses anything else). `stopped` says why a run did
/// not finish (empty when it did).
pub fn to_csv(runs: &[RunRecord]) -> Result<String, LabError> {
    let param_cols = super::jobs::param_columns(runs);
    let mut w = csv::Writer::from_writer(Vec::new());
    let fail = |e: csv::Error| LabError::Internal(format!("results.csv: {e}"));
    let mut header: Vec<&str> = vec!["point", "repetition", "seed"];
    header.extend(&param_cols);
    let cols = metric::views::csv_columns();
    header.push("app");
    header.extend(cols.iter().map(|c| c.header));
    w.write_record(&header).map_err(fail)?;
    for r in runs {
        let prefix = super::jobs::row_prefix(r, &param_cols);
        let mut row = prefix.clone();
        row.push("*".to_string());
        row.extend(cols.iter().map(|c| (c.cell)(r, None)));
        w.write_record(&row).map_err(fail)?;
        for a in &r.report.apps {
            let mut row = prefix.clone();
            row.push(a.name.clone());
            row.extend(cols.iter().map(|c| (c.cell)(r, Some(a))));
            w.write_record(&row).map_err(fail)?;
        }
    }
    let bytes = w
        .into_inner()
        .map_err(|e| LabError::Internal(format!("results.csv: {e}")))?;
    String::from_utf8(bytes).map_err(|e| LabError::Internal(format!("results.csv: {e}")))
}
