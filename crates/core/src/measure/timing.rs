//! [`Timing`]: how a measuring command times each item, as its timing flags say (`--warmup`,
//! `--min-samples`, `--noise`, `--max-time`, `--rounds`, `--cold`, under each command's own
//! spellings and defaults), and the one way from them to a [`MeasureConfig`]
//! ([`Timing::config`]). Every command that measures (`isolated`, `sequence`, `scan --time`,
//! `bench scan`, `bench quant`, `bench mhc`, `full`) builds its configuration here.

use std::sync::Arc;
use std::time::Duration;

use super::interleave;
use super::runner::{MeasureConfig, Warmup};
use super::stopping::{HardCap, MinSamples, RelativeNoise, StopCriteria, TimeBudget};

/// How a budgeted measurement samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    /// An item measured on its own ([`MeasureConfig::with_time_budget`]): calls batched into
    /// samples of at least 20 µs, a warm-up of at most a quarter of the budget, a hard cap
    /// scaled with it (`isolated`, `sequence`, `scan --time`, `bench quant --timing replay`).
    Alone,
    /// A case of a suite's grid ([`MeasureConfig::until_stable`]): a warm-up of one call and
    /// 10 ms, no cap but the budget (`bench scan`, `bench mhc --max-time`).
    Grid,
    /// A seed's fixed counts kept within the budget ([`MeasureConfig::fixed_runs_within`]):
    /// `warmup` calls then `min_samples` samples of one call, or as many as fit (`bench quant`'s
    /// seed timing under `--case-budget`).
    RunsWithin,
}

/// What a measuring command was told about timing, its defaults filled in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Untimed calls before the samples of a fixed-runs measurement (no `max_time`).
    pub warmup: u64,
    /// Samples at least (over all rounds); exactly this many without `max_time`.
    pub min_samples: usize,
    /// Sampling stops once the relative standard error of the median is below this.
    pub noise: f64,
    /// The time budget per item, warm-up included; `None`: a fixed-runs measurement,
    /// `warmup` calls then exactly `min_samples` samples of one call.
    pub max_time: Option<Duration>,
    /// Interleaved rounds the budget and the minimum samples are split into
    /// ([`interleave`]); `None`: the item is measured in one go.
    pub rounds: Option<u32>,
    /// Flush the caches before every sample (one call per sample).
    pub cold: bool,
    /// Calls long enough to be timed one by one (a whole step, an mHC stage): one call per
    /// sample, and on a grid no minimum warm-up time beyond the first call.
    pub one_call_per_sample: bool,
    pub sampling: Sampling,
}

impl Timing {
    /// A fixed-runs measurement: `warmup` untimed calls, then exactly `runs` samples.
    pub fn fixed(warmup: u64, runs: usize) -> Timing {
        Timing {
            warmup,
            min_samples: runs,
            noise: RelativeNoise::default().max_rse_of_median,
            max_time: None,
            rounds: None,
            cold: false,
            one_call_per_sample: true,
            sampling: Sampling::Alone,
        }
    }

    /// An item measured alone within `budget`, with the measurement core's defaults.
    pub fn alone(budget: Duration) -> Timing {
        Timing {
            warmup: 0,
            min_samples: MinSamples::default().0,
            max_time: Some(budget),
            one_call_per_sample: false,
            ..Timing::fixed(0, 0)
        }
    }

    /// [`Timing::fixed`]'s counts, cut to what `budget` allows ([`Sampling::RunsWithin`]).
    pub fn fixed_within(warmup: u64, runs: usize, budget: Duration) -> Timing {
        Timing {
            max_time: Some(budget),
            sampling: Sampling::RunsWithin,
            ..Timing::fixed(warmup, runs)
        }
    }

    /// A grid case: at least `min_samples`, then until the median is stable or `budget` is
    /// spent.
    pub fn grid(min_samples: usize, budget: Duration) -> Timing {
        Timing {
            min_samples,
            sampling: Sampling::Grid,
            ..Timing::alone(budget)
        }
    }

    /// A time budget from seconds (a library caller's; the command line's are checked when
    /// parsed): refused unless it is a positive, finite number of seconds.
    pub fn budget(seconds: f64) -> Result<Duration, String> {
        match Duration::try_from_secs_f64(seconds) {
            Ok(budget) if seconds > 0.0 => Ok(budget),
            _ => Err("must be a positive number of seconds".into()),
        }
    }

    /// The measurement core's configuration of one item (of one round, with `rounds`).
    pub fn config(&self) -> MeasureConfig {
        let Some(budget) = self.max_time else {
            return MeasureConfig::fixed_runs(self.warmup, self.min_samples);
        };
        let (budget, min_samples) = match self.rounds {
            Some(rounds) => (
                interleave::round_budget(budget, rounds),
                interleave::round_min_samples(self.min_samples, rounds),
            ),
            None => (budget, self.min_samples),
        };
        let noise = RelativeNoise {
            max_rse_of_median: self.noise,
        };
        let mut config = match self.sampling {
            Sampling::RunsWithin => {
                MeasureConfig::fixed_runs_within(self.warmup, self.min_samples, budget)
            }
            Sampling::Alone => MeasureConfig {
                stopping: Arc::new(StopCriteria {
                    noise,
                    min_samples: MinSamples(min_samples),
                    ..StopCriteria::with_budget(budget)
                }),
                ..MeasureConfig::with_time_budget(budget)
            },
            Sampling::Grid => {
                let grid = MeasureConfig::until_stable(min_samples, budget);
                MeasureConfig {
                    // `until_stable`'s criteria with this noise target.
                    stopping: Arc::new(StopCriteria {
                        noise,
                        min_samples: MinSamples(min_samples.max(1)),
                        budget: TimeBudget(budget),
                        cap: HardCap {
                            max_time: Duration::MAX,
                            ..HardCap::default()
                        },
                    }),
                    warmup: if self.one_call_per_sample {
                        Warmup {
                            min_time: Duration::ZERO,
                            ..grid.warmup
                        }
                    } else {
                        grid.warmup
                    },
                    ..grid
                }
            }
        };
        if self.one_call_per_sample {
            config.max_calls_per_sample = 1;
        }
        if self.cold {
            config = config.cold();
        }
        config
    }
}

impl Timing {
    /// The configuration of each round of an item measured in interleaved rounds
    /// ([`interleave::measure_interleaved`]). Budgeted: `rounds` rounds of [`Timing::config`]
    /// (each a share of the budget and of the minimum samples). Fixed runs: the `min_samples`
    /// samples dealt out over `rounds` rounds (no more rounds than samples; the first rounds
    /// take one more where they do not divide), so that the rounds add up to exactly
    /// `min_samples`, with the `warmup` calls before the first round only (an item's later
    /// rounds follow the other items' work, as its samples do in the first). Without
    /// `rounds`, one round: [`Timing::config`].
    pub fn round_configs(&self) -> Vec<MeasureConfig> {
        let Some(rounds) = self.rounds else {
            return vec![self.config()];
        };
        let rounds = rounds.max(1) as usize;
        if self.max_time.is_some() {
            return vec![self.config(); rounds];
        }
        let rounds = rounds.min(self.min_samples).max(1);
        (0..rounds)
            .map(|r| {
                let share = self.min_samples / rounds + usize::from(r < self.min_samples % rounds);
                let warmup = if r == 0 { self.warmup } else { 0 };
                Timing {
                    warmup,
                    min_samples: share,
                    rounds: None,
                    ..*self
                }
                .config()
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The parts of a configuration that say how it samples (its stopping rule is a trait
    /// object: compared through the criteria it was built from).
    fn shape(c: &MeasureConfig) -> (Warmup, Duration, u64) {
        (c.warmup, c.min_sample_time, c.max_calls_per_sample)
    }

    #[test]
    fn fixed_runs_are_the_cores() {
        let want = MeasureConfig::fixed_runs(3, 10);
        let got = Timing::fixed(3, 10).config();
        assert_eq!(shape(&got), shape(&want));
        assert_eq!(
            format!("{:?}", got.stopping),
            format!("{:?}", want.stopping)
        );
    }

    #[test]
    fn fixed_runs_within_a_budget_are_the_cores() {
        let budget = Duration::from_secs(30);
        let want = MeasureConfig::fixed_runs_within(100, 100, budget);
        let got = Timing::fixed_within(100, 100, budget).config();
        assert_eq!(shape(&got), shape(&want));
        assert_eq!(
            format!("{:?}", got.stopping),
            format!("{:?}", want.stopping)
        );
    }

    #[test]
    fn an_item_alone_is_the_budgeted_default_split_into_its_rounds() {
        let budget = Duration::from_millis(500);
        let plain = Timing::alone(budget).config();
        let want = MeasureConfig::with_time_budget(budget);
        assert_eq!(shape(&plain), shape(&want));
        assert_eq!(
            format!("{:?}", plain.stopping),
            format!("{:?}", want.stopping)
        );
        // isolated: five rounds of a fifth of the budget, each with its share of the samples.
        let rounds = Timing {
            rounds: Some(5),
            noise: 0.01,
            min_samples: 10,
            cold: true,
            ..Timing::alone(budget)
        }
        .config();
        let round = Duration::from_millis(100);
        assert_eq!(rounds.warmup.max_time, round / 4);
        assert_eq!(rounds.max_calls_per_sample, 1);
        let criteria = StopCriteria {
            noise: RelativeNoise {
                max_rse_of_median: 0.01,
            },
            min_samples: MinSamples(2),
            ..StopCriteria::with_budget(round)
        };
        assert_eq!(format!("{:?}", rounds.stopping), format!("{criteria:?}"));
    }

    #[test]
    fn a_grid_case_is_until_stable_and_a_long_call_skips_the_warm_up_time() {
        let budget = Duration::from_millis(250);
        let got = Timing::grid(5, budget).config();
        let want = MeasureConfig::until_stable(5, budget);
        assert_eq!(shape(&got), shape(&want));
        assert_eq!(
            format!("{:?}", got.stopping),
            format!("{:?}", want.stopping)
        );
        let long = Timing {
            one_call_per_sample: true,
            ..Timing::grid(10, budget)
        }
        .config();
        assert_eq!(long.warmup.min_time, Duration::ZERO);
        assert_eq!(long.warmup.min_calls, want.warmup.min_calls);
        assert_eq!(long.max_calls_per_sample, 1);
    }

    #[test]
    fn fixed_runs_in_rounds_add_up_to_the_runs_with_the_warm_up_first() {
        let counts = |t: Timing| -> Vec<(u64, String)> {
            t.round_configs()
                .iter()
                .map(|c| (c.warmup.min_calls, format!("{:?}", c.stopping)))
                .collect()
        };
        let runs = |n: usize| format!("{:?}", MinSamples(n));
        let ten = Timing {
            rounds: Some(4),
            ..Timing::fixed(3, 10)
        };
        assert_eq!(
            counts(ten),
            [(3, runs(3)), (0, runs(3)), (0, runs(2)), (0, runs(2))]
        );
        // No more rounds than samples, and one round without rounds.
        let one = Timing {
            rounds: Some(10),
            ..Timing::fixed(0, 1)
        };
        assert_eq!(counts(one), [(0, runs(1))]);
        assert_eq!(counts(Timing::fixed(3, 10)), [(3, runs(10))]);
        for c in ten.round_configs() {
            assert_eq!(c.max_calls_per_sample, 1);
        }
    }

    #[test]
    fn budgeted_rounds_are_the_split_config_repeated() {
        let t = Timing {
            rounds: Some(5),
            one_call_per_sample: true,
            ..Timing::grid(10, Duration::from_millis(500))
        };
        let configs = t.round_configs();
        assert_eq!(configs.len(), 5);
        for c in &configs {
            assert_eq!(shape(c), shape(&t.config()));
            assert_eq!(
                format!("{:?}", c.stopping),
                format!("{:?}", t.config().stopping)
            );
        }
    }

    #[test]
    fn a_budget_must_be_a_positive_number_of_seconds() {
        assert_eq!(Timing::budget(0.25), Ok(Duration::from_millis(250)));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            let err = Timing::budget(bad).unwrap_err();
            assert_eq!(err, "must be a positive number of seconds", "{bad}");
        }
    }
}
