//! How a row is timed: the seed's way (torch.utils.benchmark's `Timer(num_threads=1)`:
//! `timeit(100)` to warm up, then the mean of `timeit(100)`), or replay's stopping rule
//! (median, sampled until its standard error is within 0.5 % or the budget is spent). The CSV's
//! `timing` column says which a file holds.

use std::time::Duration;

use replay_core::measure::{MeasureConfig, Summary, Timing};

/// The seed's warm-up calls and timed calls.
pub const SEED_CALLS: u64 = 100;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimingMode {
    /// `warmup` untimed calls, then the mean of `runs` one-call samples.
    Seed { warmup: u64, runs: usize },
    /// The measurement core's rule with this budget per model; the median.
    Replay { budget: Duration },
}

impl TimingMode {
    pub fn seed() -> TimingMode {
        TimingMode::Seed {
            warmup: SEED_CALLS,
            runs: SEED_CALLS as usize,
        }
    }

    pub fn measure_config(self) -> MeasureConfig {
        match self {
            TimingMode::Seed { warmup, runs } => Timing::fixed(warmup, runs),
            TimingMode::Replay { budget } => Timing::alone(budget),
        }
        .config()
    }

    /// The row's time in milliseconds: the mean for the seed's mode, the median for replay's.
    pub fn time_ms(self, summary: &Summary) -> f64 {
        match self {
            TimingMode::Seed { .. } => summary.mean / 1e3,
            TimingMode::Replay { .. } => summary.median / 1e3,
        }
    }

    /// The CSV's `timing` cell.
    pub fn describe(self, threads: usize) -> String {
        match self {
            TimingMode::Seed { warmup, runs } => format!(
                "seed: mean of {runs} calls after {warmup} warm-up calls, {threads} thread(s)"
            ),
            TimingMode::Replay { budget } => format!(
                "replay: median, stop at 0.5 % noise or {:.2} s, {threads} thread(s)",
                budget.as_secs_f64()
            ),
        }
    }
}
