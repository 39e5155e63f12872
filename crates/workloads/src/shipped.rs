//! The files an experiment reads besides itself (arrival traces, rt-app files), captured where
//! it is loaded and served from memory where it runs elsewhere (a Ray worker, see the lab's
//! `shard`): a worker never reads its own disk for a user's input, so a run there sees exactly
//! the bytes the home machine saw.
//!
//! Both modes are per thread and scoped to a closure: loading an experiment happens on one
//! thread, and nothing outside the closure is affected.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;

use crate::input::InputFileError;

/// Files by the path the experiment named them with (as text), with their bytes.
pub type Files = BTreeMap<String, Vec<u8>>;

/// What [`crate::input::read_bytes`] does besides reading the disk on this thread.
enum Mode {
    /// Each file read is kept.
    Recording(Files),
    /// Files come from here only; a file not shipped is missing.
    Serving(Files),
}

thread_local! {
    static MODE: RefCell<Option<Mode>> = const { RefCell::new(None) };
}

/// The path as the key files are kept by.
fn key(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

/// Runs `f`, returning what it returned with every file it read through the input reader.
pub fn record<T>(f: impl FnOnce() -> T) -> (T, Files) {
    let before = MODE.with(|m| m.replace(Some(Mode::Recording(Files::new()))));
    let out = f();
    let files = match MODE.with(|m| m.replace(before)) {
        Some(Mode::Recording(files)) => files,
        _ => Files::new(),
    };
    (out, files)
}

/// Runs `f` with `files` as the only files the input reader can read.
pub fn serve<T>(files: Files, f: impl FnOnce() -> T) -> T {
    let before = MODE.with(|m| m.replace(Some(Mode::Serving(files))));
    let out = f();
    MODE.with(|m| m.replace(before));
    out
}

/// The file at `path` when files are served on this thread (`None`: read the disk), under the
/// same size limit as a file on disk.
pub(crate) fn served(path: &Path, limit: u64) -> Option<Result<Vec<u8>, InputFileError>> {
    MODE.with(|m| match &*m.borrow() {
        Some(Mode::Serving(files)) => Some(match files.get(&key(path)) {
            None => Err(InputFileError::Missing),
            Some(b) if b.len() as u64 > limit => Err(InputFileError::TooLarge { limit }),
            Some(b) => Ok(b.clone()),
        }),
        _ => None,
    })
}

/// Keeps a file just read from disk when this thread is recording.
pub(crate) fn note(path: &Path, bytes: &[u8]) {
    MODE.with(|m| {
        if let Some(Mode::Recording(files)) = &mut *m.borrow_mut() {
            files.insert(key(path), bytes.to_vec());
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::read_bytes;

    #[test]
    fn recorded_files_are_served_and_nothing_else_is() {
        let dir = std::env::temp_dir().join(format!("smpsched-shipped-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let a = dir.join("a.csv");
        std::fs::write(&a, b"0,10\n").unwrap();
        let (read, files) = record(|| read_bytes(&a, 100));
        assert_eq!(read.unwrap(), b"0,10\n");
        assert_eq!(files.len(), 1);
        // Served: the disk is not read (the file is gone), and an unshipped file is missing.
        std::fs::remove_file(&a).unwrap();
        let other = dir.join("b.csv");
        serve(files.clone(), || {
            assert_eq!(read_bytes(&a, 100).unwrap(), b"0,10\n");
            assert_eq!(
                read_bytes(&a, 2),
                Err(InputFileError::TooLarge { limit: 2 })
            );
            assert_eq!(read_bytes(&other, 100), Err(InputFileError::Missing));
        });
        // Outside the closure the disk is read again.
        assert_eq!(read_bytes(&a, 100), Err(InputFileError::Missing));
        std::fs::remove_dir_all(&dir).ok();
    }
}
