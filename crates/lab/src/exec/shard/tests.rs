//! Runs made "elsewhere" (by an in-process remote that answers out of order) give the same
//! results, bytes included, as runs made here; shipped files are read from the bundle only.

use super::*;
use crate::exec::runner::run_experiment;
use crate::results::to_json;

/// One run at a time, taking runs from `memo` when given.
fn one_by_one(memo: Option<&RunMemo>) -> RunOptions<'_> {
    RunOptions {
        jobs: 1,
        memo,
        ..RunOptions::default()
    }
}

/// A remote that runs every task in this process, answering in reverse order.
struct Backwards;

impl Remote for Backwards {
    fn run(
        &self,
        bundles: &[Vec<u8>],
        tasks: &[(usize, Task)],
        done: &mut dyn FnMut(usize, Result<Vec<u8>, TaskFailure>) -> Result<(), LabError>,
    ) -> Result<(), LabError> {
        for (i, (b, t)) in tasks.iter().enumerate().rev() {
            done(i, run_task(&bundles[*b], *t))?;
        }
        Ok(())
    }
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("smpsched-shard-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const OPEN: &str = "name = \"open\"\nseed = 3\nrepetitions = 2\n[machine]\n\
    preset = \"tango-12\"\nprocessors = 2\n[scheduler]\npolicy = \"batch\"\n\
    [[workload]]\nkind = \"arrivals\"\nname = \"jobs\"\ntrace = \"jobs.csv\"\n\
    [sweep]\n\"scheduler.policy\" = [\"batch\", \"round-robin\"]\n";

#[test]
fn runs_made_elsewhere_give_the_same_bytes_and_ship_their_files() {
    let dir = scratch("same");
    let file = dir.join("open.toml");
    std::fs::write(&file, OPEN).unwrap();
    std::fs::write(
        dir.join("jobs.csv"),
        "0,50000\n10,70000\n20,30000\n5000,90000\n",
    )
    .unwrap();
    let (bundle, exp) = Bundle::load(&file, 1.0, Some(7)).unwrap();
    assert_eq!(exp.seed, 7);
    assert_eq!(bundle.files.len(), 1, "the trace travels with the bundle");
    let here = run_experiment(&exp, &one_by_one(None)).unwrap();
    // The worker never reads this machine's copy of the trace.
    std::fs::remove_dir_all(&dir).unwrap();
    let memo = RunMemo::default();
    prefill(&[&exp], std::slice::from_ref(&bundle), &Backwards, &memo).unwrap();
    let elsewhere = run_experiment(&exp, &one_by_one(Some(&memo))).unwrap();
    assert_eq!(to_json(&exp, &here), to_json(&exp, &elsewhere));
    for (a, b) in here.iter().zip(&elsewhere) {
        assert_eq!(a.report.user_kernel, b.report.user_kernel);
    }
    // Every run came from the memo: a second prefill plans nothing.
    assert!(tasks(&exp, &memo, &mut BTreeSet::new()).is_empty());
    assert_eq!(Bundle::from_bytes(&bundle.to_bytes()).unwrap(), bundle);
}

#[test]
fn runs_two_files_share_are_planned_once() {
    let dir = scratch("once");
    let file = dir.join("open.toml");
    std::fs::write(&file, OPEN).unwrap();
    std::fs::write(dir.join("jobs.csv"), "0,50000\n").unwrap();
    let (_, exp) = Bundle::load(&file, 1.0, None).unwrap();
    let mut planned = BTreeSet::new();
    let memo = RunMemo::default();
    assert_eq!(tasks(&exp, &memo, &mut planned).len(), 4);
    assert_eq!(tasks(&exp, &memo, &mut planned).len(), 0);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_failing_run_is_reported_as_here_and_a_bound_survives_the_trip() {
    let dir = scratch("fail");
    let file = dir.join("bound.toml");
    let text = "name = \"bound\"\nevent_limit = 50\n[machine]\npreset = \"tango-12\"\n\
        processors = 1\n[scheduler]\npolicy = \"round-robin\"\n[[workload]]\n\
        kind = \"synthetic\"\nthreads = 4\nbursts = 100\n\
        compute = { dist = \"fixed\", value = 100000 }\n";
    std::fs::write(&file, text).unwrap();
    let (bundle, exp) = Bundle::load(&file, 1.0, None).unwrap();
    let here = run_experiment(&exp, &one_by_one(None)).unwrap();
    assert!(here[0].stopped.is_some(), "the run reaches its event limit");
    let memo = RunMemo::default();
    prefill(&[&exp], std::slice::from_ref(&bundle), &Backwards, &memo).unwrap();
    let elsewhere = run_experiment(&exp, &one_by_one(Some(&memo))).unwrap();
    assert_eq!(to_json(&exp, &here), to_json(&exp, &elsewhere));
    // No job exited: its response measures are null in the results, and survive the trip so.
    assert!(
        to_json(&exp, &elsewhere).contains("\"mean_response\": null"),
        "{}",
        to_json(&exp, &elsewhere)
    );
    assert_eq!(
        here[0].stopped.as_ref().map(Stopped::describe),
        elsewhere[0].stopped.as_ref().map(Stopped::describe)
    );
    // A task for a point that does not exist fails with a message, not a panic.
    let bad = run_task(
        &bundle.to_bytes(),
        Task {
            point: 9,
            repetition: 0,
        },
    )
    .unwrap_err();
    assert_eq!(bad.code, 1);
    assert!(bad.message.contains("no point 9"), "{}", bad.message);
    assert!(run_task(
        b"not a bundle",
        Task {
            point: 0,
            repetition: 0
        }
    )
    .is_err());
    std::fs::remove_dir_all(&dir).ok();
}
