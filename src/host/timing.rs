//! How the host section times things: on the measurement core, with the host's monotonic clock
//! (every target here is placed on the host, on a GPU too: what is measured is the host's own
//! time, not the device's), several targets measured in interleaved rounds so that each median
//! spans the whole measurement on a machine whose speed drifts, and a [`Figure`] per target:
//! its median with the p10–p90 spread, and each round's median, from which the figures that
//! are differences of medians get a spread of their own.

use std::sync::Arc;
use std::time::Duration;

use super::error::HostError;
use crate::device::CudaDevice;
use crate::measure::interleave::measure_interleaved;
use crate::measure::{
    segment, MeasureConfig, MeasureError, MinSamples, MonotonicClock, Placement, StopCriteria,
    Target, Timer, Warmup,
};
use crate::torch::work_target::synchronize_gpu;

/// How long and how often a group of targets is measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Plan {
    /// Rounds; each target is measured once per round, in a shuffled order after the first.
    pub rounds: u32,
    /// Each target's time in one round, warm-up included.
    pub budget_per_round: Duration,
    /// Samples each target takes at least in one round.
    pub min_samples_per_round: usize,
    /// Shortest sample: shorter calls are batched up to it.
    pub min_sample_time: Duration,
    /// Most calls one sample may hold (a GPU's launch queue bounds it).
    pub max_calls_per_sample: u64,
}

impl Plan {
    /// The plan for calls of a few hundred nanoseconds to a few microseconds: 3 rounds of
    /// 25 ms per target, samples of at least 20 µs.
    pub const SHORT_CALLS: Plan = Plan {
        rounds: 3,
        budget_per_round: Duration::from_millis(25),
        min_samples_per_round: 20,
        min_sample_time: Duration::from_micros(20),
        max_calls_per_sample: 1 << 16,
    };

    /// The measurement core's configuration of one round.
    pub fn config(&self) -> MeasureConfig {
        MeasureConfig {
            warmup: Warmup {
                min_calls: 3,
                min_time: Duration::from_millis(3),
                max_time: self.budget_per_round / 2,
            },
            min_sample_time: self.min_sample_time,
            max_calls_per_sample: self.max_calls_per_sample.max(1),
            stopping: Arc::new(StopCriteria {
                min_samples: MinSamples(self.min_samples_per_round.max(2)),
                ..StopCriteria::with_budget(self.budget_per_round)
            }),
        }
    }
}

/// One target's measured cost per call, in microseconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub median_us: f64,
    pub p10_us: f64,
    pub p90_us: f64,
    /// Samples pooled over the rounds.
    pub samples: usize,
    /// Calls per sample in the last round.
    pub calls_per_sample: u64,
    /// Each round's own median, in the order of the rounds.
    pub round_medians_us: Vec<f64>,
}

impl Figure {
    /// `0.412 µs (p10–p90 0.401–0.433, 1234 samples of 55 calls)`.
    pub fn describe(&self) -> String {
        format!(
            "{} µs (p10–p90 {}–{}, {} samples of {} calls)",
            us(self.median_us),
            us(self.p10_us),
            us(self.p90_us),
            self.samples,
            self.calls_per_sample
        )
    }
}

/// A figure computed from other figures' medians (a difference, a ratio): its value from the
/// pooled medians, and its range over the rounds, each round's value from that round's medians.
#[derive(Debug, Clone, PartialEq)]
pub struct Derived {
    pub value: f64,
    pub round_min: f64,
    pub round_max: f64,
    pub rounds: usize,
}

impl Derived {
    /// `formula` applied to the figures' pooled medians and to each round's medians.
    pub fn of(figures: &[&Figure], formula: impl Fn(&[f64]) -> f64) -> Derived {
        let medians: Vec<f64> = figures.iter().map(|f| f.median_us).collect();
        let rounds = figures
            .iter()
            .map(|f| f.round_medians_us.len())
            .min()
            .unwrap_or(0);
        let per_round: Vec<f64> = (0..rounds)
            .map(|r| {
                let m: Vec<f64> = figures.iter().map(|f| f.round_medians_us[r]).collect();
                formula(&m)
            })
            .collect();
        let value = formula(&medians);
        Derived {
            value,
            round_min: per_round.iter().copied().fold(value, f64::min),
            round_max: per_round.iter().copied().fold(value, f64::max),
            rounds,
        }
    }

    /// `1.93 µs (rounds 1.88–2.01 over 3 rounds)`.
    pub fn describe(&self) -> String {
        format!(
            "{} µs (rounds {}–{} over {} rounds)",
            us(self.value),
            us(self.round_min),
            us(self.round_max),
            self.rounds
        )
    }
}

/// Microseconds to three decimals.
pub fn us(value: f64) -> String {
    format!("{value:.3}")
}

/// Measures `targets` in `plan.rounds` interleaved rounds on the measurement core
/// ([`measure_interleaved`]) and pools each target's rounds into one figure; the first
/// target that failed ends it with its error.
pub fn measure_rounds(
    targets: &mut [&mut dyn Target],
    plan: &Plan,
) -> Result<Vec<Figure>, HostError> {
    let rounds = vec![plan.config(); plan.rounds.max(1) as usize];
    measure_interleaved(targets, &rounds, &MonotonicClock::new())
        .into_iter()
        .map(|pooled| {
            let pooled = pooled?;
            let s = &pooled.measurement.summary;
            Ok(Figure {
                median_us: s.median,
                p10_us: s.p10,
                p90_us: s.p90,
                samples: s.samples,
                calls_per_sample: s.calls_per_sample,
                round_medians_us: pooled.round_medians,
            })
        })
        .collect()
}

/// Calls of a closure on the host, timed by the host's clock wherever the closure's work goes.
/// With a GPU, the GPU is synchronised before each timed batch (outside it), so that no
/// earlier work is still queued when the batch starts.
pub struct HostCalls<'d, F> {
    work: F,
    gpu: Option<&'d CudaDevice>,
}

impl<'d, F> HostCalls<'d, F>
where
    F: FnMut() -> Result<(), HostError>,
{
    pub fn new(work: F) -> Self {
        HostCalls { work, gpu: None }
    }

    /// The same calls, with the opened `gpu` (if any) synchronised before each batch.
    pub fn synchronising(work: F, gpu: Option<&'d CudaDevice>) -> Self {
        HostCalls { work, gpu }
    }
}

impl<F> Target for HostCalls<'_, F>
where
    F: FnMut() -> Result<(), HostError>,
{
    fn placement(&self) -> Placement<'_> {
        Placement::Host
    }

    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        let _guard = tch::no_grad_guard();
        for _ in 0..calls {
            (self.work)().map_err(MeasureError::target)?;
        }
        Ok(())
    }

    fn run_timed(&mut self, calls: u64, timer: &mut dyn Timer) -> Result<(), MeasureError> {
        if let Some(gpu) = self.gpu {
            synchronize_gpu(gpu)?;
        }
        segment(timer, || self.run(calls))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn figure(median: f64, rounds: &[f64]) -> Figure {
        Figure {
            median_us: median,
            p10_us: median,
            p90_us: median,
            samples: 10,
            calls_per_sample: 1,
            round_medians_us: rounds.to_vec(),
        }
    }

    #[test]
    fn a_derived_figure_spans_its_rounds() {
        let a = figure(10.0, &[9.0, 10.0, 12.0]);
        let b = figure(4.0, &[4.0, 3.0, 5.0]);
        let d = Derived::of(&[&a, &b], |m| m[0] - m[1]);
        assert_eq!(d.value, 6.0);
        assert_eq!((d.round_min, d.round_max, d.rounds), (5.0, 7.0, 3));
        assert_eq!(d.describe(), "6.000 µs (rounds 5.000–7.000 over 3 rounds)");
    }

    #[test]
    fn host_calls_are_timed_by_the_clock_in_rounds() {
        let mut spins = 0u64;
        let mut target = HostCalls::new(|| {
            // Work the compiler cannot drop: a dependent chain through black_box.
            let mut x = 1u64;
            for i in 0..200 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
            spins = spins.wrapping_add(x);
            Ok(())
        });
        let plan = Plan {
            rounds: 2,
            budget_per_round: Duration::from_millis(5),
            ..Plan::SHORT_CALLS
        };
        let figures = measure_rounds(&mut [&mut target], &plan).unwrap();
        let f = &figures[0];
        assert!(f.median_us > 0.0 && f.median_us.is_finite(), "{f:?}");
        assert!(f.p10_us <= f.median_us && f.median_us <= f.p90_us, "{f:?}");
        assert_eq!(f.round_medians_us.len(), 2);
        assert!(f.samples >= 2 * Plan::SHORT_CALLS.min_samples_per_round);
    }
}
