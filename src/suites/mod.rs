//! Benchmark suites that run on the root package's backends (libtorch, CUDA, Rust CPU kernels).

pub mod calibrate;
pub mod mhc;
pub mod quant;
pub mod scan;
