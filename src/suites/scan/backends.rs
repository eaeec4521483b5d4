//! The one place where backends are looked up by the name that `--backends` and CSV rows use.

use super::cpu_backend::CpuBackend;
use super::cuda_backend::CudaBackend;
use super::torch_backend::TorchBackend;
use super::unavailable_backend::UnavailableBackend;
use super::{ScanBackend, ScanError};
use crate::device::Device;
use crate::kernels::semiring_scan::cpu::CpuScan;

/// The backends this build knows, in the order `--help` lists them.
pub const BACKEND_NAMES: [&str; 3] = ["cpu", "torch", "cuda"];

/// The seed's backend names (`benchmark_memory_analysis.py --backends`), accepted as aliases
/// of ours: its streaming reference in PyTorch ops is our `torch`; its fused Triton GPU
/// kernels (`triton`, its PyTorch twin `triton_pytorch`, `triton_checkpointing`) have our
/// CUDA kernel `cuda` as counterpart. Rows keep the name the user gave.
pub const SEED_ALIASES: [(&str, &str); 4] = [
    ("linear_scan_streaming", "torch"),
    ("triton", "cuda"),
    ("triton_pytorch", "cuda"),
    ("triton_checkpointing", "cuda"),
];

/// Every name `--backends` accepts: ours, then the seed's.
pub fn accepted_names() -> Vec<&'static str> {
    BACKEND_NAMES
        .into_iter()
        .chain(SEED_ALIASES.iter().map(|(seed, _)| *seed))
        .collect()
}

/// Our backend behind `name` (ours or a seed alias, case-insensitive); `None` if unknown.
pub fn canonical_backend(name: &str) -> Option<&'static str> {
    let name = name.trim().to_ascii_lowercase();
    BACKEND_NAMES.into_iter().find(|n| *n == name).or_else(|| {
        SEED_ALIASES
            .iter()
            .find(|(seed, _)| *seed == name)
            .map(|(_, ours)| *ours)
    })
}

/// Opens backend `name` (case-insensitive) for `device`.
/// A seed alias of `cuda` (`triton*`) on the CPU opens as [`UnavailableBackend`]: its rows
/// say that this machine has no counterpart, where our own name `cuda` is refused.
pub fn open_backend(name: &str, device: &Device) -> Result<Box<dyn ScanBackend>, ScanError> {
    let given = name.trim().to_ascii_lowercase();
    let ours = canonical_backend(&given).unwrap_or("");
    if ours == "cuda" && given != "cuda" && matches!(device, Device::Cpu(_)) {
        return Ok(Box::new(UnavailableBackend {
            // Short enough for the row's 100 characters after "not implemented: ".
            reason: format!(
                "{given} needs a GPU: its counterpart is replay's cuda kernel (--device cuda)"
            ),
        }));
    }
    match ours {
        "cpu" => Ok(Box::new(CpuBackend::new(CpuScan::default()))),
        "torch" => Ok(Box::new(TorchBackend::new(device))),
        "cuda" => match device {
            Device::Cuda(gpu) => Ok(Box::new(CudaBackend::new(gpu)?)),
            Device::Cpu(_) => Err(ScanError::InvalidInput(
                "the cuda backend runs replay's kernel on a GPU: give --device cuda (or cuda:N)"
                    .into(),
            )),
        },
        _ => Err(ScanError::InvalidInput(format!(
            "unknown or unavailable scan backend '{given}' (known: {})",
            accepted_names().join(", ")
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
        Some(n) if canonical_backend(name) == Some("cpu") => {
            Ok(Box::new(CpuBackend::new(CpuScan::with_threads(n))))
        }
        _ => open_backend(name, device),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_names_are_aliases_of_ours() {
        assert_eq!(canonical_backend("linear_scan_streaming"), Some("torch"));
        assert_eq!(canonical_backend("Triton"), Some("cuda"));
        assert_eq!(canonical_backend("triton_pytorch"), Some("cuda"));
        assert_eq!(canonical_backend("triton_checkpointing"), Some("cuda"));
        assert_eq!(canonical_backend("cpu"), Some("cpu"));
        assert_eq!(canonical_backend("tritonx"), None);
        assert!(accepted_names().contains(&"triton"));
    }
}
