//! What can stop a prediction.

use std::path::{Path, PathBuf};

/// A trace the timeline model cannot time.
#[derive(Debug, thiserror::Error)]
pub enum PredictError {
    /// No `ProfilerStep#N` span and no host op, launch call or GPU activity to measure a
    /// window from (or every candidate step lasted 0 µs): there is no step time to check.
    #[error("{}: {}", path.display(), self.reason())]
    NothingToTime { path: PathBuf },
    /// The host model asked for does not fit the trace (a GPU machine's host section for a
    /// CPU trace).
    #[error("{}: {message}", path.display())]
    HostModel { path: PathBuf, message: String },
}

impl PredictError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            PredictError::NothingToTime { path } | PredictError::HostModel { path, .. } => path,
        }
    }

    /// What is wrong, without the file name (for messages that name the file already).
    pub fn reason(&self) -> &str {
        match self {
            PredictError::NothingToTime { .. } => {
                "nothing to time: no ProfilerStep span and no host op or GPU activity with a \
                 duration"
            }
            PredictError::HostModel { message, .. } => message,
        }
    }
}

/// A trace with nothing to time is the user's input problem (exit status 2), like a
/// malformed trace.
impl From<PredictError> for crate::Error {
    fn from(error: PredictError) -> Self {
        crate::Error::BadInput {
            path: error.path().to_path_buf(),
            message: error.reason().to_owned(),
        }
    }
}
