//! One timed batch: the core picks the target's timer from where its work runs and runs the
//! target's calls inside it. The runner times every warm-up batch and sample this way; callers
//! that repeat a target's batches outside a measurement (energy windows) do too, so that a
//! batch on a GPU ends when the device has finished it.

use super::timer::{BatchTiming, Timer};
use super::{MeasureError, Target};

/// A target with the timer the core picked for it ([`Placement::timer`]), made once and used
/// for every batch.
///
/// [`Placement::timer`]: super::Placement::timer
pub struct TimedTarget<'t> {
    target: &'t mut dyn Target,
    timer: Box<dyn Timer>,
}

impl<'t> TimedTarget<'t> {
    pub fn new(target: &'t mut dyn Target) -> Result<Self, MeasureError> {
        let timer = target.placement().timer()?;
        Ok(TimedTarget { target, timer })
    }

    /// Runs a batch of `calls` calls and returns the time of its timed segments.
    pub fn batch(&mut self, calls: u64) -> Result<BatchTiming, MeasureError> {
        let ran = self.target.run_timed(calls, self.timer.as_mut());
        // Taken even after a failure, so that a failed batch's segments never reach the next.
        let timing = self.timer.take_batch();
        ran.map(|()| timing)
    }

    /// Where the target's work runs (which picked the timer).
    pub fn placement(&self) -> super::Placement<'_> {
        self.target.placement()
    }

    /// The target's preparation of a sample, outside the timed region.
    pub fn prepare_sample(&mut self) -> Result<(), MeasureError> {
        self.target.prepare_sample()
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::measure::{segment, Placement, SyntheticStream};

    /// Sleeps on the host; with `setup`, each call first sleeps untimed.
    struct Sleeper {
        per_call: Duration,
        setup: Option<Duration>,
    }

    impl Target for Sleeper {
        fn placement(&self) -> Placement<'_> {
            Placement::Host
        }
        fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
            for _ in 0..calls {
                std::thread::sleep(self.per_call);
            }
            Ok(())
        }
        fn run_timed(&mut self, calls: u64, timer: &mut dyn Timer) -> Result<(), MeasureError> {
            let Some(setup) = self.setup else {
                return segment(timer, || self.run(calls));
            };
            for _ in 0..calls {
                std::thread::sleep(setup);
                segment(timer, || self.run(1))?;
            }
            Ok(())
        }
    }

    #[test]
    fn work_on_the_host_is_timed_by_the_monotonic_clock_around_the_batch() {
        let mut target = Sleeper {
            per_call: Duration::from_millis(2),
            setup: None,
        };
        let mut timed = TimedTarget::new(&mut target).unwrap();
        let outside = Instant::now();
        let t = timed.batch(3).unwrap();
        let outside = outside.elapsed();
        assert_eq!(t.device, t.host);
        assert!(t.device >= Duration::from_millis(6), "{t:?}");
        assert!(t.device <= outside, "{t:?} > {outside:?}");
    }

    #[test]
    fn untimed_setup_of_each_call_is_left_out_and_the_timed_parts_add_up() {
        let mut target = Sleeper {
            per_call: Duration::from_millis(2),
            setup: Some(Duration::from_millis(10)),
        };
        let mut timed = TimedTarget::new(&mut target).unwrap();
        let outside = Instant::now();
        let t = timed.batch(3).unwrap();
        let outside = outside.elapsed();
        assert!(t.device >= Duration::from_millis(6), "{t:?}");
        assert!(
            t.device + Duration::from_millis(30) <= outside,
            "setup counted: {t:?} of {outside:?}"
        );
        // Each batch starts from zero.
        let second = timed.batch(1).unwrap();
        assert!(second.device < t.device, "{second:?} after {t:?}");
    }

    /// Fails on its third call, after advancing a synthetic stream by 5 µs per call.
    struct FailsLate {
        stream: SyntheticStream,
        calls: u64,
    }

    impl Target for FailsLate {
        fn placement(&self) -> Placement<'_> {
            Placement::Stream(&self.stream)
        }
        fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
            for _ in 0..calls {
                self.calls += 1;
                self.stream.device().advance(Duration::from_micros(5));
                self.stream.host().advance(Duration::from_micros(1));
                if self.calls == 3 {
                    return Err(MeasureError::target("third call failed"));
                }
            }
            Ok(())
        }
        fn run_timed(&mut self, calls: u64, timer: &mut dyn Timer) -> Result<(), MeasureError> {
            (0..calls).try_for_each(|_| segment(timer, || self.run(1)))
        }
    }

    #[test]
    fn work_on_a_stream_is_timed_by_its_timer_and_a_failed_batch_leaves_nothing_behind() {
        let mut target = FailsLate {
            stream: SyntheticStream::new(),
            calls: 0,
        };
        let mut timed = TimedTarget::new(&mut target).unwrap();
        let first = timed.batch(1).unwrap();
        assert_eq!(first.device, Duration::from_micros(5));
        assert_eq!(first.host, Duration::from_micros(1));
        // The second batch times its first call, then the third call fails inside its
        // segment: the error comes back, and the next batch counts its own call only.
        assert_eq!(timed.batch(3).unwrap_err().to_string(), "third call failed");
        let third = timed.batch(1).unwrap();
        assert_eq!(third.device, Duration::from_micros(5));
    }
}
