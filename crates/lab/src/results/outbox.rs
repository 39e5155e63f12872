//! Where an experiment's results go: a destination checked before any run starts, and the
//! result files written together into a fresh folder and renamed into place whole.

use std::path::{Path, PathBuf};

use crate::exec::runner::RunRecord;
use crate::input::error::LabError;
use crate::spec::experiment::Experiment;
use crate::store::output::{self, Staging};

/// Where `smpsched run` puts an experiment's results.
#[derive(Clone, Debug)]
pub enum Destination {
    /// A fresh folder `seedS-HASH` under this one (`results/NAME` by default), with `latest`
    /// pointing at it: earlier results are kept.
    Under(PathBuf),
    /// Exactly this folder (`--out DIR`): it must be absent or empty, unless `replace` is set
    /// (`--force`), when earlier results there are replaced whole.
    Exactly {
        /// The folder.
        dir: PathBuf,
        /// Replace earlier results there.
        replace: bool,
    },
}

/// A destination checked, and a staging folder made in it, before any run starts.
pub struct Outbox {
    staging: Staging,
    dest: Destination,
    /// The experiment file, never inside a folder `--force` replaces.
    experiment: PathBuf,
    /// Held while the run goes on: a second run into the same `--out` is refused.
    _lock: Option<crate::store::outdir::Lock>,
    /// Also write `threads.csv` ([`Outbox::with_threads`]).
    threads: bool,
}

/// What [`Outbox::deliver`] wrote.
#[derive(Debug)]
pub struct Delivered {
    /// The results folder.
    pub dir: PathBuf,
    /// `latest` beside it, for a [`Destination::Under`].
    pub latest: Option<PathBuf>,
    /// The files in it.
    pub files: Vec<PathBuf>,
    /// Where an earlier folder of the same name was set aside, its files having been edited or
    /// removed since it was written.
    pub kept: Option<PathBuf>,
}

/// The option named in errors about the default results folder.
const DEFAULT_PLACE: &str = "results folder (the default; name another with --out)";

impl Outbox {
    /// Checks that results can be written at `dest` (creating folders as needed): an unusable
    /// place, an `--out` folder holding earlier results without `--force`, a folder `--force`
    /// may not replace (see [`crate::store::outdir`]) or a place another run is writing into is bad
    /// input naming the path. `experiment` is the experiment file.
    pub fn prepare(dest: Destination, experiment: &Path) -> Result<Outbox, LabError> {
        let (parent, named, what, lock) = match &dest {
            Destination::Under(dir) => {
                let latest = dir.join("latest");
                if latest.exists() && !crate::store::outdir::is_link(&latest) {
                    return Err(output::unusable(
                        &latest,
                        DEFAULT_PLACE,
                        "it is no link smpsched made (a folder or file is in its place); move \
                         it away so that `latest` can point at the newest results",
                    ));
                }
                (dir.clone(), dir.clone(), DEFAULT_PLACE, None)
            }
            Destination::Exactly { dir, replace } => {
                crate::store::outdir::check_place(dir, "--out")?;
                if dir.exists() && !dir.is_dir() {
                    return Err(output::unusable(
                        dir,
                        "--out",
                        "it exists and is not a folder",
                    ));
                }
                if !replace && !output::is_absent_or_empty(dir) {
                    // Results folders carry smpsched's marker; any other folder holds files
                    // of the user's, which --force never replaces.
                    let held = if crate::store::outdir::is_marked(dir) {
                        "it holds earlier results; name a new folder, leave out --out (each \
                         run then gets a folder of its own under results/), or add --force to \
                         replace them"
                    } else {
                        "it holds files smpsched did not write; name a new or empty folder, or \
                         leave out --out (each run then gets a folder of its own under \
                         results/)"
                    };
                    return Err(output::unusable(dir, "--out", held));
                }
                if *replace {
                    crate::store::outdir::check_replaceable(dir, experiment, "--out")?;
                }
                let parent = match dir.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                    _ => PathBuf::from("."),
                };
                let lock = crate::store::outdir::Lock::take(dir, "--out")?;
                (parent, dir.clone(), "--out", Some(lock))
            }
        };
        let staging = Staging::new(&parent, what, &named)?;
        Ok(Outbox {
            staging,
            dest,
            experiment: experiment.to_path_buf(),
            _lock: lock,
            threads: false,
        })
    }

    /// Also writes `threads.csv`, one row per measured thread (`--per-thread`).
    pub fn with_threads(mut self, threads: bool) -> Self {
        self.threads = threads;
        self
    }

    /// Writes the results of `runs` and renames them into place whole. An `--out` folder is
    /// checked again at that moment: without `--force` it must still be absent or empty, with
    /// it still a results folder.
    pub fn deliver(self, exp: &Experiment, runs: &[RunRecord]) -> Result<Delivered, LabError> {
        let files = super::result_files(exp, runs, self.threads)?;
        self.staging.write_all(&files)?;
        self.staging.mark()?;
        let mut kept = None;
        let (dir, latest) = match &self.dest {
            Destination::Under(parent) => {
                let name = format!(
                    "seed{}-{:012x}",
                    exp.seed,
                    output::content_hash(&files) >> 16
                );
                let committed = self.staging.commit(&name)?;
                kept = committed.kept;
                (committed.dir, Some(output::set_latest(parent, &name)?))
            }
            Destination::Exactly { dir, replace } => {
                if *replace && !output::is_absent_or_empty(dir) {
                    crate::store::outdir::check_replaceable(dir, &self.experiment, "--out")?;
                    (self.staging.replace(dir)?, None)
                } else {
                    (self.staging.rename_into(dir, "--out")?, None)
                }
            }
        };
        let files = files.iter().map(|(n, _)| dir.join(n)).collect();
        Ok(Delivered {
            dir,
            latest,
            files,
            kept,
        })
    }
}
