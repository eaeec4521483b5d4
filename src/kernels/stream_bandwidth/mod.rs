//! `cuda/stream_bandwidth.cu` and its CPU twin: replay's own STREAM copy and triad, what each
//! computes and counts ([`stream_kernel`]), on the CPU ([`cpu`]) and their CUDA launch
//! ([`cuda`]). `replay calibrate` (`suites::calibrate::memory`) times them.

pub mod cpu;
pub mod cuda;
pub mod stream_kernel;

pub use stream_kernel::{elements_in_mb, StreamKernel, TRIAD_SCALAR};
