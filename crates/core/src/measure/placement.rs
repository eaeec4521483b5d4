//! Where a target's work runs, which decides how the core times it: on the host, the monotonic
//! clock around the calls ([`ClockTimer`]); queued on a device stream, that stream's own
//! timer (CUDA events on it, from the libtorch layer, since this core has no GPU dependency),
//! because only the device knows when asynchronous work really starts and ends.

use super::timer::{ClockTimer, Timer};
use super::MeasureError;

/// A device stream the core can time. The core cannot make CUDA events itself, so the stream
/// makes its timer: one that brackets the segments with events on this stream, waits for the
/// device at the end of each, and measures the host's dispatch time separately.
pub trait DeviceStream {
    /// A timer of the work queued on this stream (made once per measurement, outside the timed
    /// region).
    fn timer(&self) -> Result<Box<dyn Timer>, MeasureError>;

    /// The timer in words, for reports ("CUDA events behind a blocking kernel on libtorch's
    /// current stream").
    fn timer_name(&self) -> String;

    /// The most calls one sample may hold on this stream, when its timer needs a bound (the
    /// CUDA timer queues a sample's launches behind a blocking kernel, and the launch queue is
    /// finite); `None`: only the measurement's own bound.
    fn max_calls_per_sample(&self) -> Option<u64> {
        None
    }

    /// This stream with a timer that never holds its work back (no blocking kernel): each
    /// segment runs as the host issues it, so its time is the host's issue time where that
    /// bounds the work, as in the model. For work timed in real time, such as a whole step
    /// issued op by op. `None`: this stream's own timer never holds work back.
    fn unblocked(&self) -> Option<Box<dyn DeviceStream>> {
        None
    }
}

/// Where a target's calls run.
#[derive(Clone, Copy)]
pub enum Placement<'a> {
    /// On the host, synchronously: timed by the monotonic clock.
    Host,
    /// Queued on a device stream: timed by the stream's own timer.
    Stream(&'a dyn DeviceStream),
}

impl Placement<'_> {
    /// The timer the core times work placed here with.
    pub fn timer(&self) -> Result<Box<dyn Timer>, MeasureError> {
        match self {
            Placement::Host => Ok(Box::new(ClockTimer::new())),
            Placement::Stream(stream) => stream.timer(),
        }
    }

    /// The bound on calls per sample that the place declares (none on the host).
    pub fn max_calls_per_sample(&self) -> Option<u64> {
        match self {
            Placement::Host => None,
            Placement::Stream(stream) => stream.max_calls_per_sample(),
        }
    }

    /// That timer in words, for reports: `monotonic clock`, or what the stream says.
    pub fn timer_name(&self) -> String {
        match self {
            Placement::Host => "monotonic clock".into(),
            Placement::Stream(stream) => stream.timer_name(),
        }
    }
}

impl std::fmt::Debug for Placement<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Placement::Host => f.write_str("Host"),
            Placement::Stream(stream) => write!(f, "Stream({})", stream.timer_name()),
        }
    }
}
