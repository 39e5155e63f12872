//! Reproduction reports rendered for the terminal: a fixed-width table per experiment file,
//! then each claim with its verdict.

use super::format_number;
use super::report::{difference_text, option_number, ReportFile, Verdict};
use super::summary::Summary;

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
        out.push_str(&points_table(file));
    }
    if !file.claims.is_empty() {
        out.push_str(&claims_list(file));
    }
    let summary = Summary::of_files(std::slice::from_ref(file));
    out.push_str(&format!("{summary}\n"));
    if !file.agreement.is_empty() {
        out.push_str(&format!(
            "agreement with the paper: {}\n",
            super::agreement::text(&file.agreement)
        ));
    }
    out
}

/// The table of point, metric, ours, paper, difference and whether it is within tolerance.
fn points_table(file: &ReportFile) -> String {
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
    let mut out = line(header);
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&format!("  {}\n", rule.join("  ")));
    for row in &rows {
        out.push_str(&line([
            &row[0], &row[1], &row[2], &row[3], &row[4], &row[5],
        ]));
    }
    out
}

/// `claims:` and each claim with its verdict, detail and reason.
fn claims_list(file: &ReportFile) -> String {
    let mut out = String::from("claims:\n");
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
    out
}
