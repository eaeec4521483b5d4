//! A measurement's samples, and the pool that rounds of one measurement share.
//!
//! A round keeps every sample it took. Rounds pooled over a long run would keep them all too,
//! and a run of hours grows without end (the soak of issue 34 saw 0.5 GB a run); so a pool
//! keeps at most [`POOL_CAP`] samples per timer: once the rounds took more, it keeps every
//! `stride`-th of them in the order they were taken (a systematic sample whose stride doubles
//! each time the pool fills), so every round keeps its share, and a resumed run that pools
//! the same rounds keeps the very same samples.

use super::summarize::{summarize, SummaryContext};
use super::{MeasureError, Summary};

/// The most samples per timer a pooled measurement keeps (256 KiB with the host's). The
/// median of 16 384 samples has a relative standard error of about 1 % of their relative
/// spread, far below what a machine's drift between rounds moves it.
pub const POOL_CAP: usize = 16_384;

/// A summary together with the per-call samples it was computed from (microseconds, in the
/// order taken), for callers that want to keep or plot them. One round holds all of its
/// samples (`stride` 1, `offset` 0); a pool holds every `stride`-th of the `taken`; a round's
/// share of a pool ([`Measurement::share_for`]) the samples the pool keeps of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Measurement {
    pub summary: Summary,
    pub device_us: Vec<f64>,
    pub host_us: Vec<f64>,
    /// Samples taken, in every round.
    pub taken: usize,
    /// Every `stride`-th sample is kept: counting from the first of all rounds pooled, the
    /// kept ones are those whose position is a multiple of `stride`.
    pub stride: usize,
    /// Where this measurement's first sample stands among all rounds pooled: 0 for a round
    /// or a pool, the pool's `taken` for a round's share of it.
    pub offset: usize,
}

impl Measurement {
    /// One round: its summary and all of its samples.
    pub fn from_round(summary: Summary, device_us: Vec<f64>, host_us: Vec<f64>) -> Measurement {
        Measurement {
            summary,
            taken: device_us.len(),
            stride: 1,
            offset: 0,
            device_us,
            host_us,
        }
    }

    /// The samples of `round` (one round, all of its samples) that this pool keeps when it
    /// is added: what a journal needs to record so that a resumed run pools the same samples.
    pub fn share_for(&self, round: Measurement) -> Result<Measurement, MeasureError> {
        if round.stride != 1 || round.offset != 0 {
            return Err(MeasureError::InvalidConfig(
                "only a round that holds all of its samples can be shared into a pool".into(),
            ));
        }
        let stride = self.stride;
        let first = (stride - self.taken % stride) % stride;
        let thin = |values: Vec<f64>| -> Vec<f64> {
            if stride == 1 {
                values
            } else {
                values.into_iter().skip(first).step_by(stride).collect()
            }
        };
        Ok(Measurement {
            summary: round.summary,
            device_us: thin(round.device_us),
            host_us: thin(round.host_us),
            taken: round.taken,
            stride,
            offset: self.taken,
        })
    }

    /// Adds another round of the same measurement, taken later (see [`crate::measure::interleave`]):
    /// the statistics are recomputed over the pooled samples of every round, so the median
    /// describes the whole span of time the rounds covered rather than one moment of it. Batch
    /// size and stopping reason are the latest round's; samples, warm-up calls and elapsed
    /// time add up. The pool then keeps at most [`POOL_CAP`] samples.
    ///
    /// `round` is either one round with all of its samples or its share for this pool
    /// ([`Self::share_for`], as a journal kept it): both pool the same samples.
    pub fn add_round(&mut self, round: Measurement) -> Result<(), MeasureError> {
        let mut round = if round.stride == self.stride && round.offset == self.taken {
            round
        } else {
            self.share_for(round)?
        };
        self.device_us.append(&mut round.device_us);
        self.host_us.append(&mut round.host_us);
        self.taken += round.taken;
        let previous = &self.summary;
        let mut summary = summarize(
            &self.device_us,
            &self.host_us,
            SummaryContext {
                calls_per_sample: round.summary.calls_per_sample,
                warmup_calls: previous.warmup_calls + round.summary.warmup_calls,
                noise_target: round.summary.noise_target,
                stopped_by: round.summary.stopped_by,
                elapsed_us: previous.elapsed + round.summary.elapsed,
                rounds: previous.rounds + round.summary.rounds,
                timer: round.summary.timer.or_else(|| previous.timer.clone()),
                blocking_timeouts: previous.blocking_timeouts + round.summary.blocking_timeouts,
            },
        )?;
        if self.stride > 1 {
            summary.statistics_from = Some(summary.samples);
            summary.samples = self.taken;
        }
        self.summary = summary;
        self.bound_pool();
        Ok(())
    }

    /// Thins the samples kept to at most [`POOL_CAP`] (doubling the stride as often as it
    /// takes), leaving the summary as it is: a round about to be pooled holds no more than the
    /// pool will keep of it.
    pub fn bound_pool(&mut self) {
        while self.device_us.len() > POOL_CAP {
            keep_even(&mut self.device_us);
            keep_even(&mut self.host_us);
            self.stride *= 2;
        }
    }
}

/// Keeps the elements at even positions, in place (no new allocation).
fn keep_even(values: &mut Vec<f64>) {
    let mut i = 0;
    values.retain(|_| {
        i += 1;
        i % 2 == 1
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{measure_detailed, MeasureConfig, SyntheticClock, SyntheticStream};
    use crate::measure::{Placement, Target};
    use std::time::Duration;

    /// A target on a synthetic stream whose calls last 1 µs, 2 µs, 3 µs, ... in turn, so every
    /// sample says which call it was.
    struct Counting {
        stream: SyntheticStream,
        calls: u64,
    }

    impl Counting {
        fn new(clock: &SyntheticClock) -> Counting {
            Counting {
                stream: SyntheticStream::on(clock),
                calls: 0,
            }
        }
    }

    impl Target for Counting {
        fn placement(&self) -> Placement<'_> {
            Placement::Stream(&self.stream)
        }
        fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
            for _ in 0..calls {
                self.calls += 1;
                self.stream
                    .device()
                    .advance(Duration::from_micros(self.calls));
            }
            Ok(())
        }
    }

    fn round(samples: usize, clock: &SyntheticClock, target: &mut Counting) -> Measurement {
        measure_detailed(target, &MeasureConfig::fixed_runs(0, samples), clock).unwrap()
    }

    #[test]
    fn a_pool_keeps_a_systematic_sample_of_every_round_in_order() {
        let clock = SyntheticClock::new();
        let mut target = Counting::new(&clock);
        let sizes = [POOL_CAP - 3, 5000, 1, POOL_CAP * 3 + 7, 12];
        let mut pool = round(sizes[0], &clock, &mut target);
        pool.bound_pool();
        assert_eq!((pool.stride, pool.taken), (1, sizes[0]));
        for &n in &sizes[1..] {
            pool.add_round(round(n, &clock, &mut target)).unwrap();
        }
        let taken: usize = sizes.iter().sum();
        assert_eq!(pool.taken, taken);
        assert_eq!(pool.summary.samples, taken);
        assert_eq!(pool.summary.rounds, sizes.len() as u32);
        assert!(pool.device_us.len() <= POOL_CAP);
        // Sample i took call i + 1 (one call per sample, 1 µs longer each): the pool holds
        // exactly calls 1, 1 + stride, 1 + 2 stride, ... of all rounds together.
        assert_eq!(pool.stride, 8);
        let expected: Vec<f64> = (0..taken)
            .step_by(pool.stride)
            .map(|i| (i + 1) as f64)
            .collect();
        assert_eq!(pool.device_us.len(), expected.len());
        let off = |kept: &[f64]| {
            kept.iter()
                .zip(&expected)
                .position(|(a, b)| (a - b).abs() > 1e-6)
        };
        assert_eq!(off(&pool.device_us), None);
        assert_eq!(off(&pool.host_us), None);
        assert_eq!(pool.summary.statistics_from, Some(expected.len()));
        // The statistics are those of the systematic sample.
        let stats = crate::measure::Stats::from_samples(&pool.device_us).unwrap();
        assert_eq!(pool.summary.median, stats.median);
        assert_eq!(pool.summary.rse_median, stats.rse_median);
    }

    #[test]
    fn a_pool_under_the_cap_keeps_every_sample() {
        let clock = SyntheticClock::new();
        let mut target = Counting::new(&clock);
        let mut pool = round(100, &clock, &mut target);
        pool.add_round(round(50, &clock, &mut target)).unwrap();
        assert_eq!(
            (pool.stride, pool.taken, pool.device_us.len()),
            (1, 150, 150)
        );
        assert_eq!(pool.summary.statistics_from, None);
        assert_eq!(pool.summary.samples, 150);
    }

    #[test]
    fn a_share_pools_like_its_round() {
        // What a journal keeps of a round (its share) pools exactly like the round itself.
        let clock = SyntheticClock::new();
        let mut target = Counting::new(&clock);
        let mut first = round(POOL_CAP + 5, &clock, &mut target);
        first.bound_pool();
        assert_eq!(first.stride, 2);
        let mut from_rounds = first.clone();
        let mut from_shares = first;
        for n in [3, 7, POOL_CAP, 1] {
            let r = round(n, &clock, &mut target);
            let share = from_shares.share_for(r.clone()).unwrap();
            assert!(share.device_us.len() <= n.div_ceil(from_shares.stride));
            from_shares.add_round(share).unwrap();
            from_rounds.add_round(r).unwrap();
            assert_eq!(from_shares, from_rounds);
        }
        // A share offered to another pool is refused, not pooled wrongly.
        let r = round(9, &clock, &mut target);
        let share = from_shares.share_for(r).unwrap();
        let mut other = round(4, &clock, &mut target);
        assert!(matches!(
            other.add_round(share),
            Err(MeasureError::InvalidConfig(_))
        ));
    }

    #[test]
    fn pooling_a_pool_is_refused() {
        let clock = SyntheticClock::new();
        let mut target = Counting::new(&clock);
        let mut big = round(POOL_CAP * 2 + 2, &clock, &mut target);
        big.bound_pool();
        assert_eq!(big.stride, 4);
        let mut pool = round(10, &clock, &mut target);
        assert!(matches!(
            pool.add_round(big),
            Err(MeasureError::InvalidConfig(_))
        ));
    }
}
