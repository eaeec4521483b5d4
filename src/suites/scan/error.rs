//! Errors of the semiring scan: inputs that do not fit together, and what a backend cannot do.

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
}
