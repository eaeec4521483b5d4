//! replay: a CUDA-first kernel replay engine.
//!
//! Give it a TorchScript model or a PyTorch profiler trace; it finds the unique GPU kernels,
//! sorts them into three tiers (CUDA runtime memcpy/memset, cuBLAS GEMM, everything else
//! through libtorch), replays each alone, times it, predicts the whole model's latency from the
//! parts and checks the prediction against the real model.
//!
//! This crate is the part that links libtorch and CUDA (devices, kernels, the `torch` layer
//! over libtorch, the replay tiers, models, and the `replay-torch` commands). Reading, classifying and predicting traces, the
//! measurement core, energy probes, reports and output formats are the torch-free
//! [`replay_core`], re-exported here under the same names.

pub mod cli;
pub mod device;
pub mod error;
pub mod kernels;
pub mod measure;
pub mod model;
pub mod pipeline;
pub mod replay;
pub mod selftest;
pub mod suites;
pub mod torch;

pub use error::{Error, Result};
pub use replay_core::{energy, export, predict, report, results, signature, trace};
