//! A stand-in device stream for tests: fake targets place their work on it and advance its
//! clocks by the time the work "took", and the core times them with the stream's timer like
//! any other, deterministically and instantly.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::clock::{Clock, SyntheticClock};
use super::placement::DeviceStream;
use super::timer::{BatchTiming, Timer};
use super::MeasureError;

/// A stream whose timer reads two [`SyntheticClock`]s: one for the device's time and one for
/// the host's (dispatch) time. Clones share the clocks. Like the CUDA timer, it may declare a
/// bound on calls per sample and report segments whose blocking kernel timed out.
#[derive(Debug, Clone, Default)]
pub struct SyntheticStream {
    device: SyntheticClock,
    host: SyntheticClock,
    max_calls_per_sample: Option<u64>,
    /// Segments still to end as if their blocking kernel had timed out (shared by clones).
    timeouts_ahead: Arc<AtomicU32>,
}

impl SyntheticStream {
    /// Device and host time on clocks of their own, both at zero.
    pub fn new() -> Self {
        Self::default()
    }

    /// Device and host time both read `clock` (a synchronous fake, whose time may also be
    /// the runner's budget clock): advancing it once advances both.
    pub fn on(clock: &SyntheticClock) -> Self {
        SyntheticStream {
            device: clock.clone(),
            host: clock.clone(),
            ..Self::default()
        }
    }

    /// This stream with a bound on calls per sample, as the CUDA timer declares one.
    pub fn with_max_calls_per_sample(self, cap: u64) -> Self {
        SyntheticStream {
            max_calls_per_sample: Some(cap),
            ..self
        }
    }

    /// The next `n` segments to end are reported as blocking timeouts.
    pub fn time_out_segments(&self, n: u32) {
        self.timeouts_ahead.fetch_add(n, Ordering::SeqCst);
    }

    /// The device's clock: a fake advances it by its work's device time.
    pub fn device(&self) -> &SyntheticClock {
        &self.device
    }

    /// The host's clock: a fake advances it by its dispatch time.
    pub fn host(&self) -> &SyntheticClock {
        &self.host
    }
}

impl DeviceStream for SyntheticStream {
    fn timer(&self) -> Result<Box<dyn Timer>, MeasureError> {
        Ok(Box::new(SyntheticTimer {
            stream: self.clone(),
            started: None,
            total: BatchTiming::default(),
        }))
    }

    fn timer_name(&self) -> String {
        "synthetic clocks".into()
    }

    fn max_calls_per_sample(&self) -> Option<u64> {
        self.max_calls_per_sample
    }
}

/// Each segment's time is how far the stream's clocks moved during it.
struct SyntheticTimer {
    stream: SyntheticStream,
    started: Option<(Duration, Duration)>,
    total: BatchTiming,
}

impl Timer for SyntheticTimer {
    fn start(&mut self) -> Result<(), MeasureError> {
        self.started = Some((self.stream.device.now(), self.stream.host.now()));
        Ok(())
    }

    fn stop(&mut self) -> Result<(), MeasureError> {
        let (device, host) = self.started.take().ok_or(MeasureError::UnpairedStop)?;
        self.total.device += self.stream.device.now().saturating_sub(device);
        self.total.host += self.stream.host.now().saturating_sub(host);
        let timed_out = self
            .stream
            .timeouts_ahead
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok();
        self.total.blocking_timeouts += u32::from(timed_out);
        Ok(())
    }

    fn take_batch(&mut self) -> BatchTiming {
        std::mem::take(&mut self.total)
    }

    fn running(&self) -> BatchTiming {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_count_what_the_clocks_moved_inside_them() {
        let stream = SyntheticStream::new();
        let mut timer = stream.timer().unwrap();
        timer.start().unwrap();
        stream.device().advance(Duration::from_micros(7));
        stream.host().advance(Duration::from_micros(2));
        timer.stop().unwrap();
        // Outside any segment: not counted.
        stream.device().advance(Duration::from_millis(1));
        timer.start().unwrap();
        stream.device().advance(Duration::from_micros(3));
        timer.stop().unwrap();
        assert_eq!(
            timer.take_batch(),
            BatchTiming {
                device: Duration::from_micros(10),
                host: Duration::from_micros(2),
                blocking_timeouts: 0,
            }
        );
        assert_eq!(timer.take_batch(), BatchTiming::default());
        assert!(matches!(timer.stop(), Err(MeasureError::UnpairedStop)));
    }

    #[test]
    fn one_clock_for_both_moves_device_and_host_together() {
        let clock = SyntheticClock::new();
        let stream = SyntheticStream::on(&clock);
        let mut timer = stream.timer().unwrap();
        timer.start().unwrap();
        clock.advance(Duration::from_micros(4));
        timer.stop().unwrap();
        let t = timer.take_batch();
        assert_eq!(
            (t.device, t.host),
            (Duration::from_micros(4), Duration::from_micros(4))
        );
    }
}
