//! Errors of `replay calibrate`.

use crate::kernels::KernelError;

/// What can go wrong while calibrating.
#[derive(Debug, thiserror::Error)]
pub enum CalibrateError {
    /// A flag value that cannot be used (an unknown operation, pattern or dtype, a peak that
    /// is not a positive number): the binary exits 2.
    #[error("{0}")]
    Usage(String),

    /// An output file that cannot be written.
    #[error("{}: {problem}", path.display())]
    File {
        path: std::path::PathBuf,
        problem: String,
    },

    /// libtorch failed on a measurement (kept per measurement: one failure never ends a run).
    #[error("libtorch: {0}")]
    Torch(String),

    /// The device or one of replay's own kernels failed.
    #[error("{0}")]
    Device(String),

    /// The measurement core refused or failed.
    #[error("measurement: {0}")]
    Measure(String),

    /// The host section's measurement failed (its own kinds, in the same words as above).
    #[error(transparent)]
    Host(#[from] crate::host::HostError),
}

impl CalibrateError {
    /// True for what the user can fix: exit status 2.
    pub fn is_usage_error(&self) -> bool {
        matches!(self, CalibrateError::Usage(_) | CalibrateError::File { .. })
    }
}

/// A kernel's failure in calibrate's words: input the user can fix is a usage error, the rest
/// (memory, the device, a kernel this build lacks) the device's, with the kernel's text.
impl From<KernelError> for CalibrateError {
    fn from(e: KernelError) -> Self {
        match e {
            KernelError::InvalidInput(m) => CalibrateError::Usage(m),
            KernelError::NotImplemented(m)
            | KernelError::OutOfMemory(m)
            | KernelError::Unavailable(m)
            | KernelError::Device(m) => CalibrateError::Device(m),
        }
    }
}

impl From<tch::TchError> for CalibrateError {
    fn from(e: tch::TchError) -> Self {
        CalibrateError::Torch(e.to_string())
    }
}

impl From<crate::measure::MeasureError> for CalibrateError {
    fn from(e: crate::measure::MeasureError) -> Self {
        CalibrateError::Measure(e.to_string())
    }
}

/// Into the library's error, keeping whether the user can fix it (exit status 2).
impl From<CalibrateError> for crate::Error {
    fn from(error: CalibrateError) -> Self {
        let usage = error.is_usage_error();
        crate::Error::suite(error, usage)
    }
}
