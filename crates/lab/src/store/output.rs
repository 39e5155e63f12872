//! Results are never lost: every output folder is written whole into a fresh *staging* folder
//! beside its final place and renamed into place in one step.
//!
//! # Invariants
//!
//! * A final name (a run folder, `latest`, a report) only ever names complete output: files are
//!   written under a hidden `.partial-PID-N` staging folder (or a `.NAME.tmp-PID` file) and
//!   renamed; an interrupted run leaves either the complete old output or the complete new one,
//!   plus at most a hidden staging folder, which the next run in the same place removes once
//!   the process that made it is gone.
//! * Run folders are content-addressed (`seed1-HASH`): an existing folder of that name already
//!   holds the same bytes, so it is kept and the new copy dropped. Nothing is overwritten.
//! * The location is checked (created, and a staging folder made in it) *before* any run starts:
//!   an unusable output is bad input naming the path, never a failure after the work.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::input::error::{InputError, LabError};
use crate::input::hash::{fnv, FNV_START};
use smpsched_workloads::input::read_bytes;

/// No bound on the size of a file compared (a trace may be large), only on its kind.
const ANY_SIZE: u64 = 1 << 48;

/// Longest folder name made from an experiment or paper name (file systems allow 255 bytes).
pub const MAX_NAME: usize = 64;

/// The marker file smpsched writes into every results folder it makes.
pub const MARKER: &str = ".smpsched-results";

/// The marker's contents.
pub const MARKER_TEXT: &str =
    "This folder holds results written by smpsched; `smpsched run --out DIR --force` may \
     replace it.\n";

static STAGING_COUNTER: AtomicU32 = AtomicU32::new(0);

/// An output location that could not be used: bad input (exit code 2) naming the path.
pub fn unusable(path: &Path, what: &str, why: impl std::fmt::Display) -> LabError {
    LabError::Input(Box::new(InputError {
        file: path.to_path_buf(),
        line: None,
        field: what.to_string(),
        message: format!("cannot write results here: {why}"),
    }))
}

/// A folder name made of a free-form name: ASCII letters, digits, `-` and `_` kept, anything
/// else turned into `-`, at most [`MAX_NAME`] characters; never empty. A name that had to be
/// changed gets a short hash of itself appended, so that two names never share a folder
/// (`a.b` and `a-b` go to `a-b-HASH` and `a-b`).
pub fn folder_name(name: &str) -> String {
    if plain_name(name) == name {
        return name.to_string();
    }
    let stem: String = plain_name(name).chars().take(MAX_NAME - 9).collect();
    format!("{stem}-{:08x}", fnv(FNV_START, name.as_bytes()) as u32)
}

/// A name as it reads in a file name: ASCII letters, digits, `-` and `_` kept, anything else
/// turned into `-`, with no `-` first (a file named `-x` reads as an option to the commands
/// that take it), at most [`MAX_NAME`] characters, never empty. Two names may share one (`a.b`,
/// `a-b`, `.a`); [`folder_name`] never does.
pub fn plain_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .skip_while(|&c| c == '-')
        .take(MAX_NAME)
        .collect();
    if s.is_empty() {
        "experiment".into()
    } else {
        s
    }
}

/// A hash of a set of files (names and contents), for content-addressed folders.
pub fn content_hash(files: &[(String, Vec<u8>)]) -> u64 {
    files.iter().fold(FNV_START, |h, (name, body)| {
        let h = fnv(h, name.as_bytes());
        let h = fnv(h, &(body.len() as u64).to_le_bytes());
        fnv(h, body)
    })
}

/// A fresh hidden folder inside `parent` where one output is assembled before it is renamed
/// into place; removed when dropped uncommitted.
pub struct Staging {
    parent: PathBuf,
    dir: PathBuf,
    committed: bool,
}

impl Staging {
    /// Creates `parent` (and its parents) and a staging folder inside it. `what` names the option
    /// that chose the place (`--out`, `--reports`) and `named` the path the user gave, for the
    /// error.
    pub fn new(parent: &Path, what: &str, named: &Path) -> Result<Staging, LabError> {
        if parent.exists() && !parent.is_dir() {
            return Err(unusable(
                named,
                what,
                format!("{} is not a folder", parent.display()),
            ));
        }
        std::fs::create_dir_all(parent).map_err(|e| unusable(named, what, e))?;
        remove_stale(parent);
        let n = STAGING_COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!(".partial-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| unusable(named, what, e))?;
        Ok(Staging {
            parent: parent.to_path_buf(),
            dir,
            committed: false,
        })
    }

    /// The staging folder.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Writes `files` (paths relative to the staging folder, `/`-separated) into it.
    pub fn write_all(&self, files: &[(String, Vec<u8>)]) -> Result<(), LabError> {
        for (rel, body) in files {
            let path = self.dir.join(rel);
            if let Some(up) = path.parent() {
                std::fs::create_dir_all(up).map_err(|e| LabError::io(up, e))?;
            }
            std::fs::write(&path, body).map_err(|e| LabError::io(&path, e))?;
        }
        Ok(())
    }

    /// Writes the marker of a results folder into it ([`MARKER`]).
    pub fn mark(&self) -> Result<(), LabError> {
        let path = self.dir.join(MARKER);
        std::fs::write(&path, MARKER_TEXT).map_err(|e| LabError::io(&path, e))
    }

    /// Renames the staging folder to `parent/name` in one step and returns that path. A folder
    /// already there is a content-addressed twin: kept, and the staged copy dropped, when it
    /// holds every staged file with the same bytes (files a user added there stay); when one
    /// of them differs or is missing (edited, removed, damaged), the old folder is set aside
    /// whole as `name.kept-N` (never deleted: it may hold a user's work) and the new one
    /// takes its place.
    pub fn commit(mut self, name: &str) -> Result<Committed, LabError> {
        let dir = self.parent.join(name);
        let mut kept = None;
        if dir.is_dir() {
            if same_files(&self.dir, &dir) {
                // Dropping removes the staged copy.
                return Ok(Committed { dir, kept });
            }
            kept = Some(set_aside(&dir)?);
        }
        if let Err(e) = std::fs::rename(&self.dir, &dir) {
            // A twin made meanwhile by a concurrent run of the same file and seed.
            if dir.is_dir() && same_files(&self.dir, &dir) {
                return Ok(Committed { dir, kept });
            }
            return Err(LabError::io(&dir, e));
        }
        self.committed = true;
        Ok(Committed { dir, kept })
    }

    /// Renames the staging folder to `dest`, which must be absent or an empty folder at that
    /// moment: the check and the rename are one step, so nothing that appears in `dest` while
    /// the run goes on is replaced. If `dest` is taken, the results are kept beside it under a
    /// new name, and the error names both.
    pub fn rename_into(mut self, dest: &Path, what: &str) -> Result<PathBuf, LabError> {
        match std::fs::rename(&self.dir, dest) {
            Ok(()) => {
                self.committed = true;
                Ok(dest.to_path_buf())
            }
            Err(e) => {
                let name = dest
                    .file_name()
                    .map(|n| n.to_string_lossy().to_string())
                    .unwrap_or_else(|| "results".into());
                let kept = self
                    .parent
                    .join(format!("{name}.new-{}", std::process::id()));
                let saved = std::fs::rename(&self.dir, &kept).is_ok();
                self.committed = saved;
                let why = if saved {
                    format!(
                        "something else was written there while the run went on ({e}); this \
                         run's results are kept in {}",
                        kept.display()
                    )
                } else {
                    format!("it could not take the results: {e}")
                };
                Err(unusable(dest, what, why))
            }
        }
    }

    /// Puts the staged folder at `dest`, which may hold earlier output: the old folder is first
    /// renamed aside (hidden), then the new one renamed in, then the old one removed. An
    /// interruption leaves the old output whole (at `dest` or aside) or the new one.
    pub fn replace(mut self, dest: &Path) -> Result<PathBuf, LabError> {
        // The aside name carries the destination's, so that a run killed between the two
        // renames has its old output put back by the next run ([`remove_stale`]).
        let dest_name = dest
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let aside = self.parent.join(format!(
            ".replaced-{}-{}.{dest_name}",
            std::process::id(),
            STAGING_COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let had_old = dest.exists();
        if had_old {
            std::fs::rename(dest, &aside).map_err(|e| LabError::io(dest, e))?;
        }
        std::fs::rename(&self.dir, dest).map_err(|e| LabError::io(dest, e))?;
        self.committed = true;
        if had_old {
            std::fs::remove_dir_all(&aside).map_err(|e| LabError::io(&aside, e))?;
        }
        Ok(dest.to_path_buf())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Where [`Staging::commit`] put the results.
#[derive(Debug)]
pub struct Committed {
    /// The results folder.
    pub dir: PathBuf,
    /// Where an earlier folder of the same name, whose files differed, was set aside.
    pub kept: Option<PathBuf>,
}

/// Renames folder `dest` to `dest.kept-N`, the first such name free, and returns it.
fn set_aside(dest: &Path) -> Result<PathBuf, LabError> {
    let name = dest
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    for n in 1..=10_000 {
        let kept = dest.with_file_name(format!("{name}.kept-{n}"));
        if kept.exists() {
            continue;
        }
        match std::fs::rename(dest, &kept) {
            Ok(()) => return Ok(kept),
            // Taken meanwhile by another run: try the next name.
            Err(_) if kept.exists() => continue,
            Err(e) => return Err(LabError::io(dest, e)),
        }
    }
    Err(unusable(
        dest,
        "results folder",
        "10,000 earlier versions are kept beside it (NAME.kept-N); remove some",
    ))
}

/// Whether every file under `staged` is in `dest` with the same bytes (a twin of the same
/// results is whole).
fn same_files(staged: &Path, dest: &Path) -> bool {
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(staged.join(&rel)) else {
            return false;
        };
        for e in entries.flatten() {
            let rel = rel.join(e.file_name());
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(rel),
                // Regular files only (a FIFO put in the folder is not opened).
                Ok(_) => match (
                    read_bytes(&staged.join(&rel), ANY_SIZE),
                    read_bytes(&dest.join(&rel), ANY_SIZE),
                ) {
                    (Ok(a), Ok(b)) if a == b => {}
                    _ => return false,
                },
                Err(_) => return false,
            }
        }
    }
    true
}

/// Removes staging folders (`.partial-PID-N`, `.replaced-PID-N`) and temporary files
/// (`.NAME.tmp-PID`) in `parent` left by processes that are gone (Linux: no `/proc/PID`;
/// elsewhere nothing is removed, since liveness cannot be told).
pub fn remove_stale(parent: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let pid = if let Some(rest) = name
            .strip_prefix(".partial-")
            .or_else(|| name.strip_prefix(".replaced-"))
        {
            rest.split('-').next().and_then(|p| p.parse::<u32>().ok())
        } else if name.starts_with('.') {
            name.rsplit_once(".tmp-").and_then(|(_, p)| p.parse().ok())
        } else {
            None
        };
        let Some(pid) = pid else { continue };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let path = e.path();
            // Old output set aside by a replacement that was killed before the new output
            // took its place: put it back.
            let restore = name
                .strip_prefix(".replaced-")
                .and_then(|r| r.split_once('.'))
                .map(|(_, dest)| parent.join(dest))
                .filter(|dest| !dest.as_os_str().is_empty() && !dest.exists());
            if let Some(dest) = restore {
                if std::fs::rename(&path, &dest).is_ok() {
                    continue;
                }
            }
            let _ = if path.is_dir() {
                std::fs::remove_dir_all(&path)
            } else {
                std::fs::remove_file(&path)
            };
        }
    }
}

/// Writes `bytes` to `path` through a hidden temporary file beside it and a rename, so `path`
/// holds the old bytes or the new ones, never a part.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), LabError> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).map_err(|e| LabError::io(&tmp, e))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        LabError::io(path, e)
    })
}

/// Points `parent/latest` at the folder `target` (a name inside `parent`): a symbolic link
/// replaced in one rename on Unix, a `latest` text file holding the name elsewhere.
pub fn set_latest(parent: &Path, target: &str) -> Result<PathBuf, LabError> {
    let link = parent.join("latest");
    #[cfg(unix)]
    {
        let tmp = parent.join(format!(".latest.tmp-{}", std::process::id()));
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(target, &tmp).map_err(|e| LabError::io(&tmp, e))?;
        std::fs::rename(&tmp, &link).map_err(|e| LabError::io(&link, e))?;
    }
    #[cfg(not(unix))]
    write_atomic(&link, format!("{target}\n").as_bytes())?;
    Ok(link)
}

/// Whether `dir` is absent or an empty folder.
pub fn is_absent_or_empty(dir: &Path) -> bool {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => entries.next().is_none(),
        Err(_) => !dir.exists(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("smpsched-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn a_commit_renames_the_whole_folder_and_keeps_a_twin() {
        let d = tmp("commit");
        let files = vec![("a.txt".to_string(), b"one".to_vec())];
        let s = Staging::new(&d, "--out", &d).unwrap();
        s.write_all(&files).unwrap();
        let staged = s.path().to_path_buf();
        let dest = s.commit("r1").unwrap().dir;
        assert_eq!(std::fs::read(dest.join("a.txt")).unwrap(), b"one");
        assert!(!staged.exists());
        // A twin of the same name keeps the first copy; the staged one is removed.
        std::fs::write(dest.join("marker"), b"").unwrap();
        let s = Staging::new(&d, "--out", &d).unwrap();
        s.write_all(&files).unwrap();
        let staged = s.path().to_path_buf();
        assert_eq!(s.commit("r1").unwrap().dir, dest);
        assert!(dest.join("marker").exists() && !staged.exists());
        // A twin whose file was edited is set aside whole, the user's own file with it, and
        // the new copy takes its place; a second edit is set aside under the next name.
        for n in 1..=2 {
            std::fs::write(dest.join("a.txt"), format!("edited {n}")).unwrap();
            let s = Staging::new(&d, "--out", &d).unwrap();
            s.write_all(&files).unwrap();
            let committed = s.commit("r1").unwrap();
            assert_eq!(committed.dir, dest);
            assert_eq!(std::fs::read(dest.join("a.txt")).unwrap(), b"one");
            let kept = d.join(format!("r1.kept-{n}"));
            assert_eq!(committed.kept.as_ref(), Some(&kept));
            let edited = std::fs::read_to_string(kept.join("a.txt")).unwrap();
            assert_eq!(edited, format!("edited {n}"));
            assert_eq!(kept.join("marker").exists(), n == 1);
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn an_uncommitted_staging_folder_is_removed_and_stale_ones_are_cleaned() {
        let d = tmp("drop");
        let s = Staging::new(&d, "--out", &d).unwrap();
        let staged = s.path().to_path_buf();
        drop(s);
        assert!(!staged.exists());
        // A staging folder of a process that no longer exists (pid 0 is never a process).
        std::fs::create_dir_all(d.join(".partial-0-7")).unwrap();
        std::fs::write(d.join(".results.csv.tmp-0"), b"x").unwrap();
        let _s = Staging::new(&d, "--out", &d).unwrap();
        assert!(!d.join(".partial-0-7").exists());
        assert!(!d.join(".results.csv.tmp-0").exists());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_file_in_the_way_is_bad_input() {
        let d = tmp("file");
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("f");
        std::fs::write(&f, b"x").unwrap();
        let e = Staging::new(&f, "--out", &f).err().unwrap();
        assert_eq!(e.exit_code(), 2, "{e}");
        assert!(e.to_string().contains("not a folder"), "{e}");
        let e = Staging::new(&f.join("sub"), "--out", &f.join("sub"))
            .err()
            .unwrap();
        assert!(e.to_string().contains("f/sub"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn names_are_bounded_and_hashes_see_names_and_bodies() {
        assert_eq!(folder_name(&"x".repeat(300)).len(), MAX_NAME);
        assert_ne!(folder_name(&"x".repeat(300)), folder_name(&"x".repeat(301)));
        assert_eq!(plain_name("a b/c"), "a-b-c");
        assert!(folder_name("a b/c").starts_with("a-b-c-"));
        assert_eq!(folder_name("a-b_c"), "a-b_c");
        assert_ne!(folder_name("a.b"), folder_name("a-b"));
        assert_eq!(plain_name(""), "experiment");
        // No name begins with `-`, which commands would read as an option.
        assert_eq!(plain_name(".."), "experiment");
        assert_eq!(plain_name("ünï ✓"), "n---");
        assert_eq!(plain_name("-x y"), "x-y");
        assert!(folder_name("-x").starts_with("x-"));
        assert_ne!(folder_name("-x"), folder_name("x"));
        assert!(folder_name("").starts_with("experiment-"));
        let a = content_hash(&[("a".into(), b"1".to_vec())]);
        assert_ne!(a, content_hash(&[("b".into(), b"1".to_vec())]));
        assert_ne!(a, content_hash(&[("a".into(), b"2".to_vec())]));
    }
}
