//! A stand-in device stream for tests: fake targets place their work on it and advance its
//! clocks by the time the work "took", and the core times them with the stream's timer like
//! any other, deterministically and instantly.

use std::time::Duration;

use super::clock::{Clock, SyntheticClock};
use super::placement::DeviceStream;
use super::timer::{BatchTiming, Timer};
use super::MeasureError;

/// A stream whose timer reads two [`SyntheticClock`]s: one for the device's time and one for
/// the host's (dispatch) time. Clones share the clocks.
#[derive(Debug, Clone, Default)]
pub struct SyntheticStream {
    device: SyntheticClock,
    host: SyntheticClock,
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
        }
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
        Ok(())
    }

    fn take_batch(&mut self) -> BatchTiming {
        std::mem::take(&mut self.total)
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
