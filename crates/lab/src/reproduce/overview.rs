//! The overview at the top of a paper's report: where our model departs from the paper,
//! gathered from every file so that a reader sees it before the tables — each known difference
//! with its reason, each failing claim with what was measured, and the values furthest from the
//! paper's. Everything is computed from the report itself; nothing here is written by hand.

use super::format_number;
use super::report::{PaperReport, Verdict};

/// A table of how close each kind of measure comes (see [`measure_kind`]):
/// values compared, how many fall within their tolerance, and the largest distance in the
/// measure's own unit, with that value's distance relative to the paper's.
fn render_by_measure(out: &mut String, report: &PaperReport, code: fn(&str) -> String) {
    // (kind, compared, within, largest distance, that distance relative to the paper's value)
    let mut kinds: Vec<(String, usize, usize, f64, f64)> = Vec::new();
    for r in report.files.iter().flat_map(|f| &f.points) {
        let (Some(paper), Some(within)) = (r.paper, r.within) else {
            continue;
        };
        let kind = measure_kind(&r.metric);
        let i = match kinds.iter().position(|k| k.0 == kind) {
            Some(i) => i,
            None => {
                kinds.push((kind, 0, 0, 0.0, 0.0));
                kinds.len() - 1
            }
        };
        let k = &mut kinds[i];
        k.1 += 1;
        k.2 += usize::from(within);
        let d = (r.ours - paper).abs();
        if d > k.3 {
            k.3 = d;
            k.4 = if paper != 0.0 { d / paper.abs() } else { 0.0 };
        }
    }
    if kinds.is_empty() {
        return;
    }
    out.push_str("| measure | values | within tolerance | largest distance |\n|---|--:|--:|--:|\n");
    for (kind, n, within, abs, rel) in &kinds {
        out.push_str(&format!(
            "| {} | {n} | {within} | {} ({:.0}%) |\n",
            code(kind),
            format_number(*abs),
            100.0 * rel
        ));
    }
    out.push('\n');
}

/// The kind a value is counted under: an application measure without its application
/// (`app_util:MP3D` counts as `app_util`), a recorded measure with its name
/// (`recorded_mean:requests:delay`), any other measure as itself.
fn measure_kind(metric: &str) -> String {
    match metric.split_once(':') {
        Some((kind, _)) if kind.starts_with("app_") => kind.to_string(),
        _ => metric.to_string(),
    }
}

/// How many of the furthest values the overview lists.
const FURTHEST: usize = 8;

/// A line per claim that does not hold: the file, the claim and why.
fn departures(
    report: &PaperReport,
    inline: fn(&str) -> String,
    code: fn(&str) -> String,
) -> Vec<String> {
    let mut departs = Vec::new();
    for file in &report.files {
        for c in &file.claims {
            let why = match &c.verdict {
                Verdict::Holds => continue,
                Verdict::Fails => format!("fails: {}", inline(&c.detail)),
                Verdict::KnownDifference { reason } => {
                    format!(
                        "known difference ({}): {}",
                        inline(&c.detail),
                        inline(reason)
                    )
                }
                Verdict::Error { message } => format!("not evaluated: {}", inline(message)),
            };
            departs.push(format!(
                "- {} — {}: {why}",
                inline(&file.title),
                code(&c.text)
            ));
        }
    }
    departs
}

/// A line per value outside its tolerance, with how far from the paper's it is (relative).
fn outside_tolerance(
    report: &PaperReport,
    inline: fn(&str) -> String,
    code: fn(&str) -> String,
) -> Vec<(f64, String)> {
    let mut far: Vec<(f64, String)> = Vec::new();
    for file in &report.files {
        for r in &file.points {
            let Some(paper) = r.paper else { continue };
            if r.within != Some(false) || paper == 0.0 || !r.ours.is_finite() {
                continue;
            }
            let rel = (r.ours - paper).abs() / paper.abs();
            far.push((
                rel,
                format!(
                    "- {} — {} at {}: ours {}, paper {} ({:+.0}%)",
                    inline(&file.title),
                    code(&r.metric),
                    code(&r.point),
                    format_number(r.ours),
                    format_number(paper),
                    100.0 * (r.ours - paper) / paper.abs()
                ),
            ));
        }
    }
    far
}

/// Renders the overview section, or nothing when every claim holds and every value is within
/// its tolerance. `inline` and `code` escape text as the rest of the report does.
pub fn render_overview(
    out: &mut String,
    report: &PaperReport,
    inline: fn(&str) -> String,
    code: fn(&str) -> String,
) {
    let departs = departures(report, inline, code);
    let mut far = outside_tolerance(report, inline, code);
    if departs.is_empty() && far.is_empty() {
        return;
    }
    out.push_str("## Where our model departs from the paper\n\n");
    render_by_measure(out, report, code);
    if !departs.is_empty() {
        out.push_str("Claims that do not hold, with the measured reason where we know it:\n\n");
        for d in &departs {
            out.push_str(d);
            out.push('\n');
        }
        out.push('\n');
    }
    if !far.is_empty() {
        far.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        let n = far.len();
        out.push_str(&format!(
            "Values outside their tolerance ({n}), furthest first{}:\n\n",
            if n > FURTHEST {
                format!(" (the {FURTHEST} furthest)")
            } else {
                String::new()
            }
        ));
        for (_, line) in far.iter().take(FURTHEST) {
            out.push_str(line);
            out.push('\n');
        }
        out.push('\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reproduce::report::{ClaimRow, PointRow, ReportFile};

    fn file(claims: Vec<ClaimRow>, points: Vec<PointRow>) -> PaperReport {
        PaperReport {
            paper_id: "p".into(),
            paper_title: String::new(),
            files: vec![ReportFile {
                title: "Figure 3".into(),
                source_paper: String::new(),
                experiment_file: String::new(),
                setup: Vec::new(),
                points,
                claims,
                plots: Vec::new(),
                notes: Vec::new(),
                agreement: Vec::new(),
            }],
            generated_by: String::new(),
            settings: Vec::new(),
            only: Vec::new(),
        }
    }

    fn row(metric: &str, ours: f64, paper: f64, within: bool) -> PointRow {
        PointRow {
            point: "blocking".into(),
            metric: metric.into(),
            ours,
            paper: Some(paper),
            tolerance: None,
            within: Some(within),
            note: None,
        }
    }

    fn render(r: &PaperReport) -> String {
        let mut out = String::new();
        render_overview(&mut out, r, |s| s.to_string(), |s| format!("`{s}`"));
        out
    }

    #[test]
    fn nothing_is_said_when_everything_agrees() {
        let holds = ClaimRow {
            text: "a(x) > b(x)".into(),
            verdict: Verdict::Holds,
            detail: "2 > 1".into(),
            headline: None,
        };
        let r = file(vec![holds], vec![row("utilization", 65.0, 65.4, true)]);
        assert_eq!(render(&r), "");
    }

    #[test]
    fn departures_are_gathered_with_their_reasons_and_distances() {
        let claims = vec![
            ClaimRow {
                text: "a(x) > b(x)".into(),
                verdict: Verdict::KnownDifference {
                    reason: "our LU fits its caches".into(),
                },
                detail: "1 > 2 is false".into(),
                headline: None,
            },
            ClaimRow {
                text: "c(x) < 3".into(),
                verdict: Verdict::Fails,
                detail: "4 < 3 is false".into(),
                headline: None,
            },
        ];
        let points = vec![
            row("app_util:LU", 76.0, 62.0, false),
            row("app_util:MP3D", 58.0, 62.0, true),
            row("utilization", 66.0, 65.4, true),
        ];
        let out = render(&file(claims, points));
        assert!(out.contains("known difference (1 > 2 is false): our LU fits its caches"));
        assert!(out.contains("`c(x) < 3`: fails: 4 < 3 is false"));
        assert!(out.contains("| `app_util` | 2 | 1 | 14 (23%) |"), "{out}");
        assert!(out.contains("| `utilization` | 1 | 1 |"), "{out}");
        assert!(
            out.contains("`app_util:LU` at `blocking`: ours 76, paper 62 (+23%)"),
            "{out}"
        );
        assert!(
            !out.contains("app_util:MP3D` at"),
            "only values outside tolerance are listed"
        );
    }
}
