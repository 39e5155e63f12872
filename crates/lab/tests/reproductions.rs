//! Every reproduction under `experiments/` runs at small scale and its claims hold (known
//! differences excepted, and shown as such), deterministically.

use std::path::{Path, PathBuf};

use smpsched_lab::reproduce::report::{render_paper, PaperReport, Verdict};
use smpsched_lab::reproduction::{papers, reproduce_file};
use smpsched_lab::Experiment;

fn experiments() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments")
}

#[test]
fn every_reproduction_holds_its_claims_at_small_scale() {
    let dir = experiments();
    let list = papers(&dir).unwrap();
    assert!(list.contains(&"black90".to_string()), "{list:?}");
    for paper in list {
        for f in smpsched_lab::catalog::experiment_files(&dir.join(&paper)).unwrap() {
            let exp = Experiment::load_scaled(&f, 0.25).unwrap();
            if exp.reproduce.is_none() {
                continue;
            }
            let a = reproduce_file(&exp, 2, &paper, &|_, _| {}).unwrap();
            for c in &a.report.claims {
                assert!(
                    matches!(c.verdict, Verdict::Holds | Verdict::KnownDifference { .. }),
                    "{}: claim `{}` -> {:?} ({})",
                    f.display(),
                    c.text,
                    c.verdict,
                    c.detail
                );
            }
            let b = reproduce_file(&exp, 1, &paper, &|_, _| {}).unwrap();
            let md = |r: smpsched_lab::reproduce::report::ReportFile| {
                render_paper(&PaperReport {
                    paper_id: paper.clone(),
                    paper_title: String::new(),
                    files: vec![r],
                    generated_by: String::new(),
                })
            };
            assert_eq!(
                a.plots,
                b.plots,
                "{}: plots differ between runs",
                f.display()
            );
            assert_eq!(
                md(a.report),
                md(b.report),
                "{}: report differs",
                f.display()
            );
        }
    }
}
