//! The error of a kept Inductor cache that cannot be used: its file and what is wrong.

use std::path::{Path, PathBuf};

/// A `kernels.json`, or a Triton metadata file of the cache beside it, that cannot be used;
/// the message names the file and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct KernelsFileError {
    pub path: PathBuf,
    pub problem: String,
}

impl KernelsFileError {
    pub fn new(path: &Path, problem: impl Into<String>) -> KernelsFileError {
        KernelsFileError {
            path: path.to_path_buf(),
            problem: problem.into(),
        }
    }
}
