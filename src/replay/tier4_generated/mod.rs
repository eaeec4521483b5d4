//! Tier 4: kernels that `torch.compile` generated (Inductor's C++ kernels on the CPU, Triton
//! kernels on CUDA), replayed from what `replay capture --compile` kept beside the trace
//! (`inductor/kernels.json`): each kernel called alone with the arguments it received inside
//! the compiled graph, and timed by the measurement core like every tier.
//!
//! - [`arguments`]: the recorded arguments rebuilt (tensors of each recorded layout, integer
//!   tensors with their recorded values, scalars) and laid out as the `void**` array the
//!   kernel's entry point takes;
//! - [`cpu_kernel`]: the Python-free library the capture built from an Inductor C++ kernel's
//!   source, opened and called through its uniform entry point.

pub mod arguments;
pub mod cpu_kernel;

/// Why a generated kernel could not be set up for replay.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Tier4Error {
    /// What the kernel needs is not at hand or cannot be rebuilt here.
    #[error("{0}")]
    Unsupported(String),
    /// It was at hand and failed.
    #[error("{0}")]
    Failed(String),
}
