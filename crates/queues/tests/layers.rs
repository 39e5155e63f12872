//! The queues' modules import one way: no module reaches, through `crate::` or `super::` paths
//! in its non-test code, a module that reaches back to it. Also keeps every source file and
//! function under the size the project allows (as the simulator's and the lab's tests do).

use std::path::{Path, PathBuf};

use smpsched_srccheck::{
    cycles, import_graph, long_files, long_functions_in, MAX_FILE_LINES, MAX_FN_LINES,
};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

#[test]
fn the_queue_modules_import_one_way() {
    let found = cycles(&import_graph(&src()));
    let text: Vec<String> = found.iter().map(|c| c.join(" <-> ")).collect();
    assert!(found.is_empty(), "import cycles:\n{}", text.join("\n"));
}

#[test]
fn no_file_or_function_is_longer_than_the_limits() {
    let files = long_files(&src());
    assert!(
        files.is_empty(),
        "files over {MAX_FILE_LINES} lines:\n{}",
        files.join("\n")
    );
    let fns = long_functions_in(&src());
    assert!(
        fns.is_empty(),
        "functions over {MAX_FN_LINES} lines:\n{}",
        fns.join("\n")
    );
}
