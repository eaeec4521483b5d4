//! Errors of the host measurements: the same three kinds, in the same words, as `calibrate`'s
//! (which turns them into its own), so a command without a profile reports them alike.

/// What can go wrong while measuring the host.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// libtorch failed on a measurement.
    #[error("libtorch: {0}")]
    Torch(String),

    /// The device or one of replay's own kernels failed.
    #[error("{0}")]
    Device(String),

    /// The measurement core refused or failed.
    #[error("measurement: {0}")]
    Measure(String),
}

impl From<tch::TchError> for HostError {
    fn from(e: tch::TchError) -> Self {
        HostError::Torch(e.to_string())
    }
}

impl From<crate::measure::MeasureError> for HostError {
    fn from(e: crate::measure::MeasureError) -> Self {
        HostError::Measure(e.to_string())
    }
}

impl From<HostError> for crate::Error {
    fn from(error: HostError) -> Self {
        crate::Error::suite(error, false)
    }
}
