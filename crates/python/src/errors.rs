//! The core's errors as Python exceptions, with the messages the `replay` command prints.
//!
//! - a file that is not there: `FileNotFoundError`;
//! - anything else the user can fix (a malformed trace, a bad what-if, a result file of the
//!   wrong kind): `ReplayInputError`, a `ValueError`;
//! - our own failures: `ReplayError`, the base of both replay exceptions.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    replay_kernels,
    ReplayError,
    PyException,
    "A failure of replay itself (not of what it was given)."
);
create_exception!(
    replay_kernels,
    ReplayInputError,
    PyValueError,
    "A file or value given to replay that it cannot read or understand; the message names it."
);

/// The message `replay` prints for `err`: the error, then each cause that it does not
/// already end with (`replay_cli::exit::report_with`'s rule).
pub fn message(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut shown = text.clone();
    let mut cause = err.source();
    while let Some(c) = cause {
        let line = c.to_string();
        if !shown.ends_with(&line) {
            text.push_str("\n  caused by: ");
            text.push_str(&line);
        }
        shown = line;
        cause = c.source();
    }
    text
}

/// Whether `err` is a file that does not exist.
fn not_found(err: &replay_core::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(c) = cause {
        if let Some(io) = c.downcast_ref::<std::io::Error>() {
            return io.kind() == std::io::ErrorKind::NotFound;
        }
        cause = c.source();
    }
    false
}

/// The Python exception for a core error.
pub fn to_py(err: replay_core::Error) -> PyErr {
    let text = message(&err);
    if not_found(&err) {
        PyFileNotFoundError::new_err(text)
    } else if err.is_usage_error() {
        ReplayInputError::new_err(text)
    } else {
        ReplayError::new_err(text)
    }
}

/// A user's bad value (a what-if expression, a format name) as `ReplayInputError`.
pub fn input(text: impl Into<String>) -> PyErr {
    ReplayInputError::new_err(text.into())
}

/// replay's own failure (a panic, a thread that could not start) as `ReplayError`.
pub fn internal(text: impl Into<String>) -> PyErr {
    ReplayError::new_err(text.into())
}

/// Adds the exception classes to the module (`replay_kernels._native.ReplayError`, ...).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ReplayError", m.py().get_type::<ReplayError>())?;
    m.add("ReplayInputError", m.py().get_type::<ReplayInputError>())?;
    Ok(())
}
