//! Errors of the quantization suite: a config file that cannot be used, and what a recipe or
//! model cannot do on a device.

use std::path::PathBuf;

/// What can go wrong in `replay bench quant`.
#[derive(Debug, thiserror::Error)]
pub enum QuantError {
    /// The YAML config cannot be read or does not fit the schema (names the file, and the key
    /// and line where the parser knows them).
    #[error("{}: {message}", path.display())]
    Config { path: PathBuf, message: String },

    /// A recipe this suite does not implement (a row's `not_implemented` status).
    #[error("not implemented: {0}")]
    NotImplemented(String),

    /// A shape or dtype that the recipe's kernel cannot take (a row's `error` status).
    #[error("{0}")]
    Unsupported(String),

    /// libtorch failed while quantizing or running (a row's `error` status).
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),

    /// The project's Python helper (torch.compile, profiler) failed or said something
    /// unreadable.
    #[error("python helper: {0}")]
    Python(String),
}

impl QuantError {
    /// True for what the user can fix (their config file): the binary exits with status 2.
    pub fn is_usage_error(&self) -> bool {
        matches!(self, QuantError::Config { .. })
    }
}

/// Into the library's error, keeping whether the user can fix it (exit status 2).
impl From<QuantError> for crate::Error {
    fn from(error: QuantError) -> Self {
        let usage = error.is_usage_error();
        crate::Error::suite(error, usage)
    }
}
