//! replay's own GPU bandwidth kernels ([`crate::kernels::stream_bandwidth::cuda`]) on the
//! device's replay stream, placed there as a measurement-core [`Target`] so that the core
//! times the calls with CUDA events on that stream.

use crate::device::CudaDevice;
use crate::kernels::stream_bandwidth::cuda::{CudaStreamKernels, Geometry};
use crate::kernels::stream_bandwidth::StreamKernel;
use crate::kernels::KernelCache;
use crate::measure::cuda_timing::CudaStreamHandle;
use crate::measure::{segment, MeasureError, Placement, Target, Timer};
use crate::suites::calibrate::CalibrateError;

/// The three arrays of one size on one GPU, the two kernels, and the stream they run on.
pub struct CudaStreamBench {
    launcher: CudaStreamKernels,
    placement: CudaStreamHandle,
}

impl CudaStreamBench {
    /// Allocates `n` floats per array on `device` (a = 1, b = 2, c = 0.5) and loads the
    /// kernels; a build without nvcc says so here.
    pub fn new(
        device: &CudaDevice,
        kernels: &KernelCache,
        n: usize,
    ) -> Result<CudaStreamBench, CalibrateError> {
        let stream = device.stream.clone();
        let launcher = CudaStreamKernels::new(
            &device.context,
            stream.clone(),
            kernels,
            n,
            device.info.multiprocessors,
        )?;
        let placement = CudaStreamHandle::replay(&stream);
        Ok(CudaStreamBench {
            launcher,
            placement,
        })
    }

    pub fn geometry(&self) -> Geometry {
        self.launcher.geometry()
    }

    /// Runs `kernel` once and checks every element it wrote on the host.
    pub fn run_and_check(&mut self, kernel: StreamKernel) -> Result<(), CalibrateError> {
        Ok(self.launcher.run_and_check(kernel)?)
    }

    /// `kernel` as a measurement-core target.
    pub fn target(&mut self, kernel: StreamKernel) -> CudaKernelTarget<'_> {
        CudaKernelTarget {
            bench: self,
            kernel,
        }
    }
}

/// Calls of one kernel on replay's stream, timed there after waiting for what was queued
/// before.
pub struct CudaKernelTarget<'a> {
    bench: &'a mut CudaStreamBench,
    kernel: StreamKernel,
}

impl Target for CudaKernelTarget<'_> {
    fn placement(&self) -> Placement<'_> {
        Placement::Stream(&self.bench.placement)
    }

    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        for _ in 0..calls {
            self.bench
                .launcher
                .launch(self.kernel)
                .map_err(|e| MeasureError::target(CalibrateError::from(e)))?;
        }
        Ok(())
    }

    fn run_timed(&mut self, calls: u64, timer: &mut dyn Timer) -> Result<(), MeasureError> {
        self.bench
            .launcher
            .stream()
            .synchronize()
            .map_err(|e| MeasureError::target(format!("cuStreamSynchronize: {e}")))?;
        segment(timer, || self.run(calls))
    }
}
