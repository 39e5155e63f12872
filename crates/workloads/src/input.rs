//! The one reader of a user's files (experiment files, arrival traces, reproduction folders):
//! regular files only, bounded in size, text checked as UTF-8.
//!
//! A FIFO would block the reader forever, `/dev/zero` would grow without end and a folder is no
//! file: each is refused by name before a byte is read. The file is opened without blocking
//! (so a FIFO swapped in after the check cannot hang the open) and checked again on the open
//! handle; at most `limit + 1` bytes are read, so a file that grows while it is read is refused
//! too. UTF-8 errors name the byte offset of the first bad byte.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest experiment file read (4 MiB: the largest shipped is under 20 KB).
pub const MAX_EXPERIMENT_BYTES: u64 = 4 << 20;

/// The largest arrivals trace read (64 MiB: about two million jobs).
pub const MAX_TRACE_BYTES: u64 = 64 << 20;

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputFileError {
    /// No such file (or a link to nothing).
    Missing,
    /// It exists but is no regular file (a folder, a FIFO, a device, a socket).
    NotAFile(&'static str),
    /// Longer than the limit, in bytes.
    TooLarge {
        /// The limit.
        limit: u64,
    },
    /// Not UTF-8 text: the offset of the first bad byte.
    NotUtf8 {
        /// Byte offset of the first byte that is not UTF-8.
        offset: usize,
    },
    /// Any other error of the file system (permissions, a link loop, ...).
    Io(String),
}

impl fmt::Display for InputFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Missing => write!(f, "no such file"),
            Self::NotAFile(kind) => write!(f, "it is {kind}, not a regular file"),
            Self::TooLarge { limit } => write!(
                f,
                "it is larger than {} bytes ({} MiB), more than any such file needs",
                limit,
                limit >> 20
            ),
            Self::NotUtf8 { offset } => {
                write!(
                    f,
                    "it is not UTF-8 text (the byte at offset {offset} is not)"
                )
            }
            Self::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for InputFileError {}

/// What kind of thing a path names, when it is not a regular file.
fn kind_of(meta: &std::fs::Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a folder");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO (named pipe)");
        }
        if t.is_char_device() || t.is_block_device() {
            return Some("a device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

fn io_error(e: std::io::Error) -> InputFileError {
    if e.kind() == std::io::ErrorKind::NotFound {
        InputFileError::Missing
    } else {
        InputFileError::Io(e.to_string())
    }
}

/// Reads the regular file at `path`, at most `limit` bytes (from memory where
/// [`crate::shipped`] serves files on this thread).
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, InputFileError> {
    if let Some(served) = crate::shipped::served(path, limit) {
        return served;
    }
    let meta = std::fs::metadata(path).map_err(io_error)?;
    if let Some(kind) = kind_of(&meta) {
        return Err(InputFileError::NotAFile(kind));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK: opening a FIFO put here after the check returns at once.
        const O_NONBLOCK: i32 = 0o4000;
        options.custom_flags(O_NONBLOCK);
    }
    let file = options.open(path).map_err(io_error)?;
    let meta = file.metadata().map_err(io_error)?;
    if let Some(kind) = kind_of(&meta) {
        return Err(InputFileError::NotAFile(kind));
    }
    if meta.len() > limit {
        return Err(InputFileError::TooLarge { limit });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(io_error)?;
    if bytes.len() as u64 > limit {
        return Err(InputFileError::TooLarge { limit });
    }
    crate::shipped::note(path, &bytes);
    Ok(bytes)
}

/// Reads the regular file at `path` as UTF-8 text, at most `limit` bytes.
pub fn read_text(path: &Path, limit: u64) -> Result<String, InputFileError> {
    let bytes = read_bytes(path, limit)?;
    String::from_utf8(bytes).map_err(|e| InputFileError::NotUtf8 {
        offset: e.utf8_error().valid_up_to(),
    })
}

/// The files under `dir` whose name ends in `.{ext}`, sorted, found by walking its folders
/// without following links to folders (a link loop cannot trap the walk), with what could not
/// be read on the way: (path, why). A link to a file is listed like the file.
pub fn files_under(dir: &Path, ext: &str) -> (Vec<PathBuf>, Vec<(PathBuf, String)>) {
    let mut found = Vec::new();
    let mut skipped = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = match std::fs::read_dir(&d) {
            Ok(e) => e,
            Err(e) => {
                skipped.push((d, e.to_string()));
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    skipped.push((d.clone(), e.to_string()));
                    continue;
                }
            };
            let path = entry.path();
            let Ok(own) = entry.file_type() else {
                skipped.push((path, "cannot tell what it is".into()));
                continue;
            };
            if own.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != ext) {
                continue;
            }
            if own.is_symlink() {
                match std::fs::metadata(&path) {
                    Ok(m) if m.is_dir() => {
                        skipped.push((path, "a link to a folder (not followed)".into()));
                        continue;
                    }
                    Err(e) => {
                        skipped.push((path, format!("a broken link ({e})")));
                        continue;
                    }
                    Ok(_) => {}
                }
            }
            found.push(path);
        }
    }
    found.sort();
    skipped.sort();
    (found, skipped)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("smpsched-input-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn regular_files_are_read_whole_and_others_refused_by_kind() {
        let d = tmp("kinds");
        let f = d.join("a.toml");
        std::fs::write(&f, "name = \"x\"\n").unwrap();
        assert_eq!(read_text(&f, 100).unwrap(), "name = \"x\"\n");
        assert_eq!(
            read_text(&d, 100),
            Err(InputFileError::NotAFile("a folder"))
        );
        assert_eq!(
            read_text(&d.join("none"), 100),
            Err(InputFileError::Missing)
        );
        assert!(matches!(
            read_text(Path::new("/dev/zero"), 100),
            Err(InputFileError::NotAFile("a device"))
        ));
        assert_eq!(
            read_text(&f, 5),
            Err(InputFileError::TooLarge { limit: 5 }),
            "longer than the limit"
        );
        std::fs::write(&f, b"ab\xffc").unwrap();
        assert_eq!(
            read_text(&f, 100),
            Err(InputFileError::NotUtf8 { offset: 2 })
        );
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let d = tmp("fifo");
        let p = d.join("pipe.toml");
        let ok = std::process::Command::new("mkfifo")
            .arg(&p)
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            assert!(matches!(
                read_text(&p, 100),
                Err(InputFileError::NotAFile("a FIFO (named pipe)"))
            ));
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[cfg(unix)]
    #[test]
    fn a_walk_lists_files_skips_loops_and_names_what_it_skipped() {
        let d = tmp("walk");
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(d.join("sub/b.toml"), "").unwrap();
        std::fs::write(d.join("a.toml"), "").unwrap();
        std::fs::write(d.join("c.txt"), "").unwrap();
        std::os::unix::fs::symlink(&d, d.join("loop.toml")).unwrap();
        std::os::unix::fs::symlink(d.join("gone"), d.join("broken.toml")).unwrap();
        std::os::unix::fs::symlink(&d, d.join("up")).unwrap();
        let (found, skipped) = files_under(&d, "toml");
        assert_eq!(found, vec![d.join("a.toml"), d.join("sub/b.toml")]);
        let names: Vec<_> = skipped.iter().map(|(p, _)| p.clone()).collect();
        assert_eq!(names, vec![d.join("broken.toml"), d.join("loop.toml")]);
        let _ = std::fs::remove_dir_all(&d);
    }
}
