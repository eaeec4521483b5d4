//! Statistics of a set of samples, and the [`Summary`] a measurement produces.
//!
//! Definitions used throughout:
//! - **Percentiles** use linear interpolation between closest ranks, Hyndman & Fan type 7
//!   (the default of NumPy, R and Excel's `PERCENTILE.INC`): for sorted values
//!   `x[0..n]` and `p` in `[0, 1]`, `h = (n - 1) p` and
//!   `P(p) = x[floor h] + (h - floor h) (x[floor h + 1] - x[floor h])`.
//!   The median is `P(0.5)`, which is the usual median (mean of the two middle values when
//!   `n` is even).
//! - **std** is the sample standard deviation (denominator `n - 1`), 0 for a single sample.
//! - **MAD** is the median absolute deviation from the median, `median(|x - median(x)|)`,
//!   unscaled.
//! - **RSE of the median** (relative standard error) is
//!   `sqrt(pi/2) * 1.4826 * MAD / sqrt(n) / median`; see [`rse_of_median_sorted`] for why.

use serde::{Deserialize, Serialize};

use super::StopReason;

/// `sqrt(pi / 2)`: the asymptotic standard error of the sample median of a normal
/// distribution is `sqrt(pi / 2) * sigma / sqrt(n)`.
pub const MEDIAN_SE_FACTOR: f64 = 1.253_314_137_315_500_1;

/// `1 / Phi^-1(3/4)`: scales the MAD to a consistent estimate of sigma for a normal
/// distribution.
pub const MAD_TO_SIGMA: f64 = 1.482_602_218_505_602;

/// A sorted copy of `values` (total order, so the result is well defined even with NaN,
/// which sorts last; the runner never produces NaN since its samples come from durations).
pub fn sorted(values: &[f64]) -> Vec<f64> {
    let mut out = values.to_vec();
    out.sort_by(f64::total_cmp);
    out
}

/// Percentile `p` (in `[0, 1]`, clamped) of already sorted values, by linear interpolation
/// (Hyndman & Fan type 7, see the module docs). `None` for no values.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let h = last as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor();
    // `lo` is in [0, last] because p is clamped, so the casts cannot go out of range.
    let i = (lo as usize).min(last);
    let j = (i + 1).min(last);
    Some(sorted[i] + (h - lo) * (sorted[j] - sorted[i]))
}

/// Median of already sorted values. `None` for no values.
pub fn median_sorted(sorted: &[f64]) -> Option<f64> {
    percentile_sorted(sorted, 0.5)
}

/// The median of each fifth of `samples` in the order they were taken (a machine that changed
/// speed during a run shows as fifths far apart); empty for fewer than 10 samples. A remainder
/// of fewer than five samples is left out of the last fifth.
pub fn fifth_medians(samples: &[f64]) -> Vec<f64> {
    if samples.len() < 10 {
        return Vec::new();
    }
    let n = samples.len() / 5;
    samples
        .chunks(n)
        .take(5)
        .filter_map(|fifth| {
            let mut sorted = fifth.to_vec();
            sorted.sort_by(f64::total_cmp);
            median_sorted(&sorted)
        })
        .collect()
}

/// Arithmetic mean. `None` for no values.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    Some(values.iter().sum::<f64>() / values.len() as f64)
}

/// Sample standard deviation (denominator `n - 1`); 0 for one value, `None` for none.
pub fn std_dev(values: &[f64]) -> Option<f64> {
    let m = mean(values)?;
    if values.len() < 2 {
        return Some(0.0);
    }
    let ss: f64 = values.iter().map(|x| (x - m) * (x - m)).sum();
    Some((ss / (values.len() - 1) as f64).sqrt())
}

/// Median absolute deviation from the median (unscaled) of already sorted values.
pub fn mad_sorted(sorted_values: &[f64]) -> Option<f64> {
    let m = median_sorted(sorted_values)?;
    let deviations: Vec<f64> = sorted_values.iter().map(|x| (x - m).abs()).collect();
    median_sorted(&sorted(&deviations))
}

/// Relative standard error of the median of already sorted values, as a fraction of the
/// median (0.005 = 0.5 %).
///
/// Estimator: `SE(median) ~= 1 / (2 f(m) sqrt(n))` asymptotically, where `f(m)` is the
/// density at the median. Estimating `f(m)` as that of a normal distribution whose sigma is
/// estimated robustly as `1.4826 * MAD` gives
/// `SE = sqrt(pi/2) * 1.4826 * MAD / sqrt(n)`, and we divide by the median.
///
/// Why this one: timing samples have a right tail (preemption, interrupts, clock boosts);
/// a std-based error would be dominated by a few outliers that do not move the median at all,
/// whereas the MAD ignores them just as the median does. The distribution-free alternative
/// (the width of an order-statistic confidence interval for the median) needs no shape
/// assumption but with the 10-30 samples a quiet kernel gets it jumps between ranks and is
/// very coarse; the MAD-based estimate is smooth in `n`, which is what a stopping rule needs.
/// Its caveat: when more than half the samples are exactly equal (a coarse timer) the MAD is
/// 0 and so is the error; the median then really is pinned to that value to timer precision.
///
/// `None` when it cannot be estimated: fewer than 2 values, or a zero median with a nonzero
/// MAD (which needs negative values, so never happens with timings). A zero MAD gives
/// `Some(0.0)`, all-zero timings included.
pub fn rse_of_median_sorted(sorted_values: &[f64]) -> Option<f64> {
    let n = sorted_values.len();
    if n < 2 {
        return None;
    }
    let median = median_sorted(sorted_values)?;
    let mad = mad_sorted(sorted_values)?;
    if mad == 0.0 {
        return Some(0.0);
    }
    if median == 0.0 {
        return None;
    }
    Some(MEDIAN_SE_FACTOR * MAD_TO_SIGMA * mad / (n as f64).sqrt() / median.abs())
}

/// [`rse_of_median_sorted`] for values in any order.
pub fn rse_of_median(values: &[f64]) -> Option<f64> {
    rse_of_median_sorted(&sorted(values))
}

/// Descriptive statistics of one set of samples (all in the samples' unit).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    pub n: usize,
    pub min: f64,
    pub p10: f64,
    pub median: f64,
    pub p90: f64,
    pub max: f64,
    pub mean: f64,
    pub std: f64,
    pub mad: f64,
    /// Relative standard error of the median (fraction); `None` when not estimable.
    pub rse_median: Option<f64>,
}

impl Stats {
    /// Statistics of `values` (any order). `None` for no values.
    pub fn from_samples(values: &[f64]) -> Option<Stats> {
        let s = sorted(values);
        Some(Stats {
            n: s.len(),
            min: *s.first()?,
            p10: percentile_sorted(&s, 0.10)?,
            median: median_sorted(&s)?,
            p90: percentile_sorted(&s, 0.90)?,
            max: *s.last()?,
            mean: mean(&s)?,
            std: std_dev(&s)?,
            mad: mad_sorted(&s)?,
            rse_median: rse_of_median_sorted(&s),
        })
    }
}

/// The result of one measurement. Times are per call, in microseconds (the `_us` names in
/// JSON); `rse_median` and `noise_target` are fractions (0.005 = 0.5 %).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of samples taken (warm-up excluded).
    pub samples: usize,
    /// When rounds pooled more samples than a measurement keeps ([`POOL_CAP`](super::POOL_CAP)),
    /// the statistics come from this many of them, a systematic sample (every k-th, in the
    /// order taken, so each round keeps its share); absent when they come from all of them.
    /// The RSE is then that of this many samples: larger than all of them would give, never
    /// smaller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statistics_from: Option<usize>,
    /// Calls per sample: short calls are batched so a sample lasts long enough to time well;
    /// every time below is already divided by this.
    pub calls_per_sample: u64,
    /// Calls run during warm-up (not part of the statistics).
    pub warmup_calls: u64,
    /// Fastest per-call device time.
    #[serde(rename = "min_us")]
    pub min: f64,
    /// 10th percentile of the per-call device time.
    #[serde(rename = "p10_us")]
    pub p10: f64,
    /// Median per-call device time: the headline number.
    #[serde(rename = "median_us")]
    pub median: f64,
    /// 90th percentile of the per-call device time.
    #[serde(rename = "p90_us")]
    pub p90: f64,
    /// Slowest per-call device time.
    #[serde(rename = "max_us")]
    pub max: f64,
    #[serde(rename = "mean_us")]
    pub mean: f64,
    /// Sample standard deviation of the per-call device time.
    #[serde(rename = "std_us")]
    pub std: f64,
    /// Median absolute deviation of the per-call device time (unscaled).
    #[serde(rename = "mad_us")]
    pub mad: f64,
    /// Relative standard error of the median; `None` when not estimable (fewer than 2
    /// samples).
    pub rse_median: Option<f64>,
    /// The noise target of the stopping rule, when it has one.
    pub noise_target: Option<f64>,
    /// Whether the final `rse_median` is within `noise_target` (false without either).
    pub noise_target_met: bool,
    /// Which rule ended the sampling.
    pub stopped_by: StopReason,
    /// Median per-call host (dispatch) time.
    #[serde(rename = "host_median_us")]
    pub host_median: f64,
    /// Mean per-call host (dispatch) time.
    #[serde(rename = "host_mean_us")]
    pub host_mean: f64,
    /// Wall time of the whole measurement (warm-up, sample preparation and samples), by the
    /// core's clock.
    #[serde(rename = "elapsed_us")]
    pub elapsed: f64,
    /// Interleaved rounds pooled into these statistics (1 when measured in one go).
    #[serde(default = "one_round")]
    pub rounds: u32,
    /// What timed the samples, in words: the placement's timer (`monotonic clock`, `CUDA
    /// events behind a blocking kernel on replay's stream`, `CUDA events on ...` without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer: Option<String>,
    /// Timed segments (warm-up included) whose blocking kernel gave up waiting for the host
    /// (see [`BatchTiming::blocking_timeouts`](super::BatchTiming)); the timer queues none
    /// behind it after the first, so later samples are timed as without it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub blocking_timeouts: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Serde default of a `rounds` field written before rounds existed.
pub(crate) fn one_round() -> u32 {
    1
}

#[cfg(test)]
mod tests {
    #[test]
    fn fifth_medians_are_each_fifths_median_in_run_order() {
        // 12 samples: fifths of 2 ([1,3], [10,20], [5,5], [7,9], [2,4]); the last two left out.
        let s = [
            1.0, 3.0, 10.0, 20.0, 5.0, 5.0, 9.0, 7.0, 4.0, 2.0, 99.0, 99.0,
        ];
        assert_eq!(fifth_medians(&s), vec![2.0, 15.0, 5.0, 8.0, 3.0]);
        assert_eq!(fifth_medians(&s[..9]), Vec::<f64>::new());
    }

    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn one_to_ten_by_hand() {
        // x = 1..=10, given shuffled so sorting is exercised.
        let x = [7.0, 3.0, 10.0, 1.0, 5.0, 9.0, 2.0, 8.0, 6.0, 4.0];
        let s = Stats::from_samples(&x).unwrap();
        assert_eq!(s.n, 10);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 10.0);
        // median: h = 9 * 0.5 = 4.5 -> x[4] + 0.5 (x[5] - x[4]) = 5 + 0.5 = 5.5
        assert!(close(s.median, 5.5), "{}", s.median);
        // p10: h = 0.9 -> 1 + 0.9 * (2 - 1) = 1.9;  p90: h = 8.1 -> 9 + 0.1 * 1 = 9.1
        assert!(close(s.p10, 1.9), "{}", s.p10);
        assert!(close(s.p90, 9.1), "{}", s.p90);
        assert!(close(s.mean, 5.5));
        // sum of squared deviations = 2 (0.25 + 2.25 + 6.25 + 12.25 + 20.25) = 82.5;
        // std = sqrt(82.5 / 9) = 3.0276503540974917
        assert!(close(s.std, 3.027_650_354_097_491_7), "{}", s.std);
        // |x - 5.5| sorted = 0.5 0.5 1.5 1.5 2.5 2.5 3.5 3.5 4.5 4.5 -> MAD = 2.5
        assert!(close(s.mad, 2.5));
        // rse = 1.2533141373155 * 1.482602218505602 * 2.5 / sqrt(10) / 5.5
        //     = 1.858166320468395 * 2.5 / 3.1622776601683795 / 5.5 = 0.267092629277022
        let rse = s.rse_median.unwrap();
        assert!((rse - 0.267_092_629_277_022).abs() < 1e-12, "{rse}");
    }

    #[test]
    fn classic_eight_values_by_hand() {
        let x = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let s = Stats::from_samples(&x).unwrap();
        // median = (4 + 5) / 2
        assert!(close(s.median, 4.5));
        assert!(close(s.mean, 5.0));
        // squared deviations 9 1 1 1 0 0 4 16 = 32; std = sqrt(32 / 7)
        assert!(close(s.std, (32.0f64 / 7.0).sqrt()));
        // |x - 4.5| sorted = 0.5 x5, 2.5, 2.5, 4.5 -> MAD = 0.5
        assert!(close(s.mad, 0.5));
        // rse = 1.858166320468395 * 0.5 / sqrt(8) / 4.5 = 0.07299566698753653
        let rse = s.rse_median.unwrap();
        assert!((rse - 0.072_995_666_987_536_53).abs() < 1e-12, "{rse}");
        // p10: h = 0.7 -> 2 + 0.7 * 2 = 3.4;  p90: h = 6.3 -> 7 + 0.3 * 2 = 7.6
        assert!(close(s.p10, 3.4), "{}", s.p10);
        assert!(close(s.p90, 7.6), "{}", s.p90);
    }

    #[test]
    fn an_outlier_moves_mean_and_std_but_not_median_or_its_error() {
        let x = [10.0, 1000.0, 10.0, 10.0, 10.0];
        let s = Stats::from_samples(&x).unwrap();
        assert!(close(s.median, 10.0));
        assert!(close(s.mean, 208.0));
        // squared deviations 4 * 198^2 + 792^2 = 784080; std = sqrt(784080 / 4) = 442.7414595...
        assert!(close(s.std, 442.741_459_544_958_33), "{}", s.std);
        assert_eq!(s.mad, 0.0);
        assert_eq!(s.rse_median, Some(0.0));
        // p90: h = 3.6 -> 10 + 0.6 * 990 = 604
        assert!(close(s.p90, 604.0), "{}", s.p90);
        assert!(close(s.p10, 10.0));
    }

    #[test]
    fn small_and_degenerate_inputs() {
        assert!(Stats::from_samples(&[]).is_none());
        assert_eq!(percentile_sorted(&[], 0.5), None);
        let one = Stats::from_samples(&[3.0]).unwrap();
        assert_eq!(
            (one.min, one.median, one.max, one.p10, one.p90),
            (3.0, 3.0, 3.0, 3.0, 3.0)
        );
        assert_eq!(one.std, 0.0);
        // One sample says nothing about noise.
        assert_eq!(one.rse_median, None);
        // p outside [0, 1] is clamped to the extremes.
        assert_eq!(percentile_sorted(&[1.0, 2.0, 4.0], -1.0), Some(1.0));
        assert_eq!(percentile_sorted(&[1.0, 2.0, 4.0], 1.0), Some(4.0));
        assert_eq!(percentile_sorted(&[1.0, 2.0, 4.0], 0.75), Some(3.0));
        // All-zero timings: perfectly stable, not undefined.
        assert_eq!(rse_of_median(&[0.0, 0.0, 0.0]), Some(0.0));
        // Timings are never negative, so a zero median means more than half the samples are
        // zero, hence a zero MAD: still "stable", not undefined.
        assert_eq!(rse_of_median(&[0.0, 0.0, 0.0, 5.0, 7.0]), Some(0.0));
        // A zero median with spread (only possible with negative values): undefined.
        assert_eq!(rse_of_median(&[-2.0, -1.0, 0.0, 1.0, 2.0]), None);
        // Two samples: median 2, MAD 1 -> 1.858166320468395 / sqrt(2) / 2
        let rse = rse_of_median(&[1.0, 3.0]).unwrap();
        assert!((rse - 1.858_166_320_468_395 / 2f64.sqrt() / 2.0).abs() < 1e-12);
    }

    #[test]
    fn summary_serializes_with_unit_suffixes_and_round_trips() {
        let summary = Summary {
            samples: 12,
            statistics_from: None,
            calls_per_sample: 4,
            warmup_calls: 9,
            min: 1.0,
            p10: 1.1,
            median: 1.5,
            p90: 1.9,
            max: 2.0,
            mean: 1.5,
            std: 0.3,
            mad: 0.2,
            rse_median: Some(0.004),
            noise_target: Some(0.005),
            noise_target_met: true,
            stopped_by: StopReason::NoiseTarget,
            host_median: 0.5,
            host_mean: 0.6,
            elapsed: 1234.0,
            rounds: 3,
            timer: Some("CUDA events behind a blocking kernel on replay's stream".into()),
            blocking_timeouts: 1,
        };
        let json = serde_json::to_value(&summary).unwrap();
        for key in [
            "min_us",
            "p10_us",
            "median_us",
            "p90_us",
            "max_us",
            "mean_us",
            "std_us",
            "mad_us",
            "host_median_us",
            "host_mean_us",
            "elapsed_us",
        ] {
            assert!(json.get(key).is_some(), "missing {key} in {json}");
        }
        assert_eq!(json["stopped_by"], "noise_target");
        assert_eq!(json["median_us"], 1.5);
        assert_eq!(
            json["timer"],
            "CUDA events behind a blocking kernel on replay's stream"
        );
        assert_eq!(json["blocking_timeouts"], 1);
        let back: Summary = serde_json::from_value(json.clone()).unwrap();
        assert_eq!(back, summary);

        // A summary written before the timer was recorded reads back without one, and one
        // with no timeout leaves the count out.
        let mut old = json;
        let fields = old.as_object_mut().unwrap();
        fields.remove("timer");
        fields.remove("blocking_timeouts");
        let back: Summary = serde_json::from_value(old).unwrap();
        assert_eq!((back.timer, back.blocking_timeouts), (None, 0));
        let quiet = Summary {
            blocking_timeouts: 0,
            ..summary
        };
        let json = serde_json::to_value(&quiet).unwrap();
        assert!(json.get("blocking_timeouts").is_none(), "{json}");
    }
}
