//! Why a generated kernel could not be set up for replay.

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Tier4Error {
    /// What the kernel needs is not at hand or cannot be rebuilt here.
    #[error("{0}")]
    Unsupported(String),
    /// It was at hand and failed.
    #[error("{0}")]
    Failed(String),
}
