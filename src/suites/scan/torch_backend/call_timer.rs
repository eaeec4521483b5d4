//! What times the torch backend's calls: the monotonic clock on the CPU; on a GPU CUDA events
//! on libtorch's current stream (the project's one stream timer, [`RawStreamEvents`]), after a
//! synchronisation so that nothing queued before is counted.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::CudaContext;

use super::super::ScanError;
use crate::measure::cuda_timing::RawStreamEvents;

pub enum CallTimer {
    Clock,
    CudaEvents {
        index: usize,
        context: Arc<CudaContext>,
        events: RawStreamEvents,
    },
}

impl CallTimer {
    /// Events on libtorch's stream of `index`; libtorch must already have used the device
    /// (its context is the primary one, which `context` also holds).
    pub fn cuda(index: usize, context: Arc<CudaContext>) -> Result<CallTimer, ScanError> {
        context
            .bind_to_thread()
            .map_err(|e| ScanError::Backend(format!("cuCtxSetCurrent: {e}")))?;
        let events = RawStreamEvents::on_libtorch_stream(index)
            .map_err(|e| ScanError::Backend(e.to_string()))?;
        Ok(CallTimer::CudaEvents {
            index,
            context,
            events,
        })
    }

    /// Waits for the device's queued work (nothing on the CPU): the untimed part of a call
    /// must be over before the timed part starts, as the seed's `cuda.synchronize` ensures.
    pub fn settle(&self) -> Result<(), ScanError> {
        if let CallTimer::CudaEvents { index, context, .. } = self {
            context
                .bind_to_thread()
                .map_err(|e| ScanError::Backend(format!("cuCtxSetCurrent: {e}")))?;
            tch::Cuda::synchronize(*index as i64);
        }
        Ok(())
    }

    /// Runs `work` and returns its result and its time: wall time on the CPU, the device time
    /// between events recorded before and after it on a GPU.
    pub fn time<R>(
        &self,
        work: impl FnOnce() -> Result<R, ScanError>,
    ) -> Result<(R, Duration), ScanError> {
        self.settle()?;
        match self {
            CallTimer::Clock => {
                let start = Instant::now();
                let out = work()?;
                Ok((out, start.elapsed()))
            }
            CallTimer::CudaEvents { events, .. } => {
                let event_error =
                    |e: crate::measure::MeasureError| ScanError::Backend(e.to_string());
                events.record_start().map_err(event_error)?;
                let out = work()?;
                events.record_end().map_err(event_error)?;
                Ok((out, events.elapsed().map_err(event_error)?))
            }
        }
    }
}
