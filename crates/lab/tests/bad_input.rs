//! Bad input never panics: every experiment file of the project, with one value replaced by
//! junk, one line dropped or the text cut short, either loads or is refused with an input error
//! that names a field or a line; and what loads runs (briefly) without panicking.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use smpsched_lab::{catalog, Experiment, LabError};

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
        1 => any::<usize>().prop_map(|n| Spoil::Drop { n }),
        1 => any::<usize>().prop_map(|n| Spoil::Cut { n }),
    ]
}

/// Loads `text` as if it were the file `name`, and runs what loads for at most a few million
/// cycles when it is small enough to run here.
fn load_and_run(dir: &Path, name: &str, text: &str) -> Result<(), TestCaseError> {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
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
            for point in exp.points.iter_mut().take(3) {
                let threads: u64 = point.apps.iter().map(|a| a.workload.threads()).sum();
                if threads > 2_000 || point.machine.processors > 256 {
                    continue;
                }
                point.limits = smpsched_sim::Limits {
                    cycles: 2_000_000,
                    events: 200_000,
                };
                let ran = catch_unwind(AssertUnwindSafe(|| point.simulate(1)));
                prop_assert!(ran.is_ok(), "point `{}` panicked on:\n{text}", point.label);
            }
        }
    }
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
