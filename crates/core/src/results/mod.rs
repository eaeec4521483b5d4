//! The result files of the libtorch side (`isolated.json`, `full_model_timing.json`,
//! `compiled_model_timing.json`, `sequence.json`) as plain data: the torch-free commands and the reports read
//! them without loading libtorch.

pub mod calibration;
pub mod compiled_model;
pub mod full_model;
pub mod host_profile;
pub mod isolated;
pub mod sequence;
