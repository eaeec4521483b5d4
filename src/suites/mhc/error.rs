//! What can go wrong in the mHC suite, sorted the way its rows and exit codes need.

use replay_core::suite::{CaseError, CaseStatus};

use crate::kernels::KernelError;

#[derive(Debug, thiserror::Error)]
pub enum MhcError {
    /// A flag or size the user can fix (exit 2).
    #[error("{0}")]
    InvalidInput(String),
    /// The configuration would not fit in memory: refused before allocating (exit 2).
    #[error("{0}")]
    WouldNotFit(String),
    /// A path this machine or build cannot run (no CUDA GPU, no kernels): said plainly.
    #[error("{0}")]
    Unavailable(String),
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
    #[error("cuda: {0}")]
    Cuda(String),
    #[error("{0}")]
    Measure(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        source: std::io::Error,
    },
}

impl MhcError {
    /// The user's to fix: exit status 2.
    pub fn is_usage_error(&self) -> bool {
        matches!(
            self,
            MhcError::InvalidInput(_)
                | MhcError::WouldNotFit(_)
                | MhcError::Unavailable(_)
                // Only ever an output that cannot be written: another folder fixes it.
                | MhcError::Io { .. }
        )
    }

    /// As a case's status row: out of memory by kind or by libtorch's message, else error.
    pub fn into_case_error(self) -> CaseError {
        let message = self.to_string();
        let status = match self {
            MhcError::WouldNotFit(_) => CaseStatus::Oom,
            MhcError::Unavailable(_) => CaseStatus::NotImplemented,
            _ if message.to_lowercase().contains("out of memory") => CaseStatus::Oom,
            _ => CaseStatus::Error,
        };
        CaseError::new(status, message)
    }
}

/// A kernel's failure in the suite's words, with the kernel's text: a launch the driver
/// refuses is a CUDA error, a size that would not fit is refused as too large (exit 2).
impl From<KernelError> for MhcError {
    fn from(e: KernelError) -> Self {
        match e {
            KernelError::InvalidInput(m) => MhcError::InvalidInput(m),
            KernelError::NotImplemented(m) | KernelError::Unavailable(m) => {
                MhcError::Unavailable(m)
            }
            KernelError::OutOfMemory(m) => MhcError::WouldNotFit(m),
            KernelError::Device(m) => MhcError::Cuda(m),
        }
    }
}

impl From<replay_core::measure::MeasureError> for MhcError {
    fn from(e: replay_core::measure::MeasureError) -> Self {
        MhcError::Measure(e.to_string())
    }
}

/// Into the library's error, keeping whether the user can fix it (exit status 2).
impl From<MhcError> for crate::Error {
    fn from(error: MhcError) -> Self {
        let usage = error.is_usage_error();
        crate::Error::suite(error, usage)
    }
}
