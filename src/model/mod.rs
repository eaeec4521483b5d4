//! Whole models: TorchScript models and AOTInductor packages loaded and timed in Rust, and the
//! Python helpers (`scripts/`) that export models and capture profiler traces.

pub mod aoti_package;
pub mod forward_passes;
pub mod full;
pub mod input_spec;
pub mod model_file;
pub mod pt2_archive;
pub mod python;
pub mod torchscript;
pub mod whole_model;
