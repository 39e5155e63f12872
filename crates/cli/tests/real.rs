//! End-to-end tests of `smpsched real`: a run prints one row per pair with a load distribution
//! per scheduler; unknown names and incompatible pairs exit with 2 and name the valid choices.

mod common;

use common::{smpsched, tempdir};

#[test]
fn a_run_prints_delay_throughput_and_distribution() {
    let dir = tempdir("real-run");
    let o = smpsched(
        &[
            "real",
            "--schedulers",
            "2",
            "--clients",
            "3",
            "--requests",
            "900",
            "--load",
            "uniform",
            "--interarrival-us",
            "10",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    let row = out
        .lines()
        .find(|l| l.starts_with("multi-access"))
        .unwrap_or_else(|| panic!("no row in {out}"));
    assert!(
        row.contains("sequential") && row.contains("primary-random"),
        "{row}"
    );
    // Two schedulers: two signed shares that sum to zero.
    let shares: Vec<f64> = row
        .split_whitespace()
        .rev()
        .take(2)
        .map(|s| s.parse().unwrap())
        .collect();
    assert!((shares[0] + shares[1]).abs() < 0.2, "{row}");
}

#[test]
fn table4_runs_every_first_block_pair() {
    let dir = tempdir("real-table4");
    let o = smpsched(
        &[
            "real",
            "--table4",
            "--schedulers",
            "2",
            "--clients",
            "3",
            "--requests",
            "300",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with("multi-access"))
            .count(),
        30,
        "{out}"
    );
}

#[test]
fn bad_names_and_pairs_exit_2_naming_the_choices() {
    let dir = tempdir("real-bad");
    let o = smpsched(&["real", "--structure", "fifo"], &dir);
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("`fifo`")
            && e.contains("multi-access, global, distributed-fcfs, ddq, mach, per-core"),
        "{e}"
    );

    let o = smpsched(
        &["real", "--scheduler", "global", "--client", "random"],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("`global`")
            && e.contains("`random`")
            && e.contains("compatible client policies: global"),
        "{e}"
    );
    assert!(o.stdout.is_empty(), "nothing runs before the check");

    let o = smpsched(
        &[
            "real",
            "--scheduler",
            "distributed-fcfs",
            "--client",
            "static",
        ],
        &dir,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("static-fcfs, random-fcfs"));

    let o = smpsched(&["real", "--load", "bursty"], &dir);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn george_runs_producer_consumer_and_the_sieve_on_every_structure() {
    let dir = tempdir("real-george");
    let o = smpsched(
        &[
            "real",
            "--george",
            "--schedulers",
            "2",
            "--clients",
            "2",
            "--requests",
            "2000",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    for s in [
        "global",
        "distributed-fcfs",
        "multi-access",
        "ddq",
        "mach",
        "per-core",
    ] {
        let row = out
            .lines()
            .find(|l| l.starts_with(s))
            .unwrap_or_else(|| panic!("{s} in {out}"));
        // pi(2,000,000) = 148,933
        assert!(row.ends_with("148933"), "{row}");
    }
}

#[test]
fn served_rate_is_bounded_by_the_schedulers_and_generated_rate_is_not() {
    // Three requests of 20 ms each on one scheduler: at most 0.05 served a ms, however fast the
    // one client generates them (they all fit in the mailboxes at once).
    let dir = tempdir("real-rates");
    let o = smpsched(
        &[
            "real",
            "--schedulers",
            "1",
            "--clients",
            "1",
            "--requests",
            "3",
            "--service-us",
            "20000",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("gen/ms") && out.contains("done/ms"), "{out}");
    let row = out.lines().find(|l| l.starts_with("multi-access")).unwrap();
    let cols: Vec<&str> = row.split_whitespace().collect();
    let (generated, done): (f64, f64) = (cols[6].parse().unwrap(), cols[7].parse().unwrap());
    assert!(done <= 0.05 + 1e-9 && done > 0.0, "{row}");
    assert!(generated > done, "{row}");
    assert_eq!(cols[8], "+0.0", "one scheduler serves every request: {row}");
}

#[test]
fn options_that_do_not_apply_are_refused_and_a_client_implies_its_scheduler() {
    let dir = tempdir("real-applies");
    for (args, says) in [
        (
            &["--scheduler", "global", "--mailboxes", "4"][..],
            "--mailboxes 4",
        ),
        (&["--client", "static", "--cutoff", "3"][..], "--cutoff 3"),
        (&["--schedulers", "-1"][..], "--schedulers"),
        (&["--service-us", "-inf"][..], "--service-us"),
        (&["--mailboxes", "0"][..], "got 0"),
        (
            &["--structure", "global", "--scheduler", "static"][..],
            "scheduler policies are: global",
        ),
    ] {
        let mut all = vec!["real"];
        all.extend_from_slice(args);
        let o = smpsched(&all, &dir);
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {e}");
        assert!(e.contains(says), "{args:?}: {e}");
    }
    let o = smpsched(&["real", "--client", "global", "--requests", "30"], &dir);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("global            global"));
}

#[test]
fn a_closed_or_full_standard_output_ends_the_command_without_a_panic() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let dir = tempdir("real-pipe");
    // A reader that closes at once: the command stops quietly, exit 0.
    let mut child = Command::new(env!("CARGO_BIN_EXE_smpsched"))
        .args(["real", "--table4", "--requests", "30"])
        .current_dir(&dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // A full disk: said on standard error, exit 1.
    if let Ok(full) = std::fs::OpenOptions::new().write(true).open("/dev/full") {
        let o = Command::new(env!("CARGO_BIN_EXE_smpsched"))
            .args(["list"])
            .current_dir(&dir)
            .stdout(full)
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{e}");
        assert!(e.contains("could not write to standard output") && !e.contains("panicked"));
    }
}
