//! How every calibration measurement is timed: through the measurement core, with the seed's
//! warm-up and trial counts (`MeasureConfig::fixed_runs`: exactly `warmup` untimed calls, then
//! `trials` samples of one call each), summarised in the seed's latency fields plus the
//! median and quartiles it lacked.

use super::CalibrateError;
use crate::measure::{measure_detailed, MeasureConfig, MonotonicClock, Target};
pub use replay_core::results::calibration::Latency;

/// The seed's warm-up and trials of one kind of measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trials {
    pub warmup: u64,
    pub trials: usize,
}

/// Times `target` with the seed's warm-up and trials on the measurement core.
pub fn time_trials(target: &mut dyn Target, trials: Trials) -> Result<Latency, CalibrateError> {
    let config = MeasureConfig::fixed_runs(trials.warmup, trials.trials.max(1));
    let measured = measure_detailed(target, &config, &MonotonicClock::new())?;
    Latency::from_samples_us(&measured.device_us)
        .ok_or_else(|| CalibrateError::Measure("no samples were taken".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_fields_follow_the_samples() {
        let l = Latency::from_samples_us(&[1000.0, 3000.0, 2000.0, 4000.0, 5000.0]).unwrap();
        assert_eq!(l.num_trials, 5);
        assert_eq!((l.min_latency_ms, l.max_latency_ms), (1.0, 5.0));
        assert_eq!(l.mean_latency_ms, 3.0);
        assert_eq!(l.median_latency_ms, 3.0);
        assert!(l.q1_latency_ms <= 2.0 && l.q3_latency_ms >= 4.0);
        // Sample standard deviation (n − 1): sqrt(2.5).
        assert!((l.std_latency_ms - 2.5f64.sqrt()).abs() < 1e-12);
        assert_eq!(l.seconds(), 0.003);
        assert!(Latency::from_samples_us(&[]).is_none());
    }
}
