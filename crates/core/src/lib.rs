//! replay's torch-free core: reading PyTorch profiler traces, classifying their kernels into
//! signatures, predicting a step's time with the timeline model, the measurement core, energy
//! probes, and the reports and output formats. Nothing here links libtorch or CUDA, so a
//! program that only reads and predicts traces starts in milliseconds; the `replay` crate
//! adds the replay engine and the model commands on top.

pub mod energy;
pub mod error;
pub mod execution_trace;
pub mod export;
#[doc(hidden)]
pub mod fuzzing;
pub mod inductor;
pub mod measure;
pub mod memory_size;
pub mod percent;
pub mod plot;
pub mod predict;
pub mod ranks;
pub mod report;
pub mod results;
pub mod sequence_gaps;
pub mod sequence_liveness;
pub mod sequence_plan;
pub mod shard;
pub mod shipped;
pub mod signature;
pub mod spill;
pub mod suite;
pub mod trace;

pub use error::{Error, Result};
