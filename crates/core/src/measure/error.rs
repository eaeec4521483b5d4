//! The measurement core's own error type, kept local to the module so that the module can be
//! embedded in a crate with a different error type: that crate wraps its errors into
//! [`MeasureError::Target`] on the way in and can downcast them on the way out.

/// Everything that can end one measurement.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// The measured target failed (its batch, or its per-sample preparation). The target's own
    /// error is kept intact so the caller can report or downcast it.
    #[error(transparent)]
    Target(Box<dyn std::error::Error + Send + Sync + 'static>),

    /// The configuration cannot produce a measurement (for example zero minimum samples).
    #[error("invalid measurement configuration: {0}")]
    InvalidConfig(String),

    /// A timer was told to end a segment it had not started (a target's bug).
    #[error("a timed segment was stopped without being started")]
    UnpairedStop,

    /// Sampling ended without a single sample (the runner always takes one, so this signals
    /// a bug in the runner rather than a problem with the target).
    #[error("the measurement produced no samples")]
    NoSamples,
}

impl MeasureError {
    /// Wrap a target's error; accepts any error type, and also `String` / `&str` messages.
    pub fn target(err: impl Into<Box<dyn std::error::Error + Send + Sync + 'static>>) -> Self {
        MeasureError::Target(err.into())
    }
}
