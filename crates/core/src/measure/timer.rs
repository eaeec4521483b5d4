//! What times a batch: a [`Timer`] brackets segments of work and adds up their device and host
//! time. The core picks it from where the target's work runs
//! ([`Placement`](super::Placement)): [`ClockTimer`], the one CPU timer (the monotonic clock),
//! for work on the host; the stream's own timer (CUDA events, made by the libtorch layer) for
//! work queued on a device stream. Targets never choose a clock: they run calls, and only a
//! target whose calls hold untimed setup marks which part of each call counts
//! ([`Target::run_timed`](super::Target::run_timed), [`segment`]).

use std::time::{Duration, Instant};

use super::MeasureError;

/// The timing of one batch of calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BatchTiming {
    /// Total time of the batch's timed segments as the device measured it: CUDA events around
    /// them on a GPU stream, the monotonic clock around them on the host.
    pub device: Duration,
    /// Host time spent issuing the calls of the timed segments (the dispatch cost). On the
    /// host, where calls are synchronous, this equals `device`.
    pub host: Duration,
    /// Timed segments queued behind a blocking kernel (the CUDA timer's) that gave up waiting
    /// for the host: their device time includes the host's launch gaps, as an unblocked
    /// segment's does, so it is an upper bound rather than the kernels' time alone.
    pub blocking_timeouts: u32,
}

/// Times segments of work and adds them up. Segments do not nest: each [`Timer::start`] is
/// followed by one [`Timer::stop`]; [`Timer::take_batch`] returns what the segments since the
/// last take added up to and starts over.
pub trait Timer {
    /// Starts a timed segment.
    fn start(&mut self) -> Result<(), MeasureError>;

    /// Ends the segment [`Timer::start`] began and adds its time (after waiting for the device
    /// to finish the segment's work, where the work is asynchronous).
    fn stop(&mut self) -> Result<(), MeasureError>;

    /// The sum of the segments since the last take; the next segment starts a new sum.
    fn take_batch(&mut self) -> BatchTiming;

    /// What the segments since the last take add up to so far, without taking it: a target
    /// that runs several things in one call reads it before and after each to time each in
    /// its place (`replay sequence`'s in-context time per op).
    fn running(&self) -> BatchTiming;
}

/// Times `work` as one segment of `timer` and returns what it returned: how a target with
/// untimed setup in each call times the part that counts.
pub fn segment<R, E>(timer: &mut dyn Timer, work: impl FnOnce() -> Result<R, E>) -> Result<R, E>
where
    E: From<MeasureError>,
{
    timer.start()?;
    let out = work()?;
    timer.stop()?;
    Ok(out)
}

/// The one CPU timer: the monotonic clock (`std::time::Instant`) around each segment. The host
/// runs the calls synchronously, so device and host time are the same reading.
#[derive(Debug, Clone, Default)]
pub struct ClockTimer {
    started: Option<Instant>,
    total: Duration,
}

impl ClockTimer {
    pub fn new() -> Self {
        Self::default()
    }
}

impl Timer for ClockTimer {
    fn start(&mut self) -> Result<(), MeasureError> {
        self.started = Some(Instant::now());
        Ok(())
    }

    fn stop(&mut self) -> Result<(), MeasureError> {
        let started = self.started.take().ok_or(MeasureError::UnpairedStop)?;
        self.total += started.elapsed();
        Ok(())
    }

    fn take_batch(&mut self) -> BatchTiming {
        let total = std::mem::take(&mut self.total);
        BatchTiming {
            device: total,
            host: total,
            blocking_timeouts: 0,
        }
    }

    fn running(&self) -> BatchTiming {
        BatchTiming {
            device: self.total,
            host: self.total,
            blocking_timeouts: 0,
        }
    }
}

/// A timer that times nothing: runs a target whose calls mark their own segments when no one
/// reads the time (a scan run once for its results).
#[derive(Debug, Clone, Copy, Default)]
pub struct Untimed;

impl Timer for Untimed {
    fn start(&mut self) -> Result<(), MeasureError> {
        Ok(())
    }

    fn stop(&mut self) -> Result<(), MeasureError> {
        Ok(())
    }

    fn take_batch(&mut self) -> BatchTiming {
        BatchTiming::default()
    }

    fn running(&self) -> BatchTiming {
        BatchTiming::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spin(d: Duration) {
        let t = Instant::now();
        while t.elapsed() < d {}
    }

    #[test]
    fn the_clock_adds_up_its_segments_and_leaves_out_what_lies_between() {
        let mut timer = ClockTimer::new();
        let outside = Instant::now();
        segment(&mut timer, || {
            spin(Duration::from_millis(3));
            Ok::<(), MeasureError>(())
        })
        .unwrap();
        // Untimed setup between the segments.
        spin(Duration::from_millis(20));
        let answer = segment(&mut timer, || {
            spin(Duration::from_millis(2));
            Ok::<u32, MeasureError>(42)
        })
        .unwrap();
        let outside = outside.elapsed();
        assert_eq!(answer, 42);
        let so_far = timer.running();
        let t = timer.take_batch();
        assert_eq!(so_far, t, "running reads what take_batch then takes");
        assert_eq!(t.device, t.host, "one reading on the host");
        assert!(t.device >= Duration::from_millis(5), "{t:?}");
        assert!(
            t.device + Duration::from_millis(20) <= outside,
            "the 20 ms between the segments were counted: {t:?} of {outside:?}"
        );
        // Taking starts a new sum.
        assert_eq!(timer.take_batch(), BatchTiming::default());
    }

    #[test]
    fn a_stop_without_a_start_is_an_error_and_a_failed_segment_is_not_counted() {
        let mut timer = ClockTimer::new();
        assert!(matches!(timer.stop(), Err(MeasureError::UnpairedStop)));
        let failed: Result<(), MeasureError> =
            segment(&mut timer, || Err(MeasureError::target("no")));
        assert_eq!(failed.unwrap_err().to_string(), "no");
        assert_eq!(timer.take_batch(), BatchTiming::default());
    }

    #[test]
    fn untimed_runs_report_nothing() {
        let mut timer = Untimed;
        segment(&mut timer, || {
            spin(Duration::from_millis(1));
            Ok::<(), MeasureError>(())
        })
        .unwrap();
        assert_eq!(timer.take_batch(), BatchTiming::default());
    }
}
