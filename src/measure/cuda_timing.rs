//! The one CUDA-event timer: what the measurement core times work queued on a CUDA stream
//! with, whichever stream that is (replay's own, or libtorch's current stream, where tier-3
//! ops and whole models run). A target on a GPU places its work on a [`CudaStreamHandle`];
//! the core asks the handle for its timer ([`CudaEvents`]) and runs the target's calls inside
//! it.
//!
//! Each timed segment: an event recorded on the stream before the work is issued, the host's
//! issue time measured separately (the dispatch cost), an event recorded after, then the end
//! event waited for and the device time between the two added up. Events are created with
//! `CU_EVENT_DEFAULT`: an event created with cudarc's default flags has timing disabled and
//! cannot be used with `cuEventElapsedTime`.
//!
//! Nothing here runs without a CUDA device: handles are only made for a device that was
//! opened (cudarc panics where libcuda cannot be loaded).

use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::sys::{CUevent, CUevent_flags, CUstream};
use cudarc::driver::{result, CudaContext, CudaStream, DriverError};

use super::{BatchTiming, DeviceStream, MeasureError, Timer};

/// A driver call's failure as the measured target's error, named by the call.
fn driver_error(call: &'static str) -> impl Fn(DriverError) -> MeasureError {
    move |e| MeasureError::target(format!("{call}: {e}"))
}

/// A CUDA stream that the measurement core times with events: a target returns it as its
/// [`Placement`](super::Placement).
pub struct CudaStreamHandle {
    raw: CUstream,
    /// Replay's own stream, kept alive, and its context bound before events are made and
    /// recorded. `None` for a stream someone else owns, whose context must be current.
    owned: Option<Arc<CudaStream>>,
    /// The stream in words: "replay's stream", "libtorch's current stream".
    label: &'static str,
}

impl CudaStreamHandle {
    /// Replay's own stream on an opened device (tier-1 copies, tier-2 cuBLAS calls, replay's
    /// kernels).
    pub fn replay(stream: &Arc<CudaStream>) -> CudaStreamHandle {
        CudaStreamHandle {
            raw: stream.cu_stream(),
            owned: Some(stream.clone()),
            label: "replay's stream",
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
        }
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
        Ok(Box::new(CudaEvents {
            stream: self.raw,
            context: self.owned.as_ref().map(|s| s.context().clone()),
            _owned: self.owned.clone(),
            start,
            end,
            host_start: None,
            total: BatchTiming::default(),
        }))
    }

    fn timer_name(&self) -> String {
        format!("CUDA events on {}", self.label)
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
    /// When the host began issuing the current segment's work.
    host_start: Option<Instant>,
    total: BatchTiming,
}

impl CudaEvents {
    fn record(&self, event: CUevent) -> Result<(), MeasureError> {
        if let Some(context) = &self.context {
            context
                .bind_to_thread()
                .map_err(driver_error("cuCtxSetCurrent"))?;
        }
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
        self.record(self.start)?;
        self.host_start = Some(Instant::now());
        Ok(())
    }

    fn stop(&mut self) -> Result<(), MeasureError> {
        let host_start = self.host_start.take().ok_or(MeasureError::UnpairedStop)?;
        self.total.host += host_start.elapsed();
        self.record(self.end)?;
        self.total.device += self.elapsed()?;
        Ok(())
    }

    fn take_batch(&mut self) -> BatchTiming {
        std::mem::take(&mut self.total)
    }
}

impl Drop for CudaEvents {
    fn drop(&mut self) {
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
    fn the_timer_is_named_by_its_stream_as_reports_have_always_said() {
        // Naming touches no driver call, so this runs without a GPU; the timing file's
        // `timer` of a model on a GPU must read exactly this.
        // SAFETY: a handle that is only named, never timed.
        let libtorch =
            unsafe { CudaStreamHandle::foreign(std::ptr::null_mut(), "libtorch's current stream") };
        assert_eq!(
            Placement::Stream(&libtorch).timer_name(),
            "CUDA events on libtorch's current stream"
        );
        assert_eq!(Placement::Host.timer_name(), "monotonic clock");
    }
}
