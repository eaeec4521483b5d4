//! `replay bench scan`: the seed's benchmark grid (`benchmarks/benchmark_memory_analysis.py`
//! of torch-semimarkov) on replay's measurement core, over any [`ScanBackend`]s.
//!
//! One concept per file: [`grid`] (the cases, in the seed's order), [`inputs`] (the seed's
//! seeded draws), [`memory_estimate`] and [`skip_rule`] (the seed's estimates and its two
//! skip rules), [`check`] (each case against the float64 reference), [`suite`] (all of it as
//! a core [`Suite`], timing through `scan::target`), [`rows`] (the seed's row; its numbers
//! and status words are the suite's, shared with the analysis: `scan::rounding`,
//! `scan::status`), [`compile_friendly`] (the seed's sampling of the grid), [`outputs`] (its
//! three files).
//!
//! [`ScanBackend`]: crate::suites::scan::ScanBackend
//! [`Suite`]: replay_core::suite::Suite

pub mod check;
pub mod command;
pub mod compile_friendly;
pub mod grid;
pub mod inputs;
pub mod memory_estimate;
pub mod merge;
pub mod outputs;
pub mod rows;
pub mod skip_rule;
pub mod suite;

pub use command::ScanCommand;
pub use grid::{ScanCase, ScanGrid};
pub use outputs::ScanOutputs;
pub use suite::{case_timing, BenchSettings, ScanBenchSuite};

use replay_core::measure::{MeasureConfig, MonotonicClock};
use replay_core::shard::Shard;
use replay_core::suite::{CaseProgress, RunTally};

/// The command name a sharded run's manifest carries, and `replay merge` dispatches on.
pub const COMMAND: &str = "bench scan";

/// Runs every case of `suite`, writing each row to `outputs` as it ends; `observe` sees each
/// case once it has its row.
pub fn run(
    suite: &ScanBenchSuite,
    config: &MeasureConfig,
    outputs: &mut ScanOutputs,
    observe: impl FnMut(CaseProgress<'_, ScanCase>),
) -> replay_core::Result<RunTally> {
    replay_core::suite::run_shard(
        suite,
        Shard::WHOLE,
        &(),
        config,
        &MonotonicClock::new(),
        outputs,
        observe,
    )
}
