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

    /// A benchmark suite's own error, converted by the suite (`impl From<ItsError> for
    /// crate::Error` in its `error.rs`), which says whether the user can fix it.
    #[error(transparent)]
    Suite(SuiteError),

    /// An orchestrated step's error with the context it gathered (`writing isolated
    /// results: ...`); whether the user can fix it is read from the errors inside.
    #[error(transparent)]
    Pipeline(#[from] anyhow::Error),
}

/// A suite's error as the library carries it: the suite's own error, shown as it is, and
/// whether it is the user's to fix. The library never names a suite's error type, so a new
/// suite converts its errors without editing this file or `main.rs`.
#[derive(Debug)]
pub struct SuiteError {
    source: Box<dyn std::error::Error + Send + Sync + 'static>,
    usage: bool,
}

/// Shown as the suite's own error, with the suite error's causes after it.
impl std::fmt::Display for SuiteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.source.fmt(f)
    }
}

impl std::error::Error for SuiteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.source()
    }
}

impl Error {
    /// A suite's error; `usage`: the user can fix it (exit status 2).
    pub fn suite(error: impl std::error::Error + Send + Sync + 'static, usage: bool) -> Error {
        Error::Suite(SuiteError {
            source: Box::new(error),
            usage,
        })
    }

    /// The suite's own error, when this is one of type `E`.
    pub fn suite_error<E: std::error::Error + 'static>(&self) -> Option<&E> {
        match self {
            Error::Suite(e) => e.source.downcast_ref::<E>(),
            _ => None,
        }
    }
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
            || matches!(self, Error::Suite(e) if e.usage)
            || matches!(self, Error::Pipeline(e) if e.chain().any(|c| {
                c.downcast_ref::<Error>().is_some_and(Error::is_usage_error)
                    || c.downcast_ref::<replay_core::Error>()
                        .is_some_and(replay_core::Error::is_usage_error)
            }))
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
