//! Tests of the reports at several seeds: marks, the summary line, errors and Markdown.
use super::*;
use crate::input::setting::parse_vary;
use crate::reproduce::across_markdown::render_across;
use crate::reproduce::agreement::Agreement;
use crate::reproduce::report::{ClaimRow, PointRow, ReportFile};
use crate::reproduce::Tolerance;

fn claim(text: &str, verdict: Verdict) -> ClaimRow {
    ClaimRow {
        text: text.into(),
        verdict,
        detail: String::new(),
        headline: None,
    }
}

/// The paper at one seed: three claims of which the second holds only when `second`, and one
/// agreement measure.
fn at_seed(second: bool, within: usize, rank: f64) -> PaperReport {
    let known = Verdict::KnownDifference {
        reason: "slower bus".into(),
    };
    PaperReport {
        paper_id: "tiny".into(),
        paper_title: "A tiny paper".into(),
        files: vec![ReportFile {
            title: "Table 1".into(),
            source_paper: "Table 1".into(),
            experiment_file: "experiments/tiny/t1.toml".into(),
            setup: Vec::new(),
            points: vec![PointRow {
                point: "p".into(),
                metric: "delay".into(),
                ours: 2.0 + within as f64 / 100.0,
                paper: Some(2.5),
                tolerance: Some(Tolerance::Relative(0.25)),
                within: Some(within != 18),
                note: None,
            }],
            claims: vec![
                claim("a(x) > a(y)", Verdict::Holds),
                claim(
                    "b(x) <= b(y) * 1.02",
                    if second {
                        Verdict::Holds
                    } else {
                        Verdict::Fails
                    },
                ),
                claim("c(x) > c(y)", known),
            ],
            plots: Vec::new(),
            notes: Vec::new(),
            agreement: vec![Agreement {
                metric: "delay".into(),
                values: 30,
                within_25: within,
                rank_correlation: Some(rank),
            }],
        }],
        generated_by: "smpsched reproduce tiny".into(),
        settings: Vec::new(),
        only: Vec::new(),
    }
}

fn three() -> AcrossReport {
    let reports = vec![
        at_seed(true, 20, 0.71),
        at_seed(false, 18, 0.7),
        at_seed(true, 25, 0.74),
    ];
    let links: Vec<String> = (1..=3).map(|s| format!("tiny-seed-{s}.md")).collect();
    across(
        &[1, 2, 3],
        &reports,
        &links,
        "smpsched reproduce tiny --seeds 1-3".into(),
    )
    .unwrap()
}

#[test]
fn each_claim_has_a_mark_per_seed() {
    let r = three();
    assert_eq!(r.claims.len(), 3);
    assert_eq!(r.claims[0].marks, vec![Mark::Holds; 3]);
    assert_eq!(r.claims[0].steady(), Some(Mark::Holds));
    assert_eq!(
        r.claims[1].marks,
        vec![Mark::Holds, Mark::Fails, Mark::Holds]
    );
    assert_eq!(r.claims[1].holds(), 2);
    assert_eq!(r.claims[1].steady(), None);
    assert_eq!(r.claims[2].steady(), Some(Mark::KnownDifference));
    assert_eq!(r.agreement[0].within_25, vec![20, 18, 25]);
    assert_eq!(r.summaries[1].fails, 1);
    assert_eq!(
        r.summary_line(),
        "over 3 seeds, of 3 claims 1 holds at every seed, 1 turns on the seed, 1 is a known \
         difference at every seed"
    );
}

#[test]
fn markdown_lists_the_turning_claim_and_the_spread() {
    let md = render_across(&three());
    let turning = md
        .split("## Claims whose verdict turns on the seed")
        .nth(1)
        .unwrap();
    let turning = turning.split("## ").next().unwrap();
    assert!(
        turning.contains("| `b(x) <= b(y) * 1.02` | 2 of 3 | ✅ | ❌ | ✅ |"),
        "{turning}"
    );
    assert!(!turning.contains("a(x)"), "{turning}");
    assert!(md.contains("| `a(x) > a(y)` | ✅ holds |"), "{md}");
    assert!(
        md.contains("| `c(x) > c(y)` | 🔶 known difference |"),
        "{md}"
    );
    // Least, median and most: 18, 20, 25 of 30; 0.7, 0.71, 0.74.
    assert!(
        md.contains("| 18, 20, 25 of 30 | 0.7, 0.71, 0.74 |"),
        "{md}"
    );
    assert!(md.contains("[tiny-seed-2.md](tiny-seed-2.md)"), "{md}");
    assert_eq!(md, render_across(&three()), "rendering is deterministic");
}

#[test]
fn reports_of_other_claims_are_an_error() {
    let mut other = at_seed(true, 20, 0.7);
    other.files[0].claims[1].text = "something else".into();
    let e = across(
        &[1, 2],
        &[at_seed(true, 20, 0.7), other],
        &["a".into(), "b".into()],
        String::new(),
    )
    .unwrap_err();
    assert!(
        e.contains("seed 2") && e.contains("b(x) <= b(y) * 1.02"),
        "{e}"
    );
    assert!(across(&[], &[], &[], String::new()).is_err());
}

#[test]
fn seeds_are_labelled_as_a_range_when_consecutive() {
    assert_eq!(seeds_label(&[1, 2, 3, 4]), "1-4");
    assert_eq!(seeds_label(&[1, 3, 5]), "1,3,5");
    assert_eq!(seeds_label(&[7]), "7");
}

#[test]
fn the_report_round_trips_through_json() {
    let r = three();
    let text = serde_json::to_string(&r).unwrap();
    assert_eq!(serde_json::from_str::<AcrossReport>(&text).unwrap(), r);
    // The index reads every JSON of the reports folder as a paper's report: this is not one.
    assert!(serde_json::from_str::<PaperReport>(&text).is_err());
}

#[test]
fn seeds_are_read_as_a_range_or_a_list() {
    assert_eq!(parse_seeds("1-4").unwrap(), vec![1, 2, 3, 4]);
    assert_eq!(parse_seeds("9, 2,5").unwrap(), vec![9, 2, 5]);
    for (bad, says) in [
        ("4-1", "backwards"),
        ("x", "not a seed"),
        ("1-x", "not a seed"),
        ("-3", "not a seed"),
        ("7", "at least two"),
        ("3-3", "at least two"),
        ("1,2,1", "twice"),
        ("0-1000", "more than 1000"),
        ("1,,2", "not a seed"),
    ] {
        let e = parse_seeds(bad).unwrap_err();
        assert!(e.contains(says), "{bad}: {e}");
    }
    assert_eq!(parse_seeds("0-999").unwrap().len(), 1000);
}

#[test]
fn measures_of_several_files_are_summed_as_the_paper_report_sums_them() {
    let two = |second: bool, within: usize| {
        let mut r = at_seed(second, within, 0.7);
        let mut f = r.files[0].clone();
        f.experiment_file = "experiments/tiny/t2.toml".into();
        f.claims.clear();
        f.agreement[0].values = 8;
        f.agreement[0].within_25 = 4;
        r.files.push(f);
        r
    };
    let r = across(
        &[1, 2],
        &[two(true, 20), two(false, 22)],
        &["a".into(), "b".into()],
        String::new(),
    )
    .unwrap();
    assert_eq!(r.agreement.len(), 3);
    let over = &r.agreement[2];
    assert_eq!(over.file, "over the files");
    assert_eq!((over.values, over.within_25.clone()), (38, vec![24, 26]));
    let md = render_across(&r);
    assert!(
        md.contains("| over the files | `delay` | 24, 24, 26 of 38 | — |"),
        "{md}"
    );
    // One file asking gives no sum.
    assert_eq!(three().agreement.len(), 1);
}

#[test]
fn a_value_within_its_tolerance_at_some_seeds_is_listed_with_ours_at_each() {
    let r = three();
    assert_eq!(r.values.len(), 1);
    assert_eq!(r.values[0].within, vec![true, false, true]);
    assert_eq!(r.values[0].within_at(), 2);
    let md = render_across(&r);
    assert!(
        md.contains("Of the 1 values compared with the paper's within a tolerance, 0 are within it at every seed, 0 at none and 1 at some."),
        "{md}"
    );
    assert!(
        md.contains("| experiments/tiny/t1.toml | p | delay | 2.5 | 2 of 3 | 2.2, 2.18 ✘, 2.25 |"),
        "{md}"
    );
}

/// The three reports of [`three`] as three values of one setting.
fn three_values() -> AcrossReport {
    let reports = vec![
        at_seed(true, 20, 0.71),
        at_seed(false, 18, 0.7),
        at_seed(true, 25, 0.74),
    ];
    let values = ["0.02", "0.05", "0.09"];
    let links: Vec<String> = values
        .iter()
        .map(|v| format!("tiny-set-x.random_ms-{v}.md"))
        .collect();
    across_values(
        &values
            .iter()
            .map(|v| vec![Setting::parse(&format!("x.random_ms={v}")).unwrap()])
            .collect::<Vec<_>>(),
        &reports,
        &links,
        "smpsched reproduce tiny --vary x.random_ms=0.02,0.05,0.09".into(),
    )
    .unwrap()
}

#[test]
fn runs_at_values_of_a_setting_are_marked_and_named_by_value() {
    let r = three_values();
    assert!(r.seeds.is_empty());
    assert_eq!(r.columns(), ["0.02", "0.05", "0.09"]);
    // The same marks as across seeds: the runs differ only in what names them.
    assert_eq!(r.claims, three().claims);
    assert_eq!(
        r.summary_line(),
        "over 3 values of x.random_ms, of 3 claims 1 holds at every value, 1 turns on the \
         value, 1 is a known difference at every value"
    );
    let md = render_across(&r);
    assert!(md.contains("with `x.random_ms` at 3 values"), "{md}");
    let turning = md
        .split("## Claims whose verdict turns on `x.random_ms`")
        .nth(1)
        .unwrap();
    assert!(
        turning.contains("| `b(x) <= b(y) * 1.02` | 2 of 3 | ✅ | ❌ | ✅ |"),
        "{turning}"
    );
    // The agreement at each value, in order, not its spread.
    assert!(
        md.contains("At each value, in order: 0.02, 0.05, 0.09."),
        "{md}"
    );
    assert!(
        md.contains("| 20, 18, 25 of 30 | 0.71, 0.7, 0.74 |"),
        "{md}"
    );
    // An error names the value whose report differs.
    let mut other = at_seed(true, 20, 0.7);
    other.files[0].claims[1].text = "something else".into();
    let e = across_values(
        &crate::input::setting::grid(&[parse_vary("x.random_ms=1,2").unwrap()]).unwrap(),
        &[at_seed(true, 20, 0.7), other],
        &["a".into(), "b".into()],
        String::new(),
    )
    .unwrap_err();
    assert!(e.contains("x.random_ms = 2: claim"), "{e}");
    // Two paths varied together: each run a combination, named by both.
    let runs = crate::input::setting::grid(&[
        parse_vary("x.random_ms=0.02,0.09").unwrap(),
        parse_vary("x.send_ms=0.3,0.33").unwrap(),
    ])
    .unwrap();
    let four = [
        at_seed(true, 20, 0.71),
        at_seed(false, 18, 0.7),
        at_seed(true, 25, 0.74),
        at_seed(true, 21, 0.72),
    ];
    let g = across_values(
        &runs,
        &four,
        &["a".into(), "b".into(), "c".into(), "d".into()],
        String::new(),
    )
    .unwrap();
    assert_eq!(g.columns()[1], "0.02, 0.33");
    assert_eq!(g.run_noun(), "combination");
    assert!(
        g.summary_line()
            .starts_with("over 4 combinations of x.random_ms, x.send_ms, of 3 claims"),
        "{}",
        g.summary_line()
    );
    let md = render_across(&g);
    assert!(
        md.contains("with `x.random_ms, x.send_ms` at 4 combinations of values"),
        "{md}"
    );
    assert!(
        md.contains("At each combination, in order: 0.02, 0.3; 0.02, 0.33; 0.09, 0.3; 0.09, 0.33."),
        "{md}"
    );
    let text = serde_json::to_string(&r).unwrap();
    assert_eq!(serde_json::from_str::<AcrossReport>(&text).unwrap(), r);
}

#[test]
fn the_plots_put_each_run_at_its_seed_or_value_or_place() {
    use crate::app::across_plot::agreement_charts;
    let seeds = agreement_charts(&three()).unwrap();
    assert_eq!(seeds.ranks.x_label, "seed");
    assert_eq!(seeds.ranks.series.len(), 1);
    assert_eq!(seeds.ranks.series[0].name, "t1: delay");
    assert_eq!(
        seeds.ranks.series[0].points,
        vec![(1.0, 0.71), (2.0, 0.7), (3.0, 0.74)]
    );
    // Within 25%, in percent of the measure's values: 20, 18 and 25 of 30.
    let within: Vec<f64> = seeds.within.series[0].points.iter().map(|p| p.1).collect();
    assert_eq!(within, vec![100.0 * 20.0 / 30.0, 60.0, 100.0 * 25.0 / 30.0]);
    // A numeric setting varied: the runs lie at its values.
    let values = agreement_charts(&three_values()).unwrap();
    assert_eq!(values.ranks.x_label, "x.random_ms");
    let xs: Vec<f64> = values.ranks.series[0].points.iter().map(|p| p.0).collect();
    assert_eq!(xs, vec![0.02, 0.05, 0.09]);
    assert!(
        values.ranks.title.ends_with("at each value"),
        "{}",
        values.ranks.title
    );
    // A grid (or words): at their places in the report.
    let runs = crate::input::setting::grid(&[
        parse_vary("x.random_ms=0.02,0.09").unwrap(),
        parse_vary("x.policy=mach,batch").unwrap(),
    ])
    .unwrap();
    let four: Vec<PaperReport> = [20, 18, 25, 21]
        .iter()
        .map(|&w| at_seed(true, w, 0.7))
        .collect();
    let links: Vec<String> = (0..4).map(|k| k.to_string()).collect();
    let g = across_values(&runs, &four, &links, String::new()).unwrap();
    let grid = agreement_charts(&g).unwrap();
    assert!(grid
        .ranks
        .x_label
        .starts_with("combinations of x.random_ms, x.policy"));
    let xs: Vec<f64> = grid.within.series[0].points.iter().map(|p| p.0).collect();
    assert_eq!(xs, vec![1.0, 2.0, 3.0, 4.0]);
    // Drawn, and the same bytes each time.
    let svg = crate::svg::line_chart(&grid.within).unwrap();
    assert!(svg.starts_with("<svg"), "{svg}");
    assert_eq!(svg, crate::svg::line_chart(&grid.within).unwrap());
}
