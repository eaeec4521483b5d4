//! Energy per invocation, measured right.
//!
//! Energy counters update slowly compared with one kernel (NVML every 10 to 100 ms, RAPL about
//! every millisecond), so a single call cannot be measured. [`measure_energy`] takes a closure
//! that runs the workload `calls` times and:
//!
//! 1. calibrates: the measurement core times the closure (warm-up of at least one run, batches
//!    growing until one lasts long enough to time, the fastest of three such batches) and
//!    derives how many runs fill a window of at least `min_update_periods` (default 100)
//!    update periods of the probe;
//! 2. measures `windows` (default 3, at least 3) windows, each repeating the closure that many
//!    times inside one [`Window`](super::Window): a fixed-runs measurement of the core, one
//!    window per sample;
//! 3. with `idle_subtract`, follows each busy window with an idle window of the same length
//!    (the thread sleeps) and subtracts the idle power times the busy window's length;
//! 4. reports joules per invocation (`joules / (runs × calls)`) with its median, min, max,
//!    mean and std over the windows, plus the probe, its resolution and the method
//!    ([`EnergySummary`]).
//!
//! The whole-model measurement is the same call with `calls = 1` and a closure running one
//! forward pass; [`EnergyComparison`] then sets the kernels' prediction against it.

use serde::{Deserialize, Serialize};

use super::windows::{self, MeasuredWindow};
use super::{EnergyError, EnergyProbe, EnergyReading, Method, ProbeResolution};
use crate::measure::stats;

/// How energy windows are sized and repeated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnergyConfig {
    /// Each window lasts at least this many update periods of the probe (default 100).
    pub min_update_periods: f64,
    /// Each window lasts at least this many seconds too (default 0).
    pub min_window_s: f64,
    /// Number of busy windows (default 3; fewer than 3 is refused).
    pub windows: usize,
    /// Measure an equal idle window after each busy one and subtract its power.
    pub idle_subtract: bool,
}

impl Default for EnergyConfig {
    fn default() -> Self {
        EnergyConfig {
            min_update_periods: 100.0,
            min_window_s: 0.0,
            windows: 3,
            idle_subtract: false,
        }
    }
}

/// Median, spread and extremes of one quantity over the windows.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    /// Sample standard deviation (n - 1).
    pub std: f64,
}

impl Spread {
    /// The spread of `values`; `None` for no values.
    pub fn of(values: &[f64]) -> Option<Spread> {
        let sorted = stats::sorted(values);
        Some(Spread {
            median: stats::median_sorted(&sorted)?,
            min: *sorted.first()?,
            max: *sorted.last()?,
            mean: stats::mean(&sorted)?,
            std: stats::std_dev(&sorted)?,
        })
    }
}

/// One busy window (and its idle twin).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnergyWindow {
    /// Invocations of the workload in the window (runs of the closure × calls).
    pub invocations: u64,
    /// The busy window as measured.
    pub busy: EnergyReading,
    /// The idle window, with `idle_subtract`.
    pub idle: Option<EnergyReading>,
    /// Busy joules less idle power × busy seconds (the busy joules without idle subtraction).
    pub net_joules: f64,
    /// `net_joules / invocations`.
    pub joules_per_invocation: f64,
    /// The window's length in probe update periods.
    pub update_periods: f64,
}

/// Energy per invocation of a workload, with how it was obtained. Carried by every result
/// that reports energy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnergySummary {
    /// The probe's name.
    pub probe: String,
    /// Counter or sampled power.
    pub method: Method,
    /// The probe's update period and energy step.
    pub resolution: ProbeResolution,
    /// Joules per invocation over the windows (idle-subtracted with `idle_subtract`).
    pub joules_per_invocation: Spread,
    /// Average power of the busy windows, watts.
    pub busy_watts: Spread,
    /// Average power of the idle windows, with `idle_subtract`.
    pub idle_watts: Option<Spread>,
    /// Whether idle power was subtracted.
    pub idle_subtracted: bool,
    /// Seconds per invocation during the busy windows (replay's clock).
    pub seconds_per_invocation: Spread,
    /// The length each window was sized to reach, seconds.
    pub window_target_s: f64,
    /// Runs of the closure per window.
    pub runs_per_window: u64,
    /// Invocations per run of the closure (`calls`).
    pub calls_per_run: u64,
    /// Every window.
    pub windows: Vec<EnergyWindow>,
}

/// Measures the energy per invocation of a workload; `run` performs `calls` invocations.
pub fn measure_energy<F, E>(
    probe: &mut dyn EnergyProbe,
    calls: u64,
    config: &EnergyConfig,
    mut run: F,
) -> Result<EnergySummary, EnergyError>
where
    F: FnMut() -> Result<(), E>,
    E: std::fmt::Display,
{
    if calls == 0 {
        return Err(EnergyError::Config(
            "calls per run must be at least 1".into(),
        ));
    }
    if config.windows < 3 {
        return Err(EnergyError::Config(format!(
            "at least 3 windows are needed for a spread, got {}",
            config.windows
        )));
    }
    if !(config.min_update_periods.is_finite() && config.min_update_periods > 0.0) {
        return Err(EnergyError::Config(format!(
            "min_update_periods must be positive, got {}",
            config.min_update_periods
        )));
    }
    let resolution = probe.resolution();
    let period = resolution.update_period_s.max(0.0);
    let target_s = (config.min_update_periods * period).max(config.min_window_s.max(0.0));

    let mut run_checked = || run().map_err(|e| EnergyError::Workload(e.to_string()));
    let runs_per_window = windows::runs_to_fill(&mut run_checked, target_s)?;
    let invocations = runs_per_window.saturating_mul(calls);

    let windows: Vec<EnergyWindow> = windows::measure_windows(
        &mut *probe,
        &mut run_checked,
        runs_per_window,
        config.windows,
        config.idle_subtract,
    )?
    .into_iter()
    .map(|MeasuredWindow { busy, idle }| {
        let net_joules = match &idle {
            Some(idle) => busy.joules - idle.average_watts * busy.seconds,
            None => busy.joules,
        };
        EnergyWindow {
            invocations,
            update_periods: if period > 0.0 {
                busy.seconds / period
            } else {
                f64::INFINITY
            },
            joules_per_invocation: net_joules / invocations as f64,
            net_joules,
            busy,
            idle,
        }
    })
    .collect();

    let spread = |f: &dyn Fn(&EnergyWindow) -> f64| {
        let values: Vec<f64> = windows.iter().map(f).collect();
        Spread::of(&values).ok_or_else(|| EnergyError::Config("no windows were measured".into()))
    };
    let joules_per_invocation = spread(&|w| w.joules_per_invocation)?;
    let busy_watts = spread(&|w| w.busy.average_watts)?;
    let seconds_per_invocation = spread(&|w| w.busy.seconds / w.invocations as f64)?;
    let idle_watts = if config.idle_subtract {
        Some(spread(&|w| {
            w.idle.as_ref().map_or(0.0, |i| i.average_watts)
        })?)
    } else {
        None
    };
    Ok(EnergySummary {
        probe: probe.name(),
        method: probe.method(),
        resolution,
        joules_per_invocation,
        busy_watts,
        idle_watts,
        idle_subtracted: config.idle_subtract,
        seconds_per_invocation,
        window_target_s: target_s,
        runs_per_window,
        calls_per_run: calls,
        windows,
    })
}

/// Predicted versus measured energy of a whole model, for the comparison report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EnergyComparison {
    /// Σ joules per invocation × count over the signatures.
    pub predicted_joules: f64,
    /// The full model's measured joules per run.
    pub measured_joules: f64,
    /// `(predicted - measured) / measured × 100`; `None` when nothing was measured.
    pub error_percent: Option<f64>,
    /// The probe, its resolution and method (from the full-model measurement).
    pub probe: String,
    pub method: Method,
    pub resolution: ProbeResolution,
}

impl EnergyComparison {
    /// Σ `joules_per_invocation × count` over `(joules_per_invocation, count)` pairs, set
    /// against the full model's median joules per run.
    pub fn new(
        per_signature: impl IntoIterator<Item = (f64, u64)>,
        full_model: &EnergySummary,
    ) -> EnergyComparison {
        let predicted_joules: f64 = per_signature.into_iter().map(|(j, n)| j * n as f64).sum();
        let measured_joules = full_model.joules_per_invocation.median;
        EnergyComparison {
            predicted_joules,
            measured_joules,
            error_percent: error_percent(predicted_joules, measured_joules),
            probe: full_model.probe.clone(),
            method: full_model.method,
            resolution: full_model.resolution,
        }
    }
}

/// `(predicted - measured) / measured × 100`; `None` when the measurement is zero or not a
/// number (nothing was measured). Every energy comparison's error.
pub(crate) fn error_percent(predicted: f64, measured: f64) -> Option<f64> {
    (measured != 0.0 && measured.is_finite()).then(|| (predicted - measured) / measured * 100.0)
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::rc::Rc;
    use std::time::{Duration, Instant};

    use super::*;

    /// Idle power over real time plus exactly what the workload adds per run.
    struct Synthetic {
        start: Instant,
        idle_watts: f64,
        busy_joules: Rc<Cell<f64>>,
        period: f64,
    }

    impl EnergyProbe for Synthetic {
        fn name(&self) -> String {
            "synthetic".into()
        }
        fn resolution(&self) -> ProbeResolution {
            ProbeResolution {
                update_period_s: self.period,
                joules: None,
            }
        }
        fn method(&self) -> Method {
            Method::Counter
        }
        fn read_joules(&mut self) -> Result<f64, EnergyError> {
            Ok(self.idle_watts * self.start.elapsed().as_secs_f64() + self.busy_joules.get())
        }
    }

    fn workload(busy: &Rc<Cell<f64>>, joules_per_run: f64) -> impl FnMut() -> Result<(), String> {
        let busy = Rc::clone(busy);
        move || {
            let t = Instant::now();
            while t.elapsed() < Duration::from_micros(200) {}
            busy.set(busy.get() + joules_per_run);
            Ok(())
        }
    }

    #[test]
    fn energy_measure_idle_subtraction_recovers_workload_energy() {
        let busy = Rc::new(Cell::new(0.0));
        let mut probe = Synthetic {
            start: Instant::now(),
            idle_watts: 30.0,
            busy_joules: Rc::clone(&busy),
            period: 0.0005,
        };
        let config = EnergyConfig {
            idle_subtract: true,
            ..EnergyConfig::default()
        };
        // Each run is 4 invocations adding 0.2 J in all: 0.05 J per invocation on top of idle.
        let s = measure_energy(&mut probe, 4, &config, workload(&busy, 0.2)).unwrap();
        assert_eq!(s.windows.len(), 3);
        assert!(s.idle_subtracted);
        let jpi = s.joules_per_invocation;
        assert!((jpi.median - 0.05).abs() < 0.05 * 0.05, "{jpi:?}");
        assert!(jpi.min <= jpi.median && jpi.median <= jpi.max);
        let idle = s.idle_watts.unwrap();
        assert!((idle.median - 30.0).abs() < 1.5, "{idle:?}");
        // Window lengths come from a calibration on the real clock; tests running beside this
        // one (2 cores) slow the calibration batches or the windows by tens of percent, so
        // only gross mis-sizing is checked here.
        for w in &s.windows {
            assert!(
                w.busy.seconds >= s.window_target_s * 0.5,
                "{} < {}",
                w.busy.seconds,
                s.window_target_s
            );
            assert!(w.update_periods >= 50.0, "{}", w.update_periods);
            assert_eq!(w.invocations, s.runs_per_window * 4);
        }
        assert!((s.window_target_s - 0.05).abs() < 1e-12);
        let json = serde_json::to_value(&s).unwrap();
        assert_eq!(json["method"], "counter");
        assert!(json["joules_per_invocation"]["std"].is_number());
    }

    #[test]
    fn energy_measure_without_idle_counts_everything() {
        let busy = Rc::new(Cell::new(0.0));
        let mut probe = Synthetic {
            start: Instant::now(),
            idle_watts: 0.0,
            busy_joules: Rc::clone(&busy),
            period: 0.0002,
        };
        let s = measure_energy(
            &mut probe,
            1,
            &EnergyConfig::default(),
            workload(&busy, 0.5),
        )
        .unwrap();
        assert!(
            (s.joules_per_invocation.median - 0.5).abs() < 1e-9,
            "{:?}",
            s.joules_per_invocation
        );
        assert!(s.joules_per_invocation.std < 1e-9);
        assert!(s.idle_watts.is_none());
    }

    #[test]
    fn energy_measure_refuses_bad_settings_and_reports_workload_errors() {
        let busy = Rc::new(Cell::new(0.0));
        let mut probe = Synthetic {
            start: Instant::now(),
            idle_watts: 1.0,
            busy_joules: Rc::clone(&busy),
            period: 0.001,
        };
        let two = EnergyConfig {
            windows: 2,
            ..EnergyConfig::default()
        };
        let e = measure_energy(&mut probe, 1, &two, workload(&busy, 0.0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("at least 3 windows"), "{e}");
        let e = measure_energy(
            &mut probe,
            0,
            &EnergyConfig::default(),
            workload(&busy, 0.0),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("at least 1"), "{e}");
        let e = measure_energy(&mut probe, 1, &EnergyConfig::default(), || {
            Err::<(), _>("cuBLAS said no")
        })
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("the measured workload failed: cuBLAS said no"),
            "{e}"
        );
    }

    #[test]
    fn energy_comparison_error_percent() {
        let summary = EnergySummary {
            probe: "p".into(),
            method: Method::SampledPower,
            resolution: ProbeResolution {
                update_period_s: 0.1,
                joules: None,
            },
            joules_per_invocation: Spread {
                median: 2.0,
                min: 2.0,
                max: 2.0,
                mean: 2.0,
                std: 0.0,
            },
            busy_watts: Spread {
                median: 1.0,
                min: 1.0,
                max: 1.0,
                mean: 1.0,
                std: 0.0,
            },
            idle_watts: None,
            idle_subtracted: false,
            seconds_per_invocation: Spread {
                median: 1.0,
                min: 1.0,
                max: 1.0,
                mean: 1.0,
                std: 0.0,
            },
            window_target_s: 10.0,
            runs_per_window: 10,
            calls_per_run: 1,
            windows: vec![],
        };
        let c = EnergyComparison::new([(0.5, 2), (0.25, 4)], &summary);
        assert_eq!(c.predicted_joules, 2.0);
        assert_eq!(c.error_percent, Some(0.0));
        let c = EnergyComparison::new([(0.5, 1)], &summary);
        assert_eq!(c.error_percent, Some(-75.0));
        assert_eq!(c.method, Method::SampledPower);
    }

    #[test]
    fn energy_spread_of_values() {
        let s = Spread::of(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!(
            (s.median, s.min, s.max, s.mean, s.std),
            (2.0, 1.0, 3.0, 2.0, 1.0)
        );
        assert!(Spread::of(&[]).is_none());
    }
}
