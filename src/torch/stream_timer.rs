//! The one CUDA-event timer of libtorch's stream: tier-3 ops and whole models run on the
//! stream libtorch makes current, not on replay's own, so their device time is bracketed there.
//!
//! Events are created with `CU_EVENT_DEFAULT`: an event created with cudarc's default flags
//! has timing disabled and cannot be used with `cuEventElapsedTime`.

use std::time::Duration;

use cudarc::driver::sys::CUevent_flags;

use crate::measure::MeasureError;

fn driver_error(call: &'static str) -> impl Fn(cudarc::driver::DriverError) -> MeasureError {
    move |e| MeasureError::target(format!("{call}: {e}"))
}

/// A start/end event pair on a raw `CUstream` that someone else owns (libtorch's current
/// stream): tier-3 ops and whole models run there, not on replay's own stream.
pub struct RawStreamEvents {
    stream: cudarc::driver::sys::CUstream,
    start: cudarc::driver::sys::CUevent,
    end: cudarc::driver::sys::CUevent,
}

impl RawStreamEvents {
    /// Events on libtorch's current stream of CUDA device `index`: the one stream timer of
    /// whatever libtorch runs (tier-3 ops, whole models). The device's context must be current.
    pub fn on_libtorch_stream(index: usize) -> Result<RawStreamEvents, MeasureError> {
        let stream = super::cuda_stream::torch_current_cuda_stream(index)
            .map_err(|e| MeasureError::target(e.0))?;
        RawStreamEvents::new(stream as cudarc::driver::sys::CUstream)
    }

    /// The CUDA context of the stream must be current on this thread.
    pub fn new(stream: cudarc::driver::sys::CUstream) -> Result<RawStreamEvents, MeasureError> {
        let make = || {
            cudarc::driver::result::event::create(CUevent_flags::CU_EVENT_DEFAULT)
                .map_err(driver_error("cuEventCreate"))
        };
        Ok(RawStreamEvents {
            stream,
            start: make()?,
            end: make()?,
        })
    }

    pub fn record_start(&self) -> Result<(), MeasureError> {
        // SAFETY: live event and stream.
        unsafe { cudarc::driver::result::event::record(self.start, self.stream) }
            .map_err(driver_error("cuEventRecord"))
    }

    pub fn record_end(&self) -> Result<(), MeasureError> {
        // SAFETY: live event and stream.
        unsafe { cudarc::driver::result::event::record(self.end, self.stream) }
            .map_err(driver_error("cuEventRecord"))
    }

    /// Times whatever `issue` launches on the stream (a batch of tier-3 ops, forward passes of
    /// a whole model): the device time between the events around it, and the host time spent
    /// issuing (the dispatch cost), measured separately.
    pub fn time_batch(
        &self,
        issue: impl FnOnce() -> Result<(), MeasureError>,
    ) -> Result<crate::measure::BatchTiming, MeasureError> {
        self.record_start()?;
        let host_start = std::time::Instant::now();
        issue()?;
        let host = host_start.elapsed();
        self.record_end()?;
        Ok(crate::measure::BatchTiming {
            device: self.elapsed()?,
            host,
        })
    }

    /// Waits for the end event and returns the device time between the two.
    pub fn elapsed(&self) -> Result<Duration, MeasureError> {
        // SAFETY: both events were recorded on a live stream.
        unsafe { cudarc::driver::result::event::synchronize(self.end) }
            .map_err(driver_error("cuEventSynchronize"))?;
        let ms = unsafe { cudarc::driver::result::event::elapsed(self.start, self.end) }
            .map_err(driver_error("cuEventElapsedTime"))?;
        Ok(Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3))
    }
}

impl Drop for RawStreamEvents {
    fn drop(&mut self) {
        // SAFETY: both events were created by cuEventCreate and are destroyed once.
        unsafe {
            let _ = cudarc::driver::result::event::destroy(self.start);
            let _ = cudarc::driver::result::event::destroy(self.end);
        }
    }
}
