//! Energy along the timeline: each replayed signature's measured power over the time the
//! timeline gives it, plus the device's measured power over the time between them.
//!
//! The kernel-sum energy prediction (Σ joules per invocation × count) leaves out every
//! nanosecond in which no kernel runs: launch gaps, host work the device waits for, the
//! framework's dispatch between ops. Those gaps still draw power (an idle GPU at raised clocks,
//! a CPU package running the framework), so the sum under-predicts by roughly the share of the
//! step the gaps take. The timeline model already predicts the step's length; the gap is that
//! length less the time the timeline gives the signatures (their isolated medians), and its
//! energy is that time at the power the device draws while the host works and the device runs
//! nothing ([`measure_gap_power`]).
//!
//! A signature's energy is its measured power (joules per call over seconds per call in its
//! energy windows) times its timeline duration, rather than its joules per call as measured:
//! energy windows run calls back to back, and their time per call is a mean that carries the
//! loop's own cost and every slow call, longer than the median the timeline uses; joules taken
//! as they are would count that extra time twice (in the call and in the gap). With a
//! constant-power meter the prediction is exactly power × predicted step, so its error is the
//! timeline's latency error (up to how far the model's energy windows and its timed runs differ).

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::measure::error_percent;
use super::{measure_energy, EnergyConfig, EnergyError, EnergyProbe, EnergySummary, Spread};

/// One host-spin invocation while the gap power is measured: long enough that the loop's own
/// overhead is nothing, short enough that window calibration has many invocations to size from.
const GAP_SPIN: Duration = Duration::from_millis(1);

/// The power the device draws while the host works and the device runs nothing: the host
/// spins on one thread (what the framework's dispatch does between ops) inside energy windows
/// sized and repeated by [`measure_energy`] as for every other measurement (with the same
/// idle subtraction, so that the gap's joules and the signatures' joules are on one footing).
pub fn measure_gap_power(
    probe: &mut dyn EnergyProbe,
    config: &EnergyConfig,
) -> Result<GapPower, EnergyError> {
    let summary = measure_energy(probe, 1, config, || {
        let start = Instant::now();
        while start.elapsed() < GAP_SPIN {
            std::hint::spin_loop();
        }
        Ok::<(), std::convert::Infallible>(())
    })?;
    GapPower::from_summary(summary)
}

/// The gap power and the windows it was measured in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapPower {
    /// Net watts (joules per invocation / seconds per invocation) over the windows.
    pub watts: Spread,
    /// The measurement.
    pub summary: EnergySummary,
}

impl GapPower {
    /// Watts per window from the windows' net joules and lengths.
    pub fn from_summary(summary: EnergySummary) -> Result<GapPower, EnergyError> {
        let watts: Vec<f64> = summary
            .windows
            .iter()
            .filter(|w| w.busy.seconds > 0.0)
            .map(|w| w.net_joules / w.busy.seconds)
            .collect();
        let watts = Spread::of(&watts).ok_or_else(|| {
            EnergyError::Config("the gap-power windows were all empty".to_string())
        })?;
        Ok(GapPower { watts, summary })
    }
}

/// What one replayed signature contributes: its measured power, its duration per invocation
/// on the timeline, and how many invocations a step holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignatureEnergy {
    /// Net joules per call / seconds per call of its energy windows.
    pub watts: f64,
    /// The duration the timeline gives one invocation (the isolated median × share).
    pub seconds_per_invocation: f64,
    pub count: u64,
}

/// Energy predicted along the timeline, against the measured model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineEnergy {
    /// `signature_joules + gap_joules`.
    pub predicted_joules: f64,
    /// The full model's measured joules per run (as in the kernel-sum comparison).
    pub measured_joules: f64,
    /// `(predicted - measured) / measured × 100`; `None` when nothing was measured.
    pub error_percent: Option<f64>,
    /// Σ watts × seconds per invocation × count over the signatures.
    pub signature_joules: f64,
    /// Σ seconds per invocation × count: the part of the step the signatures take.
    pub signature_seconds: f64,
    /// The timeline's predicted step, seconds.
    pub timeline_seconds: f64,
    /// `timeline_seconds - signature_seconds`, never below 0 (signatures that overlap on
    /// several streams can cover more than the step).
    pub gap_seconds: f64,
    /// The median gap power, watts.
    pub gap_watts: f64,
    /// `gap_watts × gap_seconds`.
    pub gap_joules: f64,
}

impl TimelineEnergy {
    /// The signatures' power over their durations plus the gap power over the rest of the
    /// predicted step.
    pub fn new(
        signatures: impl IntoIterator<Item = SignatureEnergy>,
        timeline_seconds: f64,
        gap_watts: f64,
        measured_joules: f64,
    ) -> TimelineEnergy {
        let (signature_joules, signature_seconds) =
            signatures
                .into_iter()
                .fold((0.0, 0.0), |(joules, seconds), s| {
                    let n = s.count as f64;
                    (
                        joules + s.watts * s.seconds_per_invocation * n,
                        seconds + s.seconds_per_invocation * n,
                    )
                });
        let gap_seconds = (timeline_seconds - signature_seconds).max(0.0);
        let gap_joules = gap_watts * gap_seconds;
        let predicted_joules = signature_joules + gap_joules;
        TimelineEnergy {
            error_percent: error_percent(predicted_joules, measured_joules),
            predicted_joules,
            measured_joules,
            signature_joules,
            signature_seconds,
            timeline_seconds,
            gap_seconds,
            gap_watts,
            gap_joules,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::energy::{Method, ProbeResolution};

    /// A meter at constant power on replay's clock.
    struct ConstantPower {
        watts: f64,
        origin: Instant,
    }

    impl EnergyProbe for ConstantPower {
        fn name(&self) -> String {
            format!("constant {} W", self.watts)
        }
        fn resolution(&self) -> ProbeResolution {
            ProbeResolution {
                update_period_s: 0.0001,
                joules: None,
            }
        }
        fn method(&self) -> Method {
            Method::Counter
        }
        fn read_joules(&mut self) -> Result<f64, EnergyError> {
            Ok(self.watts * self.origin.elapsed().as_secs_f64())
        }
    }

    #[test]
    fn the_gap_power_of_a_constant_meter_is_its_power() {
        let mut probe = ConstantPower {
            watts: 50.0,
            origin: Instant::now(),
        };
        let gap = measure_gap_power(&mut probe, &EnergyConfig::default()).unwrap();
        assert!((gap.watts.median - 50.0).abs() < 0.5, "{:?}", gap.watts);
        assert_eq!(gap.summary.windows.len(), 3);
    }

    #[test]
    fn with_constant_power_the_energy_error_is_the_latency_error() {
        // 50 W; two signatures covering 6 ms of a predicted 10 ms step; the model measured
        // at 12.5 ms, so the timeline under-predicts latency by 20 %.
        let watts = 50.0;
        let signatures = [
            SignatureEnergy {
                watts,
                seconds_per_invocation: 0.001,
                count: 4,
            },
            SignatureEnergy {
                watts,
                seconds_per_invocation: 0.0005,
                count: 4,
            },
        ];
        let e = TimelineEnergy::new(signatures, 0.010, watts, watts * 0.0125);
        assert!((e.signature_joules - 0.3).abs() < 1e-12);
        assert!((e.signature_seconds - 0.006).abs() < 1e-12);
        assert!((e.gap_seconds - 0.004).abs() < 1e-12);
        assert!((e.gap_joules - 0.2).abs() < 1e-12);
        assert!((e.predicted_joules - 0.5).abs() < 1e-12);
        assert!((e.error_percent.unwrap() + 20.0).abs() < 1e-9);
    }

    #[test]
    fn overlapping_signatures_leave_no_negative_gap() {
        let s = SignatureEnergy {
            watts: 100.0,
            seconds_per_invocation: 0.01,
            count: 2,
        };
        let e = TimelineEnergy::new([s], 0.015, 40.0, 0.0);
        assert_eq!(e.gap_seconds, 0.0);
        assert_eq!(e.predicted_joules, 2.0);
        assert_eq!(e.error_percent, None);
    }
}
