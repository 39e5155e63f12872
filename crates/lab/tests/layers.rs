//! The lab's modules import one way: each stage (a folder of src/) imports only the
//! stages before it, and no module reaches, through `crate::` or `super::` paths in its non-test
//! code, a module that reaches back to it. Also keeps every source file and function under the
//! size the project allows.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use smpsched_srccheck::{assert_no_import_cycles, assert_within_limits, imports, modules};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_lab_modules_import_one_way() {
    assert_no_import_cycles(&src());
}

/// The lab's stages, each a top-level module of src/, in pipeline order: a stage imports only
/// the stages before it (lib.rs says what each holds).
const STAGES: &[&str] = &[
    "input",
    "plan",
    "metric",
    "reproduce",
    "spec",
    "exec",
    "store",
    "svg",
    "results",
    "app",
];

#[test]
fn each_stage_imports_only_the_stages_before_it() {
    let mods = modules(&src());
    let known: BTreeSet<String> = mods.keys().filter(|k| !k.is_empty()).cloned().collect();
    let stage = |m: &str| {
        let top = m.split("::").next().unwrap_or_default();
        STAGES.iter().position(|s| *s == top)
    };
    // src/ holds lib.rs and the stages' folders and nothing else.
    for m in &known {
        assert!(stage(m).is_some(), "`{m}` is in no stage of {STAGES:?}");
    }
    let mut against = Vec::new();
    for (m, code) in mods.iter().filter(|(k, _)| !k.is_empty()) {
        // A module's tests may reach further (they build whole runs).
        if m.ends_with("tests") {
            continue;
        }
        for n in imports(m, code, &known) {
            if stage(&n) > stage(m) {
                against.push(format!("{m} imports {n}"));
            }
        }
    }
    assert!(
        against.is_empty(),
        "imports against the stage order: {against:#?}"
    );
}

#[test]
fn no_lab_file_or_function_is_over_the_size_the_project_allows() {
    assert_within_limits(&src());
}
