//! Helpers shared by the binary's end-to-end tests: running `smpsched`, fresh folders, and a
//! strict check of every results file (each CSV row the header's width, JSON that parses, SVG
//! documents complete).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the binary in `cwd` with `SMPSCHED_MEMORY` unset.
pub fn smpsched(args: &[&str], cwd: &Path) -> Output {
    smpsched_with_memory(args, cwd, None)
}

/// Runs the binary with `SMPSCHED_MEMORY` set to `memory` (or unset).
pub fn smpsched_with_memory(args: &[&str], cwd: &Path, memory: Option<&str>) -> Output {
    command(args, cwd, memory).output().expect("smpsched runs")
}

/// The command, not yet started.
pub fn command(args: &[&str], cwd: &Path, memory: Option<&str>) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_smpsched"));
    cmd.args(args)
        .current_dir(cwd)
        .env_remove("SMPSCHED_MEMORY");
    if let Some(m) = memory {
        cmd.env("SMPSCHED_MEMORY", m);
    }
    cmd
}

/// A fresh, empty folder for one test.
pub fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("smpsched-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Reads a CSV file with a strict reader: every row must have the header's width. Returns the
/// header and the rows.
pub fn read_csv_strict(path: &Path) -> (csv::StringRecord, Vec<csv::StringRecord>) {
    let mut r = csv::ReaderBuilder::new()
        .flexible(false)
        .from_path(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header = r.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = r
        .records()
        .map(|x| x.unwrap_or_else(|e| panic!("{}: malformed row: {e}", path.display())))
        .collect();
    for row in &rows {
        assert_eq!(row.len(), header.len(), "{}: {row:?}", path.display());
    }
    (header, rows)
}

/// Checks every file under `dir` whose name is final (not hidden): CSV strict, JSON parses,
/// SVG complete, Markdown non-empty. Returns how many files were checked.
pub fn check_files_well_formed(dir: &Path) -> usize {
    let mut n = 0;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            let name = e.file_name().to_string_lossy().to_string();
            // Hidden staging files are not results; `latest` is a link to a folder counted
            // already.
            if name.starts_with('.') || e.file_type().unwrap().is_symlink() {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            n += 1;
            let bytes = std::fs::read(&path).unwrap();
            match path.extension().and_then(|x| x.to_str()) {
                Some("csv") => {
                    read_csv_strict(&path);
                }
                Some("json") => {
                    serde_json::from_slice::<serde_json::Value>(&bytes)
                        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                }
                Some("svg") => {
                    let text = String::from_utf8(bytes).unwrap();
                    assert!(
                        text.starts_with("<svg") && text.trim_end().ends_with("</svg>"),
                        "{}: not a whole SVG document",
                        path.display()
                    );
                }
                _ => assert!(!bytes.is_empty(), "{}: empty", path.display()),
            }
        }
    }
    n
}

/// A tiny reproduction (paper `tiny`): three ping-pong threads on one processor, two points
/// (`handoff`, `mild`), one value compared with the paper's and one claim (`tiny.toml`, which
/// the Python package's tests read too).
pub const TINY_REPRO: &str = include_str!("tiny.toml");

/// A fresh folder holding `exp/tiny/t.toml` with `text` (a reproduction of paper `tiny`).
pub fn tiny_repro_dir(name: &str, text: &str) -> PathBuf {
    let dir = tempdir(name);
    std::fs::create_dir_all(dir.join("exp/tiny")).unwrap();
    std::fs::write(dir.join("exp/tiny/t.toml"), text).unwrap();
    dir
}

/// `smpsched reproduce tiny` in `dir` (files under `exp`, reports into `rep`), with `extra`.
pub fn reproduce_tiny(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "reproduce",
        "tiny",
        "--experiments",
        "exp",
        "--reports",
        "rep",
    ];
    args.extend_from_slice(extra);
    smpsched(&args, dir)
}

/// A small experiment of three points (batch, round-robin, priority; two repetitions) on four
/// processors, for tests of the command's outputs.
pub const SWEEP_EXP: &str = r#"
name = "cli test"
seed = 5
repetitions = 2

[machine]
preset = "tango-12"
processors = 4

[scheduler]
policy = "round-robin"

[[workload]]
kind = "synthetic"
threads = 6
bursts = 10
compute = { dist = "exponential", mean = 100000 }
block = { dist = "uniform", min = 1000, max = 90000 }

[sweep]
"scheduler.policy" = ["batch", "round-robin", "priority"]
"#;
