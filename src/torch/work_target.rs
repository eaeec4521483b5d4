//! Any piece of libtorch work as a measurement-core target: a closure that issues tch ops on
//! one device, placed where libtorch runs it (the host on the CPU; libtorch's current stream
//! on a GPU, which the core times with CUDA events, after waiting for what was queued before).
//! The suites that time libtorch compositions (`calibrate`'s matmul, copies and fusion
//! patterns) use this instead of a timing loop of their own.

use crate::device::{CudaDevice, Device};
use crate::measure::cuda_timing::{CudaStreamHandle, LIBTORCH_STREAM};
use crate::measure::{segment, MeasureError, Placement, Target, Timer};
use crate::torch::cuda_stream::current_cuda_stream;

/// libtorch's current stream on the opened `gpu`, where every libtorch target's work runs,
/// as the place the core times it. libtorch must already have used the device on this thread
/// (its context is then current, which the events need).
pub fn libtorch_stream(gpu: &CudaDevice) -> Result<CudaStreamHandle, MeasureError> {
    let raw = current_cuda_stream(gpu).map_err(|e| MeasureError::target(e.0))?;
    // SAFETY: libtorch's current stream of a device it has used, in its current context;
    // libtorch keeps its streams for the life of the process.
    Ok(unsafe { CudaStreamHandle::foreign(raw.cast(), LIBTORCH_STREAM) })
}

/// libtorch's current stream on `device`, where libtorch's work on it runs, as the place the
/// core times that work (`None` on the CPU: the host's clock). Binds the GPU's context
/// (libtorch's primary one) to this thread first; libtorch must already have used the device.
pub fn libtorch_stream_on(device: &Device) -> Result<Option<CudaStreamHandle>, MeasureError> {
    match device {
        Device::Cpu(_) => Ok(None),
        Device::Cuda(dev) => {
            dev.context
                .bind_to_thread()
                .map_err(|e| MeasureError::target(format!("cuCtxSetCurrent: {e}")))?;
            libtorch_stream(dev).map(Some)
        }
    }
}

/// Waits for libtorch's work queued on `device` (nothing to wait for on the CPU), in the
/// GPU's context.
pub fn synchronize(device: &Device) -> Result<(), MeasureError> {
    match device.cuda() {
        Some(gpu) => synchronize_gpu(gpu),
        None => Ok(()),
    }
}

/// Waits for libtorch's work queued on the opened `gpu`, in its context.
pub fn synchronize_gpu(gpu: &CudaDevice) -> Result<(), MeasureError> {
    gpu.context
        .bind_to_thread()
        .map_err(|e| MeasureError::target(format!("cuCtxSetCurrent: {e}")))?;
    tch::Cuda::synchronize(gpu.info.index as i64);
    Ok(())
}

/// `work` run `calls` times per batch on `device`, under `no_grad`.
pub struct TorchWork<F> {
    work: F,
    cuda: Option<(i64, CudaStreamHandle)>,
}

impl<F> TorchWork<F>
where
    F: FnMut() -> Result<(), tch::TchError>,
{
    /// On a GPU libtorch must already have used `device` on this thread (run `work` once
    /// first, or any op), so that its context is current for the events.
    pub fn new(device: &Device, work: F) -> Result<Self, MeasureError> {
        let cuda = match device {
            Device::Cuda(dev) => Some((dev.info.index as i64, libtorch_stream(dev)?)),
            Device::Cpu(_) => None,
        };
        Ok(TorchWork { work, cuda })
    }

    /// This target with its work on a GPU queued behind the CUDA timer's blocking kernel
    /// (`true`, how it is made) or not (nothing changes on the CPU).
    pub fn with_blocking_kernel(self, blocking: bool) -> Self {
        TorchWork {
            cuda: self
                .cuda
                .map(|(index, stream)| (index, stream.with_blocking_kernel(blocking))),
            ..self
        }
    }

    /// What times the work, in words for reports.
    pub fn timer(&self) -> String {
        self.placement().timer_name()
    }
}

impl<F> Target for TorchWork<F>
where
    F: FnMut() -> Result<(), tch::TchError>,
{
    fn placement(&self) -> Placement<'_> {
        match &self.cuda {
            Some((_, stream)) => Placement::Stream(stream),
            None => Placement::Host,
        }
    }

    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        let _guard = tch::no_grad_guard();
        self.issue(calls)
    }

    /// `no_grad` is entered, and on a GPU work still queued from before is waited for, before
    /// the timed part.
    fn run_timed(&mut self, calls: u64, timer: &mut dyn Timer) -> Result<(), MeasureError> {
        let _guard = tch::no_grad_guard();
        if let Some((index, _)) = &self.cuda {
            tch::Cuda::synchronize(*index);
        }
        segment(timer, || self.issue(calls))
    }
}

impl<F> TorchWork<F>
where
    F: FnMut() -> Result<(), tch::TchError>,
{
    fn issue(&mut self, calls: u64) -> Result<(), MeasureError> {
        for _ in 0..calls {
            (self.work)().map_err(MeasureError::target)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::{measure_detailed, MeasureConfig, MonotonicClock};
    use tch::{Kind, Tensor};

    #[test]
    fn times_libtorch_work_through_the_core_and_counts_every_call() {
        let a = Tensor::ones([64, 64], (Kind::Float, tch::Device::Cpu));
        let mut out = Tensor::zeros([64, 64], (Kind::Float, tch::Device::Cpu));
        let mut calls = 0u64;
        let mut target = TorchWork::new(Device::host(), || {
            calls += 1;
            out.f_copy_(&a.f_mm(&a)?)?;
            Ok(())
        })
        .unwrap();
        assert_eq!(target.timer(), "monotonic clock");
        let m = measure_detailed(
            &mut target,
            &MeasureConfig::fixed_runs(2, 5),
            &MonotonicClock::new(),
        )
        .unwrap();
        assert_eq!(m.summary.samples, 5);
        assert!(m.summary.median > 0.0);
        drop(target);
        assert!(calls >= 7, "{calls} calls for 2 warm-ups and 5 runs");
        assert_eq!(out.double_value(&[0, 0]), 64.0);
    }

    #[test]
    fn a_libtorch_error_ends_the_measurement_with_its_message() {
        let a = Tensor::ones([4, 3], (Kind::Float, tch::Device::Cpu));
        let mut target = TorchWork::new(Device::host(), || a.f_mm(&a).map(drop)).unwrap();
        let err = measure_detailed(
            &mut target,
            &MeasureConfig::fixed_runs(0, 1),
            &MonotonicClock::new(),
        )
        .unwrap_err();
        assert!(err.to_string().contains("mat1 and mat2"), "{err}");
    }
}
