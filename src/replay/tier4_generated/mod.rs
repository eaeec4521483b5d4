//! Tier 4: kernels that `torch.compile` generated (Inductor's C++ kernels on the CPU, Triton
//! kernels on CUDA), replayed from what `replay capture --compile` kept beside the trace
//! (`inductor/kernels.json`): each kernel called alone with the arguments it received inside
//! the compiled graph, and timed by the measurement core like every tier.
//!
//! - [`arguments`]: the recorded arguments rebuilt (tensors of each recorded layout, integer
//!   tensors with their recorded values, scalars) and laid out as the `void**` array the
//!   kernel's entry point takes;
//! - [`cpu_kernel`]: the Python-free library the capture built from an Inductor C++ kernel's
//!   source, opened and called through its uniform entry point;
//! - [`triton_kernel`]: a Triton kernel's cubin loaded with the CUDA driver and launched on
//!   replay's stream with the recorded grid and Triton's parameter list (CUDA only).

pub mod arguments;
pub mod cpu_kernel;
pub mod error;
pub mod target;
pub mod triton_kernel;

pub use error::Tier4Error;
pub use target::{target, timed_call, CPP_METHOD, TRITON_LAUNCH_METHOD, TRITON_METHOD};
