//! The one CUDA-event timer: what the measurement core times work queued on a CUDA stream
//! with, whichever stream that is (replay's own, or libtorch's current stream, where tier-3
//! ops and whole models run). A target on a GPU places its work on a [`CudaStreamHandle`];
//! the core asks the handle for its timer ([`CudaEvents`]) and runs the target's calls inside
//! it.
//!
//! Each timed segment: the blocking kernel queued on the stream ([`super::blocking_kernel`]),
//! an event recorded behind it, the work issued (the host's issue time measured separately: the
//! dispatch cost), an event recorded after, the blocker released, then the end event waited for
//! and the device time between the two added up. Queued behind the blocker, the work runs back
//! to back once released, so the events measure the device's time even for kernels shorter than
//! their launch (without it they measure the host's launch rate). The first segment of a timer
//! and every segment after a blocker timed out run unblocked ([`BlockingSchedule`]); a handle
//! made [`without the blocking kernel`](CudaStreamHandle::with_blocking_kernel) never blocks
//! (`--no-blocking-kernel`, whole models, copies the host waits for). Events are created with
//! `CU_EVENT_DEFAULT`: an event created with cudarc's default flags has timing disabled and
//! cannot be used with `cuEventElapsedTime`.
//!
//! Nothing here runs without a CUDA device: handles are only made for a device that was
//! opened (cudarc panics where libcuda cannot be loaded).

use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::sys::{CUevent, CUevent_flags, CUstream};
use cudarc::driver::{result, CudaContext, CudaStream, DriverError};

use super::blocking_kernel::{BlockingKernel, BlockingSchedule, BLOCKED_MAX_CALLS_PER_SAMPLE};
use super::{BatchTiming, DeviceStream, MeasureError, Timer};

/// A driver call's failure as the measured target's error, named by the call.
fn driver_error(call: &'static str) -> impl Fn(DriverError) -> MeasureError {
    move |e| MeasureError::target(format!("{call}: {e}"))
}

/// Replay's own stream, in words.
pub const REPLAY_STREAM: &str = "replay's stream";
/// libtorch's current stream of a device, in words.
pub const LIBTORCH_STREAM: &str = "libtorch's current stream";

/// A CUDA stream that the measurement core times with events: a target returns it as its
/// [`Placement`](super::Placement).
pub struct CudaStreamHandle {
    raw: CUstream,
    /// Replay's own stream, kept alive, and its context bound before events are made and
    /// recorded. `None` for a stream someone else owns, whose context must be current.
    owned: Option<Arc<CudaStream>>,
    /// The stream in words: "replay's stream", "libtorch's current stream".
    label: &'static str,
    /// Whether timed segments are queued behind the blocking kernel.
    blocking: bool,
}

impl CudaStreamHandle {
    /// Replay's own stream on an opened device (tier-1 copies, tier-2 cuBLAS calls, replay's
    /// kernels).
    pub fn replay(stream: &Arc<CudaStream>) -> CudaStreamHandle {
        CudaStreamHandle {
            raw: stream.cu_stream(),
            owned: Some(stream.clone()),
            label: REPLAY_STREAM,
            blocking: true,
        }
    }

    /// A stream someone else owns (libtorch's current stream), named `label`.
    ///
    /// # Safety
    /// `raw` must be a live stream of the CUDA context that is current on the thread whenever
    /// the core times work on it, and stay alive as long as the handle and its timers.
    pub unsafe fn foreign(raw: CUstream, label: &'static str) -> CudaStreamHandle {
        CudaStreamHandle {
            raw,
            owned: None,
            label,
            blocking: true,
        }
    }

    /// This handle with timed segments queued behind the blocking kernel (`true`, how handles
    /// are made) or not: `--no-blocking-kernel`, a whole model (its time includes the host's
    /// launch gaps, as in the trace, and its launches overflow the queue), work the host waits
    /// for inside the segment.
    pub fn with_blocking_kernel(self, blocking: bool) -> CudaStreamHandle {
        CudaStreamHandle { blocking, ..self }
    }

    /// Whether timed segments are queued behind the blocking kernel.
    pub fn blocks(&self) -> bool {
        self.blocking
    }

    fn bind(&self) -> Result<(), MeasureError> {
        match &self.owned {
            Some(stream) => stream
                .context()
                .bind_to_thread()
                .map_err(driver_error("cuCtxSetCurrent")),
            None => Ok(()),
        }
    }
}

impl DeviceStream for CudaStreamHandle {
    fn timer(&self) -> Result<Box<dyn Timer>, MeasureError> {
        self.bind()?;
        let make = || result::event::create(CUevent_flags::CU_EVENT_DEFAULT);
        let start = make().map_err(driver_error("cuEventCreate"))?;
        let end = match make() {
            Ok(end) => end,
            Err(e) => {
                // SAFETY: created just above, destroyed once.
                unsafe {
                    let _ = result::event::destroy(start);
                }
                return Err(driver_error("cuEventCreate")(e));
            }
        };
        let destroy_events = || {
            // SAFETY: created just above, destroyed once.
            unsafe {
                let _ = result::event::destroy(start);
                let _ = result::event::destroy(end);
            }
        };
        let blocker = match self.blocking.then(BlockingKernel::new).transpose() {
            Ok(blocker) => blocker,
            Err(e) => {
                destroy_events();
                return Err(e);
            }
        };
        Ok(Box::new(CudaEvents {
            stream: self.raw,
            context: self.owned.as_ref().map(|s| s.context().clone()),
            _owned: self.owned.clone(),
            start,
            end,
            schedule: BlockingSchedule::new(blocker.is_some()),
            blocker,
            blocked: false,
            host_start: None,
            total: BatchTiming::default(),
        }))
    }

    fn timer_name(&self) -> String {
        timer_name(self.label, self.blocking)
    }

    fn max_calls_per_sample(&self) -> Option<u64> {
        self.blocking.then_some(BLOCKED_MAX_CALLS_PER_SAMPLE)
    }

    /// The same stream (and context) timed by events alone: one pair around each segment.
    fn unblocked(&self) -> Option<Box<dyn DeviceStream>> {
        self.blocking.then(|| {
            Box::new(CudaStreamHandle {
                raw: self.raw,
                owned: self.owned.clone(),
                label: self.label,
                blocking: false,
            }) as Box<dyn DeviceStream>
        })
    }
}

/// The CUDA timer in words, as reports print it (`timer`).
pub fn timer_name(stream: &str, blocking: bool) -> String {
    if blocking {
        format!("CUDA events behind a blocking kernel on {stream}")
    } else {
        format!("CUDA events on {stream}")
    }
}

/// A start and an end event on one stream, recorded around each timed segment.
pub struct CudaEvents {
    stream: CUstream,
    /// Bound before each record, as cudarc's own events are (replay's stream only).
    context: Option<Arc<CudaContext>>,
    _owned: Option<Arc<CudaStream>>,
    start: CUevent,
    end: CUevent,
    /// The blocking kernel (`None`: a handle without it), which segments it blocks, and
    /// whether the current one is blocked.
    blocker: Option<BlockingKernel>,
    schedule: BlockingSchedule,
    blocked: bool,
    /// When the host began issuing the current segment's work.
    host_start: Option<Instant>,
    total: BatchTiming,
}

impl CudaEvents {
    fn bind(&self) -> Result<(), MeasureError> {
        if let Some(context) = &self.context {
            context
                .bind_to_thread()
                .map_err(driver_error("cuCtxSetCurrent"))?;
        }
        Ok(())
    }

    fn record(&self, event: CUevent) -> Result<(), MeasureError> {
        self.bind()?;
        // SAFETY: a live event of this stream's context, recorded on the live stream.
        unsafe { result::event::record(event, self.stream) }.map_err(driver_error("cuEventRecord"))
    }

    /// Waits for the end event and returns the device time between the two.
    fn elapsed(&self) -> Result<Duration, MeasureError> {
        // SAFETY: both events were recorded on a live stream.
        unsafe { result::event::synchronize(self.end) }
            .map_err(driver_error("cuEventSynchronize"))?;
        let ms = unsafe { result::event::elapsed(self.start, self.end) }
            .map_err(driver_error("cuEventElapsedTime"))?;
        Ok(Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3))
    }
}

impl Timer for CudaEvents {
    fn start(&mut self) -> Result<(), MeasureError> {
        self.blocked = false;
        if self.blocker.is_some() && self.schedule.block_next() {
            self.bind()?;
            if let Some(blocker) = self.blocker.as_mut() {
                // SAFETY: the handle's stream, live for the timer's life (its contract), in
                // the context bound just above.
                unsafe { blocker.block(self.stream) }?;
                self.blocked = true;
            }
        }
        self.record(self.start)?;
        self.host_start = Some(Instant::now());
        Ok(())
    }

    fn stop(&mut self) -> Result<(), MeasureError> {
        let host_start = self.host_start.take().ok_or(MeasureError::UnpairedStop)?;
        self.total.host += host_start.elapsed();
        let recorded = self.record(self.end);
        // Released whatever happened, so that the stream never waits for the timeout.
        if let (true, Some(blocker)) = (self.blocked, &self.blocker) {
            blocker.release();
        }
        recorded?;
        self.total.device += self.elapsed()?;
        if self.blocked {
            if let Some(blocker) = self.blocker.as_mut() {
                // The end event, queued behind the blocker, has completed.
                blocker.finished();
                if blocker.timed_out() {
                    // Timed as without the blocker (the start event fired when it gave up,
                    // the rest ran as the host issued it): an upper bound, kept and counted.
                    self.total.blocking_timeouts += 1;
                    self.schedule.timed_out();
                }
            }
        }
        Ok(())
    }

    fn take_batch(&mut self) -> BatchTiming {
        // A segment that failed before its stop leaves its blocker pending: released here,
        // where the core takes a failed batch, so that nothing waits for its timeout.
        if self.host_start.take().is_some() && self.blocked {
            if let Some(blocker) = &self.blocker {
                blocker.release();
            }
        }
        std::mem::take(&mut self.total)
    }

    fn running(&self) -> BatchTiming {
        self.total
    }
}

impl Drop for CudaEvents {
    fn drop(&mut self) {
        // The blocker first: it releases a pending blocker and waits for the stream (in the
        // stream's context).
        if self.blocker.is_some() {
            let _ = self.bind();
        }
        drop(self.blocker.take());
        // SAFETY: both events were created by cuEventCreate and are destroyed once.
        unsafe {
            let _ = result::event::destroy(self.start);
            let _ = result::event::destroy(self.end);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Placement;

    #[test]
    fn the_timer_is_named_by_its_stream_and_says_whether_it_blocks() {
        // Naming touches no driver call, so this runs without a GPU; the `timer` of a report
        // on a GPU must read exactly this.
        // SAFETY: a handle that is only named, never timed.
        let libtorch =
            unsafe { CudaStreamHandle::foreign(std::ptr::null_mut(), "libtorch's current stream") };
        assert!(libtorch.blocks(), "handles block by default");
        assert_eq!(
            Placement::Stream(&libtorch).timer_name(),
            "CUDA events behind a blocking kernel on libtorch's current stream"
        );
        let unblocked = libtorch.with_blocking_kernel(false);
        assert!(!unblocked.blocks());
        assert_eq!(
            Placement::Stream(&unblocked).timer_name(),
            "CUDA events on libtorch's current stream"
        );
        assert_eq!(Placement::Host.timer_name(), "monotonic clock");
    }

    #[test]
    fn a_blocking_stream_unblocked_is_the_same_stream_timed_by_events_alone() {
        // SAFETY: handles that are only named and asked, never timed.
        let libtorch = unsafe { CudaStreamHandle::foreign(std::ptr::null_mut(), LIBTORCH_STREAM) };
        let unblocked = libtorch.unblocked().expect("a blocking handle unblocks");
        assert_eq!(
            unblocked.timer_name(),
            "CUDA events on libtorch's current stream"
        );
        assert_eq!(unblocked.max_calls_per_sample(), None);
        assert!(unblocked.unblocked().is_none(), "once is enough");
        let already = libtorch.with_blocking_kernel(false);
        assert!(already.unblocked().is_none());
    }

    #[test]
    fn only_a_blocking_timer_bounds_the_calls_per_sample() {
        // SAFETY: handles that are only asked, never timed.
        let blocking = unsafe { CudaStreamHandle::foreign(std::ptr::null_mut(), "a stream") };
        assert_eq!(
            Placement::Stream(&blocking).max_calls_per_sample(),
            Some(BLOCKED_MAX_CALLS_PER_SAMPLE)
        );
        let unblocked = blocking.with_blocking_kernel(false);
        assert_eq!(Placement::Stream(&unblocked).max_calls_per_sample(), None);
        assert_eq!(Placement::Host.max_calls_per_sample(), None);
    }
}
