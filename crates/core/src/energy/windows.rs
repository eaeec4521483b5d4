//! The two things an energy measurement hands the measurement core: the workload, to size the
//! windows ([`Workload`]), and the windows themselves ([`Windows`]). The core's warm-up and
//! batching calibrate, its stopping rule counts the windows; nothing here loops on its own.

use std::sync::Arc;

use super::probe::duration_from_secs;
use super::{EnergyError, EnergyProbe, EnergyReading, Window};
use crate::measure::{
    measure, MeasureConfig, MeasureError, MinSamples, MonotonicClock, Placement, Target, Warmup,
};

/// Timed batches whose fastest sets the window size.
const CALIBRATION_BATCHES: usize = 3;

/// Largest batch calibration may try (a workload that takes no measurable time at all).
const MAX_CALIBRATION_BATCH: u64 = 1 << 40;

/// The workload as a target: `calls` runs of the closure, on the host (the closure waits for
/// whatever it queues on a device), so the core times it with the monotonic clock.
struct Workload<'a> {
    run: &'a mut dyn FnMut() -> Result<(), EnergyError>,
}

impl Target for Workload<'_> {
    fn placement(&self) -> Placement<'_> {
        Placement::Host
    }

    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        for _ in 0..calls {
            (self.run)().map_err(MeasureError::target)?;
        }
        Ok(())
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
/// length right after it). What counts is the windows it keeps (each busy window's length by
/// the probe's clock); the core's timing of the calls (the monotonic clock) is not used.
struct Windows<'a> {
    probe: &'a mut dyn EnergyProbe,
    run: &'a mut dyn FnMut() -> Result<(), EnergyError>,
    runs_per_window: u64,
    idle_subtract: bool,
    measured: Vec<MeasuredWindow>,
}

impl Windows<'_> {
    fn window(&mut self) -> Result<(), EnergyError> {
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
        self.measured.push(MeasuredWindow { busy, idle });
        Ok(())
    }
}

impl Target for Windows<'_> {
    fn placement(&self) -> Placement<'_> {
        Placement::Host
    }

    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        for _ in 0..calls {
            self.window().map_err(MeasureError::target)?;
        }
        Ok(())
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
    use std::time::{Duration, Instant};

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
