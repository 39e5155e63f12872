//! Waiting for the engine without holding the GIL: the work runs on its own thread while the
//! calling thread sleeps with the GIL released, waking every 100 ms to let Python handle
//! signals (Ctrl-C raises `KeyboardInterrupt` there) and to report progress.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;

/// How far the work has come: runs done of runs planned, and a label (the file being run).
#[derive(Default)]
pub struct Tally {
    /// Runs finished.
    pub done: AtomicUsize,
    /// Runs planned.
    pub total: AtomicUsize,
    /// What is being run now (for the progress bar's description).
    pub label: Mutex<String>,
    /// Set when the caller is interrupted: the work starts no further run.
    pub cancel: AtomicBool,
}

impl Tally {
    /// A new stage of `total` runs, none done yet, described by `label`.
    pub fn stage(&self, total: usize, label: &str) {
        self.done.store(0, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
        if let Ok(mut l) = self.label.lock() {
            label.clone_into(&mut l);
        }
    }
}

/// Runs `work` on a thread of its own and waits for it with the GIL released, calling
/// `progress(done, total, label)` as it advances. On Ctrl-C (or any pending signal handler
/// raising) the call returns that exception at once and sets [`Tally::cancel`]; runs already
/// under way finish on their thread and their results are dropped.
pub fn run_released<T: Send + 'static>(
    py: Python<'_>,
    tally: Arc<Tally>,
    progress: Option<&Bound<'_, PyAny>>,
    work: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    let (tx, rx) = channel();
    std::thread::Builder::new()
        .name("smpsched-run".into())
        .spawn(move || {
            // The receiver is gone only if the caller was interrupted: nothing to tell.
            let _ = tx.send(work());
        })
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the run's thread: {e}")))?;
    let mut shown = (usize::MAX, usize::MAX);
    let mut rx = rx;
    loop {
        // The receiver travels into the GIL-free closure and back (it is Send, not Sync).
        let (got, back) = py.allow_threads(move || {
            let got = rx.recv_timeout(Duration::from_millis(100));
            (got, rx)
        });
        rx = back;
        let now = (
            tally.done.load(Ordering::Relaxed),
            tally.total.load(Ordering::Relaxed),
        );
        if let Some(cb) = progress {
            if now != shown {
                let label = tally.label.lock().map(|l| l.clone()).unwrap_or_default();
                cb.call1((now.0, now.1, label))?;
                shown = now;
            }
        }
        match got {
            Ok(out) => return Ok(out),
            Err(RecvTimeoutError::Timeout) => {
                if let Err(e) = py.check_signals() {
                    tally.cancel.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(PyRuntimeError::new_err(
                    "the run's thread ended without a result (a panic in the engine)",
                ))
            }
        }
    }
}
