//! Pluggable stopping rules: given the samples so far and the time spent, continue or stop.
//!
//! Leaf rules each test one condition ([`RelativeNoise`], [`MinSamples`], [`TimeBudget`],
//! [`HardCap`]); [`StopCriteria`] combines them into the default policy:
//!
//! ```text
//! stop when   hard cap reached                          (always wins, even below min samples)
//!        or   min samples reached AND noise target met
//!        or   min samples reached AND time budget spent
//! ```
//!
//! [`MinSamples`] on its own is the fixed-runs rule: exactly N samples, nothing else stops them.
//! Any other policy can be plugged in by implementing [`StoppingRule`].

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What a rule sees after each sample.
#[derive(Debug, Clone, Copy)]
pub struct RunState<'a> {
    /// Per-call device time of every sample so far, in microseconds, in the order taken.
    pub samples: &'a [f64],
    /// Wall time since the measurement began (warm-up included), by the core's clock.
    pub elapsed: Duration,
    /// Relative standard error of the median of exactly `samples`, when the runner computed
    /// it for this state. Computing it costs a sort, so the runner does so after every sample
    /// only while there are few samples and then each time their number has grown by 1/16;
    /// in between it is `None`. A value, when present, is never stale.
    pub rse_median: Option<f64>,
}

/// Why sampling stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The relative standard error of the median reached the noise target.
    NoiseTarget,
    /// The time budget ran out.
    TimeBudget,
    /// A fixed number of samples was reached ([`MinSamples`] used on its own).
    SampleCount,
    /// The hard wall-time cap was reached.
    MaxTime,
    /// The hard sample-count cap was reached.
    MaxSamples,
}

impl fmt::Display for StopReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            StopReason::NoiseTarget => "noise target met",
            StopReason::TimeBudget => "time budget spent",
            StopReason::SampleCount => "sample count reached",
            StopReason::MaxTime => "hard time cap reached",
            StopReason::MaxSamples => "hard sample cap reached",
        })
    }
}

/// A rule's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Continue,
    Stop(StopReason),
}

/// A stopping rule. `Send + Sync + Debug` so configurations holding one can be shared and
/// printed.
pub trait StoppingRule: fmt::Debug + Send + Sync {
    /// Called after every sample.
    fn check(&self, state: &RunState<'_>) -> Decision;

    /// The relative-noise target this rule aims at, if any; the summary reports whether the
    /// final samples meet it.
    fn noise_target(&self) -> Option<f64> {
        None
    }

    /// Reject settings that cannot work (checked before any work is run).
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }
}

/// Stop once the relative standard error of the median is at most `max_rse_of_median`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RelativeNoise {
    pub max_rse_of_median: f64,
}

impl Default for RelativeNoise {
    fn default() -> Self {
        RelativeNoise {
            max_rse_of_median: 0.005,
        }
    }
}

impl StoppingRule for RelativeNoise {
    fn check(&self, state: &RunState<'_>) -> Decision {
        match state.rse_median {
            Some(rse) if rse <= self.max_rse_of_median => Decision::Stop(StopReason::NoiseTarget),
            _ => Decision::Continue,
        }
    }

    fn noise_target(&self) -> Option<f64> {
        Some(self.max_rse_of_median)
    }

    fn validate(&self) -> Result<(), String> {
        // Written to reject NaN as well as negative values.
        if self.max_rse_of_median.is_nan() || self.max_rse_of_median < 0.0 {
            return Err(format!(
                "noise target must be >= 0, got {}",
                self.max_rse_of_median
            ));
        }
        Ok(())
    }
}

/// Stop once this many samples were taken; inside [`StopCriteria`] it is the floor below
/// which nothing but the hard cap stops the run. On its own it is the fixed-runs rule (exactly
/// this many samples, whatever their noise or time: `--runs N`, see
/// [`MeasureConfig::fixed_runs`](super::MeasureConfig::fixed_runs)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MinSamples(pub usize);

impl Default for MinSamples {
    fn default() -> Self {
        MinSamples(10)
    }
}

impl StoppingRule for MinSamples {
    fn check(&self, state: &RunState<'_>) -> Decision {
        if state.samples.len() >= self.0 {
            Decision::Stop(StopReason::SampleCount)
        } else {
            Decision::Continue
        }
    }

    fn validate(&self) -> Result<(), String> {
        if self.0 == 0 {
            return Err("at least one sample is needed".into());
        }
        Ok(())
    }
}

/// A fixed number of samples within a time budget: stop at `runs` samples, or sooner once the
/// measurement (warm-up included) has used `budget` (the seeds' fixed counts where a call is
/// too slow for them: `bench quant`'s 100 + 100 calls of a 0.9 s call). At least one sample
/// is always taken, since the rule is checked after each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunsWithin {
    pub runs: MinSamples,
    pub budget: TimeBudget,
}

impl StoppingRule for RunsWithin {
    fn check(&self, state: &RunState<'_>) -> Decision {
        match self.runs.check(state) {
            Decision::Continue => self.budget.check(state),
            stop => stop,
        }
    }

    fn validate(&self) -> Result<(), String> {
        self.runs.validate()
    }
}

/// Stop once the measurement (warm-up included) has used this much wall time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeBudget(pub Duration);

impl Default for TimeBudget {
    fn default() -> Self {
        TimeBudget(Duration::from_millis(500))
    }
}

impl StoppingRule for TimeBudget {
    fn check(&self, state: &RunState<'_>) -> Decision {
        if state.elapsed >= self.0 {
            Decision::Stop(StopReason::TimeBudget)
        } else {
            Decision::Continue
        }
    }
}

/// Absolute limits, so that a very slow call cannot keep a run going for its minimum number
/// of samples forever, nor a very fast one fill memory with samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HardCap {
    pub max_time: Duration,
    pub max_samples: usize,
}

impl HardCap {
    /// The default cap for a given budget: four times the budget, 100 000 samples.
    pub fn for_budget(budget: Duration) -> Self {
        HardCap {
            max_time: budget.saturating_mul(4),
            max_samples: 100_000,
        }
    }
}

impl Default for HardCap {
    fn default() -> Self {
        HardCap::for_budget(TimeBudget::default().0)
    }
}

impl StoppingRule for HardCap {
    fn check(&self, state: &RunState<'_>) -> Decision {
        if state.samples.len() >= self.max_samples {
            Decision::Stop(StopReason::MaxSamples)
        } else if state.elapsed >= self.max_time {
            Decision::Stop(StopReason::MaxTime)
        } else {
            Decision::Continue
        }
    }

    fn validate(&self) -> Result<(), String> {
        if self.max_samples == 0 {
            return Err("the sample cap must allow at least one sample".into());
        }
        Ok(())
    }
}

/// The default policy: (noise target met OR budget spent) once min samples are reached, and
/// the hard cap at any time. See the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StopCriteria {
    pub noise: RelativeNoise,
    pub min_samples: MinSamples,
    pub budget: TimeBudget,
    pub cap: HardCap,
}

impl StopCriteria {
    /// The defaults with another time budget, and the hard cap scaled with it.
    pub fn with_budget(budget: Duration) -> Self {
        StopCriteria {
            budget: TimeBudget(budget),
            cap: HardCap::for_budget(budget),
            ..Self::default()
        }
    }
}

impl StoppingRule for StopCriteria {
    fn check(&self, state: &RunState<'_>) -> Decision {
        if let stop @ Decision::Stop(_) = self.cap.check(state) {
            return stop;
        }
        if self.min_samples.check(state) == Decision::Continue {
            return Decision::Continue;
        }
        // Noise first: when both hold, the more informative reason is that the target was met.
        if let stop @ Decision::Stop(_) = self.noise.check(state) {
            return stop;
        }
        self.budget.check(state)
    }

    fn noise_target(&self) -> Option<f64> {
        self.noise.noise_target()
    }

    fn validate(&self) -> Result<(), String> {
        self.noise.validate()?;
        self.min_samples.validate()?;
        self.cap.validate()?;
        if self.cap.max_samples < self.min_samples.0 {
            return Err(format!(
                "the sample cap ({}) is below the minimum number of samples ({})",
                self.cap.max_samples, self.min_samples.0
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(n: usize, elapsed_ms: u64, rse: Option<f64>) -> (Vec<f64>, Duration, Option<f64>) {
        (vec![1.0; n], Duration::from_millis(elapsed_ms), rse)
    }

    fn check(
        rule: &dyn StoppingRule,
        (samples, elapsed, rse_median): (Vec<f64>, Duration, Option<f64>),
    ) -> Decision {
        rule.check(&RunState {
            samples: &samples,
            elapsed,
            rse_median,
        })
    }

    #[test]
    fn defaults_are_the_documented_ones() {
        let c = StopCriteria::default();
        assert_eq!(c.noise.max_rse_of_median, 0.005);
        assert_eq!(c.min_samples.0, 10);
        assert_eq!(c.budget.0, Duration::from_millis(500));
        assert_eq!(
            c.cap,
            HardCap {
                max_time: Duration::from_secs(2),
                max_samples: 100_000
            }
        );
        assert_eq!(c.noise_target(), Some(0.005));
        assert!(c.validate().is_ok());
    }

    #[test]
    fn combined_rule_semantics() {
        let c = StopCriteria::default();
        // Quiet but too few samples: continue.
        assert_eq!(check(&c, state(9, 1, Some(0.0))), Decision::Continue);
        // Budget spent but too few samples: continue.
        assert_eq!(check(&c, state(9, 600, Some(0.1))), Decision::Continue);
        // Enough samples and quiet: noise.
        assert_eq!(
            check(&c, state(10, 1, Some(0.005))),
            Decision::Stop(StopReason::NoiseTarget)
        );
        // Enough samples, noisy, budget left: continue.
        assert_eq!(check(&c, state(10, 100, Some(0.0051))), Decision::Continue);
        // Enough samples, noise not computed for this state: only the budget can stop.
        assert_eq!(check(&c, state(10, 100, None)), Decision::Continue);
        assert_eq!(
            check(&c, state(10, 500, None)),
            Decision::Stop(StopReason::TimeBudget)
        );
        // Both met: noise is reported.
        assert_eq!(
            check(&c, state(10, 700, Some(0.001))),
            Decision::Stop(StopReason::NoiseTarget)
        );
        // The hard cap wins even below min samples.
        assert_eq!(
            check(&c, state(3, 2000, None)),
            Decision::Stop(StopReason::MaxTime)
        );
        assert_eq!(
            check(&c, state(100_000, 1, None)),
            Decision::Stop(StopReason::MaxSamples)
        );
    }

    #[test]
    fn leaf_rules() {
        assert_eq!(check(&MinSamples(3), state(2, 0, None)), Decision::Continue);
        assert_eq!(
            check(&MinSamples(3), state(3, 0, None)),
            Decision::Stop(StopReason::SampleCount)
        );
        let budget = TimeBudget(Duration::from_millis(50));
        assert_eq!(check(&budget, state(1, 49, None)), Decision::Continue);
        assert_eq!(
            check(&budget, state(1, 50, None)),
            Decision::Stop(StopReason::TimeBudget)
        );
        let noise = RelativeNoise::default();
        assert_eq!(check(&noise, state(2, 0, None)), Decision::Continue);
        assert_eq!(check(&noise, state(2, 0, Some(0.006))), Decision::Continue);
        assert_eq!(
            check(&noise, state(2, 0, Some(0.004))),
            Decision::Stop(StopReason::NoiseTarget)
        );
    }

    #[test]
    fn runs_within_a_budget_stop_at_the_count_or_the_budget() {
        let rule = RunsWithin {
            runs: MinSamples(100),
            budget: TimeBudget(Duration::from_secs(30)),
        };
        // Noise never stops it: only the count or the budget.
        assert_eq!(check(&rule, state(1, 1_000, Some(0.0))), Decision::Continue);
        assert_eq!(
            check(&rule, state(100, 1_000, None)),
            Decision::Stop(StopReason::SampleCount)
        );
        assert_eq!(
            check(&rule, state(17, 30_000, None)),
            Decision::Stop(StopReason::TimeBudget)
        );
        assert!(RunsWithin {
            runs: MinSamples(0),
            ..rule
        }
        .validate()
        .is_err());
    }

    #[test]
    fn with_budget_scales_the_cap() {
        let c = StopCriteria::with_budget(Duration::from_millis(250));
        assert_eq!(c.budget.0, Duration::from_millis(250));
        assert_eq!(c.cap.max_time, Duration::from_secs(1));
    }

    #[test]
    fn validation_rejects_unworkable_settings() {
        let zero_min = StopCriteria {
            min_samples: MinSamples(0),
            ..StopCriteria::default()
        };
        assert!(zero_min.validate().is_err());
        let nan_noise = StopCriteria {
            noise: RelativeNoise {
                max_rse_of_median: f64::NAN,
            },
            ..StopCriteria::default()
        };
        assert!(nan_noise.validate().is_err());
        let negative_noise = StopCriteria {
            noise: RelativeNoise {
                max_rse_of_median: -0.1,
            },
            ..StopCriteria::default()
        };
        assert!(negative_noise.validate().is_err());
        let cap_below_min = StopCriteria {
            cap: HardCap {
                max_time: Duration::from_secs(1),
                max_samples: 5,
            },
            ..StopCriteria::default()
        };
        assert!(cap_below_min.validate().is_err());
    }

    #[test]
    fn stop_reason_serializes_snake_case() {
        assert_eq!(
            serde_json::to_string(&StopReason::TimeBudget).unwrap(),
            "\"time_budget\""
        );
        assert_eq!(
            serde_json::to_string(&StopReason::MaxSamples).unwrap(),
            "\"max_samples\""
        );
        let back: StopReason = serde_json::from_str("\"noise_target\"").unwrap();
        assert_eq!(back, StopReason::NoiseTarget);
    }
}
