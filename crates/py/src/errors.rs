//! Lab errors as Python exceptions: bad input becomes `ExperimentError` carrying the file, the
//! line and the field (what the command prints before exiting with 2); anything else is a
//! `RuntimeError`.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError};
use pyo3::prelude::*;
use smpsched_lab::{InputError, LabError};

create_exception!(
    _native,
    ExperimentError,
    PyException,
    "Bad input: an experiment (file, text or dict) or an argument that cannot be run as given. \
     Attributes: file, line (None when unknown), field (dotted path, '' when none), message."
);

/// The `ExperimentError` for `e`, its attributes set.
pub fn input_error(py: Python<'_>, e: &InputError) -> PyErr {
    located(
        py,
        e.to_string(),
        e.file.display().to_string(),
        e.line,
        e.field.clone(),
        e.message.clone(),
    )
}

/// An `ExperimentError` with `text` as its message and the given attributes.
pub fn located(
    py: Python<'_>,
    text: String,
    file: String,
    line: Option<usize>,
    field: String,
    message: String,
) -> PyErr {
    let err = ExperimentError::new_err(text);
    let value = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail short of memory exhaustion;
    // the exception is raised either way.
    let _ = value.setattr("file", file);
    let _ = value.setattr("line", line);
    let _ = value.setattr("field", field);
    let _ = value.setattr("message", message);
    err
}

/// The Python exception for a lab error: `ExperimentError` where the command would exit with 2
/// (bad input, a run that cannot finish as described), `RuntimeError` otherwise. `file` names
/// the experiment for errors that carry no file of their own.
pub fn to_py(py: Python<'_>, e: LabError, file: &str) -> PyErr {
    match &e {
        LabError::Input(ie) => input_error(py, ie),
        _ if e.exit_code() == 2 => {
            let text = e.to_string();
            located(
                py,
                text.clone(),
                file.to_string(),
                None,
                String::new(),
                text,
            )
        }
        _ => PyRuntimeError::new_err(e.to_string()),
    }
}
