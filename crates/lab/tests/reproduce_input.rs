//! Nonsense in a `[reproduce]` section is refused with the file, line and field, and
//! the summary of a report says how close our values are, not only whether they fit the file's
//! tolerances.

use std::path::Path;

use smpsched_lab::reproduce::agreement;
use smpsched_lab::reproduce::markdown::render_paper;
use smpsched_lab::reproduce::report::{PaperReport, PointRow, ReportFile};
use smpsched_lab::reproduce::summary::Summary;
use smpsched_lab::reproduce::terminal::render_terminal;
use smpsched_lab::reproduce::Tolerance;
use smpsched_lab::{Experiment, InputError};

/// A small pingpong reproduction: 400 synchronizations, 20 at the `few` points.
fn pingpong(reproduce: &str) -> String {
    format!(
        r#"name = "t"
seed = 1

[machine]
preset = "multimax"
processors = 1

[scheduler]
policy = "round-robin"

[[workload]]
kind = "pingpong"
name = "pp"
threads = 3
syncs = 400
hint = "handoff"

[[point]]
name = "many"

[[point]]
name = "few"
set = {{ "workload.0.syncs" = 20 }}

[sweep]
"workload.0.threads" = [3, 4]

[reproduce]
paper = "x"
title = "t"
metric = "us_per_op"
tolerance = "10%"
{reproduce}
"#
    )
}

/// The same with a synthetic workload, which counts no unit operations.
fn synthetic(reproduce: &str) -> String {
    format!(
        r#"name = "s"

[machine]
preset = "tango-12"
processors = 2

[scheduler]
policy = "round-robin"

[[workload]]
kind = "synthetic"
name = "A"
threads = 2
bursts = 2
compute = {{ dist = "fixed", value = 1000 }}

[sweep]
"machine.processors" = [1, 2]

[reproduce]
paper = "x"
title = "t"
{reproduce}
"#
    )
}

fn load(text: &str, scale: f64) -> Result<Experiment, InputError> {
    Experiment::parse_scaled(Path::new("f.toml"), text.to_string(), scale)
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

// 1. A misspelled scale path --------------------------------------------------------------------

#[test]
fn a_scale_path_that_names_no_integer_is_refused_at_any_scale() {
    let text = pingpong("scale = [\"workload.0.synks\"]");
    for scale in [1.0, 0.5] {
        let e = load(&text, scale)
            .err()
            .expect("a typo in `scale` must be refused");
        assert_eq!(e.field, "reproduce.scale", "{e}");
        assert_eq!(e.line, Some(line_of(&text, "synks")), "{e}");
        assert!(e.message.contains("`workload.0.synks`"), "{e}");
        // It says what a path should look like: the integers that are there.
        assert!(e.message.contains("like `workload.0.syncs`"), "{e}");
    }
    // A path to something that is not an integer.
    let e = load(&pingpong("scale = [\"workload.0.hint\"]"), 1.0)
        .err()
        .expect("refused");
    assert_eq!(e.field, "reproduce.scale", "{e}");
    assert!(e.message.contains("integer"), "{e}");
    // Listing a size twice would scale it twice.
    let e = load(
        &pingpong("scale = [\"workload.0.syncs\", \"workload.0.syncs\"]"),
        1.0,
    )
    .err()
    .expect("refused");
    assert_eq!(e.field, "reproduce.scale", "{e}");
    assert!(e.message.contains("twice"), "{e}");
}

#[test]
fn a_correct_scale_path_still_scales() {
    let text = pingpong("scale = [\"workload.0.syncs\"]");
    let full = load(&text, 1.0).unwrap();
    let half = load(&text, 0.5).unwrap();
    let ops = |e: &Experiment, i: usize| e.points[i].operations().unwrap();
    assert_eq!(ops(&half, 0) * 2, ops(&full, 0));
    assert_eq!(ops(&half, 3) * 2, ops(&full, 3));
}

// 2. A scale that takes a size below 1 ----------------------------------------------------------

#[test]
fn a_scale_that_rounds_a_size_to_zero_is_refused_with_the_smallest_allowed() {
    let text = pingpong("scale = [\"workload.0.syncs\"]");
    for scale in [1e-300, 0.0, 0.02, f64::NAN] {
        let e = load(&text, scale)
            .err()
            .expect("a size below 1 must be refused");
        assert_eq!(e.field, "reproduce.scale", "{e}");
        assert!(e.message.contains("--scale"), "{e}");
        // The smallest scale for the whole file: 20 * 0.025 = 0.5 rounds to 1. The first point
        // (400 synchronizations) would allow 0.00125, but the `few` points do not.
        assert!(e.message.contains("0.025"), "{scale}: {e}");
    }
    assert!(load(&text, 0.025).is_ok());
    assert!(load(&text, 0.03).is_ok());
    // Three significant digits, rounded up so that the printed scale itself works: 3 * 0.167
    // rounds to 1, 3 * 0.166 to 0.
    let text = text.replace("\"workload.0.syncs\" = 20", "\"workload.0.syncs\" = 3");
    let e = load(&text, 0.1).err().expect("refused");
    assert!(e.message.contains("allows is 0.167 "), "{e}");
    assert!(load(&text, 0.167).is_ok());
    assert!(load(&text, 0.166).is_err());
    // A path to a string suggests the closest integer.
    let e = load(&pingpong("scale = [\"workload.0.thread\"]"), 1.0)
        .err()
        .expect("refused");
    assert!(e.message.contains("like `workload.0.threads`"), "{e}");
}

#[test]
fn the_black90_and_gupta91_reproductions_load_at_small_scales() {
    for paper in ["black90", "gupta91"] {
        reproductions_load_at_small_scales(paper);
    }
}

fn reproductions_load_at_small_scales(paper: &str) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../experiments")
        .join(paper);
    for f in smpsched_lab::app::catalog::experiment_files(&dir).unwrap() {
        for scale in [1.0, 0.25, 0.1] {
            if let Err(e) = Experiment::load_scaled(&f, scale) {
                panic!("{} at scale {scale}: {e}", f.display());
            }
        }
        let e = Experiment::load_scaled(&f, 1e-300).err().expect("refused");
        assert!(e.to_string().contains("--scale"), "{e}");
    }
}

// 3. A plot against a parameter that is not swept -----------------------------------------------

#[test]
fn a_line_plot_x_must_be_a_swept_parameter() {
    let text = pingpong("plot = { kind = \"line\", x = \"workload.0.thread\" }");
    let e = load(&text, 1.0)
        .err()
        .expect("an unswept x must be refused");
    assert_eq!(e.field, "reproduce.plot.x", "{e}");
    assert_eq!(e.line, Some(line_of(&text, "plot =")), "{e}");
    assert!(e.message.contains("`workload.0.threads`"), "{e}");
    assert!(e.message.contains("`workload.0.syncs`"), "{e}");
    assert!(load(
        &pingpong("plot = { kind = \"line\", x = \"workload.0.threads\" }"),
        1.0
    )
    .is_ok());
}

// 4. A measure that is not defined for a point --------------------------------------------------

#[test]
fn us_per_op_needs_workloads_that_count_operations() {
    // The section's measure, used by the no-expect table on every point.
    let e = load(&synthetic("metric = \"us_per_op\""), 1.0)
        .err()
        .expect("refused");
    assert_eq!(e.field, "reproduce.metric", "{e}");
    assert!(e.message.contains("operations"), "{e}");
    assert!(e.message.contains("processors=1"), "{e}");
    // An expected value's own measure.
    let text = synthetic(
        "metric = \"utilization\"\ntolerance = \"10%\"\n[[reproduce.expect]]\n\
         point = \"processors=2\"\nmetric = \"us_per_op\"\npaper = 1",
    );
    let e = load(&text, 1.0).err().expect("refused");
    assert_eq!(e.field, "reproduce.expect.0.metric", "{e}");
    assert!(e.message.contains("operations"), "{e}");
    // A claim's measure.
    let text = synthetic(
        "metric = \"utilization\"\n[[reproduce.claim]]\n\
         claim = \"us_per_op(processors=1) > us_per_op(processors=2)\"",
    );
    let e = load(&text, 1.0).err().expect("refused");
    assert_eq!(e.field, "reproduce.claim.0.claim", "{e}");
    assert!(e.message.contains("operations"), "{e}");
    // Application measures need the application.
    let e = load(&synthetic("metric = \"app_util:B\""), 1.0)
        .err()
        .expect("refused");
    assert_eq!(e.field, "reproduce.metric", "{e}");
    assert!(e.message.contains("`A`"), "{e}");
    // And the defined ones still load.
    assert!(load(&synthetic("metric = \"app_util:A\""), 1.0).is_ok());
    assert!(load(&synthetic("metric = \"utilization\""), 1.0).is_ok());
}

// 4b. A known difference's values --------------------------------------------------------------

#[test]
fn a_known_differences_values_are_checked_like_a_claims() {
    let with = |reason: &str| {
        synthetic(&format!(
            "metric = \"utilization\"\n[[reproduce.claim]]\n\
             claim = \"utilization(processors=1) > 2 * utilization(processors=2)\"\n\
             known_difference = \"{reason}\""
        ))
    };
    // A point the file lacks, a measure the point lacks, a value that does not parse, a brace
    // left open: each refused with the file's line and the field.
    for (reason, says) in [
        (
            "ours {utilization(processors=3)}",
            "unknown point `processors=3` in the known difference",
        ),
        ("ours {us_per_op(processors=1)}", "operations"),
        (
            "ours {utilization(processors=1) <}",
            "in `{utilization(processors=1) <}`",
        ),
        ("ours {utilization(processors=1)", "never closed"),
    ] {
        let text = with(reason);
        let e = load(&text, 1.0)
            .err()
            .unwrap_or_else(|| panic!("{reason} must be refused"));
        assert_eq!(e.field, "reproduce.claim.0.known_difference", "{e}");
        assert_eq!(e.line, Some(line_of(&text, "known_difference")), "{e}");
        assert!(e.message.contains(says), "{reason}: {e}");
    }
    assert!(load(&with("ours {utilization(processors=1)}, {{braces}}"), 1.0).is_ok());
    assert!(load(&with("plain words, 50%"), 1.0).is_ok());
    // A note's values are checked the same way.
    let note = |text: &str| {
        synthetic(&format!(
            "metric = \"utilization\"\nnotes = [\"ok\", \"{text}\"]"
        ))
    };
    let text = note("ours {utilization(processors=9)}");
    let e = load(&text, 1.0).err().expect("refused");
    assert_eq!(e.field, "reproduce.notes.1", "{e}");
    assert!(
        e.message
            .contains("unknown point `processors=9` in the note"),
        "{e}"
    );
    assert!(load(&note("ours {utilization(processors=2)}"), 1.0).is_ok());
}

// 5. The summary says how close the values are --------------------------------------------------

fn row(ours: f64, paper: f64, tolerance: Tolerance) -> PointRow {
    PointRow {
        point: format!("p{paper}"),
        metric: "us_per_op".into(),
        ours,
        paper: Some(paper),
        tolerance: Some(tolerance),
        within: Some(tolerance.check(ours, paper)),
        note: None,
    }
}

fn file() -> ReportFile {
    let wide = Tolerance::Relative(0.60);
    ReportFile {
        title: "Table".into(),
        source_paper: "x".into(),
        experiment_file: "f.toml".into(),
        setup: vec![],
        points: vec![
            row(105.0, 100.0, wide),
            row(120.0, 100.0, wide),
            row(159.0, 100.0, wide),
            row(41.0, 100.0, wide),
            row(110.0, 100.0, Tolerance::Absolute(20.0)),
        ],
        claims: vec![],
        plots: vec![],
        notes: vec![],
        agreement: vec![],
    }
}

#[test]
fn the_summary_counts_values_within_10_and_25_percent() {
    let s = Summary::of_files(&[file()]);
    let text = s.to_string();
    assert!(
        text.contains(
            "5 values: 2 within 10%, 3 within 25%, 5 within the file's tolerances \
             (largest distance 59%)"
        ),
        "{text}"
    );
    let paper = PaperReport {
        paper_id: "x".into(),
        paper_title: "X".into(),
        files: vec![file(), file()],
        generated_by: String::new(),
        settings: Vec::new(),
        only: Vec::new(),
    };
    let md = render_paper(&paper);
    assert!(
        md.contains("10 values: 4 within 10%, 6 within 25%, 10 within the files' tolerances"),
        "{md}"
    );
    // The per-file line of the contents and of each section says it too.
    assert!(
        md.contains("5 values: 2 within 10%, 3 within 25%, 5 within the file's tolerances"),
        "{md}"
    );
    assert_eq!(md, render_paper(&paper), "deterministic");
    // The report's JSON still reads back.
    let json = serde_json::to_string(&paper).unwrap();
    let back: PaperReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back.summary().to_string(), paper.summary().to_string());
}

#[test]
fn every_value_row_shows_its_relative_distance() {
    let md = render_paper(&PaperReport {
        paper_id: "x".into(),
        paper_title: "X".into(),
        files: vec![file()],
        generated_by: String::new(),
        settings: Vec::new(),
        only: Vec::new(),
    });
    // Also the row compared within an absolute tolerance.
    assert!(
        md.contains("| p100 | us_per_op | 159 | 100 | +59% |"),
        "{md}"
    );
    assert!(md.contains("+10%"), "{md}");
    let term = render_terminal(&file());
    assert!(term.contains("+59%"), "{term}");
    let absolute = term.lines().find(|l| l.contains("±20")).unwrap();
    assert!(absolute.contains("+10%"), "{term}");
    assert!(
        term.contains("5 values: 2 within 10%, 3 within 25%, 5 within the file's tolerances"),
        "{term}"
    );
}

// 6. Agreement with the paper: values within 25% and rank correlation -------------------------

#[test]
fn agreement_needs_three_expected_values_of_its_measure() {
    let expect = |point: &str| format!("\n[[reproduce.expect]]\npoint = \"{point}\"\npaper = 10\n");
    let one = format!("agreement = [\"us_per_op\"]\n{}", expect("many/threads=3"));
    let text = pingpong(&one);
    let e = load(&text, 1.0).err().expect("one value gives no ranking");
    assert_eq!(e.field, "reproduce.agreement.0", "{e}");
    assert_eq!(e.line, Some(line_of(&text, "agreement =")), "{e}");
    assert!(e.message.contains("1 expected value"), "{e}");
    let twice = format!(
        "agreement = [\"us_per_op\", \"us_per_op\"]\n{}{}{}",
        expect("many/threads=3"),
        expect("many/threads=4"),
        expect("few/threads=3")
    );
    let e = load(&pingpong(&twice), 1.0).err().expect("named twice");
    assert_eq!(e.field, "reproduce.agreement.1", "{e}");
    let three = twice.replacen("\"us_per_op\", \"us_per_op\"", "\"us_per_op\"", 1);
    let exp = load(&pingpong(&three), 1.0).expect("three values rank");
    assert_eq!(exp.reproduce.unwrap().agreement, vec!["us_per_op"]);
}

#[test]
fn the_report_shows_each_files_agreement_and_the_pooled_counts() {
    let mut f = file();
    let pairs = f.points.iter().map(|r| (r.ours, r.paper.unwrap()));
    f.agreement = vec![agreement::of_pairs("us_per_op", pairs)];
    let a = &f.agreement[0];
    assert_eq!((a.values, a.within_25), (5, 3));
    // Every paper value here is 100: no ranking to correlate with, so none is shown.
    assert_eq!(a.rank_correlation, None);
    let paper = PaperReport {
        paper_id: "x".into(),
        paper_title: "X".into(),
        files: vec![f.clone(), f.clone()],
        generated_by: String::new(),
        settings: Vec::new(),
        only: Vec::new(),
    };
    let md = render_paper(&paper);
    assert!(
        md.contains("Agreement with the paper: `us_per_op`: 3 of 5 within 25%.\n"),
        "{md}"
    );
    assert!(
        md.contains("Agreement with the paper over the files: `us_per_op`: 6 of 10 within 25%."),
        "{md}"
    );
    assert!(render_terminal(&f).contains("agreement with the paper: `us_per_op`: 3 of 5"));
    let json = serde_json::to_string(&paper).unwrap();
    let back: PaperReport = serde_json::from_str(&json).unwrap();
    assert_eq!(back, paper);
    // A file that asks for none shows none, and its JSON carries no field.
    let plain = PaperReport {
        files: vec![file()],
        ..paper
    };
    assert!(!render_paper(&plain).contains("Agreement"));
    assert!(!serde_json::to_string(&plain).unwrap().contains("agreement"));
}

/// A reproduction whose measures read `wake_lat_us` measures every point's threads, so the
/// latencies exist for any workload (only rt-app's were measured: a synthetic workload's gave
/// NaN and an error verdict, found by a new-user probe), and such points are not taken for the
/// same runs as points that do not measure them.
#[test]
fn a_reproduction_reading_wake_latencies_measures_the_threads() {
    let base = synthetic("metric = \"app_done_ms:A\"").replace(
        "bursts = 2",
        "bursts = 4\nblock = { dist = \"fixed\", value = 5000 }",
    );
    let plain = load(&base, 1.0).unwrap();
    let with = load(
        &base.replace(
            "metric = \"app_done_ms:A\"",
            "metric = \"recorded_mean:A:wake_lat_us\"",
        ),
        1.0,
    )
    .unwrap();
    assert!(plain.points.iter().all(|p| !p.measure_threads));
    assert!(with.points.iter().all(|p| p.measure_threads));
    assert_ne!(plain.points[0].key, with.points[0].key);
    let runs = smpsched_lab::run_experiment(
        &with,
        &smpsched_lab::RunOptions {
            jobs: 1,
            ..Default::default()
        },
    )
    .unwrap();
    for r in &runs {
        let lat = r.report.apps[0].recorded["wake_lat_us"];
        assert_eq!(lat.count, 2 * 3, "two threads, three wake-ups each");
    }
}
