//! The workloads keep every function within the project's limit (issue 22 split DiBella's client
//! and scheduler steps and its install into named steps).

use std::path::Path;

use smpsched_srccheck::{long_functions_in, MAX_FN_LINES};

#[test]
fn no_workload_function_is_longer_than_the_limit() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let long = long_functions_in(&dir);
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines:\n{}",
        long.join("\n")
    );
}
