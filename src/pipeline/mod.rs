//! The work behind `replay capture`, `isolated`, `full`, `compare` and `selftest` (and the
//! host's costs they need, [`host`]), without a
//! command line: each stage takes a plain options struct (with the defaults in its `Default`,
//! which clap's defaults in `cli/` read) and reports what it does to an [`Observer`] instead of
//! printing, so a caller (the console commands, selftest's own compare run, a program using
//! the library) decides where progress, warnings and results go.

pub mod capture;
pub mod classify;
pub mod compare;
pub mod cpu_fuser;
pub mod full;
pub mod host;
pub mod isolated;
mod isolated_summary;
pub mod isolated_windowed;
pub mod observer;
pub mod options;
pub mod selftest;
pub mod sequence;
pub mod sequence_memory;
pub mod sequence_real_time;
pub mod suite_command;
pub mod threads;

pub use observer::{Observer, Stage, Tick};
pub use options::{
    CaptureOptions, CompareOptions, CompileMode, EnergyOptions, ExecutionTraceChoice, FullOptions,
    IsolatedOptions, SelftestOptions, SequenceOptions,
};
pub use suite_command::{drive, CaseReporter, ShardRecord, SuiteCommand};
