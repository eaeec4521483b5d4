//! Whole models: TorchScript loading and full-model timing in Rust, and the Python helpers
//! (`scripts/`) that export models and capture profiler traces.

pub mod forward_passes;
pub mod full;
pub mod input_spec;
pub mod python;
pub mod torchscript;
