//! CUDA event timing for targets that run on a GPU.
//!
//! Events are created with `CU_EVENT_DEFAULT`: cudarc's default flags disable timing, and an
//! event created that way cannot be used with `cuEventElapsedTime`.

use std::sync::Arc;
use std::time::Duration;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaContext, CudaEvent, CudaStream};

use super::MeasureError;

/// A start and an end event on one stream; the device time between them is one batch.
pub struct EventPair {
    start: CudaEvent,
    end: CudaEvent,
}

fn driver_error(call: &'static str) -> impl Fn(cudarc::driver::DriverError) -> MeasureError {
    move |e| MeasureError::target(format!("{call}: {e}"))
}

impl EventPair {
    pub fn new(context: &Arc<CudaContext>) -> Result<EventPair, MeasureError> {
        let make = || {
            context
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(driver_error("cuEventCreate"))
        };
        Ok(EventPair {
            start: make()?,
            end: make()?,
        })
    }

    pub fn record_start(&self, stream: &CudaStream) -> Result<(), MeasureError> {
        self.start
            .record(stream)
            .map_err(driver_error("cuEventRecord"))
    }

    pub fn record_end(&self, stream: &CudaStream) -> Result<(), MeasureError> {
        self.end
            .record(stream)
            .map_err(driver_error("cuEventRecord"))
    }

    /// Times `calls` calls of `issue` on `stream`: device time between the events, and the
    /// host time spent issuing (the dispatch cost), measured separately.
    pub fn time_batch(
        &self,
        stream: &CudaStream,
        calls: u64,
        mut issue: impl FnMut() -> Result<(), MeasureError>,
    ) -> Result<super::BatchTiming, MeasureError> {
        self.record_start(stream)?;
        let host_start = std::time::Instant::now();
        for _ in 0..calls {
            issue()?;
        }
        let host = host_start.elapsed();
        self.record_end(stream)?;
        Ok(super::BatchTiming {
            device: self.elapsed()?,
            host,
        })
    }

    /// Waits for the end event and returns the device time between the two.
    pub fn elapsed(&self) -> Result<Duration, MeasureError> {
        self.end
            .synchronize()
            .map_err(driver_error("cuEventSynchronize"))?;
        let ms = self
            .start
            .elapsed_ms(&self.end)
            .map_err(driver_error("cuEventElapsedTime"))?;
        Ok(Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3))
    }
}

/// The stream timer of libtorch's stream lives with the rest of libtorch (`crate::torch`); it is
/// re-exported here so every CUDA-event timer can be found under `measure`.
pub use crate::torch::stream_timer::RawStreamEvents;
