//! The library's typed errors. The binary turns them into messages and exit codes:
//! anything the user can fix (bad input, a device that is not there) exits 2.

use std::path::PathBuf;

/// Everything that can go wrong inside replay.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A `--device` value that is not `cpu`, `cuda` or `cuda:N`.
    #[error("invalid device '{spec}': {reason} (expected cpu, cuda or cuda:N)")]
    InvalidDevice { spec: String, reason: String },

    /// CUDA was asked for but cannot be used on this machine.
    #[error("CUDA is unavailable: {0}")]
    CudaUnavailable(String),

    /// A CUDA driver/runtime call failed after CUDA was found.
    #[error("CUDA error in {call}: {message}")]
    Cuda { call: &'static str, message: String },

    /// A kernel compiled from `cuda/` was asked for but is not in this build.
    #[error("CUDA kernel '{0}' is unavailable: {1}")]
    KernelUnavailable(String, String),

    /// A file given by the user cannot be read or understood.
    #[error("{path}: {message}")]
    BadInput { path: PathBuf, message: String },

    /// A profiler trace that cannot be read (the message names the file).
    #[error(transparent)]
    Trace(#[from] crate::trace::TraceError),

    /// A signature file that cannot be read (the message names the file).
    #[error(transparent)]
    SignatureFile(#[from] crate::signature::SignatureFileError),

    /// An energy probe could not be opened or read.
    #[error(transparent)]
    Energy(#[from] crate::energy::EnergyError),

    /// The model failed to load or run.
    #[error("model error: {0}")]
    Model(String),

    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// True when the user can fix the problem by changing what they typed or gave us;
    /// the binary exits with status 2 for these.
    pub fn is_usage_error(&self) -> bool {
        matches!(
            self,
            Error::InvalidDevice { .. }
                | Error::CudaUnavailable(_)
                | Error::KernelUnavailable(..)
                | Error::BadInput { .. }
                | Error::Trace(_)
                | Error::SignatureFile(_)
        ) || matches!(self, Error::Energy(e) if e.is_usage_error())
    }

    pub fn cuda(call: &'static str, err: impl std::fmt::Display) -> Self {
        Error::Cuda {
            call,
            message: err.to_string(),
        }
    }
}

/// The core's errors keep their meaning (and exit status) on this side.
impl From<replay_core::Error> for Error {
    fn from(e: replay_core::Error) -> Self {
        match e {
            replay_core::Error::BadInput { path, message } => Error::BadInput { path, message },
            replay_core::Error::Trace(e) => Error::Trace(e),
            replay_core::Error::SignatureFile(e) => Error::SignatureFile(e),
            replay_core::Error::Energy(e) => Error::Energy(e),
            replay_core::Error::Io { context, source } => Error::Io { context, source },
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
