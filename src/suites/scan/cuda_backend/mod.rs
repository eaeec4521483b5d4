//! The `cuda` backend: replay's own kernel, `cuda/semiring_scan.cu`, embedded by build.rs and
//! loaded by name through [`crate::kernels`] and launched in the geometry of
//! [`crate::kernels::semiring_scan::launch`], behind the [`ScanBackend`] interface.
//!
//! Inputs are copied to the GPU once in [`ScanBackend::prepare`]; every call then runs on the
//! device's replay stream, where the measurement core times the timed part with CUDA events,
//! after a synchronisation so nothing queued before counts. [`Phase::Backward`] runs the
//! saving forward untimed, waits for it, then times the backward (the gradient zeroed and
//! written); [`Phase::Both`] times the two.
//!
//! Memory is what this backend allocated, counted exactly ([`buffers::MemoryTally`]).

pub mod buffers;

use std::sync::Arc;

use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchArgs, LaunchConfig};
use cudarc::driver::{PushKernelArg, ValidAsZeroBits};

use self::buffers::{driver_error, slice_bytes, zeros, BackwardBuffers, MemoryTally};
use super::{
    MemoryPeak, Phase, PreparedScan, ScanBackend, ScanDims, ScanError, ScanOutput, ScanProblem,
    Semiring,
};
use crate::device::CudaDevice;
use crate::kernels::semiring_scan::launch::{
    self, check_fits, kernel_name, launch_shape, Pass, DEFAULT_SHARED_BYTES,
};
use crate::kernels::KernelCache;
use crate::measure::cuda_timing::CudaStreamHandle;
use crate::measure::{segment, Placement, Timer};

/// The kernel on one opened GPU.
pub struct CudaBackend {
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    kernels: Arc<KernelCache>,
    /// The most dynamic shared memory a block may opt into on this GPU.
    shared_limit: u32,
}

impl CudaBackend {
    pub fn new(device: &CudaDevice) -> Result<CudaBackend, ScanError> {
        let limit = device
            .context
            .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
            .map_err(driver_error("cuDeviceGetAttribute"))?;
        Ok(CudaBackend {
            context: device.context.clone(),
            stream: device.stream.clone(),
            kernels: Arc::new(KernelCache::default()),
            shared_limit: (limit.max(0) as u32).max(DEFAULT_SHARED_BYTES),
        })
    }

    /// The kernel of `pass` in `semiring`, allowed the shared memory `shared_bytes` needs.
    fn function(
        &self,
        pass: Pass,
        semiring: Semiring,
        shared_bytes: u32,
    ) -> Result<CudaFunction, ScanError> {
        let function = self
            .kernels
            .function(&self.context, kernel_name(pass, semiring))
            .map_err(|e| match e {
                // Built without nvcc: the kernel does not exist in this binary.
                crate::error::Error::KernelUnavailable(..) => {
                    ScanError::NotImplemented(e.to_string())
                }
                other => ScanError::Backend(other.to_string()),
            })?;
        if shared_bytes > DEFAULT_SHARED_BYTES {
            function
                .set_attribute(
                    CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    shared_bytes as i32,
                )
                .map_err(driver_error("cuFuncSetAttribute"))?;
        }
        Ok(function)
    }
}

impl ScanBackend for CudaBackend {
    fn name(&self) -> &'static str {
        "cuda"
    }

    fn prepare<'p>(
        &self,
        problem: &ScanProblem<'p>,
        semiring: Semiring,
    ) -> Result<Box<dyn PreparedScan + 'p>, ScanError> {
        let dims = problem.dims;
        let forward_shape = launch_shape(Pass::Forward, semiring, dims);
        let backward_shape = launch_shape(Pass::Backward, semiring, dims);
        check_fits(forward_shape, dims, self.shared_limit)?;
        check_fits(backward_shape, dims, self.shared_limit)?;
        self.context
            .bind_to_thread()
            .map_err(driver_error("cuCtxSetCurrent"))?;
        let forward = self.function(Pass::Forward, semiring, forward_shape.shared_bytes)?;
        let backward = self.function(Pass::Backward, semiring, backward_shape.shared_bytes)?;
        let stream = self.stream.clone();
        let lengths: Vec<i32> = problem.lengths.iter().map(|&l| l as i32).collect();
        let edge = stream
            .clone_htod(problem.edge)
            .map_err(driver_error("cuMemcpyHtoD"))?;
        let lengths = stream
            .clone_htod(&lengths)
            .map_err(driver_error("cuMemcpyHtoD"))?;
        let values = zeros::<f64>(&stream, dims.batch)?;
        let unused_x = zeros::<f32>(&stream, 1)?;
        let unused_base = zeros::<f64>(&stream, 1)?;
        let inputs = slice_bytes(&edge)
            + slice_bytes(&lengths)
            + slice_bytes(&values)
            + slice_bytes(&unused_x)
            + slice_bytes(&unused_base);
        let placement = CudaStreamHandle::replay(&stream);
        Ok(Box::new(PreparedCudaScan {
            dims,
            semiring,
            stream,
            forward: (forward, forward_shape),
            backward: (backward, backward_shape),
            edge,
            lengths,
            values,
            unused_x,
            unused_base,
            saved: None,
            placement,
            memory: MemoryTally::new(inputs),
        }))
    }
}

/// The problem's inputs copied to the device, so nothing of the caller's is borrowed.
struct PreparedCudaScan {
    dims: ScanDims,
    semiring: Semiring,
    stream: Arc<CudaStream>,
    forward: (CudaFunction, launch::LaunchShape),
    backward: (CudaFunction, launch::LaunchShape),
    edge: CudaSlice<f32>,
    lengths: CudaSlice<i32>,
    /// One float64 per sequence: log Z, the Viterbi score or H.
    values: CudaSlice<f64>,
    /// What the forward's save pointers get when it does not save.
    unused_x: CudaSlice<f32>,
    unused_base: CudaSlice<f64>,
    /// Allocated by the first call that needs them, then kept.
    saved: Option<BackwardBuffers>,
    placement: CudaStreamHandle,
    memory: MemoryTally,
}

/// Every scan kernel's first arguments: `edge, lengths, T, K, C`.
fn push_problem<'a>(
    launch: &mut LaunchArgs<'a>,
    edge: &'a CudaSlice<f32>,
    lengths: &'a CudaSlice<i32>,
    tkc: &'a [i32; 3],
) {
    launch
        .arg(edge)
        .arg(lengths)
        .arg(&tkc[0])
        .arg(&tkc[1])
        .arg(&tkc[2]);
}

fn config(shape: launch::LaunchShape) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (shape.blocks, 1, 1),
        block_dim: (shape.threads, 1, 1),
        shared_mem_bytes: shape.shared_bytes,
    }
}

fn zeroed_again<T: cudarc::driver::DeviceRepr + ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    slice: &mut CudaSlice<T>,
) -> Result<(), ScanError> {
    stream
        .memset_zeros(slice)
        .map_err(driver_error("cuMemsetD8Async"))
}

impl PreparedCudaScan {
    /// T, K and C as the kernels take them (`check_fits` made sure they fit an `int`).
    fn dims_i32(&self) -> [i32; 3] {
        let d = self.dims;
        [d.positions as i32, d.durations as i32, d.labels as i32]
    }

    fn backward_buffers(&mut self) -> Result<(), ScanError> {
        if self.saved.is_some() {
            return Ok(());
        }
        let d = self.dims;
        let rows = d.batch * d.positions;
        let pairs = self.semiring == Semiring::Entropy;
        let buffers = BackwardBuffers {
            saved_x: zeros(&self.stream, rows * d.labels)?,
            saved_base_x: zeros(&self.stream, rows)?,
            saved_h: zeros(&self.stream, if pairs { rows * d.labels } else { 1 })?,
            saved_base_h: zeros(&self.stream, if pairs { rows } else { 1 })?,
            grad: zeros(&self.stream, d.edge_len())?,
        };
        self.memory.hold_backward(buffers.bytes());
        self.saved = Some(buffers);
        Ok(())
    }

    /// Queues the forward; `save` keeps every row for the backward.
    fn launch_forward(&mut self, save: bool) -> Result<(), ScanError> {
        if save {
            self.backward_buffers()?;
        }
        let tkc = self.dims_i32();
        let save_flag = i32::from(save);
        let (function, shape) = &self.forward;
        let mut launch = self.stream.launch_builder(function);
        push_problem(&mut launch, &self.edge, &self.lengths, &tkc);
        launch.arg(&mut self.values).arg(&save_flag);
        match (&mut self.saved, save) {
            (Some(s), true) => launch
                .arg(&mut s.saved_x)
                .arg(&mut s.saved_base_x)
                .arg(&mut s.saved_h)
                .arg(&mut s.saved_base_h),
            _ => launch
                .arg(&self.unused_x)
                .arg(&self.unused_base)
                .arg(&self.unused_x)
                .arg(&self.unused_base),
        };
        // SAFETY: the arguments match scan_forward_*(const float*, const int*, int, int, int,
        // double*, int, float*, double*, float*, double*) in cuda/semiring_scan.cu; the saved
        // buffers hold B·T rows (B·T·C floats), values B doubles; with save = 0 the kernel
        // never touches the placeholders. Shared memory is sized by launch_shape.
        unsafe { launch.launch(config(*shape)) }
            .map_err(driver_error("cuLaunchKernel(scan_forward)"))?;
        self.memory.record_call(save);
        Ok(())
    }

    /// Queues the backward from the rows the last saving forward kept.
    fn launch_backward(&mut self) -> Result<(), ScanError> {
        let tkc = self.dims_i32();
        let Some(s) = self.saved.as_mut() else {
            return Err(ScanError::Backend(
                "the backward ran before a saving forward".into(),
            ));
        };
        zeroed_again(&self.stream, &mut s.grad)?;
        let (function, shape) = &self.backward;
        let mut launch = self.stream.launch_builder(function);
        push_problem(&mut launch, &self.edge, &self.lengths, &tkc);
        match self.semiring {
            Semiring::Log => launch
                .arg(&self.values)
                .arg(&s.saved_x)
                .arg(&s.saved_base_x)
                .arg(&mut s.grad),
            Semiring::Max => launch.arg(&s.saved_x).arg(&s.saved_base_x).arg(&mut s.grad),
            Semiring::Entropy => launch
                .arg(&s.saved_x)
                .arg(&s.saved_base_x)
                .arg(&s.saved_h)
                .arg(&s.saved_base_h)
                .arg(&mut s.grad),
        };
        // SAFETY: the arguments match scan_backward_{log,max,entropy} in
        // cuda/semiring_scan.cu, in that order; every buffer holds what the saving forward
        // wrote for the same dims; grad holds B·(T−1)·K·C² floats.
        unsafe { launch.launch(config(*shape)) }
            .map_err(driver_error("cuLaunchKernel(scan_backward)"))?;
        self.memory.record_call(true);
        Ok(())
    }

    fn synchronize(&self) -> Result<(), ScanError> {
        self.stream
            .synchronize()
            .map_err(driver_error("cuStreamSynchronize"))
    }

    /// One call of `phase`, its timed part a segment of `timer`.
    fn timed(&mut self, phase: Phase, timer: &mut dyn Timer) -> Result<(), ScanError> {
        if phase == Phase::Backward {
            self.launch_forward(true)?;
        }
        self.synchronize()?;
        segment(timer, || match phase {
            Phase::Forward => self.launch_forward(false),
            Phase::Backward => self.launch_backward(),
            Phase::Both => {
                self.launch_forward(true)?;
                self.launch_backward()
            }
        })
    }
}

impl PreparedScan for PreparedCudaScan {
    fn placement(&self) -> Placement<'_> {
        Placement::Stream(&self.placement)
    }

    fn run_calls(
        &mut self,
        phase: Phase,
        calls: u64,
        timer: &mut dyn Timer,
    ) -> Result<(), ScanError> {
        (0..calls).try_for_each(|_| self.timed(phase, timer))
    }

    fn run_once(&mut self, phase: Phase) -> Result<ScanOutput, ScanError> {
        match phase {
            Phase::Forward => self.launch_forward(false)?,
            Phase::Backward | Phase::Both => {
                self.launch_forward(true)?;
                self.launch_backward()?;
            }
        }
        self.synchronize()?;
        let values: Vec<f64> = self
            .stream
            .clone_dtoh(&self.values)
            .map_err(driver_error("cuMemcpyDtoH"))?;
        let grad = match (phase, &self.saved) {
            (Phase::Forward, _) | (_, None) => None,
            (_, Some(s)) => Some(
                self.stream
                    .clone_dtoh(&s.grad)
                    .map_err(driver_error("cuMemcpyDtoH"))?,
            ),
        };
        Ok(ScanOutput {
            values: values.iter().map(|&v| v as f32).collect(),
            grad,
        })
    }

    fn reset_peak_memory(&mut self) {
        self.memory.reset();
    }

    fn peak_memory(&self) -> MemoryPeak {
        self.memory.peak()
    }
}
