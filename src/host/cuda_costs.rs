//! On a GPU, what the host pays around the device, each timed by the host's clock (the
//! measurement core places every target here on the host):
//! - a launch: `cuLaunchKernel` of a one-thread kernel (`stream_copy` of one float, from
//!   `cuda/stream_bandwidth.cu`) on replay's stream, queued behind the blocking kernel so the
//!   GPU is busy and the host only enqueues: the launch call alone;
//! - a launching op: `aten::fill_` of a one-element tensor, the dispatcher and libtorch's
//!   launch together;
//! - a synchronisation: the same kernel launched and `cuStreamSynchronize`d at once, less the
//!   launch and the kernel's own device time (CUDA events behind the blocking kernel, the
//!   core's GPU timer, measured apart): what the host loses from the launch call's return to
//!   running again, the submission to the GPU included;
//! - a 4-byte device-to-host copy (`copy_` into a CPU tensor, which waits for the copy) into
//!   pinned and into pageable memory, the GPU idle before each.
//!
//! Nothing here runs without a GPU; the caller only calls it with an opened CUDA device.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use tch::{Kind, Tensor};

use super::error::HostError;
use super::timing::{measure_rounds, Derived, Figure, HostCalls, Plan};
use crate::device::{CudaDevice, Device};
use crate::kernels::KernelCache;
use crate::measure::blocking_kernel::{BlockingKernel, BLOCKED_MAX_CALLS_PER_SAMPLE};
use crate::measure::cuda_timing::CudaStreamHandle;
use crate::measure::{segment, MeasureError, Placement, Target, Timer};

/// The tiny kernel's name.
const KERNEL: &str = "stream_copy";

fn driver_error(call: &'static str) -> impl Fn(cudarc::driver::DriverError) -> HostError {
    move |e| HostError::Device(format!("{call}: {e}"))
}

/// The plan of every GPU figure: short calls, at most as many per sample as the launch queue
/// holds behind the blocking kernel.
pub fn plan(base: &Plan) -> Plan {
    Plan {
        max_calls_per_sample: BLOCKED_MAX_CALLS_PER_SAMPLE,
        ..*base
    }
}

/// A one-thread kernel copying one float, on replay's stream.
struct TinyKernel {
    stream: Arc<CudaStream>,
    function: CudaFunction,
    a: CudaSlice<f32>,
    b: CudaSlice<f32>,
}

impl TinyKernel {
    fn new(device: &CudaDevice, kernels: &KernelCache) -> Result<TinyKernel, HostError> {
        let function = kernels
            .function(&device.context, KERNEL)
            .map_err(|e| HostError::Device(e.to_string()))?;
        let stream = device.stream.clone();
        let a = stream
            .alloc_zeros::<f32>(4)
            .map_err(driver_error("cuMemAlloc"))?;
        let b = stream
            .alloc_zeros::<f32>(4)
            .map_err(driver_error("cuMemAlloc"))?;
        let mut kernel = TinyKernel {
            stream,
            function,
            a,
            b,
        };
        // Once unblocked: a lazily loaded module is loaded at its first launch, which must not
        // wait behind a spinning blocker.
        kernel.launch()?;
        kernel.synchronize()?;
        Ok(kernel)
    }

    fn launch(&mut self) -> Result<(), MeasureError> {
        let n: u64 = 1;
        let mut launch = self.stream.launch_builder(&self.function);
        launch.arg(&self.a).arg(&mut self.b).arg(&n);
        let config = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: matches stream_copy(const float*, float*, unsigned long long); both arrays
        // hold 4 floats and n = 1.
        unsafe { launch.launch(config) }
            .map(drop)
            .map_err(|e| MeasureError::target(format!("cuLaunchKernel: {e}")))
    }

    fn synchronize(&self) -> Result<(), MeasureError> {
        self.stream
            .synchronize()
            .map_err(|e| MeasureError::target(format!("cuStreamSynchronize: {e}")))
    }
}

/// What the host does with the tiny kernel, per call.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Launch it with the stream blocked: the launch call alone.
    BlockedLaunch,
    /// Launch it and wait for it.
    RoundTrip,
}

/// The tiny kernel as a host-timed target.
struct HostLaunches {
    kernel: TinyKernel,
    mode: Mode,
    /// The blocker of [`Mode::BlockedLaunch`].
    blocker: Option<BlockingKernel>,
}

impl Target for HostLaunches {
    fn placement(&self) -> Placement<'_> {
        Placement::Host
    }

    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        for _ in 0..calls {
            self.kernel.launch()?;
            if self.mode == Mode::RoundTrip {
                self.kernel.synchronize()?;
            }
        }
        Ok(())
    }

    fn run_timed(&mut self, calls: u64, timer: &mut dyn Timer) -> Result<(), MeasureError> {
        self.kernel.synchronize()?;
        let Some(mut blocker) = self.blocker.take() else {
            return segment(timer, || self.run(calls));
        };
        // SAFETY: replay's stream, of the context current on this thread (bound when the
        // kernel was made), alive as long as `self.kernel`.
        let blocked = unsafe { blocker.block(self.kernel.stream.cu_stream()) };
        let ran = blocked.and_then(|()| segment(timer, || self.run(calls)));
        blocker.release();
        let waited = self.kernel.synchronize();
        blocker.finished();
        self.blocker = Some(blocker);
        ran.and(waited)
    }
}

/// The tiny kernel on the device, timed by the core's GPU timer (CUDA events on replay's stream
/// behind the blocking kernel): the kernel's own time, back to back.
struct DeviceLaunches {
    kernel: TinyKernel,
    placement: CudaStreamHandle,
}

impl Target for DeviceLaunches {
    fn placement(&self) -> Placement<'_> {
        Placement::Stream(&self.placement)
    }

    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        (0..calls).try_for_each(|_| self.kernel.launch())
    }

    fn run_timed(&mut self, calls: u64, timer: &mut dyn Timer) -> Result<(), MeasureError> {
        self.kernel.synchronize()?;
        segment(timer, || self.run(calls))
    }
}

/// A launch, a launching op, a synchronisation.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchCosts {
    /// `cuLaunchKernel` with the GPU busy.
    pub launch: Figure,
    /// `aten::fill_` of one element: dispatch and launch.
    pub launch_op: Figure,
    /// Launch and `cuStreamSynchronize` of the tiny kernel.
    pub round_trip: Figure,
    /// The tiny kernel's device time.
    pub kernel: Figure,
    /// round trip − launch − kernel.
    pub sync: Derived,
}

/// Measures the launch, the launching op and the synchronisation on `device`.
pub fn measure_launches(device: &CudaDevice, plan: &Plan) -> Result<LaunchCosts, HostError> {
    device
        .context
        .bind_to_thread()
        .map_err(driver_error("cuCtxSetCurrent"))?;
    let kernels = KernelCache::default();
    let host = |mode| -> Result<HostLaunches, HostError> {
        let blocker = match mode {
            Mode::BlockedLaunch => Some(BlockingKernel::new()?),
            Mode::RoundTrip => None,
        };
        Ok(HostLaunches {
            kernel: TinyKernel::new(device, &kernels)?,
            mode,
            blocker,
        })
    };
    let mut launches = host(Mode::BlockedLaunch)?;
    let mut round_trips = host(Mode::RoundTrip)?;
    let stream = TinyKernel::new(device, &kernels)?;
    let placement =
        CudaStreamHandle::replay(&stream.stream).with_blocking_kernel(device.blocking_kernel);
    let mut on_device = DeviceLaunches {
        kernel: stream,
        placement,
    };
    let mut t = Tensor::f_zeros([1], (Kind::Float, device.torch()))?;
    let mut fills = HostCalls::synchronising(
        move || t.f_fill_(1.0).map(drop).map_err(HostError::from),
        Some(device),
    );
    let figures = measure_rounds(
        &mut [
            &mut launches as &mut dyn Target,
            &mut fills as &mut dyn Target,
            &mut round_trips as &mut dyn Target,
            &mut on_device as &mut dyn Target,
        ],
        plan,
    )?;
    let [launch, launch_op, round_trip, kernel]: [Figure; 4] = figures
        .try_into()
        .map_err(|_| HostError::Measure("a figure is missing".into()))?;
    let sync = Derived::of(&[&round_trip, &launch, &kernel], |m| m[0] - m[1] - m[2]);
    Ok(LaunchCosts {
        launch,
        launch_op,
        round_trip,
        kernel,
        sync,
    })
}

/// A 4-byte copy from the device into pinned and into pageable host memory.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyCosts {
    pub pinned: Figure,
    pub pageable: Figure,
}

/// Measures the two copies on `device`.
pub fn measure_copies(device: &CudaDevice, plan: &Plan) -> Result<CopyCosts, HostError> {
    let gpu = device.torch();
    let source = Tensor::f_ones([1], (Kind::Float, gpu))?;
    let mut pinned =
        Tensor::f_zeros([1], (Kind::Float, Device::host().torch()))?.f_pin_memory(gpu)?;
    let mut pageable = Tensor::f_zeros([1], (Kind::Float, Device::host().torch()))?;
    let into_pinned = source.shallow_clone();
    let mut pinned_copies = HostCalls::synchronising(
        move || pinned.f_copy_(&into_pinned).map_err(HostError::from),
        Some(device),
    );
    let mut pageable_copies = HostCalls::synchronising(
        move || pageable.f_copy_(&source).map_err(HostError::from),
        Some(device),
    );
    let figures = measure_rounds(
        &mut [
            &mut pinned_copies as &mut dyn Target,
            &mut pageable_copies as &mut dyn Target,
        ],
        plan,
    )?;
    let [pinned, pageable]: [Figure; 2] = figures
        .try_into()
        .map_err(|_| HostError::Measure("a figure is missing".into()))?;
    Ok(CopyCosts { pinned, pageable })
}
