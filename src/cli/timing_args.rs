//! The timing flags every measuring command shares, one clap group flattened into each:
//! `--warmup`, `--min-samples`, `--noise`, `--max-time`, `--rounds`, `--cold`. Each command
//! gives them its seed's defaults and spellings with `mut_arg` (`bench scan --repeats` is
//! `--min-samples`, `bench mhc --until-stable` is `--max-time`), hides the ones it does not
//! use, and refuses them when given ([`TimingArgs::refuse`]), so a flag never silently does
//! nothing. [`TimingArgs::resolve`] fills in the command's [`Timing`] from the flags given,
//! and [`TimingArgs::to_config`] is the one way from them to a [`MeasureConfig`]; the values
//! were checked when clap parsed them, so nothing checks them again.

use std::time::Duration;

use clap::Args;

use super::value_parsers::{positive_count, positive_seconds, whole};
use replay::measure::{MeasureConfig, Timing};

#[derive(Debug, Clone, Default, Args)]
pub struct TimingArgs {
    /// Untimed calls before the first sample
    #[arg(long, value_name = "N", value_parser = whole::<u64>)]
    pub warmup: Option<u64>,

    /// Take at least this many samples (over all rounds)
    #[arg(long, value_name = "N", value_parser = positive_count)]
    pub min_samples: Option<usize>,

    /// Stop sampling once the relative standard error of the median is below this (0: never,
    /// sample until the time budget is spent)
    #[arg(long, value_name = "FRACTION", value_parser = noise_fraction)]
    pub noise: Option<f64>,

    /// Time budget per measured item, warm-up included, in seconds: sampling stops once
    /// --min-samples are taken and either the noise target is met or this is spent
    #[arg(long, value_name = "S", value_parser = positive_seconds)]
    pub max_time: Option<f64>,

    /// Split each item's budget into N rounds over all items, in a shuffled order after the
    /// first, and pool their samples: each median then spans the whole run instead of the
    /// moment the item happened to be measured, which keeps runs comparable on a machine whose
    /// speed drifts (shared or cloud machines). 1 measures each item in one go
    #[arg(long, value_name = "N", value_parser = crate::cli::value_parsers::positive::<u32>)]
    pub rounds: Option<u32>,

    /// Flush the L2 (CUDA) or last-level cache (CPU) before every sample
    #[arg(long)]
    pub cold: bool,
}

/// A fraction in [0, 1): a relative standard error (0 never stops on noise).
fn noise_fraction(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && (0.0..1.0).contains(&x) => Ok(x),
        _ => Err(format!(
            "'{text}' is not a fraction of at least 0 and below 1"
        )),
    }
}

impl TimingArgs {
    /// `defaults` (the command's seed's timing) with every flag given in its place:
    /// `--max-time` makes a fixed-runs measurement a budgeted one.
    pub fn resolve(&self, defaults: Timing) -> Timing {
        Timing {
            warmup: self.warmup.unwrap_or(defaults.warmup),
            min_samples: self.min_samples.unwrap_or(defaults.min_samples),
            noise: self.noise.unwrap_or(defaults.noise),
            // Checked by `positive_seconds`: finite, positive and below a million.
            max_time: self
                .max_time
                .map(Duration::from_secs_f64)
                .or(defaults.max_time),
            rounds: self.rounds.or(defaults.rounds),
            cold: self.cold || defaults.cold,
            ..defaults
        }
    }

    /// The measurement core's configuration of one item: [`TimingArgs::resolve`]'s.
    pub fn to_config(&self, defaults: Timing) -> MeasureConfig {
        self.resolve(defaults).config()
    }

    /// Refuses the flags of this group that `command` does not use (`names`: the flags' long
    /// names without dashes, as the group spells them), naming each.
    pub fn refuse(&self, command: &str, names: &[&str]) -> Result<(), replay::Error> {
        let given = |name: &str| match name {
            "warmup" => self.warmup.is_some(),
            "min-samples" => self.min_samples.is_some(),
            "noise" => self.noise.is_some(),
            "max-time" => self.max_time.is_some(),
            "rounds" => self.rounds.is_some(),
            "cold" => self.cold,
            _ => false,
        };
        let refused: Vec<String> = names
            .iter()
            .filter(|n| given(n))
            .map(|n| format!("--{n}"))
            .collect();
        if refused.is_empty() {
            return Ok(());
        }
        Err(replay::Error::Core(replay_core::Error::BadInput {
            path: refused.join(", ").into(),
            message: format!("`{command}` does not take this timing flag (see `{command} --help`)"),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    #[command(mut_arg("min_samples", |a| a.visible_alias("repeats").default_value("5")))]
    #[command(mut_arg("rounds", |a| a.hide(true)))]
    struct Scanlike {
        #[command(flatten)]
        timing: TimingArgs,
    }

    #[test]
    fn a_command_sets_its_defaults_and_spellings_and_refuses_what_it_does_not_use() {
        let parsed = Scanlike::try_parse_from(["x"]).unwrap();
        assert_eq!(parsed.timing.min_samples, Some(5));
        let parsed = Scanlike::try_parse_from(["x", "--repeats", "7"]).unwrap();
        assert_eq!(parsed.timing.min_samples, Some(7));
        let parsed = Scanlike::try_parse_from(["x", "--rounds", "3", "--cold"]).unwrap();
        let err = parsed
            .timing
            .refuse("bench scan", &["rounds", "cold"])
            .unwrap_err();
        assert!(err.is_usage_error());
        assert!(err.to_string().contains("--rounds, --cold"), "{err}");
        assert!(parsed.timing.refuse("bench scan", &["warmup"]).is_ok());
        assert!(Scanlike::try_parse_from(["x", "--noise", "2"]).is_err());
        assert!(Scanlike::try_parse_from(["x", "--noise", "-0.1"]).is_err());
        let never = Scanlike::try_parse_from(["x", "--noise", "0"]).unwrap();
        assert_eq!(never.timing.noise, Some(0.0));
        assert!(Scanlike::try_parse_from(["x", "--min-samples", "0"]).is_err());
    }

    #[test]
    fn the_flags_given_replace_the_commands_defaults() {
        let fixed = Timing::fixed(3, 10);
        let none = TimingArgs::default();
        assert_eq!(none.resolve(fixed), fixed);
        let given = TimingArgs {
            warmup: Some(1),
            min_samples: Some(4),
            max_time: Some(2.0),
            rounds: Some(3),
            cold: true,
            ..TimingArgs::default()
        };
        let resolved = given.resolve(fixed);
        assert_eq!((resolved.warmup, resolved.min_samples), (1, 4));
        assert_eq!(resolved.max_time, Some(Duration::from_secs(2)));
        assert_eq!((resolved.rounds, resolved.cold), (Some(3), true));
        assert_eq!(resolved.noise, fixed.noise);
        // The budget given makes the measurement a budgeted one: a cap, not exactly 4 samples.
        let config = given.to_config(fixed);
        assert_eq!(config.max_calls_per_sample, 1);
        assert!(format!("{:?}", config.stopping).contains("TimeBudget"));
    }
}
