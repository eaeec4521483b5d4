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

    /// An orchestrated step's error with what the step was doing (`writing isolated
    /// results`), shown first, the error itself as its cause; whether the user can fix it is
    /// read from the error inside.
    #[error(transparent)]
    Step(StepError),

    /// A timing loop that could not measure (its configuration, a target's failure).
    #[error(transparent)]
    Measure(#[from] replay_core::measure::MeasureError),

    /// A file of the run's own (not one the user named) that cannot be read or written; a
    /// step names it ([`Context`]).
    #[error(transparent)]
    Io(#[from] std::io::Error),

    /// A step that could not run for a reason of its own, not the user's input: the message
    /// says which (`no rebuilt op to run in real time`).
    #[error("{0}")]
    Failed(String),
}

/// An error with what the step was doing when it happened (see [`Context`]): shown as that,
/// with the error as its cause, as the error chain prints it.
#[derive(Debug)]
pub struct StepError {
    context: String,
    error: Box<Error>,
}

impl std::fmt::Display for StepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.context)
    }
}

impl std::error::Error for StepError {
    /// The core's error as itself (so the chain reads it as the core's, as before), any other
    /// as this layer's.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.error {
            Error::Core(core) => Some(core),
            other => Some(other),
        }
    }
}

/// `.context("writing isolated results")` on a result whose error converts into [`Error`]:
/// the error with what the step was doing ([`Error::Step`]).
pub trait Context<T> {
    fn context(self, context: impl Into<String>) -> Result<T>;
    fn with_context<C: Into<String>>(self, context: impl FnOnce() -> C) -> Result<T>;
}

impl<T, E: Into<Error>> Context<T> for std::result::Result<T, E> {
    fn context(self, context: impl Into<String>) -> Result<T> {
        self.map_err(|e| e.into().in_step(context))
    }

    fn with_context<C: Into<String>>(self, context: impl FnOnce() -> C) -> Result<T> {
        self.map_err(|e| e.into().in_step(context()))
    }
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
            || matches!(self, Error::Step(e) if e.error.is_usage_error())
    }

    /// The message and its causes on one line, each after a `: ` (as `{:#}` shows an
    /// `anyhow::Error`).
    pub fn with_causes(&self) -> String {
        let mut text = self.to_string();
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            text.push_str(&format!(": {c}"));
            cause = c.source();
        }
        text
    }

    /// This error with what the step was doing when it happened.
    pub fn in_step(self, context: impl Into<String>) -> Error {
        Error::Step(StepError {
            context: context.into(),
            error: Box::new(self),
        })
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
