//! `replay predict --steps all`: every `ProfilerStep#N` of a trace, as a distribution: the
//! median step (measured and predicted), the spread, and the steps that stand out, by their
//! step number. A trace of a long run holds many steps; one slow step (the first, a
//! checkpoint, a preemption) moves a mean but not a median, and is named rather than hidden.
//!
//! A step is an outlier when its measured time is further from the median than three robust
//! standard deviations (1.4826 × the median absolute deviation) and than 2 % of the median,
//! so that steps that all agree to the microsecond do not make noise into outliers.

use std::fmt::Write as _;

use serde::Serialize;

use super::prediction::{Prediction, StepPrediction};
use crate::trace::steps::PROFILER_STEP_PREFIX;

/// The relative distance from the median below which no step is an outlier.
pub const OUTLIER_FLOOR: f64 = 0.02;
/// Robust standard deviations from the median that make an outlier.
pub const OUTLIER_SIGMAS: f64 = 3.0;

/// A step far from the median.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepOutlier {
    /// `N` of `ProfilerStep#N` (absent for the profiled window).
    pub step: Option<u64>,
    pub name: String,
    pub measured_us: f64,
    pub predicted_us: f64,
    /// (measured − median) / median × 100.
    pub from_median_percent: f64,
}

/// Every step of a trace, summarised.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StepStatistics {
    pub steps: u64,
    pub median_measured_us: f64,
    pub median_predicted_us: f64,
    /// The median of the steps' prediction errors.
    pub median_error_percent: f64,
    pub min_measured_us: f64,
    pub max_measured_us: f64,
    /// (max − min) / median × 100.
    pub spread_percent: f64,
    /// Median absolute deviation of the measured steps from their median.
    pub mad_us: f64,
    pub outliers: Vec<StepOutlier>,
}

/// `N` of `ProfilerStep#N`.
pub fn step_number(name: &str) -> Option<u64> {
    name.strip_prefix(PROFILER_STEP_PREFIX)?.parse().ok()
}

/// Median of values (0 for none).
pub fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

/// Rounded to the nanosecond, like every time in the reports.
fn us(value: f64) -> f64 {
    (value * 1000.0).round() / 1000.0
}

impl StepStatistics {
    /// The statistics of a prediction's steps.
    pub fn of(prediction: &Prediction) -> StepStatistics {
        Self::of_steps(&prediction.steps)
    }

    pub fn of_steps(steps: &[StepPrediction]) -> StepStatistics {
        let measured: Vec<f64> = steps.iter().map(|s| s.measured_us).collect();
        let predicted: Vec<f64> = steps.iter().map(|s| s.predicted_us).collect();
        let errors: Vec<f64> = steps.iter().map(|s| s.error_percent).collect();
        let center = median(&measured);
        let deviations: Vec<f64> = measured.iter().map(|m| (m - center).abs()).collect();
        let mad = median(&deviations);
        let threshold = (OUTLIER_SIGMAS * 1.4826 * mad).max(OUTLIER_FLOOR * center);
        let (min, max) = measured
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &m| {
                (lo.min(m), hi.max(m))
            });
        let relative = |value: f64| {
            if center > 0.0 {
                100.0 * value / center
            } else {
                0.0
            }
        };
        StepStatistics {
            steps: steps.len() as u64,
            median_measured_us: us(center),
            median_predicted_us: us(median(&predicted)),
            median_error_percent: median(&errors),
            min_measured_us: if steps.is_empty() { 0.0 } else { min },
            max_measured_us: if steps.is_empty() { 0.0 } else { max },
            spread_percent: if steps.is_empty() {
                0.0
            } else {
                relative(max - min)
            },
            mad_us: us(mad),
            outliers: steps
                .iter()
                .filter(|s| (s.measured_us - center).abs() > threshold)
                .map(|s| StepOutlier {
                    step: step_number(&s.name),
                    name: s.name.clone(),
                    measured_us: s.measured_us,
                    predicted_us: s.predicted_us,
                    from_median_percent: relative(s.measured_us - center),
                })
                .collect(),
        }
    }

    /// The lines `replay predict --steps all` adds.
    pub fn summary(&self) -> String {
        let mut text = String::new();
        let _ = writeln!(
            text,
            "every step: {} step(s); median measured {:.1} us, predicted {:.1} us (median error {:+.2} %)",
            self.steps, self.median_measured_us, self.median_predicted_us, self.median_error_percent
        );
        let _ = writeln!(
            text,
            "  spread: {:.1} .. {:.1} us ({:.1} % of the median), median absolute deviation {:.1} us",
            self.min_measured_us, self.max_measured_us, self.spread_percent, self.mad_us
        );
        if self.outliers.is_empty() {
            let _ = writeln!(
                text,
                "  outliers: none (none further from the median than {OUTLIER_SIGMAS} robust \
                 deviations and {:.0} %)",
                100.0 * OUTLIER_FLOOR
            );
        } else {
            for outlier in &self.outliers {
                let _ = writeln!(
                    text,
                    "  outlier: step {} ({}) measured {:.1} us, {:+.1} % from the median (predicted {:.1} us)",
                    outlier
                        .step
                        .map_or_else(|| "-".to_owned(), |n| n.to_string()),
                    outlier.name,
                    outlier.measured_us,
                    outlier.from_median_percent,
                    outlier.predicted_us
                );
            }
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(name: &str, measured: f64, predicted: f64) -> StepPrediction {
        StepPrediction {
            name: name.into(),
            predicted_us: predicted,
            measured_us: measured,
            error_percent: 100.0 * (predicted - measured) / measured,
            kernel_sum_us: 0.0,
            kernel_sum_error_percent: 0.0,
            gpu_busy_fraction: 0.0,
            host_end_us: 0.0,
            device_end_us: 0.0,
            measured_device_tail_us: 0.0,
            device_backlog_us: 0.0,
            host_threads: 1,
            launches: 0,
            waits: 0,
            host_ops: 0,
            activities: 0,
            broken_dependencies: 0,
            uninstrumented_compiled_us: None,
        }
    }

    #[test]
    fn a_slow_step_is_named_by_its_number_and_the_median_ignores_it() {
        let steps = [
            step("ProfilerStep#10", 100.0, 98.0),
            step("ProfilerStep#11", 102.0, 99.0),
            step("ProfilerStep#12", 180.0, 101.0),
            step("ProfilerStep#13", 101.0, 100.0),
            step("ProfilerStep#14", 99.0, 97.0),
        ];
        let stats = StepStatistics::of_steps(&steps);
        assert_eq!(stats.steps, 5);
        assert_eq!(stats.median_measured_us, 101.0);
        assert_eq!(stats.median_predicted_us, 99.0);
        assert_eq!(stats.outliers.len(), 1);
        assert_eq!(stats.outliers[0].step, Some(12));
        assert!((stats.outliers[0].from_median_percent - 78.2178).abs() < 1e-3);
        assert!(stats.summary().contains("outlier: step 12"));
    }

    #[test]
    fn steps_within_the_floor_are_no_outliers() {
        let steps = [
            step("ProfilerStep#1", 100.0, 100.0),
            step("ProfilerStep#2", 100.0, 100.0),
            step("ProfilerStep#3", 101.5, 100.0),
        ];
        let stats = StepStatistics::of_steps(&steps);
        assert!(stats.outliers.is_empty(), "{stats:?}");
        assert_eq!(step_number("window"), None);
    }
}
