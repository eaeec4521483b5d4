//! The one place where backends are looked up by the name that `--backends` and CSV rows use.

use super::cpu::CpuScan;
use super::cpu_backend::CpuBackend;
use super::cuda_backend::CudaBackend;
use super::torch_backend::TorchBackend;
use super::{ScanBackend, ScanError};
use crate::device::Device;

/// The backends this build knows, in the order `--help` lists them.
pub const BACKEND_NAMES: [&str; 3] = ["cpu", "torch", "cuda"];

/// Opens backend `name` (case-insensitive) for `device`.
pub fn open_backend(name: &str, device: &Device) -> Result<Box<dyn ScanBackend>, ScanError> {
    match name.trim().to_ascii_lowercase().as_str() {
        "cpu" => Ok(Box::new(CpuBackend::new(CpuScan::default()))),
        "torch" => Ok(Box::new(TorchBackend::new(device))),
        "cuda" => match device {
            Device::Cuda(gpu) => Ok(Box::new(CudaBackend::new(gpu)?)),
            Device::Cpu(_) => Err(ScanError::InvalidInput(
                "the cuda backend runs replay's kernel on a GPU: give --device cuda (or cuda:N)"
                    .into(),
            )),
        },
        other => Err(ScanError::InvalidInput(format!(
            "unknown or unavailable scan backend '{other}' (known: {})",
            BACKEND_NAMES.join(", ")
        ))),
    }
}

/// [`open_backend`], with `threads` worker threads for the `cpu` backend when given (the
/// other backends take theirs from libtorch's intra-op setting).
pub fn open_backend_with_threads(
    name: &str,
    device: &Device,
    threads: Option<usize>,
) -> Result<Box<dyn ScanBackend>, ScanError> {
    match threads {
        Some(n) if name.trim().eq_ignore_ascii_case("cpu") => {
            Ok(Box::new(CpuBackend::new(CpuScan::with_threads(n))))
        }
        _ => open_backend(name, device),
    }
}
