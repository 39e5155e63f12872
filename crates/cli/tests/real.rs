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
