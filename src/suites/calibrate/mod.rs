//! `replay calibrate` (issue 16): a measured hardware profile — matmul GFLOPS, memory
//! bandwidth, the benefit of fusing linear, conv and attention patterns — in the seed's JSON
//! (`hardware_calibration_benchmarks`, branes-ai/graphs), timed on replay's measurement core.
//!
//! One concept per file: [`profile`] (the JSON and its summary fields), [`timing`] (the seed's
//! warm-ups and trials on the measurement core), [`memory`] (copy and triad bandwidth, through
//! libtorch and with replay's own kernels).

pub mod error;
pub mod memory;
pub mod profile;
pub mod timing;

pub use error::CalibrateError;
