//! The headline findings at the top of a paper's report: the results a reader would cite from
//! the paper, each checked by a claim that a file marks with `headline = "..."`, gathered from
//! every file in file order with its verdict and the numbers behind it, so that the report opens
//! with whether the paper's main findings come out of the model.

use super::report::{PaperReport, Verdict};

/// Renders the `Headline findings` section, or nothing when no claim is marked as a headline.
/// `inline` and `code` escape text as the rest of the report does.
pub fn render_headlines(
    out: &mut String,
    report: &PaperReport,
    inline: fn(&str) -> String,
    code: fn(&str) -> String,
) {
    let rows: Vec<_> = report
        .files
        .iter()
        .flat_map(|f| f.claims.iter().map(move |c| (f, c)))
        .filter_map(|(f, c)| Some((f, c, c.headline.as_deref()?)))
        .collect();
    if rows.is_empty() {
        return;
    }
    let holds = rows
        .iter()
        .filter(|(_, c, _)| c.verdict == Verdict::Holds)
        .count();
    out.push_str("## Headline findings\n\n");
    out.push_str(&format!(
        "{holds} of {} of the paper's headline findings hold in our model; each is a claim of \
         the file named beside it.\n\n",
        rows.len()
    ));
    for (file, claim, finding) in rows {
        let verdict = match &claim.verdict {
            Verdict::Holds => "✅ holds".to_string(),
            Verdict::Fails => "❌ fails".to_string(),
            Verdict::KnownDifference { reason } => {
                format!("🔶 known difference: {}", inline(reason))
            }
            Verdict::Error { message } => format!("⚠️ not evaluated: {}", inline(message)),
        };
        out.push_str(&format!(
            "- **{}** — {verdict}  \n  {} ({}): {}\n",
            inline(finding),
            code(&claim.text),
            inline(&file.title),
            inline(&claim.detail)
        ));
    }
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reproduce::report::{ClaimRow, ReportFile};

    fn report(claims: Vec<ClaimRow>) -> PaperReport {
        PaperReport {
            paper_id: "p".into(),
            paper_title: "P".into(),
            files: vec![ReportFile {
                title: "Figure 10".into(),
                source_paper: String::new(),
                experiment_file: String::new(),
                setup: vec![],
                points: vec![],
                claims,
                plots: vec![],
                notes: vec![],
                agreement: vec![],
            }],
            generated_by: String::new(),
            settings: Vec::new(),
            only: Vec::new(),
        }
    }

    fn claim(text: &str, verdict: Verdict, headline: Option<&str>) -> ClaimRow {
        ClaimRow {
            text: text.into(),
            verdict,
            detail: "72 > 70".into(),
            headline: headline.map(String::from),
        }
    }

    fn render(r: &PaperReport) -> String {
        let mut out = String::new();
        render_headlines(&mut out, r, |s| s.to_string(), |s| format!("`{s}`"));
        out
    }

    #[test]
    fn no_headline_claims_no_section() {
        let r = report(vec![claim("a(x) > b(x)", Verdict::Holds, None)]);
        assert_eq!(render(&r), "");
    }

    #[test]
    fn headline_claims_are_listed_with_verdicts_and_counted() {
        let r = report(vec![
            claim(
                "a(x) > b(x)",
                Verdict::Holds,
                Some("Process control is best"),
            ),
            claim("c(x) > d(x)", Verdict::Holds, None),
            claim(
                "e(x) > f(x)",
                Verdict::KnownDifference {
                    reason: "ours waits less".into(),
                },
                Some("Spinning a while pays"),
            ),
        ]);
        let text = render(&r);
        assert!(
            text.starts_with("## Headline findings\n\n1 of 2 "),
            "{text}"
        );
        assert!(
            text.contains("**Process control is best** — ✅ holds"),
            "{text}"
        );
        assert!(text.contains("known difference: ours waits less"), "{text}");
        assert!(
            text.contains("`e(x) > f(x)` (Figure 10): 72 > 70"),
            "{text}"
        );
        assert!(!text.contains("c(x)"), "{text}");
    }
}
