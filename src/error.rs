//! The library's typed errors. The binary turns them into messages and exit codes:
//! anything the user can fix (bad input, a device that is not there) exits 2.

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

    /// What the torch-free core reports: bad input, an unreadable trace or signature file, an
    /// energy probe, an I/O failure (each names its file or probe).
    #[error(transparent)]
    Core(#[from] replay_core::Error),

    /// The model failed to load or run.
    #[error("model error: {0}")]
    Model(String),
}

/// A `--shard` that cannot be resolved is the user's to fix, as the core says.
impl From<replay_core::shard::ShardError> for Error {
    fn from(error: replay_core::shard::ShardError) -> Self {
        Error::Core(error.into())
    }
}

impl Error {
    /// True when the user can fix the problem by changing what they typed or gave us;
    /// the binary exits with status 2 for these.
    pub fn is_usage_error(&self) -> bool {
        matches!(
            self,
            Error::InvalidDevice { .. } | Error::CudaUnavailable(_) | Error::KernelUnavailable(..)
        ) || matches!(self, Error::Core(e) if e.is_usage_error())
    }

    pub fn cuda(call: &'static str, err: impl std::fmt::Display) -> Self {
        Error::Cuda {
            call,
            message: err.to_string(),
        }
    }
}

impl From<crate::trace::TraceError> for Error {
    fn from(e: crate::trace::TraceError) -> Self {
        Error::Core(e.into())
    }
}

impl From<crate::signature::SignatureFileError> for Error {
    fn from(e: crate::signature::SignatureFileError) -> Self {
        Error::Core(e.into())
    }
}

impl From<crate::energy::EnergyError> for Error {
    fn from(e: crate::energy::EnergyError) -> Self {
        Error::Core(e.into())
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
