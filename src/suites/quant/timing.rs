//! How a row is timed: the seed's way (torch.utils.benchmark's `Timer(num_threads=1)`:
//! `timeit(100)` to warm up, then the mean of `timeit(100)`), within a budget per case, or
//! replay's stopping rule (median, sampled until its standard error is within 0.5 % or the
//! budget is spent). The CSV's `timing` column says which a file holds; `warmup_calls` and
//! `timed_calls` what each row ran.

use std::time::Duration;

use replay_core::measure::{MeasureConfig, Summary, Timing};

/// The seed's warm-up calls and timed calls.
pub const SEED_CALLS: u64 = 100;

/// The seed timing's budget per case by default (`--case-budget`): the seed's 100 + 100 calls
/// of a call up to 150 ms. On a CPU, `float8dq-row` runs 0.2–0.9 s a call, and a 24-case config
/// of small shapes took more than 15 minutes with no budget.
pub const DEFAULT_CASE_BUDGET_S: f64 = 30.0;

/// A case whose timing is expected to take longer than this, or to be cut to the budget, is
/// announced before it runs.
pub const LONG_CASE: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TimingMode {
    /// `warmup` untimed calls, then the mean of `runs` one-call samples; cut to `budget` (the
    /// warm-up to its share, the samples to the rest) where they do not fit.
    Seed {
        warmup: u64,
        runs: usize,
        budget: Duration,
    },
    /// The measurement core's rule with this budget per model; the median.
    Replay { budget: Duration },
}

impl TimingMode {
    pub fn seed() -> TimingMode {
        TimingMode::Seed {
            warmup: SEED_CALLS,
            runs: SEED_CALLS as usize,
            budget: Duration::from_secs_f64(DEFAULT_CASE_BUDGET_S),
        }
    }

    pub fn measure_config(self) -> MeasureConfig {
        match self {
            TimingMode::Seed {
                warmup,
                runs,
                budget,
            } => Timing::fixed_within(warmup, runs, budget),
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

    /// The CSV's `timing` cell (the same for every row of a run: what a row really ran is in
    /// its `warmup_calls` and `timed_calls`).
    pub fn describe(self, threads: usize) -> String {
        match self {
            TimingMode::Seed { warmup, runs, .. } => format!(
                "seed: mean of {runs} calls after {warmup} warm-up calls, {threads} thread(s)"
            ),
            TimingMode::Replay { budget } => format!(
                "replay: median, stop at 0.5 % noise or {:.2} s, {threads} thread(s)",
                budget.as_secs_f64()
            ),
        }
    }

    /// What timing a model whose call takes `one_call` costs, when that is long
    /// ([`LONG_CASE`]) or cut to the budget: the line said before the case runs.
    pub fn estimate(self, one_call: Duration) -> Option<String> {
        let TimingMode::Seed {
            warmup,
            runs,
            budget,
        } = self
        else {
            return None;
        };
        let full = one_call.mul_f64((warmup + runs as u64) as f64);
        let expected = full.min(budget);
        if expected < LONG_CASE && full <= budget {
            return None;
        }
        let what = if full <= budget {
            format!("{warmup} warm-up + {runs} timed calls")
        } else {
            let calls = |share: f64| {
                let n = (budget.as_secs_f64() * share / one_call.as_secs_f64()).ceil();
                n.max(1.0) as u64
            };
            let total = (warmup + runs as u64).max(1) as f64;
            format!(
                "cut to the {} s budget per case (--case-budget): about {} warm-up + {} \
                 timed calls of the seed's {warmup} + {runs}, {:.1} s",
                budget.as_secs_f64(),
                calls(warmup as f64 / total).min(warmup),
                calls(runs as f64 / total).min(runs as u64),
                full.as_secs_f64()
            )
        };
        Some(format!(
            "timing takes about {:.1} s (a call {:.3} s; {what})",
            expected.as_secs_f64(),
            one_call.as_secs_f64()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_case_is_announced_with_its_cut() {
        let seed = TimingMode::seed();
        // 1 ms a call: 0.2 s, nothing to say.
        assert_eq!(seed.estimate(Duration::from_millis(1)), None);
        // 100 ms: 20 s, the seed's counts fit.
        assert_eq!(
            seed.estimate(Duration::from_millis(100)).as_deref(),
            Some("timing takes about 20.0 s (a call 0.100 s; 100 warm-up + 100 timed calls)")
        );
        // 900 ms: 180 s, cut to 30 s.
        assert_eq!(
            seed.estimate(Duration::from_millis(900)).as_deref(),
            Some(
                "timing takes about 30.0 s (a call 0.900 s; cut to the 30 s budget per case \
                 (--case-budget): about 17 warm-up + 17 timed calls of the seed's 100 + 100, \
                 180.0 s)"
            )
        );
        // A short case cut to a small budget is said too.
        let small = TimingMode::Seed {
            warmup: 100,
            runs: 100,
            budget: Duration::from_millis(500),
        };
        assert_eq!(
            small.estimate(Duration::from_millis(40)).as_deref(),
            Some(
                "timing takes about 0.5 s (a call 0.040 s; cut to the 0.5 s budget per case \
                 (--case-budget): about 7 warm-up + 7 timed calls of the seed's 100 + 100, 8.0 s)"
            )
        );
        let replay = TimingMode::Replay {
            budget: Duration::from_millis(500),
        };
        assert_eq!(replay.estimate(Duration::from_secs(1)), None);
    }
}
