//! `smpsched.reproduce(..., cluster=...)`: a reproduction's runs made on a Ray cluster. The lab
//! plans every file's runs and hands them to [`PyRemote`], which ships them through the Python
//! package's `smpsched.cluster.run_tasks` (the same tasks `smpsched reproduce --ray` ships
//! through its helper) and gives each run back as it finishes; the reports written are those of
//! a local reproduction, byte for byte (see [`smpsched_lab::exec::shard`]).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use pyo3::prelude::*;
use pyo3::types::PyBytes;
use smpsched_lab::exec::shard::{Remote, Task, TaskFailure};
use smpsched_lab::LabError;

use crate::wait::Tally;

/// What a finished task comes back as: `(task index, run bytes or None, exit code, message)`.
type Finished = (usize, Option<Vec<u8>>, u8, String);

/// A Ray cluster reached through `run_tasks(bundles, tasks)`, a Python callable (the package's
/// `smpsched.cluster.run_tasks` with the address bound) yielding each task as it finishes.
pub struct PyRemote {
    run_tasks: Py<PyAny>,
    tally: Arc<Tally>,
    /// The Python exception that ended the sweep (the cluster lost, Ray's own errors), raised
    /// to the caller as it was rather than as a `RuntimeError`.
    failure: Mutex<Option<PyErr>>,
}

impl PyRemote {
    /// A cluster reached through `run_tasks`, telling `tally` how many runs came back.
    pub fn new(run_tasks: Py<PyAny>, tally: Arc<Tally>) -> Self {
        PyRemote {
            run_tasks,
            tally,
            failure: Mutex::new(None),
        }
    }

    /// The Python exception that ended the sweep, if one did.
    pub fn take_failure(&self) -> Option<PyErr> {
        self.failure.lock().ok().and_then(|mut f| f.take())
    }

    /// Keeps `e` for the caller and ends the sweep, saying how far it came.
    fn lost(&self, py: Python<'_>, e: PyErr, back: usize, of: usize) -> LabError {
        let text = format!(
            "cluster: {} (after {back} of {of} runs came back; nothing was written)",
            e.value(py)
        );
        if let Ok(mut f) = self.failure.lock() {
            *f = Some(e);
        }
        LabError::Internal(text)
    }
}

impl Remote for PyRemote {
    fn run(
        &self,
        bundles: &[Vec<u8>],
        tasks: &[(usize, Task)],
        done: &mut dyn FnMut(usize, Result<Vec<u8>, TaskFailure>) -> Result<(), LabError>,
    ) -> Result<(), LabError> {
        self.tally.stage(tasks.len(), "on the cluster");
        Python::with_gil(|py| {
            let shipped: Vec<Bound<'_, PyBytes>> =
                bundles.iter().map(|b| PyBytes::new(py, b)).collect();
            let list: Vec<(usize, usize, u32)> = tasks
                .iter()
                .map(|(b, t)| (*b, t.point, t.repetition))
                .collect();
            let stream = self
                .run_tasks
                .bind(py)
                .call1((shipped, list))
                .and_then(|s| s.try_iter())
                .map_err(|e| self.lost(py, e, 0, tasks.len()))?;
            let mut back = 0;
            for item in stream {
                let (i, run, code, message): Finished = item
                    .and_then(|x| x.extract())
                    .map_err(|e| self.lost(py, e, back, tasks.len()))?;
                let result = run.ok_or(TaskFailure { code, message });
                done(i, result)?;
                back += 1;
                self.tally.done.store(back, Ordering::Relaxed);
                if self.tally.cancel.load(Ordering::Relaxed) {
                    // The caller was interrupted: dropping the stream closes the generator,
                    // which cancels the tasks still pending on the cluster.
                    return Err(LabError::Internal("interrupted".into()));
                }
            }
            Ok(())
        })
    }
}
