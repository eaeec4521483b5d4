//! The one way a streamed pass fails on its own: the external sorters that keep its memory
//! bounded could not write or read their segments (a full or read-only temporary folder).
//! Shared by the streamed classify ([`crate::signature::fold`]) and the streamed predict
//! ([`crate::predict::stream`]).

use std::fmt::Display;
use std::path::{Path, PathBuf};

/// The sorters' temporary files could not be written or read.
#[derive(Debug, thiserror::Error)]
#[error("{path}: cannot write or read replay's temporary sort files in {dir}: {message}")]
pub struct SpillError {
    /// The trace being read.
    pub path: PathBuf,
    /// The folder the segments go to.
    pub dir: PathBuf,
    pub message: String,
}

impl SpillError {
    pub fn new(path: &Path, dir: &Path, error: impl Display) -> SpillError {
        SpillError {
            path: path.to_path_buf(),
            dir: dir.to_path_buf(),
            message: error.to_string(),
        }
    }
}
