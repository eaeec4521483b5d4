//! The two things an energy measurement hands the measurement core: the workload, to size the
//! windows ([`Workload`]), and the windows themselves ([`Windows`]). The core's warm-up and
//! batching calibrate, its stopping rule counts the windows; nothing here loops on its own.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::probe::duration_from_secs;
use super::{EnergyError, EnergyProbe, EnergyReading, Window};
use crate::measure::{
    measure, BatchTiming, MeasureConfig, MeasureError, MinSamples, MonotonicClock, Target, Warmup,
};

/// Timed batches whose fastest sets the window size.
const CALIBRATION_BATCHES: usize = 3;

/// Largest batch calibration may try (a workload that takes no measurable time at all).
const MAX_CALIBRATION_BATCH: u64 = 1 << 40;

/// The workload as a target: `calls` runs of the closure, timed on the monotonic clock.
struct Workload<'a> {
    run: &'a mut dyn FnMut() -> Result<(), EnergyError>,
}

impl Target for Workload<'_> {
    fn run_batch(&mut self, calls: u64) -> Result<BatchTiming, MeasureError> {
        let start = Instant::now();
        for _ in 0..calls {
            (self.run)().map_err(MeasureError::target)?;
        }
        let elapsed = start.elapsed();
        Ok(BatchTiming {
            device: elapsed,
            host: elapsed,
        })
    }
}

/// Runs of the closure that fill `target_s`. The measurement core warms up with at least one
/// run and grows the batch until one lasts a tenth of the target (or 50 ms, whichever is less;
/// at least 1 ms); the window is sized from the fastest of [`CALIBRATION_BATCHES`] batches of
/// that length, because one preemption inside a single timed batch would make the runs look
/// slower and every window too short.
pub(super) fn runs_to_fill(
    run: &mut dyn FnMut() -> Result<(), EnergyError>,
    target_s: f64,
) -> Result<u64, EnergyError> {
    let enough = (target_s / 10.0).clamp(0.001, 0.05);
    let config = MeasureConfig {
        warmup: Warmup::calls(1),
        min_sample_time: duration_from_secs(enough),
        max_calls_per_sample: MAX_CALIBRATION_BATCH,
        stopping: Arc::new(MinSamples(CALIBRATION_BATCHES)),
    };
    let summary =
        measure(&mut Workload { run }, &config, &MonotonicClock::new()).map_err(energy_error)?;
    let per_run = summary.min / 1e6;
    if per_run <= 0.0 {
        return Ok(summary.calls_per_sample);
    }
    let runs = (target_s / per_run).ceil();
    Ok(if runs.is_finite() && runs >= 1.0 {
        runs.min(u64::MAX as f64) as u64
    } else {
        1
    })
}

/// One busy window as measured, with its idle twin when idle power is subtracted.
pub(super) struct MeasuredWindow {
    pub busy: EnergyReading,
    pub idle: Option<EnergyReading>,
}

/// The windows as a target: each call is one busy window of `runs_per_window` runs of the
/// closure between two probe readings (and, with `idle_subtract`, an idle window of the same
/// length right after it). Its time is the busy window's length by the probe's clock.
struct Windows<'a> {
    probe: &'a mut dyn EnergyProbe,
    run: &'a mut dyn FnMut() -> Result<(), EnergyError>,
    runs_per_window: u64,
    idle_subtract: bool,
    measured: Vec<MeasuredWindow>,
}

impl Windows<'_> {
    fn window(&mut self) -> Result<Duration, EnergyError> {
        let window = Window::open(&mut *self.probe)?;
        for _ in 0..self.runs_per_window {
            (self.run)()?;
        }
        let busy = window.close()?;
        let idle = if self.idle_subtract {
            let window = Window::open(&mut *self.probe)?;
            std::thread::sleep(duration_from_secs(busy.seconds));
            Some(window.close()?)
        } else {
            None
        };
        let seconds = duration_from_secs(busy.seconds);
        self.measured.push(MeasuredWindow { busy, idle });
        Ok(seconds)
    }
}

impl Target for Windows<'_> {
    fn run_batch(&mut self, calls: u64) -> Result<BatchTiming, MeasureError> {
        let mut busy = Duration::ZERO;
        for _ in 0..calls {
            busy += self.window().map_err(MeasureError::target)?;
        }
        Ok(BatchTiming {
            device: busy,
            host: busy,
        })
    }
}

/// Measures `windows` windows of `runs_per_window` runs each: a fixed-runs measurement of the
/// core without warm-up (calibration has just run the workload), one window per sample.
pub(super) fn measure_windows(
    probe: &mut dyn EnergyProbe,
    run: &mut dyn FnMut() -> Result<(), EnergyError>,
    runs_per_window: u64,
    windows: usize,
    idle_subtract: bool,
) -> Result<Vec<MeasuredWindow>, EnergyError> {
    let mut target = Windows {
        probe,
        run,
        runs_per_window,
        idle_subtract,
        measured: Vec::with_capacity(windows),
    };
    measure(
        &mut target,
        &MeasureConfig::fixed_runs(0, windows),
        &MonotonicClock::new(),
    )
    .map_err(energy_error)?;
    Ok(target.measured)
}

/// The energy error a target raised, as it was; anything else the core says, as a settings
/// error (the core refuses only configurations).
fn energy_error(e: MeasureError) -> EnergyError {
    match e {
        MeasureError::Target(inner) => match inner.downcast::<EnergyError>() {
            Ok(energy) => *energy,
            Err(other) => EnergyError::Workload(other.to_string()),
        },
        other => EnergyError::Config(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn energy_errors_come_back_out_of_the_core_unchanged() {
        let mut failing = || -> Result<(), EnergyError> {
            Err(EnergyError::NotFinite {
                probe: "p".into(),
                value: f64::NAN,
            })
        };
        let e = runs_to_fill(&mut failing, 0.01).unwrap_err();
        assert!(matches!(e, EnergyError::NotFinite { .. }), "{e}");
    }

    #[test]
    fn a_window_size_fills_the_target_from_the_fastest_batch() {
        // 200 µs runs: a 20 ms target needs about 100 of them; preemption can only make the
        // runs look slower (fewer runs), never faster.
        let mut runs = 0u64;
        let mut spin = || -> Result<(), EnergyError> {
            runs += 1;
            let t = Instant::now();
            while t.elapsed() < Duration::from_micros(200) {}
            Ok(())
        };
        let per_window = runs_to_fill(&mut spin, 0.02).unwrap();
        assert!((20..=100).contains(&per_window), "{per_window}");
        // One warm-up run, batches growing to 2 ms (a tenth of the target), three of them: at least
        // 1 + 3 × 10 runs.
        assert!(runs > 3 * 10, "{runs}");
    }
}
