//! replay: a CUDA-first kernel replay engine.
//!
//! Give it a TorchScript model or a PyTorch profiler trace; it finds the unique GPU kernels,
//! sorts them into four tiers (CUDA runtime memcpy/memset, cuBLAS GEMM, everything else
//! through libtorch), replays each alone, times it, predicts the whole model's latency from the
//! parts and checks the prediction against the real model.
//!
//! This crate is the part that links libtorch and CUDA (devices, kernels, the `torch` layer
//! over libtorch, the replay tiers, models, and the `replay-torch` commands). Reading, classifying and predicting traces, the
//! measurement core, energy probes, reports and output formats are the torch-free
//! [`replay_core`], re-exported here under the same names.

pub mod cpu;
pub mod device;
pub mod error;
#[doc(hidden)]
pub mod fuzzing;
pub mod host;
pub mod kernels;
pub mod measure;
pub mod model;
pub mod pipeline;
pub mod replay;
pub mod selftest;
pub mod shipped;
pub mod suites;
pub mod torch;

pub use error::{Error, Result};

/// Every binary and test that links this library counts its allocations, so that the `cpu`
/// scan backend reports its measured peak memory ([`measure::counting_allocator`]).
#[global_allocator]
static ALLOCATOR: measure::counting_allocator::CountingAllocator =
    measure::counting_allocator::CountingAllocator;
pub use replay_core::{energy, export, predict, report, results, signature, trace};
