//! The measurement core is torch-free ([`replay_core::measure`], re-exported here); this side
//! adds what needs CUDA: the one CUDA-event timer ([`cuda_timing`]), which the core times work
//! placed on a CUDA stream (replay's own, or libtorch's current one) with.

pub use replay_core::measure::*;

pub mod blocking_kernel;
pub mod counting_allocator;
pub mod cuda_timing;
pub mod host_allocator;
