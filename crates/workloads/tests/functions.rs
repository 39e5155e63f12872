//! The workloads keep every source file and function within the project's limits (DiBella's
//! client and scheduler steps and its install are split into named steps to stay within them).

use std::path::Path;

#[test]
fn no_workload_file_or_function_is_longer_than_the_limits() {
    smpsched_srccheck::assert_within_limits(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
}
