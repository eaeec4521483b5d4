//! Errors of the semiring scan: inputs that do not fit together, and what a backend cannot do.

use crate::kernels::KernelError;

/// What can go wrong when running a scan.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The dimensions, the edge buffer and the lengths do not fit together.
    #[error("invalid scan input: {0}")]
    InvalidInput(String),

    /// An unknown semiring name.
    #[error("unknown semiring '{0}' (expected log, max or entropy)")]
    UnknownSemiring(String),

    /// The backend has no implementation of this semiring and phase (a benchmark row's
    /// `not_implemented` status).
    #[error("not implemented: {0}")]
    NotImplemented(String),

    /// The backend could not get the memory the problem needs (a row's `oom` status).
    #[error("out of memory: {0}")]
    OutOfMemory(String),

    /// The backend failed while running (a libtorch or CUDA error; a row's `error` status).
    #[error("{0}")]
    Backend(String),

    /// A user's input file (`replay scan --edge/--lengths`) or an output file that cannot be
    /// used, and why.
    #[error("{}: {problem}", path.display())]
    File {
        path: std::path::PathBuf,
        problem: String,
    },
}

impl ScanError {
    /// True for what the user can fix (their input, their choice of semiring, phase or file):
    /// the binary exits with status 2 for these.
    pub fn is_usage_error(&self) -> bool {
        matches!(
            self,
            ScanError::InvalidInput(_) | ScanError::UnknownSemiring(_) | ScanError::File { .. }
        )
    }
}

/// Into the library's error, keeping whether the user can fix it (exit status 2).
impl From<ScanError> for crate::Error {
    fn from(error: ScanError) -> Self {
        let usage = error.is_usage_error();
        crate::Error::suite(error, usage)
    }
}

/// A kernel's failure in the suite's words: each kind of [`KernelError`] is the scan error of
/// the same kind, with the kernel's text.
impl From<KernelError> for ScanError {
    fn from(e: KernelError) -> ScanError {
        match e {
            KernelError::InvalidInput(m) => ScanError::InvalidInput(m),
            KernelError::NotImplemented(m) | KernelError::Unavailable(m) => {
                ScanError::NotImplemented(m)
            }
            KernelError::OutOfMemory(m) => ScanError::OutOfMemory(m),
            KernelError::Device(m) => ScanError::Backend(m),
        }
    }
}

/// A timer's failure inside a scan's calls (a CUDA event call), as a backend error in its words.
impl From<replay_core::measure::MeasureError> for ScanError {
    fn from(e: replay_core::measure::MeasureError) -> ScanError {
        ScanError::Backend(e.to_string())
    }
}
