//! A paper reproduced at several base seeds on disk (`smpsched reproduce PAPER --seeds 1-7`):
//! after each seed's reproduction has written its own report (as `--seed N` does), the report
//! that puts them side by side ([`crate::reproduce::seeds`]) is written beside them, as
//! `reports/PAPER-seeds-1-7.md` and its JSON (`PAPER-scale-F-seeds-...` at another scale).

use std::path::{Path, PathBuf};

use crate::app::papers::{report_stem, PaperOutcome};
use crate::input::error::LabError;
use crate::reproduce::seeds::{across, seeds_label, SeedsReport};
use crate::reproduce::seeds_markdown::render_seeds;
use crate::store::output::write_atomic;

/// Writes the report across `seeds` of `paper` at `scale` from each seed's outcome (in the
/// seeds' order) into `reports`; returns its path and the report.
pub fn write_seeds_report(
    reports: &Path,
    paper: &str,
    scale: f64,
    seeds: &[u64],
    outcomes: &[PaperOutcome],
) -> Result<(PathBuf, SeedsReport), LabError> {
    let label = seeds_label(seeds);
    let links: Vec<String> = outcomes
        .iter()
        .map(|o| {
            o.latest
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().to_string())
        })
        .collect();
    let each: Vec<_> = outcomes.iter().map(|o| o.report.clone()).collect();
    let at_scale = if scale == 1.0 {
        String::new()
    } else {
        format!(" --scale {scale}")
    };
    let generated_by = format!("smpsched reproduce {paper}{at_scale} --seeds {label}");
    let report = across(seeds, &each, &links, generated_by).map_err(LabError::Internal)?;
    let stem = format!("{}-seeds-{label}", report_stem(paper, scale, None));
    let md = reports.join(format!("{stem}.md"));
    let json = serde_json::to_string_pretty(&report)
        .map_err(|e| LabError::Internal(format!("report across seeds: {e}")))?;
    write_atomic(&md, render_seeds(&report).as_bytes())?;
    write_atomic(&reports.join(format!("{stem}.json")), json.as_bytes())?;
    Ok((md, report))
}
