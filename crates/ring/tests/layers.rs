//! The ring's source stays under the size the project allows: no file over the line limit and
//! no function over the function limit (as every crate's tests check for its own source).
//! Not under Miri, whose isolation forbids reading the files.

#![cfg(not(miri))]

use std::path::Path;

#[test]
fn no_file_or_function_is_longer_than_the_limits() {
    smpsched_srccheck::assert_within_limits(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
}
