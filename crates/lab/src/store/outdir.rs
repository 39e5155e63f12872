//! Which folders smpsched may write results into and replace: results folders carry a marker,
//! `--force` replaces only a marked folder, and never the current folder, one of its parents,
//! the folder holding the experiment, or a link; one run at a time writes into a place, under a
//! lock file beside it.
//!
//! # Invariants
//!
//! * A folder smpsched replaces holds [`MARKER`], which smpsched writes into every results
//!   folder it makes: a folder of the user's own (an experiments folder, a home folder) is never
//!   removed, whatever the flags.
//! * A link given as an output is refused rather than replaced by a folder (`results/NAME/latest`
//!   stays a link, so later runs can move it).
//! * While a run holds the lock of a place, a second run into the same place is refused (bad
//!   input, exit 2); a lock whose process is gone is taken over.

use std::path::{Path, PathBuf};

use crate::input::error::LabError;
use crate::store::output::unusable;

pub use crate::store::output::{MARKER, MARKER_TEXT};

/// Whether `dir` holds the marker of a results folder.
pub fn is_marked(dir: &Path) -> bool {
    dir.join(MARKER).is_file()
}

/// Whether `path` is a symbolic link (to anything, or to nothing).
pub fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// The absolute, link-free form of `path`, or of its nearest existing ancestor joined with the
/// rest (for a folder that does not exist yet).
pub(crate) fn resolved(path: &Path) -> PathBuf {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut rest = Vec::new();
    let mut at = abs.as_path();
    loop {
        if let Ok(c) = at.canonicalize() {
            return rest.iter().rev().fold(c, |p, r| p.join(r));
        }
        match (at.parent(), at.file_name()) {
            (Some(up), Some(name)) => {
                rest.push(name.to_os_string());
                at = up;
            }
            _ => return abs,
        }
    }
}

/// Refuses an output folder that is a link, the current folder or one of its parents (a
/// results folder is renamed into place whole, which a folder in use cannot be).
pub fn check_place(dir: &Path, what: &str) -> Result<(), LabError> {
    if is_link(dir) {
        return Err(unusable(
            dir,
            what,
            "it is a link; name a folder (smpsched never replaces a link by a folder)",
        ));
    }
    let cwd = resolved(Path::new("."));
    if cwd.starts_with(resolved(dir)) {
        return Err(unusable(
            dir,
            what,
            "it is the current folder or one of its parents; name a folder of its own",
        ));
    }
    Ok(())
}

/// Refuses to replace `dir` unless it is a results folder smpsched made: marked, and neither
/// the folder holding `experiment` nor one of its parents.
pub fn check_replaceable(dir: &Path, experiment: &Path, what: &str) -> Result<(), LabError> {
    check_place(dir, what)?;
    if resolved(experiment).starts_with(resolved(dir)) {
        return Err(unusable(
            dir,
            what,
            format!(
                "it holds the experiment file {}; --force never replaces it",
                experiment.display()
            ),
        ));
    }
    if dir.is_dir() && !crate::store::output::is_absent_or_empty(dir) && !is_marked(dir) {
        return Err(unusable(
            dir,
            what,
            format!(
                "it holds files smpsched did not write (no {MARKER} in it); --force replaces \
                 only a results folder smpsched made: name a new folder"
            ),
        ));
    }
    Ok(())
}

/// A lock on one output place (`parent/.NAME.lock`, holding the process id), released when
/// dropped.
#[derive(Debug)]
pub struct Lock {
    path: PathBuf,
}

impl Lock {
    /// Takes the lock of the place `dir` (a folder that may not exist yet), refusing when another
    /// live process holds it.
    pub fn take(dir: &Path, what: &str) -> Result<Lock, LabError> {
        let parent = match dir.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let name = dir
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .ok_or_else(|| unusable(dir, what, "it does not name a folder"))?;
        std::fs::create_dir_all(&parent).map_err(|e| unusable(dir, what, e))?;
        let path = parent.join(format!(".{name}.lock"));
        for _ in 0..2 {
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
            {
                Ok(mut f) => {
                    use std::io::Write as _;
                    let _ = write!(f, "{}", std::process::id());
                    return Ok(Lock { path });
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let holder = smpsched_workloads::input::read_text(&path, 64)
                        .ok()
                        .and_then(|t| t.trim().parse::<u32>().ok());
                    match holder {
                        Some(pid) if alive(pid) => {
                            return Err(unusable(
                                dir,
                                what,
                                format!(
                                    "another smpsched run (process {pid}) is writing there; \
                                     wait for it or name another folder"
                                ),
                            ))
                        }
                        // Left by a process that is gone (or half-written): take it over.
                        _ => {
                            let _ = std::fs::remove_file(&path);
                        }
                    }
                }
                Err(e) => return Err(unusable(dir, what, e)),
            }
        }
        Err(unusable(dir, what, "its lock could not be taken"))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Whether process `pid` is alive (Linux: `/proc/PID`; elsewhere every holder counts as alive,
/// which errs on the safe side).
fn alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if !Path::new("/proc/self").exists() {
        return true;
    }
    Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("smpsched-outdir-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn only_marked_folders_away_from_the_experiment_are_replaceable() {
        let d = tmp("replace");
        let exp = d.join("exps/a.toml");
        std::fs::create_dir_all(exp.parent().unwrap()).unwrap();
        std::fs::write(&exp, "").unwrap();
        let out = d.join("out");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::write(out.join("mine.txt"), "").unwrap();
        let e = check_replaceable(&out, &exp, "--out").unwrap_err();
        assert!(e.to_string().contains("did not write"), "{e}");
        std::fs::write(out.join(MARKER), MARKER_TEXT).unwrap();
        check_replaceable(&out, &exp, "--out").unwrap();
        // The experiment's folder and its parents, even marked.
        std::fs::write(d.join("exps").join(MARKER), "").unwrap();
        for dir in [d.join("exps"), d.clone()] {
            let e = check_replaceable(&dir, &exp, "--out").unwrap_err();
            assert!(e.to_string().contains("experiment file"), "{e}");
        }
        // The current folder and a link.
        let e = check_place(Path::new("."), "--out").unwrap_err();
        assert!(e.to_string().contains("current folder"), "{e}");
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&out, d.join("link")).unwrap();
            let e = check_place(&d.join("link"), "--out").unwrap_err();
            assert!(e.to_string().contains("is a link"), "{e}");
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_lock_is_exclusive_while_held_and_taken_over_when_stale() {
        let d = tmp("lock");
        let place = d.join("out");
        let lock = Lock::take(&place, "--out").unwrap();
        let e = Lock::take(&place, "--out").unwrap_err();
        assert_eq!(e.exit_code(), 2);
        assert!(e.to_string().contains("another smpsched run"), "{e}");
        drop(lock);
        let lock = Lock::take(&place, "--out").unwrap();
        drop(lock);
        // A lock left by a process that is gone (pid 0 is never a process).
        std::fs::write(d.join(".out.lock"), "0").unwrap();
        if Path::new("/proc/self").exists() {
            Lock::take(&place, "--out").unwrap();
        }
        let _ = std::fs::remove_dir_all(&d);
    }
}
