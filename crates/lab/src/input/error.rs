//! Errors of the lab: bad input (exit code 2) names the file, the line and the field; failures of
//! a simulation or of writing results are internal (exit code 1).

use std::fmt;
use std::path::PathBuf;

use thiserror::Error;

/// A problem with an experiment file or a command-line value, located as precisely as possible.
#[derive(Clone, Debug, PartialEq)]
pub struct InputError {
    /// The file at fault (or a description such as `--seed`).
    pub file: PathBuf,
    /// The 1-based line, when known.
    pub line: Option<usize>,
    /// The field, as a dotted path (`machine.processors`, `workload.0.threads`).
    pub field: String,
    /// What is wrong and what would be valid.
    pub message: String,
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if self.field.is_empty() {
            write!(f, ": {}", self.message)
        } else {
            write!(f, ": field `{}`: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for InputError {}

/// Everything that can go wrong in the lab.
#[derive(Debug, Error)]
pub enum LabError {
    /// An experiment file or argument is invalid.
    #[error("{0}")]
    Input(Box<InputError>),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The system's error.
        source: std::io::Error,
    },
    /// A simulation failed.
    #[error("{experiment}: point `{point}` (repetition {repetition}, seed {seed}): {source}{}", run_hint(.source))]
    Run {
        /// The experiment's name.
        experiment: String,
        /// The point's label.
        point: String,
        /// The repetition.
        repetition: u32,
        /// The seed of that run.
        seed: u64,
        /// What went wrong.
        source: smpsched_sim::SimError,
    },
    /// Something else went wrong inside the lab.
    #[error("{0}")]
    Internal(String),
    /// A run made elsewhere (a cluster's worker) failed: its message and exit code are those the
    /// run would have given here.
    #[error("{message}")]
    Elsewhere {
        /// The exit code.
        code: u8,
        /// The message.
        message: String,
    },
}

/// What a user can do about a run's failure, when the engine's message cannot say it.
/// (`budget::MEMORY_ENV` is written out: `budget` stands above this module; its tests hold
/// the two to one name.)
pub(crate) fn run_hint(source: &smpsched_sim::SimError) -> String {
    match source {
        smpsched_sim::SimError::TooManyThreads(n) if *n < smpsched_sim::config::MAX_THREADS => {
            " (as many as the memory available to smpsched allows one run, shared among the \
             runs that may go at once; set SMPSCHED_MEMORY to state that memory)"
                .to_string()
        }
        _ => String::new(),
    }
}

impl LabError {
    /// The process exit code for this error: 2 for bad input, 1 otherwise. A run that cannot
    /// finish as the file describes it (a bound reached, a deadlock, a livelock, a machine the
    /// simulator refuses) is bad input; a workload that misuses the simulator is an internal
    /// error.
    pub fn exit_code(&self) -> u8 {
        use smpsched_sim::SimError;
        match self {
            LabError::Input(_) => 2,
            LabError::Elsewhere { code, .. } => *code,
            LabError::Run { source, .. } => match source {
                SimError::Limit { .. }
                | SimError::Deadlock { .. }
                | SimError::Livelock { .. }
                | SimError::Stranded { .. }
                | SimError::NoProgress(_)
                | SimError::Config(_)
                | SimError::TooManyThreads(_)
                | SimError::EmptyMask
                | SimError::Workload(_) => 2,
                SimError::BadAddress { .. }
                | SimError::Misuse { .. }
                | SimError::MaskViolated { .. } => 1,
            },
            _ => 1,
        }
    }

    /// An I/O error about `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        LabError::Io {
            path: path.into(),
            source,
        }
    }
}

impl From<InputError> for LabError {
    fn from(e: InputError) -> Self {
        LabError::Input(Box::new(e))
    }
}
