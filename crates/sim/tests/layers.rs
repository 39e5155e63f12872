//! The simulator's modules import one way (issue 24): no module reaches, through `crate::` or
//! `super::` paths in its non-test code, a module that reaches back to it. The engine sits on
//! top; the thread records, the programs' operations, the ready-queue protocols, the measures
//! and the policies below it, each importing only what lies under it. And no function is longer
//! than the project's limit: the engine's hot path is split into named steps too.

use std::path::{Path, PathBuf};

use smpsched_srccheck::{cycles, import_graph, long_functions_in, MAX_FN_LINES};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_simulator_modules_import_one_way() {
    let found = cycles(&import_graph(&src()));
    let text: Vec<String> = found.iter().map(|c| c.join(" <-> ")).collect();
    assert!(found.is_empty(), "import cycles:\n{}", text.join("\n"));
}

#[test]
fn no_function_is_longer_than_the_limit() {
    let long = long_functions_in(&src());
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines:\n{}",
        long.join("\n")
    );
}
