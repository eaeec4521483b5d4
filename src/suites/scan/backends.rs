//! The one place where backends are looked up by the name that `--backends` and CSV rows use.

use super::torch_backend::TorchBackend;
use super::{ScanBackend, ScanError};
use crate::device::Device;

/// The backends this build knows, in the order `--help` lists them.
pub const BACKEND_NAMES: [&str; 3] = ["cpu", "torch", "cuda"];

/// Opens backend `name` (case-insensitive) for `device`.
pub fn open_backend(name: &str, device: &Device) -> Result<Box<dyn ScanBackend>, ScanError> {
    match name.trim().to_ascii_lowercase().as_str() {
        "torch" => Ok(Box::new(TorchBackend::new(device))),
        other => Err(ScanError::InvalidInput(format!(
            "unknown or unavailable scan backend '{other}' (known: {})",
            BACKEND_NAMES.join(", ")
        ))),
    }
}
