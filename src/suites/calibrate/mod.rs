//! `replay calibrate` (issue 16): a measured hardware profile — matmul GFLOPS, memory
//! bandwidth, the benefit of fusing linear, conv and attention patterns — in the seed's JSON
//! (`hardware_calibration_benchmarks`, branes-ai/graphs), timed on replay's measurement core.
//!
//! One concept per file: [`profile`] (the JSON and its summary fields), [`timing`] (the seed's
//! warm-ups and trials on the measurement core), [`clock`] (the CPU clock a peak is computed
//! with, measured and checked), [`peaks`] (theoretical peaks and how they were found),
//! [`matmul`] (square products through libtorch), [`memory`] (copy bandwidth through libtorch
//! and replay's own copy and triad kernels), [`fusion`] (the fused-versus-
//! unfused patterns), [`run`] (the options, the peaks with the flags applied, the profile
//! before any measurement), [`items`] (the work list and what each item measures), [`suite`]
//! (the work items as the cases of the one suite runner), [`journal`] (an item's journal
//! entry, which is also its row), [`sink`] (each entry journaled and merged into the profile,
//! rewritten after every item), [`command`] (the suite command), [`summary`] (what the command prints when it ends), [`host`] (the host's costs without the
//! profiler: the profile's `host` section).

pub mod clock;
pub mod command;
pub mod error;
pub mod fusion;
pub mod items;
pub mod journal;
pub mod matmul;
pub mod memory;
pub mod peaks;
pub mod profile;
pub mod run;
pub mod sink;
pub mod suite;
pub mod summary;
pub mod timing;

pub use error::CalibrateError;
