//! The queues' modules import one way: no module reaches, through `crate::` or `super::` paths
//! in its non-test code, a module that reaches back to it. Also keeps every source file and
//! function under the size the project allows (as every crate's tests do for its own source).

use std::path::{Path, PathBuf};

use smpsched_srccheck::{assert_no_import_cycles, assert_within_limits};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_queue_modules_import_one_way() {
    assert_no_import_cycles(&src());
}

#[test]
fn no_file_or_function_is_longer_than_the_limits() {
    assert_within_limits(&src());
}
