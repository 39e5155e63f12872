//! Reproduction reports: the data a reproduction produced, rendered as GitHub-flavoured Markdown
//! (one page per paper plus an index) and as a fixed-width terminal table.
//!
//! Rendering is pure string building with no clock or environment input, so the same report
//! renders to the same bytes; `generated_by` records the command line, seed and scale instead of
//! a timestamp.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::summary::{relative_distance, values_text, within_band, BANDS};
use super::tolerance::{relative_difference, Tolerance};
use super::{format_number, format_percent};

/// One measured value beside the paper's, if the paper gives one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointRow {
    /// The experiment point, e.g. `gang-25ms`.
    pub point: String,
    /// The metric, e.g. `utilization`.
    pub metric: String,
    /// Our measured value.
    pub ours: f64,
    /// The paper's value, when it prints one.
    pub paper: Option<f64>,
    /// The tolerance the comparison uses.
    pub tolerance: Option<Tolerance>,
    /// Whether ours is within the tolerance of the paper's (`None` when not compared).
    pub within: Option<bool>,
    /// A remark shown beside the row.
    pub note: Option<String>,
}

/// What became of a claim.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "verdict", rename_all = "snake_case")]
pub enum Verdict {
    /// The claim holds.
    Holds,
    /// The claim does not hold.
    Fails,
    /// The claim does not hold, for a documented reason (e.g. different hardware).
    KnownDifference {
        /// Why the difference is expected.
        reason: String,
    },
    /// The claim could not be evaluated (missing value, division by zero, ...).
    Error {
        /// What went wrong.
        message: String,
    },
}

/// One claim with its verdict and the numbers behind it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClaimRow {
    /// The claim as written (canonical form).
    pub text: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The evaluation detail, e.g. `62.1 > 59.8`.
    pub detail: String,
    /// The headline finding this claim checks, in the paper's words (see [`super::headline`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headline: Option<String>,
}

/// A figure to embed, by path relative to the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlotRef {
    /// Alt text and caption.
    pub title: String,
    /// Path of the SVG relative to the Markdown file.
    pub path: String,
}

/// The results of one experiment file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportFile {
    /// Heading, e.g. `Figure 3: priority scheduling with blocking locks`.
    pub title: String,
    /// Where in the paper the numbers come from, e.g. `Gupta et al. 1991, Figure 3`.
    pub source_paper: String,
    /// The experiment file, as a path relative to the repository.
    pub experiment_file: String,
    /// Setup as `(setting, value)` pairs, shown as a small table.
    pub setup: Vec<(String, String)>,
    /// Our numbers beside the paper's.
    pub points: Vec<PointRow>,
    /// The claims and their verdicts.
    pub claims: Vec<ClaimRow>,
    /// Figures to embed.
    pub plots: Vec<PlotRef>,
    /// Free-form remarks.
    pub notes: Vec<String>,
}

/// Everything reproduced from one paper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PaperReport {
    /// Short identifier, e.g. `gupta1991`.
    pub paper_id: String,
    /// Full title of the paper.
    pub paper_title: String,
    /// One section per experiment file.
    pub files: Vec<ReportFile>,
    /// The command line, seed and scale that produced the report (no timestamps).
    pub generated_by: String,
}

/// Counts of verdicts and tolerance checks over a report, and how close the compared values are
/// to the paper's (see [`super::summary`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of claims.
    pub claims: usize,
    /// Claims that hold.
    pub holds: usize,
    /// Claims that fail.
    pub fails: usize,
    /// Claims that fail for a documented reason.
    pub known_differences: usize,
    /// Claims that could not be evaluated.
    pub errors: usize,
    /// Values compared against the paper within a tolerance.
    pub compared: usize,
    /// Compared values that are within tolerance.
    pub within: usize,
    /// Compared values within 10% of the paper's value.
    #[serde(default)]
    pub within_10: usize,
    /// Compared values within 25% of the paper's value.
    #[serde(default)]
    pub within_25: usize,
    /// The largest relative distance `|ours - paper| / |paper|` of a compared value.
    #[serde(default)]
    pub largest_distance: Option<f64>,
    /// Compared values with no finite relative distance (missing, or off a paper value of 0).
    #[serde(default)]
    pub incomparable: usize,
    /// Files summed up.
    #[serde(default)]
    pub files: usize,
}

impl Summary {
    /// Counts the claims and compared points of the given files.
    pub fn of_files(files: &[ReportFile]) -> Summary {
        let mut summary = Summary {
            files: files.len(),
            ..Summary::default()
        };
        for file in files {
            for claim in &file.claims {
                summary.claims += 1;
                match claim.verdict {
                    Verdict::Holds => summary.holds += 1,
                    Verdict::Fails => summary.fails += 1,
                    Verdict::KnownDifference { .. } => summary.known_differences += 1,
                    Verdict::Error { .. } => summary.errors += 1,
                }
            }
            for point in &file.points {
                let (Some(within), Some(paper)) = (point.within, point.paper) else {
                    continue;
                };
                summary.compared += 1;
                summary.within += usize::from(within);
                summary.within_10 += usize::from(within_band(point.ours, paper, BANDS[0]));
                summary.within_25 += usize::from(within_band(point.ours, paper, BANDS[1]));
                match relative_distance(point.ours, paper) {
                    Some(d) => {
                        let largest = summary.largest_distance.get_or_insert(d);
                        *largest = largest.max(d);
                    }
                    None => summary.incomparable += 1,
                }
            }
        }
        summary
    }
}

fn plural(count: usize, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

impl fmt::Display for Summary {
    /// `N of M claims hold, K known differences[, F fail][, E not evaluated]; Y values: A within
    /// 10%, B within 25%, X within the file's tolerances (largest distance D%)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verb = if self.claims == 1 { "holds" } else { "hold" };
        write!(
            f,
            "{} of {} {verb}, {}",
            self.holds,
            plural(self.claims, "claim", "claims"),
            plural(
                self.known_differences,
                "known difference",
                "known differences"
            )
        )?;
        if self.fails > 0 {
            write!(
                f,
                ", {} {}",
                self.fails,
                if self.fails == 1 { "fails" } else { "fail" }
            )?;
        }
        if self.errors > 0 {
            write!(f, ", {} not evaluated", self.errors)?;
        }
        if self.compared > 0 {
            write!(f, "; {}", values_text(self))?;
        }
        Ok(())
    }
}

impl PaperReport {
    /// The summary over all of the paper's files.
    pub fn summary(&self) -> Summary {
        Summary::of_files(&self.files)
    }
}

// ---------------------------------------------------------------------------------------------
// Shared cell text

/// The difference column: relative to the paper's value when that is not zero (for absolute
/// tolerances after the absolute difference, `-9.3 (-15.68%)`), absolute otherwise; `—` without
/// a paper value.
fn difference_text(row: &PointRow) -> String {
    let Some(paper) = row.paper else {
        return "—".to_string();
    };
    let absolute = || {
        let diff = row.ours - paper;
        if diff > 0.0 {
            format!("+{}", format_number(diff))
        } else {
            format_number(diff)
        }
    };
    match (row.tolerance, relative_difference(row.ours, paper)) {
        (Some(Tolerance::Absolute(_)), Some(r)) => {
            format!("{} ({})", absolute(), format_percent(r))
        }
        (_, Some(r)) => format_percent(r),
        (_, None) => absolute(),
    }
}

fn option_number(value: Option<f64>) -> String {
    value.map_or_else(|| "—".to_string(), format_number)
}

fn tolerance_text(tolerance: Option<Tolerance>) -> String {
    tolerance.map_or_else(|| "—".to_string(), |t| t.to_string())
}

// ---------------------------------------------------------------------------------------------
// Markdown

/// Escapes text for a Markdown table cell: pipes escaped, line breaks turned into spaces.
fn cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\r', '\n'], " ")
}

/// Escapes Markdown-significant characters in running text; balanced `` `code` `` spans are
/// kept as code, verbatim.
fn inline(text: &str) -> String {
    let text = text.replace(['\r', '\n'], " ");
    if text.matches('`').count() % 2 == 0 {
        let mut out = String::with_capacity(text.len());
        for (index, part) in text.split('`').enumerate() {
            if index % 2 == 1 {
                out.push('`');
                out.push_str(part);
                out.push('`');
            } else {
                out.push_str(&escape_plain(part));
            }
        }
        out
    } else {
        escape_plain(&text)
    }
}

/// Backslash-escapes every character that Markdown could read as markup.
fn escape_plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for ch in text.chars() {
        if matches!(
            ch,
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#'
        ) {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// A code span that survives backticks inside `text`.
fn code(text: &str) -> String {
    let text = text.replace(['\r', '\n'], " ");
    let mut fence = "`".to_string();
    while text.contains(fence.as_str()) {
        fence.push('`');
    }
    if text.starts_with('`') || text.ends_with('`') {
        format!("{fence} {text} {fence}")
    } else {
        format!("{fence}{text}{fence}")
    }
}

/// A Markdown link target with spaces and parentheses escaped.
fn link_target(path: &str) -> String {
    path.replace(' ', "%20")
        .replace('(', "%28")
        .replace(')', "%29")
}

fn badge(verdict: &Verdict) -> &'static str {
    match verdict {
        Verdict::Holds => "✅ **holds**",
        Verdict::Fails => "❌ **fails**",
        Verdict::KnownDifference { .. } => "🔶 **known difference**",
        Verdict::Error { .. } => "⚠️ **not evaluated**",
    }
}

fn ok_mark(within: Option<bool>) -> &'static str {
    match within {
        Some(true) => "✔",
        Some(false) => "✘",
        None => "—",
    }
}

/// Renders one paper's report as Markdown: summary, then per file its setup, the comparison
/// table, the claims with verdict badges, the plots and the notes.
pub fn render_paper(report: &PaperReport) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "# {}: {}\n\n",
        inline(&report.paper_id),
        inline(&report.paper_title)
    ));
    out.push_str(&format!("**{}.**\n\n", report.summary()));
    if !report.generated_by.is_empty() {
        out.push_str(&format!("Generated by {}.\n\n", code(&report.generated_by)));
    }
    if report.files.len() > 1 {
        out.push_str("Contents:\n\n");
        for file in &report.files {
            let summary = Summary::of_files(std::slice::from_ref(file));
            out.push_str(&format!(
                "- {} — {}\n",
                inline(&file.title),
                summary_short(&summary)
            ));
        }
        out.push('\n');
    }
    super::headline::render_headlines(&mut out, report, inline, code);
    super::overview::render_overview(&mut out, report, inline, code);
    for file in &report.files {
        render_file(&mut out, file);
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

/// A compact per-file summary, e.g. `3/4 claims hold, 1 known difference; 5 values: 2 within
/// 10%, 3 within 25%, 5 within the file's tolerances (largest distance 59%)`.
fn summary_short(summary: &Summary) -> String {
    let mut text = format!("{}/{} claims hold", summary.holds, summary.claims);
    if summary.known_differences > 0 {
        text.push_str(&format!(
            ", {}",
            plural(
                summary.known_differences,
                "known difference",
                "known differences"
            )
        ));
    }
    if summary.fails > 0 {
        text.push_str(&format!(", {} failing", summary.fails));
    }
    if summary.errors > 0 {
        text.push_str(&format!(", {} not evaluated", summary.errors));
    }
    if summary.compared > 0 {
        text.push_str(&format!("; {}", values_text(summary)));
    }
    text
}

fn render_file(out: &mut String, file: &ReportFile) {
    out.push_str(&format!("## {}\n\n", inline(&file.title)));
    let mut sources = Vec::new();
    if !file.source_paper.is_empty() {
        sources.push(format!("Source: {}", inline(&file.source_paper)));
    }
    if !file.experiment_file.is_empty() {
        sources.push(format!("Experiment: {}", code(&file.experiment_file)));
    }
    if !sources.is_empty() {
        out.push_str(&sources.join(" · "));
        out.push_str("\n\n");
    }
    out.push_str(&format!(
        "{}.\n\n",
        summary_short(&Summary::of_files(std::slice::from_ref(file)))
    ));

    if !file.setup.is_empty() {
        out.push_str("| setting | value |\n|---|---|\n");
        for (key, value) in &file.setup {
            out.push_str(&format!("| {} | {} |\n", cell(key), cell(value)));
        }
        out.push('\n');
    }

    if !file.points.is_empty() {
        let with_notes = file.points.iter().any(|p| p.note.is_some());
        out.push_str("| point | metric | ours | paper | diff | tolerance | ok |");
        out.push_str(if with_notes { " note |\n" } else { "\n" });
        out.push_str("|---|---|--:|--:|--:|:-:|:-:|");
        out.push_str(if with_notes { "---|\n" } else { "\n" });
        for row in &file.points {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |",
                cell(&row.point),
                cell(&row.metric),
                format_number(row.ours),
                option_number(row.paper),
                difference_text(row),
                cell(&tolerance_text(row.tolerance)),
                ok_mark(row.within),
            ));
            if with_notes {
                out.push_str(&format!(" {} |", cell(row.note.as_deref().unwrap_or(""))));
            }
            out.push('\n');
        }
        out.push('\n');
    }

    if !file.claims.is_empty() {
        out.push_str("### Claims\n\n");
        for claim in &file.claims {
            out.push_str(&format!(
                "- {} {}",
                badge(&claim.verdict),
                code(&claim.text)
            ));
            if !claim.detail.is_empty() {
                out.push_str(&format!(" — {}", inline(&claim.detail)));
            }
            match &claim.verdict {
                Verdict::KnownDifference { reason } => {
                    out.push_str(&format!("  \n  Why: {}", inline(reason)));
                }
                Verdict::Error { message } => {
                    out.push_str(&format!("  \n  Error: {}", inline(message)));
                }
                Verdict::Holds | Verdict::Fails => {}
            }
            out.push('\n');
        }
        out.push('\n');
    }

    for plot in &file.plots {
        out.push_str(&format!(
            "![{}]({})\n\n",
            inline(&plot.title),
            link_target(&plot.path)
        ));
    }

    if !file.notes.is_empty() {
        out.push_str("### Notes\n\n");
        for note in &file.notes {
            out.push_str(&format!("- {}\n", note.replace(['\r', '\n'], " ")));
        }
        out.push('\n');
    }
}

/// Renders the index of all reproduced papers: a table of paper, title, summary and a link to
/// each paper's report.
pub fn render_index<A, B, C, D>(papers: &[(A, B, C, D)]) -> String
where
    A: AsRef<str>,
    B: AsRef<str>,
    C: AsRef<str>,
    D: AsRef<str>,
{
    let mut out = String::from("# Reproductions\n\n");
    if papers.is_empty() {
        out.push_str("No papers were reproduced.\n");
        return out;
    }
    out.push_str("| paper | title | summary |\n|---|---|---|\n");
    for (paper_id, title, summary, link) in papers {
        out.push_str(&format!(
            "| [{}]({}) | {} | {} |\n",
            cell(paper_id.as_ref()).replace(['[', ']'], ""),
            link_target(link.as_ref()),
            cell(title.as_ref()),
            cell(summary.as_ref()),
        ));
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Terminal

/// Pads `text` with spaces to `width` characters (left-aligned).
fn pad(text: &str, width: usize) -> String {
    let len = text.chars().count();
    format!("{text}{}", " ".repeat(width.saturating_sub(len)))
}

/// Pads `text` with spaces to `width` characters (right-aligned).
fn pad_left(text: &str, width: usize) -> String {
    let len = text.chars().count();
    format!("{}{text}", " ".repeat(width.saturating_sub(len)))
}

/// Renders one file's results for the terminal: a fixed-width table of point, metric, ours,
/// paper, difference and whether it is within tolerance, then each claim with its verdict.
pub fn render_terminal(file: &ReportFile) -> String {
    let mut out = String::new();
    out.push_str(&file.title.replace(['\r', '\n'], " "));
    if !file.experiment_file.is_empty() {
        out.push_str(&format!(" ({})", file.experiment_file));
    }
    out.push('\n');

    if !file.points.is_empty() {
        let header = ["point", "metric", "ours", "paper", "diff", "within"];
        let rows: Vec<[String; 6]> = file
            .points
            .iter()
            .map(|row| {
                let within = match (row.within, row.tolerance) {
                    (Some(true), Some(t)) => format!("yes ({t})"),
                    (Some(false), Some(t)) => format!("NO ({t})"),
                    (Some(true), None) => "yes".to_string(),
                    (Some(false), None) => "NO".to_string(),
                    (None, _) => "-".to_string(),
                };
                let dash = |s: String| if s == "—" { "-".to_string() } else { s };
                [
                    row.point.replace(['\r', '\n'], " "),
                    row.metric.replace(['\r', '\n'], " "),
                    format_number(row.ours),
                    dash(option_number(row.paper)),
                    dash(difference_text(row)),
                    within,
                ]
            })
            .collect();
        let mut widths = header.map(str::len);
        for row in &rows {
            for (width, text) in widths.iter_mut().zip(row) {
                *width = (*width).max(text.chars().count());
            }
        }
        let numeric = [false, false, true, true, true, false];
        let line = |cells: [&str; 6]| {
            let parts: Vec<String> = cells
                .iter()
                .zip(widths)
                .zip(numeric)
                .map(|((text, width), right)| {
                    if right {
                        pad_left(text, width)
                    } else {
                        pad(text, width)
                    }
                })
                .collect();
            format!("  {}\n", parts.join("  ").trim_end())
        };
        out.push_str(&line(header));
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        out.push_str(&format!("  {}\n", rule.join("  ")));
        for row in &rows {
            out.push_str(&line([
                &row[0], &row[1], &row[2], &row[3], &row[4], &row[5],
            ]));
        }
    }

    if !file.claims.is_empty() {
        out.push_str("claims:\n");
        let label = |verdict: &Verdict| match verdict {
            Verdict::Holds => "holds",
            Verdict::Fails => "FAILS",
            Verdict::KnownDifference { .. } => "known difference",
            Verdict::Error { .. } => "ERROR",
        };
        let width = file
            .claims
            .iter()
            .map(|c| label(&c.verdict).len())
            .max()
            .unwrap_or(0);
        for claim in &file.claims {
            out.push_str(&format!(
                "  {}  {}",
                pad(label(&claim.verdict), width),
                claim.text.replace(['\r', '\n'], " ")
            ));
            if !claim.detail.is_empty() {
                out.push_str(&format!("  [{}]", claim.detail.replace(['\r', '\n'], " ")));
            }
            match &claim.verdict {
                Verdict::KnownDifference { reason } => {
                    out.push_str(&format!(" - {}", reason.replace(['\r', '\n'], " ")));
                }
                Verdict::Error { message } => {
                    out.push_str(&format!(" - {}", message.replace(['\r', '\n'], " ")));
                }
                Verdict::Holds | Verdict::Fails => {}
            }
            out.push('\n');
        }
    }
    let summary = Summary::of_files(std::slice::from_ref(file));
    out.push_str(&format!("{summary}\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gupta_file() -> ReportFile {
        ReportFile {
            title: "Figure 3: priority scheduling with blocking locks".into(),
            source_paper: "Gupta, Tucker, Urushibara 1991, Figure 3".into(),
            experiment_file: "experiments/gupta/fig3.toml".into(),
            setup: vec![
                ("machine".into(), "12 CPUs, 64 KB caches".into()),
                ("scheduler".into(), "priority | blocking".into()),
            ],
            points: vec![
                PointRow {
                    point: "blocking".into(),
                    metric: "utilization/MP3D".into(),
                    ours: 61.234,
                    paper: Some(62.0),
                    tolerance: Some(Tolerance::Relative(0.05)),
                    within: Some(true),
                    note: None,
                },
                PointRow {
                    point: "blocking".into(),
                    metric: "utilization/Maxflow".into(),
                    ours: 50.0,
                    paper: Some(59.3),
                    tolerance: Some(Tolerance::Absolute(3.0)),
                    within: Some(false),
                    note: Some("spins longer".into()),
                },
                PointRow {
                    point: "blocking".into(),
                    metric: "cycles".into(),
                    ours: 45_374_884.0,
                    paper: None,
                    tolerance: None,
                    within: None,
                    note: None,
                },
            ],
            claims: vec![
                ClaimRow {
                    text: "utilization(blocking) > utilization(busy-wait)".into(),
                    verdict: Verdict::Holds,
                    detail: "62.1 > 28".into(),
                    headline: None,
                },
                ClaimRow {
                    text: "utilization(handoff) > utilization(blocking)".into(),
                    verdict: Verdict::Fails,
                    detail: "61 > 62 is false".into(),
                    headline: None,
                },
                ClaimRow {
                    text: "utilization(gang) > utilization(pc)".into(),
                    verdict: Verdict::KnownDifference {
                        reason: "LU is cache-bound in our model".into(),
                    },
                    detail: "70 > 72 is false".into(),
                    headline: None,
                },
                ClaimRow {
                    text: "delay(x) > 1".into(),
                    verdict: Verdict::Error {
                        message: "no measured value for `delay(x)`".into(),
                    },
                    detail: String::new(),
                    headline: None,
                },
            ],
            plots: vec![PlotRef {
                title: "Utilization breakdown".into(),
                path: "plots/gupta fig3.svg".into(),
            }],
            notes: vec!["Reduced scale: 1/10 of the paper's problem sizes.".into()],
        }
    }

    fn report() -> PaperReport {
        PaperReport {
            paper_id: "gupta1991".into(),
            paper_title: "The impact of operating system scheduling policies".into(),
            files: vec![gupta_file()],
            generated_by: "smpsched reproduce gupta --seed 1 --scale 0.1".into(),
        }
    }

    #[test]
    fn paper_report_has_table_rows_and_verdicts() {
        let text = render_paper(&report());
        assert!(text.starts_with("# gupta1991: The impact"), "{text}");
        assert!(
            text.contains(
                "**1 of 4 claims hold, 1 known difference, 1 fails, 1 not evaluated; \
             2 values: 1 within 10%, 2 within 25%, 1 within the file's tolerances \
             (largest distance 15.68%).**"
            ),
            "{text}"
        );
        assert!(text.contains("| point | metric | ours | paper | diff | tolerance | ok | note |"));
        assert!(
            text.contains("| blocking | utilization/MP3D | 61.23 | 62 | -1.235% | 5% | ✔ |  |"),
            "{text}"
        );
        assert!(
            text.contains(
                "| blocking | utilization/Maxflow | 50 | 59.3 | -9.3 (-15.68%) | ±3 | ✘ | \
                 spins longer |"
            ),
            "{text}"
        );
        assert!(text.contains("| blocking | cycles | 45,374,884 | — | — | — | — |  |"));
        assert!(text.contains("| scheduler | priority \\| blocking |"));
        assert!(
            text.contains(
                "- ✅ **holds** `utilization(blocking) > utilization(busy-wait)` — 62.1 \\> 28"
            ),
            "{text}"
        );
        assert!(text.contains("❌ **fails**"));
        assert!(text.contains("🔶 **known difference**"));
        assert!(text.contains("Why: LU is cache-bound in our model"));
        assert!(text.contains("⚠️ **not evaluated**"));
        assert!(
            text.contains("Error: no measured value for `delay(x)`"),
            "{text}"
        );
        assert!(text.contains("![Utilization breakdown](plots/gupta%20fig3.svg)"));
        assert!(text.contains("Generated by `smpsched reproduce gupta --seed 1 --scale 0.1`."));
        assert!(text.contains("- Reduced scale"));
        assert_eq!(text, render_paper(&report()));
        // No exponent notation for ordinary values.
        assert!(
            !(0..10).any(|d| text.contains(&format!("{d}e-")) || text.contains(&format!("{d}e+"))),
            "{text}"
        );
    }

    #[test]
    fn summary_wording() {
        let mut summary = Summary {
            claims: 5,
            holds: 5,
            ..Summary::default()
        };
        assert_eq!(
            summary.to_string(),
            "5 of 5 claims hold, 0 known differences"
        );
        summary.holds = 1;
        summary.claims = 1;
        summary.compared = 1;
        summary.within = 1;
        summary.within_25 = 1;
        summary.largest_distance = Some(0.2);
        assert_eq!(
            summary.to_string(),
            "1 of 1 claim holds, 0 known differences; 1 value: 0 within 10%, 1 within 25%, 1 \
             within the file's tolerances (largest distance 20%)"
        );
    }

    #[test]
    fn index_links_each_paper() {
        let text = render_index(&[
            (
                "gupta1991",
                "Gupta et al.",
                "3 of 4 claims hold",
                "gupta1991.md",
            ),
            (
                "black1990",
                "Black | Mach",
                "5 of 5 claims hold",
                "black 1990.md",
            ),
        ]);
        assert!(text.contains("| [gupta1991](gupta1991.md) | Gupta et al. | 3 of 4 claims hold |"));
        assert!(text.contains("| [black1990](black%201990.md) | Black \\| Mach |"));
        let owned = vec![(
            "a".to_string(),
            "b".to_string(),
            "c".to_string(),
            "d.md".to_string(),
        )];
        assert!(render_index(&owned).contains("[a](d.md)"));
        let none: [(&str, &str, &str, &str); 0] = [];
        assert!(render_index(&none).contains("No papers"));
    }

    #[test]
    fn terminal_table_lines_up() {
        let text = render_terminal(&gupta_file());
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("Figure 3"));
        assert!(lines[1].trim_start().starts_with("point"));
        assert!(text.contains("yes (5%)"));
        assert!(text.contains("NO (±3)"));
        assert!(
            text.contains("holds             utilization(blocking)"),
            "{text}"
        );
        assert!(
            text.contains("FAILS             utilization(handoff)"),
            "{text}"
        );
        assert!(text.contains("known difference  utilization(gang)"));
        assert!(text.contains("- LU is cache-bound"));
        // The "ours" column is right-aligned: every data row ends its number at the same place.
        let header = lines[1];
        let ours_end = header.find("ours").unwrap() + "ours".len();
        for row in &lines[3..6] {
            let before: String = row.chars().take(ours_end).collect();
            assert!(before.ends_with(|c: char| c.is_ascii_digit()), "{row}");
        }
        assert!(text.contains("-9.3 (-15.68%)"), "{text}");
        assert!(
            text.trim_end()
                .ends_with("within the file's tolerances (largest distance 15.68%)"),
            "{text}"
        );
    }

    #[test]
    fn markdown_escaping() {
        assert_eq!(cell("a|b\nc"), "a\\|b c");
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("x"), "`x`");
        assert_eq!(inline("*x* <y>"), "\\*x\\* \\<y\\>");
        assert_eq!(inline("no `a_b(x)` for *y*"), "no `a_b(x)` for \\*y\\*");
        assert_eq!(inline("odd ` tick_"), "odd \\` tick\\_");
    }

    #[test]
    fn serializes_to_json() {
        let json = serde_json::to_string(&report()).unwrap();
        assert!(json.contains("\"verdict\":\"known_difference\""), "{json}");
        assert!(json.contains("\"tolerance\":\"5%\""), "{json}");
        let back: PaperReport = serde_json::from_str(&json).unwrap();
        assert_eq!(back, report());
    }
}
