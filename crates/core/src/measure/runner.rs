//! The measurement loop: warm-up and batch-size calibration, then samples until the stopping
//! rule says stop.

use std::sync::Arc;
use std::time::Duration;

use super::stats::{self, Summary};
use super::stopping::{
    Decision, HardCap, MinSamples, RunState, RunsWithin, StopCriteria, StopReason, StoppingRule,
    TimeBudget,
};
use super::summarize::{summarize, SummaryContext};
use super::{Clock, MeasureError, Measurement, Target, TimedTarget};

/// How long to warm up before sampling. Warm-up runs batches (growing them to calibrate the
/// batch size) until at least `min_calls` calls have run, at least `min_time` has passed and
/// the batch size is calibrated; or, whatever is left, once `max_time` has passed. At least
/// one batch is always run, since the per-call time must be known to choose the batch size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Warmup {
    pub min_calls: u64,
    pub min_time: Duration,
    /// A slow call must not eat the time budget in warm-up: this bounds it (by default a
    /// quarter of the default budget).
    pub max_time: Duration,
}

impl Default for Warmup {
    fn default() -> Self {
        Warmup {
            min_calls: 3,
            min_time: Duration::from_millis(10),
            max_time: Duration::from_millis(125),
        }
    }
}

impl Warmup {
    /// At least `calls` warm-up calls and whatever calibrating the batch size takes, with no
    /// time limit: exactly `calls` calls (none for 0) when every sample is one call, since
    /// there is then no batch size to calibrate.
    pub fn calls(calls: u64) -> Self {
        Warmup {
            min_calls: calls,
            min_time: Duration::ZERO,
            max_time: Duration::MAX,
        }
    }
}

/// How to measure.
#[derive(Debug, Clone)]
pub struct MeasureConfig {
    pub warmup: Warmup,
    /// Shortest acceptable sample: shorter calls are batched so one sample (one batch) lasts
    /// at least this long, which keeps timer resolution and per-batch timing overhead (event
    /// records, synchronisation) small against the work. Default 20 µs.
    pub min_sample_time: Duration,
    /// Upper bound on calls per sample. Set it to 1 for cold measurements: with caches flushed
    /// before each sample, only the first call of a batch would be cold. Default 2^20.
    pub max_calls_per_sample: u64,
    /// When to stop sampling. Default [`StopCriteria::default()`].
    pub stopping: Arc<dyn StoppingRule>,
}

impl Default for MeasureConfig {
    fn default() -> Self {
        MeasureConfig {
            warmup: Warmup::default(),
            min_sample_time: Duration::from_micros(20),
            max_calls_per_sample: 1 << 20,
            stopping: Arc::new(StopCriteria::default()),
        }
    }
}

impl MeasureConfig {
    /// The defaults with another time budget per measurement (`--max-time-per-kernel`): the
    /// hard cap scales with it and warm-up may use at most a quarter of it.
    pub fn with_time_budget(budget: Duration) -> Self {
        MeasureConfig {
            warmup: Warmup {
                max_time: budget / 4,
                ..Warmup::default()
            },
            stopping: Arc::new(StopCriteria::with_budget(budget)),
            ..Self::default()
        }
    }

    /// A fixed-runs measurement: exactly `warmup` untimed calls, then exactly `runs` samples
    /// of one call each, however long they take (`replay full --warmup W --runs N`). The stopping
    /// rule is [`MinSamples`] on its own, which stops at that count and at nothing else.
    pub fn fixed_runs(warmup: u64, runs: usize) -> Self {
        MeasureConfig {
            warmup: Warmup::calls(warmup),
            min_sample_time: Duration::ZERO,
            max_calls_per_sample: 1,
            stopping: Arc::new(MinSamples(runs)),
        }
    }

    /// [`Self::fixed_runs`] within `budget`: the same counts where they fit, else cut to it,
    /// the warm-up to its share (`warmup / (warmup + runs)` of the budget) and the samples to
    /// what is left; at least one warm-up call and one sample whatever the budget
    /// (`bench quant`'s seed timing with a budget per case). The summary's `warmup_calls` and
    /// `samples` say what was run.
    pub fn fixed_runs_within(warmup: u64, runs: usize, budget: Duration) -> Self {
        let total = warmup.saturating_add(runs as u64).max(1);
        let warmup_share = budget.mul_f64(warmup as f64 / total as f64);
        MeasureConfig {
            warmup: Warmup {
                min_calls: warmup,
                min_time: Duration::ZERO,
                max_time: warmup_share,
            },
            min_sample_time: Duration::ZERO,
            max_calls_per_sample: 1,
            stopping: Arc::new(RunsWithin {
                runs: MinSamples(runs),
                budget: TimeBudget(budget),
            }),
        }
    }

    /// Sampled until the median is stable or `budget` is spent, with at least `min_samples`
    /// samples (the suites' grids: a budget per case, no hard cap on time beyond it); warm-up
    /// of at least one call and 10 ms, at most a quarter of the budget.
    pub fn until_stable(min_samples: usize, budget: Duration) -> Self {
        MeasureConfig {
            warmup: Warmup {
                min_calls: 1,
                min_time: Duration::from_millis(10),
                max_time: budget / 4,
            },
            stopping: Arc::new(StopCriteria {
                min_samples: MinSamples(min_samples.max(1)),
                budget: TimeBudget(budget),
                cap: HardCap {
                    max_time: Duration::MAX,
                    ..HardCap::default()
                },
                ..StopCriteria::default()
            }),
            ..MeasureConfig::default()
        }
    }

    /// This configuration for cold measurements: one call per sample (see
    /// [`MeasureConfig::max_calls_per_sample`]).
    pub fn cold(self) -> Self {
        MeasureConfig {
            max_calls_per_sample: 1,
            ..self
        }
    }

    fn validate(&self) -> Result<(), MeasureError> {
        if self.max_calls_per_sample == 0 {
            return Err(MeasureError::InvalidConfig(
                "max_calls_per_sample must be at least 1".into(),
            ));
        }
        self.stopping
            .validate()
            .map_err(MeasureError::InvalidConfig)
    }
}

/// Measure `target`: pick its timer from where it runs, warm up, calibrate the batch size,
/// sample until `config.stopping` says stop, and summarise. The target's errors end this
/// measurement and are returned as they are.
pub fn measure(
    target: &mut dyn Target,
    config: &MeasureConfig,
    clock: &dyn Clock,
) -> Result<Summary, MeasureError> {
    measure_detailed(target, config, clock).map(|m| m.summary)
}

/// [`measure`], also returning the raw samples.
pub fn measure_detailed(
    target: &mut dyn Target,
    config: &MeasureConfig,
    clock: &dyn Clock,
) -> Result<Measurement, MeasureError> {
    config.validate()?;
    let start = clock.now();
    let elapsed = || clock.now().saturating_sub(start);

    let mut target = TimedTarget::new(target)?;
    let placement = target.placement();
    let timer = placement.timer_name();
    // The stream's own bound (the CUDA timer's launch queue) tightens the configuration's.
    let max_calls = placement
        .max_calls_per_sample()
        .map_or(config.max_calls_per_sample, |cap| {
            cap.clamp(1, config.max_calls_per_sample)
        });
    let warm = warm_up(&mut target, config, max_calls, &elapsed)?;
    let cps = warm.calls_per_sample;
    let rule = config.stopping.as_ref();

    let mut device_us = Vec::new();
    let mut host_us = Vec::new();
    let mut rse_computed_at = 0;
    let mut blocking_timeouts = warm.blocking_timeouts;
    let stopped_by: StopReason = loop {
        target.prepare_sample()?;
        let timing = target.batch(cps)?;
        blocking_timeouts += u64::from(timing.blocking_timeouts);
        device_us.push(per_call_us(timing.device, cps));
        host_us.push(per_call_us(timing.host, cps));

        let n = device_us.len();
        let rse_median = if rse_due(n, rse_computed_at) {
            rse_computed_at = n;
            stats::rse_of_median(&device_us)
        } else {
            None
        };
        let state = RunState {
            samples: &device_us,
            elapsed: elapsed(),
            rse_median,
        };
        if let Decision::Stop(reason) = rule.check(&state) {
            break reason;
        }
    };
    let elapsed = elapsed();
    let summary = summarize(
        &device_us,
        &host_us,
        SummaryContext {
            calls_per_sample: cps,
            warmup_calls: warm.calls,
            noise_target: rule.noise_target(),
            stopped_by,
            elapsed_us: elapsed.as_secs_f64() * 1e6,
            rounds: 1,
            timer: Some(timer),
            blocking_timeouts,
        },
    )?;
    Ok(Measurement::from_round(summary, device_us, host_us))
}

/// Aim batches this much above `min_sample_time`: the batch size is chosen from warm-up
/// timings, and the margin keeps samples above the floor under ordinary call-to-call jitter.
const BATCH_HEADROOM: f64 = 1.1;

/// A batch may grow at most this many times over the previous one during calibration, so a
/// first call inflated by a coarse timer or lazy initialisation cannot jump to an absurd size.
const MAX_GROWTH: u64 = 1000;

/// Up to this many samples the RSE is recomputed after every sample; beyond, each time the
/// count has grown by 1/16 (`RSE_GROWTH_DIVISOR`), which keeps the total cost of the sorts
/// O(n log n) overall instead of O(n^2 log n) while delaying a noise stop by at most ~6 %.
const RSE_EVERY_SAMPLE_UP_TO: usize = 64;
const RSE_GROWTH_DIVISOR: usize = 16;

fn rse_due(n: usize, last: usize) -> bool {
    n <= RSE_EVERY_SAMPLE_UP_TO || n - last >= (last / RSE_GROWTH_DIVISOR).max(1)
}

fn per_call_us(batch: Duration, calls: u64) -> f64 {
    batch.as_secs_f64() * 1e6 / calls as f64
}

struct WarmupResult {
    calls: u64,
    calls_per_sample: u64,
    blocking_timeouts: u64,
}

/// Warms up and calibrates the batch size, in `[1, max_calls]` calls per sample.
fn warm_up(
    target: &mut TimedTarget<'_>,
    config: &MeasureConfig,
    max_calls: u64,
    elapsed: &dyn Fn() -> Duration,
) -> Result<WarmupResult, MeasureError> {
    let floor = config.min_sample_time.as_secs_f64();
    // One call per sample leaves no batch size to calibrate, so a warm-up that asks for no
    // call and no time runs nothing (a fixed-runs measurement with `--warmup 0`).
    if max_calls == 1 && config.warmup.min_calls == 0 && config.warmup.min_time.is_zero() {
        return Ok(WarmupResult {
            calls: 0,
            calls_per_sample: 1,
            blocking_timeouts: 0,
        });
    }
    let mut calls: u64 = 1;
    let mut total_calls: u64 = 0;
    // Fastest per-call time seen, in seconds. The minimum (not the mean) is used to size the
    // batches so that samples stay above the floor even when warm-up saw slow calls (the first
    // call is usually the slowest: lazy initialisation, cold caches).
    let mut fastest: Option<f64> = None;
    let mut blocking_timeouts = 0;
    loop {
        let timing = target.batch(calls)?;
        blocking_timeouts += u64::from(timing.blocking_timeouts);
        total_calls = total_calls.saturating_add(calls);
        let batch = timing.device.as_secs_f64();
        if batch > 0.0 {
            let per_call = batch / calls as f64;
            fastest = Some(fastest.map_or(per_call, |f: f64| f.min(per_call)));
        }
        let calibrated = timing.device >= config.min_sample_time || calls >= max_calls;
        let spent = elapsed();
        let done =
            calibrated && total_calls >= config.warmup.min_calls && spent >= config.warmup.min_time;
        if done || spent >= config.warmup.max_time {
            break;
        }
        if !calibrated {
            calls = if batch > 0.0 {
                calls_for(floor, batch / calls as f64, max_calls)
            } else {
                calls.saturating_mul(10)
            }
            .clamp(calls.saturating_add(1), calls.saturating_mul(MAX_GROWTH))
            .min(max_calls);
        }
    }
    let calls_per_sample = match fastest {
        Some(per_call) => calls_for(floor, per_call, max_calls),
        // Every batch measured zero (a free call, or a timer coarser than the batches): the
        // largest batch tried is the best we know.
        None => calls.min(max_calls),
    };
    Ok(WarmupResult {
        calls: total_calls,
        calls_per_sample,
        blocking_timeouts,
    })
}

/// Calls needed for a batch of calls of `per_call` seconds to last `floor` seconds with
/// headroom, in `[1, max_calls]`.
fn calls_for(floor: f64, per_call: f64, max_calls: u64) -> u64 {
    // The relative slack keeps float rounding from adding a call when the ratio is a whole
    // number (20 µs * 1.1 / 0.25 µs must be 88, not 88.000000000001 -> 89).
    let wanted = (floor * BATCH_HEADROOM / per_call * (1.0 - 1e-12)).ceil();
    // `as` saturates for floats out of range (and maps NaN to 0), so this cannot wrap.
    (wanted as u64).clamp(1, max_calls.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::stopping::{HardCap, MinSamples, RelativeNoise, TimeBudget};
    use crate::measure::{
        BatchTiming, ClockTimer, DeviceStream, MonotonicClock, Placement, SyntheticClock,
        SyntheticStream, Timer,
    };

    /// Deterministic xorshift64* generator: uniform in [0, 1).
    struct XorShift(u64);

    impl XorShift {
        fn next_f64(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
            (x >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Event {
        Prepare,
        Batch(u64),
    }

    /// A fake workload on a synthetic stream: each call takes `per_call * (1 + jitter * u)`
    /// with `u` uniform in [-1, 1) on the stream's device clock, and `host_per_call` (plus
    /// `host_per_batch` once a batch) on its host clock; the runner's clock advances by the
    /// batch's device time plus a fixed per-batch overhead, and by `prepare_cost` per prepared
    /// sample.
    struct Fake {
        clock: SyntheticClock,
        stream: SyntheticStream,
        rng: XorShift,
        per_call: Duration,
        jitter: f64,
        host_per_call: Duration,
        host_per_batch: Duration,
        batch_overhead: Duration,
        prepare_cost: Duration,
        fail_on_batch: Option<usize>,
        fail_on_prepare: Option<usize>,
        events: Vec<Event>,
        batch_times: Vec<Duration>,
        // Counted as they happen (not by scanning `events`), so long runs stay linear.
        batch_count: usize,
        prepare_count: usize,
    }

    impl Fake {
        fn new(clock: &SyntheticClock, per_call: Duration, jitter: f64) -> Self {
            Fake {
                clock: clock.clone(),
                stream: SyntheticStream::new(),
                rng: XorShift(0x9e37_79b9_7f4a_7c15),
                per_call,
                jitter,
                host_per_call: Duration::from_nanos(100),
                host_per_batch: Duration::from_micros(5),
                batch_overhead: Duration::from_micros(2),
                prepare_cost: Duration::ZERO,
                fail_on_batch: None,
                fail_on_prepare: None,
                events: Vec::new(),
                batch_times: Vec::new(),
                batch_count: 0,
                prepare_count: 0,
            }
        }

        fn batches(&self) -> usize {
            self.batch_count
        }

        fn prepares(&self) -> usize {
            self.prepare_count
        }
    }

    impl Target for Fake {
        fn placement(&self) -> Placement<'_> {
            Placement::Stream(&self.stream)
        }

        fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
            assert!(calls >= 1, "the runner asked for an empty batch");
            self.events.push(Event::Batch(calls));
            self.batch_count += 1;
            if Some(self.batches()) == self.fail_on_batch {
                return Err(MeasureError::target(format!(
                    "fake failure on batch {}",
                    self.batches()
                )));
            }
            let device = if self.jitter == 0.0 {
                self.per_call * calls as u32
            } else {
                let base = self.per_call.as_secs_f64();
                let total: f64 = (0..calls)
                    .map(|_| base * (1.0 + self.jitter * (2.0 * self.rng.next_f64() - 1.0)))
                    .sum();
                Duration::from_secs_f64(total)
            };
            self.batch_times.push(device);
            self.stream.device().advance(device);
            self.stream
                .host()
                .advance(self.host_per_call * calls as u32 + self.host_per_batch);
            self.clock.advance(device + self.batch_overhead);
            Ok(())
        }

        fn prepare_sample(&mut self) -> Result<(), MeasureError> {
            self.events.push(Event::Prepare);
            self.prepare_count += 1;
            if Some(self.prepares()) == self.fail_on_prepare {
                return Err(MeasureError::target("fake flush failed"));
            }
            self.clock.advance(self.prepare_cost);
            Ok(())
        }
    }

    #[test]
    fn rounds_pool_their_samples_so_the_median_spans_both_phases() {
        // A machine that is 20 % slower in the second round: one round alone describes one
        // phase; pooled, the statistics cover both and the counters add up.
        let clock = SyntheticClock::new();
        let config = MeasureConfig::default();
        let mut fast = Fake::new(&clock, Duration::from_micros(100), 0.0);
        let mut pooled = measure_detailed(&mut fast, &config, &clock).unwrap();
        let first = pooled.summary.clone();
        let mut slow = Fake::new(&clock, Duration::from_micros(120), 0.0);
        let second = measure_detailed(&mut slow, &config, &clock).unwrap();
        let second_summary = second.summary.clone();
        pooled.add_round(second).unwrap();
        let s = &pooled.summary;
        assert_eq!(s.rounds, 2);
        assert_eq!(s.samples, first.samples + second_summary.samples);
        assert_eq!(pooled.device_us.len(), s.samples);
        assert_eq!(
            s.warmup_calls,
            first.warmup_calls + second_summary.warmup_calls
        );
        assert!((s.elapsed - (first.elapsed + second_summary.elapsed)).abs() < 1e-6);
        assert!((s.min - 100.0).abs() < 1e-9 && (s.max - 120.0).abs() < 1e-9);
        assert!(s.mean > 100.0 && s.mean < 120.0, "{}", s.mean);
        // Two equal-sized phases 20 % apart: the noise of the pooled median is far above
        // 0.5 %, and the summary says so instead of keeping the first round's verdict.
        assert!(first.noise_target_met);
        assert!(!s.noise_target_met, "{:?}", s.rse_median);
    }

    #[test]
    fn short_calls_are_batched_and_divided_back_out() {
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_nanos(250), 0.0);
        let m = measure_detailed(&mut fake, &MeasureConfig::default(), &clock).unwrap();
        let s = &m.summary;
        // 20 µs * 1.1 headroom / 0.25 µs = 88 calls.
        assert_eq!(s.calls_per_sample, 88);
        assert!(Duration::from_nanos(250) * 88 >= Duration::from_micros(20));
        // Each sample is exactly 88 * 0.25 µs of device time; divided back out, 0.25 µs.
        for &x in &m.device_us {
            assert!((x - 0.25).abs() < 1e-9, "{x}");
        }
        assert!(
            (s.median - 0.25).abs() < 1e-9
                && (s.min - 0.25).abs() < 1e-9
                && (s.max - 0.25).abs() < 1e-9
        );
        // Host time per call = 0.1 µs per call + 5 µs per batch / 88 calls.
        let host = 0.1 + 5.0 / 88.0;
        assert!((s.host_median - host).abs() < 1e-9, "{}", s.host_median);
        assert!((s.host_mean - host).abs() < 1e-9);
    }

    #[test]
    fn jittery_short_calls_give_samples_of_at_least_20_us() {
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_nanos(300), 0.10);
        let m = measure_detailed(&mut fake, &MeasureConfig::default(), &clock).unwrap();
        let cps = m.summary.calls_per_sample;
        assert!(cps > 1);
        // The sampled batches are the last `samples` batches the fake ran.
        let sampled = &fake.batch_times[fake.batch_times.len() - m.device_us.len()..];
        for (batch, &per_call) in sampled.iter().zip(&m.device_us) {
            assert!(*batch >= Duration::from_micros(20), "sample of {batch:?}");
            assert!((batch.as_secs_f64() * 1e6 / cps as f64 - per_call).abs() < 1e-9);
        }
        assert!(
            (m.summary.median - 0.3).abs() < 0.3 * 0.02,
            "{}",
            m.summary.median
        );
    }

    #[test]
    fn long_calls_are_not_batched() {
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_micros(50), 0.0);
        let s = measure(&mut fake, &MeasureConfig::default(), &clock).unwrap();
        assert_eq!(s.calls_per_sample, 1);
        assert!((s.median - 50.0).abs() < 1e-9);
    }

    #[test]
    fn a_stream_that_bounds_calls_per_sample_gets_no_more() {
        // 0.25 µs calls would be batched 88 to a sample; a stream that allows 16 (as the CUDA
        // timer bounds what queues behind its blocking kernel) gets 16, in warm-up too.
        let clock = SyntheticClock::new();
        let mut target = Fake::new(&clock, Duration::from_nanos(250), 0.0);
        target.stream = SyntheticStream::new().with_max_calls_per_sample(16);
        let s = measure(&mut target, &MeasureConfig::default(), &clock).unwrap();
        assert_eq!(s.calls_per_sample, 16);
        assert!(target
            .events
            .iter()
            .all(|e| !matches!(e, Event::Batch(calls) if *calls > 16)));
        assert_eq!(s.timer.as_deref(), Some("synthetic clocks"));
        // A cold configuration's own bound of 1 stays the tighter one.
        let mut target = Fake::new(&clock, Duration::from_nanos(250), 0.0);
        target.stream = SyntheticStream::new().with_max_calls_per_sample(16);
        let s = measure(&mut target, &MeasureConfig::default().cold(), &clock).unwrap();
        assert_eq!(s.calls_per_sample, 1);
    }

    #[test]
    fn blocking_timeouts_are_counted_from_warm_up_on_and_add_up_over_rounds() {
        let clock = SyntheticClock::new();
        let config = MeasureConfig::default();
        let mut target = Fake::new(&clock, Duration::from_micros(50), 0.0);
        // The first two segments, in warm-up: counted, though no sample timed out.
        target.stream.time_out_segments(2);
        let mut first = measure_detailed(&mut target, &config, &clock).unwrap();
        assert_eq!(first.summary.blocking_timeouts, 2);
        let stream = SyntheticStream::new();
        let mut target = Fake::new(&clock, Duration::from_micros(50), 0.0);
        target.stream = stream.clone();
        let quiet = measure_detailed(&mut target, &config, &clock).unwrap();
        assert_eq!(quiet.summary.blocking_timeouts, 0);
        first.add_round(quiet).unwrap();
        assert_eq!(first.summary.blocking_timeouts, 2);
        assert_eq!(first.summary.timer.as_deref(), Some("synthetic clocks"));
    }

    #[test]
    fn cold_config_takes_one_call_per_sample() {
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_nanos(300), 0.0);
        let s = measure(&mut fake, &MeasureConfig::default().cold(), &clock).unwrap();
        assert_eq!(s.calls_per_sample, 1);
        assert!(
            fake.events.iter().all(|e| *e != Event::Batch(2)),
            "a batch of more than one call ran"
        );
        assert!((s.median - 0.3).abs() < 1e-9);
    }

    #[test]
    fn quiet_target_stops_on_noise_at_exactly_min_samples() {
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_micros(2), 0.001);
        let m = measure_detailed(&mut fake, &MeasureConfig::default(), &clock).unwrap();
        let s = &m.summary;
        // Quiet enough from the second sample on, but min samples (10) holds it.
        assert_eq!(s.samples, 10);
        assert_eq!(s.stopped_by, StopReason::NoiseTarget);
        assert!(s.noise_target_met);
        assert_eq!(s.noise_target, Some(0.005));
        assert_eq!(s.rse_median, stats::rse_of_median(&m.device_us));
        assert!(s.rse_median.unwrap() <= 0.005);
        // Far inside the budget.
        assert!(s.elapsed < 100_000.0, "{}", s.elapsed);

        // A larger minimum is honoured too.
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_micros(2), 0.001);
        let config = MeasureConfig {
            stopping: Arc::new(StopCriteria {
                min_samples: MinSamples(25),
                ..StopCriteria::default()
            }),
            ..MeasureConfig::default()
        };
        assert_eq!(measure(&mut fake, &config, &clock).unwrap().samples, 25);
    }

    #[test]
    fn noisy_target_stops_on_budget_without_meeting_noise() {
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_millis(1), 0.5);
        let s = measure(&mut fake, &MeasureConfig::default(), &clock).unwrap();
        assert_eq!(s.stopped_by, StopReason::TimeBudget);
        assert!(!s.noise_target_met);
        assert!(s.rse_median.unwrap() > 0.005);
        assert!(s.samples > 100, "{}", s.samples);
        // Stopped at the first sample past the budget: at most one call (1.5 ms) + overhead over.
        assert!(
            s.elapsed >= 500_000.0 && s.elapsed < 501_600.0,
            "{}",
            s.elapsed
        );
        assert!((s.median - 1000.0).abs() < 50.0, "{}", s.median);
    }

    #[test]
    fn min_samples_are_honoured_when_the_budget_runs_out_first() {
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_millis(100), 0.2);
        let s = measure(&mut fake, &MeasureConfig::default(), &clock).unwrap();
        // Warm-up stops at its 125 ms cap after two calls; 10 samples take ~1 s > 0.5 s budget.
        assert_eq!(s.warmup_calls, 2);
        assert_eq!(s.samples, 10);
        assert_eq!(s.stopped_by, StopReason::TimeBudget);
        assert!(!s.noise_target_met);
        // 2 warm-up calls + 10 samples of at least 80 ms each.
        assert!(s.elapsed >= 960_000.0, "{}", s.elapsed);
    }

    #[test]
    fn hard_time_cap_stops_a_very_slow_call_below_min_samples() {
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_millis(400), 0.0);
        let s = measure(&mut fake, &MeasureConfig::default(), &clock).unwrap();
        assert_eq!(s.stopped_by, StopReason::MaxTime);
        // 1 warm-up call + 4 samples = 2.0 s (+ overhead) reaches the 2 s cap.
        assert_eq!(s.warmup_calls, 1);
        assert_eq!(s.samples, 4);
        assert!(s.elapsed >= 2_000_000.0 && s.elapsed < 2_400_000.0);
        assert!(!s.noise_target_met || s.rse_median == Some(0.0));
    }

    #[test]
    fn hard_sample_cap() {
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_micros(30), 0.3);
        let stopping = StopCriteria {
            noise: RelativeNoise {
                max_rse_of_median: 0.0,
            },
            // Far more than 50 samples' worth, yet finite, so that a broken cap fails the test
            // instead of hanging it.
            budget: TimeBudget(Duration::from_secs(1)),
            cap: HardCap {
                max_time: Duration::from_secs(1),
                max_samples: 50,
            },
            ..StopCriteria::default()
        };
        let config = MeasureConfig {
            stopping: Arc::new(stopping),
            ..MeasureConfig::default()
        };
        let s = measure(&mut fake, &config, &clock).unwrap();
        assert_eq!(s.samples, 50);
        assert_eq!(s.stopped_by, StopReason::MaxSamples);
    }

    #[test]
    fn any_rule_can_be_plugged_in() {
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_micros(30), 0.3);
        let config = MeasureConfig {
            stopping: Arc::new(MinSamples(7)),
            ..MeasureConfig::default()
        };
        let s = measure(&mut fake, &config, &clock).unwrap();
        assert_eq!(s.samples, 7);
        assert_eq!(s.stopped_by, StopReason::SampleCount);
        assert_eq!(s.noise_target, None);
        assert!(!s.noise_target_met);
    }

    #[test]
    fn prepare_runs_before_every_sample_outside_the_timed_region() {
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_micros(10), 0.0);
        fake.prepare_cost = Duration::from_millis(5);
        let m = measure_detailed(&mut fake, &MeasureConfig::default(), &clock).unwrap();
        let s = &m.summary;
        let cps = s.calls_per_sample;
        // Warm-up batches come first, without preparation; then strictly prepare, batch.
        let first_prepare = fake
            .events
            .iter()
            .position(|e| *e == Event::Prepare)
            .unwrap();
        assert!(fake.events[..first_prepare]
            .iter()
            .all(|e| matches!(e, Event::Batch(_))));
        let sampling = &fake.events[first_prepare..];
        assert_eq!(sampling.len(), 2 * s.samples);
        for pair in sampling.chunks(2) {
            assert_eq!(pair, [Event::Prepare, Event::Batch(cps)]);
        }
        assert_eq!(fake.prepares(), s.samples);
        // The 5 ms flushes are not in the samples...
        assert!((s.max - 10.0).abs() < 1e-9, "{}", s.max);
        // ...but they are in the wall time the budget sees.
        assert!(s.elapsed >= 5_000.0 * s.samples as f64);
    }

    #[test]
    fn target_errors_are_returned() {
        // In warm-up.
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_micros(1), 0.0);
        fake.fail_on_batch = Some(2);
        let err = measure(&mut fake, &MeasureConfig::default(), &clock).unwrap_err();
        assert!(matches!(err, MeasureError::Target(_)));
        assert_eq!(err.to_string(), "fake failure on batch 2");
        assert_eq!(fake.batches(), 2, "the runner went on after the error");

        // While sampling.
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_micros(50), 0.0);
        // Warm-up: 10 ms of 50 µs calls + 2 µs overhead each = ceil(10000 / 52) = 193 batches.
        let warmup_batches = 193;
        fake.fail_on_batch = Some(warmup_batches + 3);
        let err = measure(&mut fake, &MeasureConfig::default(), &clock).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("fake failure on batch {}", warmup_batches + 3)
        );
        assert_eq!(fake.prepares(), 3, "did not fail on the third sample");

        // In preparation.
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_micros(50), 0.0);
        fake.fail_on_prepare = Some(4);
        let err = measure(&mut fake, &MeasureConfig::default(), &clock).unwrap_err();
        assert_eq!(err.to_string(), "fake flush failed");
        assert_eq!(fake.prepares(), 4);
    }

    #[test]
    fn target_error_types_survive_for_downcasting() {
        #[derive(Debug, thiserror::Error)]
        #[error("device lost")]
        struct DeviceLost;

        struct Broken;
        impl Target for Broken {
            fn placement(&self) -> Placement<'_> {
                Placement::Host
            }
            fn run(&mut self, _: u64) -> Result<(), MeasureError> {
                Err(MeasureError::target(DeviceLost))
            }
        }
        let err = measure(
            &mut Broken,
            &MeasureConfig::default(),
            &SyntheticClock::new(),
        )
        .unwrap_err();
        let MeasureError::Target(inner) = err else {
            panic!("not a target error: {err}")
        };
        assert!(inner.downcast_ref::<DeviceLost>().is_some());
    }

    #[test]
    fn warm_up_runs_min_time_then_stops() {
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_micros(50), 0.0);
        fake.batch_overhead = Duration::ZERO;
        let s = measure(&mut fake, &MeasureConfig::default(), &clock).unwrap();
        // 10 ms of 50 µs calls.
        assert_eq!(s.warmup_calls, 200);

        // Fewer calls than min_calls in min_time: min_calls wins.
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_millis(20), 0.0);
        let s = measure(&mut fake, &MeasureConfig::default(), &clock).unwrap();
        assert_eq!(s.warmup_calls, 3);
    }

    #[test]
    fn zero_time_target_terminates() {
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::ZERO, 0.0);
        let config = MeasureConfig {
            max_calls_per_sample: 1024,
            ..MeasureConfig::default()
        };
        let s = measure(&mut fake, &config, &clock).unwrap();
        assert_eq!(s.calls_per_sample, 1024);
        assert_eq!(s.median, 0.0);
        assert_eq!(s.samples, 10);
        assert_eq!(s.rse_median, Some(0.0));
    }

    #[test]
    fn invalid_configuration_runs_nothing() {
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_micros(1), 0.0);
        let config = MeasureConfig {
            max_calls_per_sample: 0,
            ..MeasureConfig::default()
        };
        assert!(matches!(
            measure(&mut fake, &config, &clock),
            Err(MeasureError::InvalidConfig(_))
        ));
        let config = MeasureConfig {
            stopping: Arc::new(MinSamples(0)),
            ..MeasureConfig::default()
        };
        assert!(matches!(
            measure(&mut fake, &config, &clock),
            Err(MeasureError::InvalidConfig(_))
        ));
        assert!(fake.events.is_empty());
    }

    #[test]
    fn with_time_budget_sets_budget_cap_and_warmup() {
        let config = MeasureConfig::with_time_budget(Duration::from_secs(2));
        assert_eq!(config.warmup.max_time, Duration::from_millis(500));
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_millis(1), 0.5);
        let s = measure(&mut fake, &config, &clock).unwrap();
        assert_eq!(s.stopped_by, StopReason::TimeBudget);
        assert!(
            s.elapsed >= 2_000_000.0 && s.elapsed < 2_001_600.0,
            "{}",
            s.elapsed
        );
    }

    #[test]
    fn fixed_runs_take_exactly_the_warmups_and_runs_asked_for() {
        // 400 ms calls with 30 % jitter: the default rule would stop at its 2 s hard cap after
        // 4 samples; a fixed-runs measurement takes all 25, one call each, after 3 warm-ups.
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_millis(400), 0.3);
        let m = measure_detailed(&mut fake, &MeasureConfig::fixed_runs(3, 25), &clock).unwrap();
        let s = &m.summary;
        assert_eq!(s.warmup_calls, 3);
        assert_eq!(s.samples, 25);
        assert_eq!(m.device_us.len(), 25);
        assert_eq!(s.calls_per_sample, 1);
        assert_eq!(s.stopped_by, StopReason::SampleCount);
        assert_eq!(s.noise_target, None);
        // Warm-up first (one call a batch, never prepared), then strictly prepare, one call.
        assert_eq!(fake.events[..3], [Event::Batch(1); 3]);
        let sampling = &fake.events[3..];
        assert_eq!(sampling.len(), 50);
        for pair in sampling.chunks(2) {
            assert_eq!(pair, [Event::Prepare, Event::Batch(1)]);
        }
        // The samples are the fake's own last 25 call times, in order.
        let own: Vec<f64> = fake.batch_times[3..]
            .iter()
            .map(|t| t.as_secs_f64() * 1e6)
            .collect();
        assert_eq!(m.device_us, own);
        // 28 calls of at least 280 ms: far past every budget and cap of the default rule.
        assert!(s.elapsed >= 28.0 * 280_000.0, "{}", s.elapsed);
    }

    #[test]
    fn fixed_runs_within_a_budget_keep_their_counts_where_they_fit_and_are_cut_where_not() {
        let clock = SyntheticClock::new();
        let config = MeasureConfig::fixed_runs_within(100, 100, Duration::from_secs(30));
        // 10 ms calls: 200 of them take 2 s, well inside 30 s: the seed's counts.
        let mut quick = Fake::new(&clock, Duration::from_millis(10), 0.0);
        let s = measure(&mut quick, &config, &clock).unwrap();
        assert_eq!(
            (s.warmup_calls, s.samples, s.calls_per_sample),
            (100, 100, 1)
        );
        assert_eq!(s.stopped_by, StopReason::SampleCount);
        // 900 ms calls (bench quant's float8dq-row on a CPU): 180 s for the seed's counts.
        // Warm-up gets half the budget (17 calls reach 15 s), the samples the rest.
        let mut slow = Fake::new(&clock, Duration::from_millis(900), 0.0);
        let s = measure(&mut slow, &config, &clock).unwrap();
        assert_eq!((s.warmup_calls, s.samples), (17, 17));
        assert_eq!(s.stopped_by, StopReason::TimeBudget);
        assert!(s.elapsed < 31e6, "{}", s.elapsed);
        // A call longer than the whole budget: one warm-up call and one sample.
        let mut glacial = Fake::new(&clock, Duration::from_secs(40), 0.0);
        let s = measure(&mut glacial, &config, &clock).unwrap();
        assert_eq!((s.warmup_calls, s.samples), (1, 1));
    }

    #[test]
    fn fixed_runs_without_warmup_run_no_warmup_call() {
        // A quiet, fast call (the default rule stops it on noise at 10 samples, batched):
        // fixed runs take 40 unbatched samples and no warm-up at all.
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_micros(2), 0.001);
        let s = measure(&mut fake, &MeasureConfig::fixed_runs(0, 40), &clock).unwrap();
        assert_eq!((s.warmup_calls, s.samples, s.calls_per_sample), (0, 40, 1));
        assert_eq!(fake.events[0], Event::Prepare);
        assert_eq!(fake.batches(), 40);
        assert_eq!(fake.prepares(), 40);

        // Rounds of fixed runs pool to the sum of their runs (`replay compare`'s chunks).
        let mut pooled =
            measure_detailed(&mut fake, &MeasureConfig::fixed_runs(2, 3), &clock).unwrap();
        let round = measure_detailed(&mut fake, &MeasureConfig::fixed_runs(0, 4), &clock).unwrap();
        pooled.add_round(round).unwrap();
        assert_eq!(pooled.summary.samples, 7);
        assert_eq!(pooled.summary.warmup_calls, 2);
        assert_eq!(fake.batches(), 40 + 2 + 3 + 4);
    }

    #[test]
    fn fixed_runs_of_zero_are_refused_before_any_call() {
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_micros(1), 0.0);
        assert!(matches!(
            measure(&mut fake, &MeasureConfig::fixed_runs(5, 0), &clock),
            Err(MeasureError::InvalidConfig(_))
        ));
        assert!(fake.events.is_empty());
    }

    #[test]
    fn warmup_of_n_calls_still_calibrates_a_batched_measurement() {
        // One warm-up call asked for, no time limit: with batching allowed the warm-up goes on
        // until a batch lasts the 20 µs floor, then batches 0.25 µs calls 88 at a time.
        let clock = SyntheticClock::new();
        let mut fake = Fake::new(&clock, Duration::from_nanos(250), 0.0);
        let config = MeasureConfig {
            warmup: Warmup::calls(1),
            stopping: Arc::new(MinSamples(3)),
            ..MeasureConfig::default()
        };
        let s = measure(&mut fake, &config, &clock).unwrap();
        assert_eq!(s.calls_per_sample, 88);
        assert!(s.warmup_calls > 1, "{}", s.warmup_calls);
        assert_eq!(s.samples, 3);
        let warmup_batches: Vec<u64> = fake.events[..fake.events.len() - 6]
            .iter()
            .map(|e| match e {
                Event::Batch(calls) => *calls,
                Event::Prepare => panic!("a sample was prepared during warm-up"),
            })
            .collect();
        assert_eq!(warmup_batches.iter().sum::<u64>(), s.warmup_calls);
        // Only the last warm-up batch reached the floor.
        let last = *warmup_batches.last().unwrap();
        assert!(Duration::from_nanos(250) * last as u32 >= Duration::from_micros(20));
        assert!(warmup_batches[..warmup_batches.len() - 1]
            .iter()
            .all(|&calls| Duration::from_nanos(250) * (calls as u32) < Duration::from_micros(20)));
    }

    #[test]
    fn rse_schedule() {
        assert!((1..=64).all(|n| rse_due(n, n - 1)));
        // At 64 computed, next due at 68 (64 / 16 = 4 more).
        assert!(!rse_due(67, 64));
        assert!(rse_due(68, 64));
        assert!(!rse_due(1000 + 61, 1000));
        assert!(rse_due(1000 + 62, 1000));
    }

    #[test]
    fn calls_for_rounds_up_and_clamps() {
        // 20 µs * 1.1 / 0.3 µs = 73.33 -> 74
        assert_eq!(calls_for(20e-6, 0.3e-6, 1 << 20), 74);
        assert_eq!(calls_for(20e-6, 1.0, 1 << 20), 1);
        assert_eq!(calls_for(20e-6, 1e-15, 1000), 1000);
    }

    /// A stream whose timer is the real monotonic clock and that keeps every batch's timing,
    /// so a test can compare the samples with what the clock really read.
    #[derive(Default)]
    struct RecordedClock {
        taken: std::rc::Rc<std::cell::RefCell<Vec<Duration>>>,
    }

    struct RecordingTimer {
        clock: ClockTimer,
        taken: std::rc::Rc<std::cell::RefCell<Vec<Duration>>>,
    }

    impl Timer for RecordingTimer {
        fn start(&mut self) -> Result<(), MeasureError> {
            self.clock.start()
        }
        fn stop(&mut self) -> Result<(), MeasureError> {
            self.clock.stop()
        }
        fn take_batch(&mut self) -> BatchTiming {
            let t = self.clock.take_batch();
            self.taken.borrow_mut().push(t.device);
            t
        }
        fn running(&self) -> BatchTiming {
            self.clock.running()
        }
    }

    impl DeviceStream for RecordedClock {
        fn timer(&self) -> Result<Box<dyn Timer>, MeasureError> {
            Ok(Box::new(RecordingTimer {
                clock: ClockTimer::new(),
                taken: self.taken.clone(),
            }))
        }
        fn timer_name(&self) -> String {
            "monotonic clock, recorded".into()
        }
    }

    #[test]
    fn real_clock_busy_loop() {
        // Every batch the runner asks for, with the time the real clock measured around it.
        struct BusyLoop {
            iterations: u64,
            calls: Vec<u64>,
            clock: RecordedClock,
        }
        impl Target for BusyLoop {
            fn placement(&self) -> Placement<'_> {
                Placement::Stream(&self.clock)
            }
            fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
                let mut acc = 0u64;
                for _ in 0..calls {
                    for i in 0..self.iterations {
                        acc = std::hint::black_box(acc.wrapping_mul(31).wrapping_add(i));
                    }
                }
                std::hint::black_box(acc);
                self.calls.push(calls);
                Ok(())
            }
        }
        let clock = MonotonicClock::new();
        let config = MeasureConfig::with_time_budget(Duration::from_millis(50));
        let mut target = BusyLoop {
            iterations: 200,
            calls: Vec::new(),
            clock: RecordedClock::default(),
        };
        let outside = std::time::Instant::now();
        let s = measure(&mut target, &config, &clock).unwrap();
        let outside = outside.elapsed();
        assert!(s.samples >= 10, "{s:?}");
        let times = target.clock.taken.borrow().clone();
        assert_eq!(times.len(), target.calls.len(), "one timing per batch");
        assert!(times.iter().all(|t| !t.is_zero()), "{times:?}");
        let batches: Vec<(u64, Duration)> = target.calls.iter().copied().zip(times).collect();
        // Every call the target ran is a warm-up call or a sampled one, and the samples are
        // the last batches, each of `calls_per_sample` calls.
        let ran: u64 = batches.iter().map(|(calls, _)| calls).sum();
        assert_eq!(ran, s.warmup_calls + s.samples as u64 * s.calls_per_sample);
        let sampled = &batches[batches.len() - s.samples..];
        assert!(sampled
            .iter()
            .all(|&(calls, _)| calls == s.calls_per_sample));
        // The extremes are the clock's per-call times, exactly.
        let per_call: Vec<f64> = sampled
            .iter()
            .map(|&(calls, t)| per_call_us(t, calls))
            .collect();
        assert_eq!(
            s.min,
            per_call.iter().copied().fold(f64::INFINITY, f64::min)
        );
        assert_eq!(s.max, per_call.iter().copied().fold(0.0, f64::max));
        // The reported elapsed time holds every batch and lies inside the test's own span.
        let batches_us: f64 = batches.iter().map(|(_, t)| t.as_secs_f64() * 1e6).sum();
        assert!(s.elapsed >= batches_us, "{} < {batches_us}", s.elapsed);
        assert!(s.elapsed <= outside.as_secs_f64() * 1e6, "{s:?}");
    }
}
