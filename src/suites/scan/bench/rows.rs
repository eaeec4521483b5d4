//! The seed's result row (`BenchmarkResult` of `benchmarks/lib/runner.py`): its columns, in
//! its order, and how a case's outcome fills them.

use replay_core::export::rows::Row;
use replay_core::measure::Measurement;
use replay_core::suite::{CaseOutcome, CaseStatus};

use super::grid::ScanCase;
use super::memory_estimate::{gib, MemoryEstimate, MemoryModel};
use crate::suites::scan::rounding::round_like_seed;
use crate::suites::scan::status::seed_status;
use crate::suites::scan::MemoryPeak;

/// `benchmark_full.csv`'s header, exactly the seed's.
pub const COLUMNS: [&str; 20] = [
    "T",
    "K",
    "C",
    "B",
    "KC",
    "backend",
    "semiring",
    "phase",
    "time_ms_median",
    "time_ms_iqr_low",
    "time_ms_iqr_high",
    "time_per_position_ms",
    "peak_allocated_gb",
    "peak_reserved_gb",
    "status",
    "error_msg",
    "memory_potentials_gb",
    "memory_dp_state_gb",
    "memory_workspace_gb",
    "memory_autograd_gb",
];

/// The seed keeps the first 100 characters of an error message.
pub const ERROR_MSG_CHARS: usize = 100;

/// The seed's quartiles of its timings: `q1 = sorted[n // 4]`, `q3 = sorted[3n // 4]`, or
/// the extremes below 4 samples (order statistics, not interpolated percentiles). Our
/// samples are per-call times, each the mean of one batch of calls (one call each when a
/// call lasts more than 20 µs), where the seed's were single calls.
pub fn seed_quartiles(samples_us: &[f64]) -> Option<(f64, f64)> {
    let sorted = replay_core::measure::stats::sorted(samples_us);
    let n = sorted.len();
    match n {
        0 => None,
        1..=3 => Some((sorted[0], sorted[n - 1])),
        _ => Some((sorted[n / 4], sorted[3 * n / 4])),
    }
}

/// The row of `case`: timings from `outcome` when measured, `peak` when the backend measured
/// one (`None`: empty cells), and the seed's memory estimates on every row.
pub fn row(case: &ScanCase, outcome: &CaseOutcome, peak: Option<MemoryPeak>) -> Row {
    let estimate = MemoryEstimate::new(
        MemoryModel::of_backend(&case.backend_name),
        case.t,
        case.k,
        case.c,
        case.b,
    );
    let gb = |bytes: u64| round_like_seed(gib(bytes), 3);
    let (median, low, high, per_position) = match outcome {
        CaseOutcome::Measured(m) => timings(m, case.t),
        CaseOutcome::Failed(_) => (None, None, None, None),
    };
    let error_msg = match outcome {
        CaseOutcome::Measured(_) => String::new(),
        CaseOutcome::Failed(e) => e.message.chars().take(ERROR_MSG_CHARS).collect(),
    };
    // Peaks are shown for measured cases only, as the seed does.
    let peak = peak.filter(|_| outcome.status() == CaseStatus::Ok);
    Row::new()
        .with("T", case.t)
        .with("K", case.k)
        .with("C", case.c)
        .with("B", case.b)
        .with("KC", case.kc())
        .with("backend", case.backend_name.clone())
        .with("semiring", case.semiring.name())
        .with("phase", case.phase.name())
        .with("time_ms_median", median)
        .with("time_ms_iqr_low", low)
        .with("time_ms_iqr_high", high)
        .with("time_per_position_ms", per_position)
        .with("peak_allocated_gb", peak.map(|p| gb(p.allocated)))
        .with("peak_reserved_gb", peak.map(|p| gb(p.reserved)))
        .with("status", seed_status(outcome.status()))
        .with("error_msg", error_msg)
        .with("memory_potentials_gb", gb(estimate.potentials))
        .with("memory_dp_state_gb", gb(estimate.dp_state))
        .with("memory_workspace_gb", gb(estimate.workspace))
        .with("memory_autograd_gb", gb(estimate.autograd))
}

type Timings = (Option<f64>, Option<f64>, Option<f64>, Option<f64>);

/// Median and the seed's quartiles in ms (2 decimals), and the median per position (4).
fn timings(m: &Measurement, t: usize) -> Timings {
    let median_ms = m.summary.median / 1e3;
    let (q1, q3) = seed_quartiles(&m.device_us).unwrap_or((m.summary.median, m.summary.median));
    (
        Some(round_like_seed(median_ms, 2)),
        Some(round_like_seed(q1 / 1e3, 2)),
        Some(round_like_seed(q3 / 1e3, 2)),
        Some(round_like_seed(median_ms / t as f64, 4)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_are_the_seeds_order_statistics() {
        // n = 5: sorted[1] and sorted[3].
        assert_eq!(seed_quartiles(&[5.0, 1.0, 4.0, 2.0, 3.0]), Some((2.0, 4.0)));
        // n = 8: sorted[2] and sorted[6].
        let eight = [8.0, 7.0, 6.0, 5.0, 4.0, 3.0, 2.0, 1.0];
        assert_eq!(seed_quartiles(&eight), Some((3.0, 7.0)));
        // Fewer than 4: the extremes.
        assert_eq!(seed_quartiles(&[3.0, 1.0]), Some((1.0, 3.0)));
        assert_eq!(seed_quartiles(&[]), None);
    }
}
