//! The measurement core is torch-free ([`replay_core::measure`], re-exported here); this side
//! adds what needs CUDA: timing batches with CUDA events on a stream.

pub use replay_core::measure::*;

pub mod counting_allocator;
pub mod cuda_timing;
pub mod host_allocator;
