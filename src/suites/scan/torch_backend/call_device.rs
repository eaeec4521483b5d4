//! Where the torch backend's calls run: the CPU (timed by the measurement core's monotonic
//! clock), or libtorch's current stream on a GPU (timed there with CUDA events); and the wait
//! for the device before the timed part of a call, so that nothing queued before is counted.

use std::sync::Arc;

use cudarc::driver::CudaContext;
use replay_core::measure::Placement;

use super::super::ScanError;
use crate::measure::cuda_timing::CudaStreamHandle;
use crate::torch::work_target::libtorch_stream;

pub enum CallDevice {
    Cpu,
    Cuda {
        index: usize,
        context: Arc<CudaContext>,
        stream: CudaStreamHandle,
    },
}

impl CallDevice {
    /// libtorch's stream of `index`; libtorch must already have used the device (its context
    /// is the primary one, which `context` also holds).
    pub fn cuda(index: usize, context: Arc<CudaContext>) -> Result<CallDevice, ScanError> {
        context
            .bind_to_thread()
            .map_err(|e| ScanError::Backend(format!("cuCtxSetCurrent: {e}")))?;
        let stream = libtorch_stream(index).map_err(|e| ScanError::Backend(e.to_string()))?;
        Ok(CallDevice::Cuda {
            index,
            context,
            stream,
        })
    }

    pub fn placement(&self) -> Placement<'_> {
        match self {
            CallDevice::Cpu => Placement::Host,
            CallDevice::Cuda { stream, .. } => Placement::Stream(stream),
        }
    }

    /// Waits for the device's queued work (nothing on the CPU): the untimed part of a call
    /// must be over before the timed part starts, as the seed's `cuda.synchronize` ensures.
    pub fn settle(&self) -> Result<(), ScanError> {
        if let CallDevice::Cuda { index, context, .. } = self {
            context
                .bind_to_thread()
                .map_err(|e| ScanError::Backend(format!("cuCtxSetCurrent: {e}")))?;
            tch::Cuda::synchronize(*index as i64);
        }
        Ok(())
    }
}
