//! The simulator's modules import one way: no module reaches, through `crate::` or
//! `super::` paths in its non-test code, a module that reaches back to it. The engine sits on
//! top; the thread records, the programs' operations, the ready-queue protocols, the measures
//! and the policies below it, each importing only what lies under it. And no file or function
//! is longer than the project's limits: the engine's hot path is split into named steps too.

use std::path::{Path, PathBuf};

use smpsched_srccheck::{assert_no_import_cycles, assert_within_limits};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_simulator_modules_import_one_way() {
    assert_no_import_cycles(&src());
}

#[test]
fn no_file_or_function_is_longer_than_the_limits() {
    assert_within_limits(&src());
}
