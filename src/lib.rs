//! replay: a CUDA-first kernel replay engine.
//!
//! Give it a TorchScript model or a PyTorch profiler trace; it finds the unique GPU kernels,
//! sorts them into three tiers (CUDA runtime memcpy/memset, cuBLAS GEMM, everything else
//! through libtorch), replays each alone, times it, predicts the whole model's latency from the
//! parts and checks the prediction against the real model.

pub mod cli;
pub mod device;
pub mod energy;
pub mod error;
pub mod export;
pub mod kernels;
pub mod measure;
pub mod model;
pub mod predict;
pub mod replay;
pub mod report;
pub mod signature;
pub mod trace;

pub use error::{Error, Result};
