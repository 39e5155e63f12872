//! The ring's source stays under the size the project allows: no file over the line limit and
//! no function over the function limit (as the simulator's and the lab's tests check theirs).
//! Not under Miri, whose isolation forbids reading the files.

#![cfg(not(miri))]

use std::path::Path;

use smpsched_srccheck::{long_files, long_functions_in, MAX_FILE_LINES, MAX_FN_LINES};

#[test]
fn no_file_or_function_is_longer_than_the_limits() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = long_files(&src);
    assert!(
        files.is_empty(),
        "files over {MAX_FILE_LINES} lines:\n{}",
        files.join("\n")
    );
    let fns = long_functions_in(&src);
    assert!(
        fns.is_empty(),
        "functions over {MAX_FN_LINES} lines:\n{}",
        fns.join("\n")
    );
}
