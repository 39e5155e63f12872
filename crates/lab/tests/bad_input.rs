//! Bad input never panics (a long proptest run over experiment files stands in for a fuzzer):
//! every experiment file of the project, with one value replaced by junk, a line of junk
//! inserted (sizes of memory regions, sweeps, limits, quanta), one line dropped or the text cut
//! short, either loads or is refused with an input error that names a field or a line; what
//! loads runs under small bounds without panicking, within a wall-clock bound, ends as the
//! command would with exit code 0 or 2, and writes results that read back well formed.
//!
//! `PROPTEST_CASES=20000 cargo test -p smpsched-lab --test bad_input --release` runs it long.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use std::time::{Duration, Instant};

use proptest::prelude::*;
use smpsched_lab::{
    app::catalog, run_experiment, Destination, Experiment, LabError, Outbox, RunOptions,
};

/// Values a careless or hostile file might hold.
const JUNK: &[&str] = &[
    "-1",
    "0",
    "1",
    "3",
    "-0.0",
    "0.5",
    "1e400",
    "nan",
    "inf",
    "99999999999",
    "18446744073709551615",
    "9223372036854775807",
    "\"\"",
    "\"x\"",
    "\"exponential\"",
    "\"priority\"",
    "[]",
    "[1, \"a\"]",
    "{}",
    "{ dist = \"fixed\" }",
    "{ dist = \"uniform\", min = 5, max = 1 }",
    "true",
    "1979-05-27",
    "65536",
    "1073741824",
    "1099511627776",
    "[1, 2, 3]",
    "[0, 1]",
];

/// Keys whose junk values reach memory regions, sweeps, limits and quanta, for inserted lines.
const KEYS: &[&str] = &[
    "bytes",
    "passes",
    "stride",
    "threads",
    "shared",
    "processors",
    "cache_bytes",
    "line_bytes",
    "quantum",
    "repetitions",
    "time_limit_cycles",
    "event_limit",
    "\"machine.processors\"",
    "\"workload.0.threads\"",
    "\"workload.0.bytes\"",
    "\"scheduler.quantum\"",
];

fn experiment_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../experiments");
    let out = catalog::experiment_files(&root).unwrap();
    assert!(out.len() >= 4, "experiment files found: {out:?}");
    out
}

/// How to spoil a file.
#[derive(Clone, Debug)]
enum Spoil {
    /// Replace the value of the `n`th `key = value` line with `JUNK[j]`.
    Value { n: usize, j: usize },
    /// Insert `KEYS[k] = JUNK[j]` after the `n`th line.
    Insert { n: usize, k: usize, j: usize },
    /// Drop the `n`th line.
    Drop { n: usize },
    /// Keep only the first `n` bytes.
    Cut { n: usize },
}

fn spoil(text: &str, how: &Spoil) -> String {
    let lines: Vec<&str> = text.lines().collect();
    match *how {
        Spoil::Value { n, j } => {
            let assignments: Vec<usize> = (0..lines.len())
                .filter(|&i| {
                    let l = lines[i].trim_start();
                    !l.starts_with('#') && l.contains(" = ")
                })
                .collect();
            let at = assignments[n % assignments.len()];
            let key = lines[at].split(" = ").next().unwrap();
            let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            out[at] = format!("{key} = {}", JUNK[j % JUNK.len()]);
            out.join("\n")
        }
        Spoil::Insert { n, k, j } => {
            let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            let line = format!("{} = {}", KEYS[k % KEYS.len()], JUNK[j % JUNK.len()]);
            out.insert(n % (lines.len() + 1), line);
            out.join("\n")
        }
        Spoil::Drop { n } => {
            let at = n % lines.len();
            lines
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != at)
                .map(|(_, l)| *l)
                .collect::<Vec<_>>()
                .join("\n")
        }
        Spoil::Cut { n } => {
            let mut at = n % text.len();
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text[..at].to_string()
        }
    }
}

fn spoils() -> impl Strategy<Value = Spoil> {
    prop_oneof![
        4 => (any::<usize>(), any::<usize>()).prop_map(|(n, j)| Spoil::Value { n, j }),
        3 => (any::<usize>(), any::<usize>(), any::<usize>())
            .prop_map(|(n, k, j)| Spoil::Insert { n, k, j }),
        1 => any::<usize>().prop_map(|n| Spoil::Drop { n }),
        1 => any::<usize>().prop_map(|n| Spoil::Cut { n }),
    ]
}

/// The longest one case may take, loading and running: a run is bounded, not merely slow.
const WALL_BOUND: Duration = Duration::from_secs(30);

/// Loads `text` as if it were the file `name`, and runs what loads (its first points, one
/// repetition, under small bounds when small enough to run here), writing the results as
/// `smpsched run` does.
fn load_and_run(dir: &Path, name: &str, text: &str) -> Result<(), TestCaseError> {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    let start = Instant::now();
    let loaded = catch_unwind(AssertUnwindSafe(|| Experiment::load_scaled(&path, 0.05)));
    let loaded = loaded.map_err(|_| TestCaseError::fail(format!("load panicked on:\n{text}")))?;
    match loaded {
        Err(LabError::Input(e)) => {
            prop_assert!(
                !e.field.is_empty() || e.line.is_some(),
                "an error that names neither a field nor a line: {e}"
            );
            prop_assert!(!e.message.is_empty(), "an error without a message: {e:?}");
            prop_assert!(e.file.ends_with(name), "{e}");
        }
        Err(other) => prop_assert!(false, "not an input error: {other}"),
        Ok(mut exp) => {
            exp.repetitions = 1;
            exp.points.truncate(3);
            exp.points.retain(|point| {
                let threads: u64 = point.apps.iter().map(|a| a.workload.threads()).sum();
                threads <= 2_000 && point.machine.processors <= 256
            });
            if exp.points.is_empty() {
                return Ok(());
            }
            for point in &mut exp.points {
                point.limits = smpsched_sim::Limits {
                    cycles: point.limits.cycles.min(2_000_000),
                    events: point.limits.events.min(200_000),
                    references: point.limits.references.min(20_000_000),
                };
            }
            let out = dir.join("out");
            let _ = std::fs::remove_dir_all(&out);
            let ran = catch_unwind(AssertUnwindSafe(|| -> Result<(), LabError> {
                let outbox = Outbox::prepare(
                    Destination::Exactly {
                        dir: out.clone(),
                        replace: false,
                    },
                    &exp.path,
                )?;
                let runs = run_experiment(
                    &exp,
                    &RunOptions {
                        jobs: 1,
                        ..RunOptions::default()
                    },
                )?;
                outbox.deliver(&exp, &runs)?;
                match smpsched_lab::stopped_error(&exp, &runs) {
                    Some(e) => Err(e),
                    None => Ok(()),
                }
            }));
            let ran =
                ran.map_err(|_| TestCaseError::fail(format!("a run panicked on:\n{text}")))?;
            if let Err(e) = &ran {
                prop_assert_eq!(e.exit_code(), 2, "exit code of `{}` on:\n{}", e, text);
            }
            if out.exists() {
                check_results(&out)?;
            }
        }
    }
    prop_assert!(
        start.elapsed() < WALL_BOUND,
        "took {:?} on:\n{text}",
        start.elapsed()
    );
    Ok(())
}

/// Every results file reads back: the CSV with a strict reader, the JSON, a whole SVG.
fn check_results(out: &Path) -> Result<(), TestCaseError> {
    let mut r = csv::ReaderBuilder::new()
        .flexible(false)
        .from_path(out.join("results.csv"))
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let width = r
        .headers()
        .map_err(|e| TestCaseError::fail(e.to_string()))?
        .len();
    for row in r.records() {
        let row = row.map_err(|e| TestCaseError::fail(format!("results.csv: {e}")))?;
        prop_assert_eq!(row.len(), width);
    }
    let json = std::fs::read(out.join("results.json")).unwrap();
    prop_assert!(serde_json::from_slice::<serde_json::Value>(&json).is_ok());
    let svg = std::fs::read_to_string(out.join("time-split.svg")).unwrap();
    prop_assert!(svg.trim_end().ends_with("</svg>"));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, ..ProptestConfig::default() })]

    #[test]
    fn spoiled_experiment_files_are_refused_or_run_never_panic(
        file in 0usize..64,
        how in spoils(),
    ) {
        let files = experiment_files();
        let src = &files[file % files.len()];
        let text = std::fs::read_to_string(src).unwrap();
        let dir = std::env::temp_dir().join(format!("smpsched-bad-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let name = src.file_name().unwrap().to_str().unwrap();
        load_and_run(&dir, name, &spoil(&text, &how))?;
    }
}
