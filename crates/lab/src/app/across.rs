//! A paper reproduced at several base seeds on disk (`smpsched reproduce PAPER --seeds 1-7`):
//! after each seed's reproduction has written its own report (as `--seed N` does), the report
//! that puts them side by side ([`crate::reproduce::across`]) is written beside them, as
//! `reports/PAPER-seeds-1-7.md` and its JSON (`PAPER-scale-F-seeds-...` at another scale). The
//! same for several values of one setting (`--vary PATH=V1,V2`):
//! `reports/PAPER-vary-PATH-V1,V2.md`, and for every combination of the values of several
//! (`--vary` once per path). Each such report is plotted ([`crate::app::across_plot`]).

use std::path::{Path, PathBuf};

use crate::app::across_plot::agreement_charts;
use crate::app::papers::{bounded_stem, report_stem, PaperOutcome, Variant};
use crate::input::error::LabError;
use crate::input::setting::{file_safe, grid, run_label, Setting};
pub use crate::reproduce::across::AcrossReport;
use crate::reproduce::across::{across, across_values, seeds_label};
use crate::reproduce::across_markdown::render_across;
use crate::reproduce::report::PaperReport;
use crate::store::output::write_atomic;
use crate::svg::line_chart;

/// Writes the report across `seeds` of `paper` at `scale` from each seed's outcome (in the
/// seeds' order) into `reports`; `base` says which files and what was set over them (its seed
/// is not used). Returns the report's path and the report.
pub fn write_seeds_report(
    reports: &Path,
    paper: &str,
    scale: f64,
    seeds: &[u64],
    base: &Variant,
    outcomes: &[PaperOutcome],
) -> Result<(PathBuf, AcrossReport), LabError> {
    let label = seeds_label(seeds);
    let (links, each) = links_and_reports(outcomes);
    let set = base.with_seed(None);
    let generated_by = format!(
        "smpsched reproduce {paper}{}{} --seeds {label}",
        at_scale(scale),
        set.args()
    );
    let report = across(seeds, &each, &links, generated_by).map_err(LabError::Internal)?;
    // A list of seeds with gaps is written out whole: past 60 characters it is hashed.
    let stem = bounded_stem(format!(
        "{}-seeds-{}",
        report_stem(paper, scale, &set),
        file_safe(&label)
    ));
    write(reports, &stem, report)
}

/// The reproductions `--vary` asks for over `base` (the seed and the settings every run
/// shares): one per combination of the values of `axes` (each one path's values, from
/// [`crate::input::setting::parse_vary`]), first axis outermost, each with its label
/// (`workload.0.random_ms = 0.05`).
pub fn vary_runs(base: &Variant, axes: &[Vec<Setting>]) -> Result<Vec<(Variant, String)>, String> {
    Ok(grid(axes)?
        .into_iter()
        .map(|run| {
            let label = run_label(&run);
            let mut variant = base.clone();
            variant.settings.extend(run);
            (variant, label)
        })
        .collect())
}

/// Writes the report across the values `axes` give (`--vary`, once per path), over `base` (the
/// seed and the other settings every run shares), from each run's outcome in the order of
/// [`vary_runs`].
pub fn write_vary_report(
    reports: &Path,
    paper: &str,
    scale: f64,
    base: &Variant,
    axes: &[Vec<Setting>],
    outcomes: &[PaperOutcome],
) -> Result<(PathBuf, AcrossReport), LabError> {
    let runs = grid(axes).map_err(LabError::Internal)?;
    let (links, each) = links_and_reports(outcomes);
    // Each axis's path and values as `--vary` writes them.
    let texts: Vec<(&str, String)> = axes
        .iter()
        .map(|axis| {
            let values: Vec<&str> = axis.iter().map(|s| s.value.as_str()).collect();
            (
                axis.first().map_or("", |s| s.path.as_str()),
                values.join(","),
            )
        })
        .collect();
    let generated_by = format!(
        "smpsched reproduce {paper}{}{}{}",
        at_scale(scale),
        base.args(),
        texts
            .iter()
            .map(|(p, v)| format!(" --vary {p}={v}"))
            .collect::<String>()
    );
    let named = match texts.as_slice() {
        // One path: its name and its values, each made safe.
        [(p, v)] => format!("{}-{}", file_safe(p), file_safe(v)),
        // Several: made safe whole, so that no name outgrows what a file system takes.
        _ => {
            let parts: Vec<String> = texts.iter().map(|(p, v)| format!("{p}-{v}")).collect();
            file_safe(&parts.join("-"))
        }
    };
    let stem = bounded_stem(format!("{}-vary-{named}", report_stem(paper, scale, base)));
    let report = across_values(&runs, &each, &links, generated_by).map_err(LabError::Internal)?;
    write(reports, &stem, report)
}

/// Each outcome's latest report as a link relative to the reports folder, and its report.
fn links_and_reports(outcomes: &[PaperOutcome]) -> (Vec<String>, Vec<PaperReport>) {
    let links = outcomes
        .iter()
        .map(|o| {
            o.latest
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().to_string())
        })
        .collect();
    (links, outcomes.iter().map(|o| o.report.clone()).collect())
}

fn at_scale(scale: f64) -> String {
    if scale == 1.0 {
        String::new()
    } else {
        format!(" --scale {scale}")
    }
}

/// Writes `report` as `reports/STEM.md`, its JSON and its plots (`STEM-ranks.svg`,
/// `STEM-within.svg`, shown at the Markdown's end); returns the Markdown's path and the report.
fn write(
    reports: &Path,
    stem: &str,
    report: AcrossReport,
) -> Result<(PathBuf, AcrossReport), LabError> {
    let md = reports.join(format!("{stem}.md"));
    let json = serde_json::to_string_pretty(&report)
        .map_err(|e| LabError::Internal(format!("report across seeds: {e}")))?;
    let mut text = render_across(&report);
    if let Some(charts) = agreement_charts(&report) {
        text.push_str("\n## Plots\n\n");
        for (part, chart) in [("ranks", &charts.ranks), ("within", &charts.within)] {
            // A chart that cannot be drawn is said so; the report stands without it.
            match line_chart(chart) {
                Ok(svg) => {
                    let name = format!("{stem}-{part}.svg");
                    write_atomic(&reports.join(&name), svg.as_bytes())?;
                    text.push_str(&format!("![{}]({name})\n\n", chart.title));
                }
                Err(e) => text.push_str(&format!("{}: not drawn ({e}).\n\n", chart.title)),
            }
        }
    }
    write_atomic(&md, text.as_bytes())?;
    write_atomic(&reports.join(format!("{stem}.json")), json.as_bytes())?;
    Ok((md, report))
}
