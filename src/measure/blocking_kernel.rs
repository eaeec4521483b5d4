//! The blocking kernel behind which the CUDA timer queues each timed segment
//! (`cuda/blocking.cu`, as nvbench's `blocking_kernel`): a one-thread kernel that spins on a
//! host-mapped flag, so that the start event, the segment's launches and the end event queue
//! up behind it while the host issues them; the host then releases the flag and the GPU runs
//! the queued work back to back. Events around a batch of kernels shorter than their launch
//! then measure the kernels, not the host's launch rate.
//!
//! Two sharp edges, both handled here or by the timer:
//! - the launch queue holds about 1024 pending launches: a segment that issues more makes the
//!   host wait for a slot the spinning kernel never frees. The timer caps calls per sample
//!   ([`BLOCKED_MAX_CALLS_PER_SAMPLE`]) and the kernel gives up after [`BLOCKING_TIMEOUT`];
//! - a segment that waits for the device itself (a copy to pageable host memory, a libtorch
//!   op that reads a result back) waits for the blocker: the kernel times out and the timer
//!   stops blocking for the rest of the measurement ([`BlockingSchedule`]).
//!
//! Nothing here but [`BlockingSchedule`] runs without a CUDA device.

use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use cudarc::driver::sys::{self, CUfunction, CUstream};
use cudarc::driver::{result, DriverError};

use super::MeasureError;

/// Calls per sample on a stream timed behind the blocking kernel. A sample's calls are issued
/// while the stream is blocked, and the launch queue holds about 1024 pending launches: 128
/// calls leave room for a libtorch op that launches up to 7 kernels per call (plus the two
/// events). Batching aims a sample at 22 µs of device time, so the cap only binds for calls
/// under 0.17 µs, shorter than any kernel; an op that launches more kernels than that is
/// caught by the timeout.
pub const BLOCKED_MAX_CALLS_PER_SAMPLE: u64 = 128;

/// How long the blocking kernel waits for the host before it gives up: far above the host's
/// issue time of one sample (128 libtorch ops at tens of µs each), short enough that a segment
/// that cannot be blocked costs a quarter of a second once per measurement.
pub const BLOCKING_TIMEOUT: Duration = Duration::from_millis(250);

// Held at build time: two events and 128 calls of up to 7 kernels each within ~1024 pending
// launches; the timeout far above the host's issue time of a capped sample at 100 µs a call.
const _: () = assert!(2 + BLOCKED_MAX_CALLS_PER_SAMPLE * 7 <= 1024);
const _: () = assert!(BLOCKING_TIMEOUT.as_micros() > 100 * BLOCKED_MAX_CALLS_PER_SAMPLE as u128);

/// The kernel's name in `cuda/blocking.cu`.
const KERNEL: &str = "block_stream";

/// Which segments of one timer are queued behind the blocker. The first is not: it is the first
/// warm-up call, where lazy module loading, cuBLAS handles and allocator growth happen, and
/// loading a module while a kernel spins can wait for that kernel. After a segment whose
/// blocker timed out none is: whatever made it time out (too many launches, a wait for the
/// device) will again, and each time would cost the timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockingSchedule {
    enabled: bool,
    segments: u64,
    gave_up: bool,
}

impl BlockingSchedule {
    /// A schedule that blocks from the second segment on (`enabled`), or never.
    pub fn new(enabled: bool) -> Self {
        BlockingSchedule {
            enabled,
            segments: 0,
            gave_up: false,
        }
    }

    /// Whether the next segment is queued behind the blocker; counts the segment.
    pub fn block_next(&mut self) -> bool {
        let block = self.enabled && !self.gave_up && self.segments > 0;
        self.segments += 1;
        block
    }

    /// A blocked segment's blocker timed out: no further segment is blocked.
    pub fn timed_out(&mut self) {
        self.gave_up = true;
    }

    /// Whether a timeout ended the blocking.
    pub fn gave_up(&self) -> bool {
        self.gave_up
    }
}

/// `block_stream` of each context it was loaded into (`CUcontext` -> `CUfunction`, as
/// addresses): loaded once per context for the life of the process, as libtorch's kernels are.
static LOADED: Mutex<Option<HashMap<usize, usize>>> = Mutex::new(None);

fn driver_error(call: &'static str) -> impl Fn(DriverError) -> MeasureError {
    move |e| MeasureError::target(format!("{call}: {e}"))
}

/// `block_stream` in the current context, loaded from the embedded fatbin on first use.
fn kernel_in_current_context() -> Result<CUfunction, MeasureError> {
    let context = result::ctx::get_current()
        .map_err(driver_error("cuCtxGetCurrent"))?
        .ok_or_else(|| MeasureError::target("the blocking kernel needs a current CUDA context"))?;
    let mut loaded = LOADED
        .lock()
        .map_err(|_| MeasureError::target("the blocking kernel's cache lock is poisoned"))?;
    let loaded = loaded.get_or_insert_with(HashMap::new);
    if let Some(&function) = loaded.get(&(context as usize)) {
        return Ok(function as CUfunction);
    }
    let module =
        crate::kernels::module_for(KERNEL).map_err(|e| MeasureError::target(e.to_string()))?;
    // SAFETY: a fatbin nvcc built (build.rs), loaded into the current context; the module is
    // kept for the life of the process, so the function stays valid.
    let function = unsafe {
        let handle = result::module::load_data(module.fatbin.as_ptr().cast())
            .map_err(driver_error("cuModuleLoadData"))?;
        result::module::get_function(handle, CString::new(KERNEL).expect("no NUL in the name"))
            .map_err(driver_error("cuModuleGetFunction"))?
    };
    loaded.insert(context as usize, function as usize);
    Ok(function)
}

/// The blocking kernel of one timer in the current context, with its two host-mapped flags:
/// `release` (the host sets it to let the stream go) and `timed_out` (the kernel sets it when
/// it gave up waiting).
pub struct BlockingKernel {
    function: CUfunction,
    /// Two `i32`s of pinned, device-mapped host memory: release, timed out.
    host: *mut c_void,
    device: sys::CUdeviceptr,
    /// The stream the last blocker was launched on while it may still spin.
    pending: Option<CUstream>,
}

impl BlockingKernel {
    /// Loads the kernel (once per context) and allocates its flags, in the current context.
    pub fn new() -> Result<Self, MeasureError> {
        let function = kernel_in_current_context()?;
        let flags = sys::CU_MEMHOSTALLOC_DEVICEMAP | sys::CU_MEMHOSTALLOC_PORTABLE;
        // SAFETY: 8 bytes of pinned memory, zeroed through the atomics before any read.
        let host = unsafe { result::malloc_host(2 * std::mem::size_of::<i32>(), flags) }
            .map_err(driver_error("cuMemHostAlloc"))?;
        let mut device: sys::CUdeviceptr = 0;
        // SAFETY: `host` was allocated with DEVICEMAP just above.
        let mapped = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0) }.result();
        if let Err(e) = mapped {
            // SAFETY: allocated above, freed once.
            unsafe {
                let _ = result::free_host(host);
            }
            return Err(driver_error("cuMemHostGetDevicePointer")(e));
        }
        let kernel = BlockingKernel {
            function,
            host,
            device,
            pending: None,
        };
        kernel.flag(0).store(0, Ordering::SeqCst);
        kernel.flag(1).store(0, Ordering::SeqCst);
        Ok(kernel)
    }

    /// Flag `i` (0: release, 1: timed out) as the host sees it.
    fn flag(&self, i: usize) -> &AtomicI32 {
        // SAFETY: `host` holds two aligned i32s (cuMemHostAlloc aligns to pages) for the life
        // of `self`; the device writes them only through the same memory.
        unsafe { &*self.host.cast::<AtomicI32>().add(i) }
    }

    /// Queues the blocker on `stream`: what is queued after it waits for [`Self::release`].
    ///
    /// # Safety
    /// `stream` must be a live stream of the current context (the one the kernel was loaded
    /// into) and outlive this blocker.
    pub unsafe fn block(&mut self, stream: CUstream) -> Result<(), MeasureError> {
        // A blocker left pending by a segment that failed before its end: let it finish
        // before the flags are reset under it.
        self.settle()?;
        self.flag(0).store(0, Ordering::SeqCst);
        self.flag(1).store(0, Ordering::SeqCst);
        let mut release = self.device;
        let mut timed_out = self.device + std::mem::size_of::<i32>() as u64;
        let mut timeout_ns = BLOCKING_TIMEOUT.as_nanos() as u64;
        let mut params: [*mut c_void; 3] = [
            (&mut release as *mut sys::CUdeviceptr).cast(),
            (&mut timed_out as *mut sys::CUdeviceptr).cast(),
            (&mut timeout_ns as *mut u64).cast(),
        ];
        // SAFETY: block_stream(const int*, int*, unsigned long long) with three matching
        // parameters, which the driver copies at launch; the flags outlive the kernel (Drop
        // releases it and waits for the stream before freeing them).
        unsafe {
            result::launch_kernel(self.function, (1, 1, 1), (1, 1, 1), 0, stream, &mut params)
        }
        .map_err(driver_error("cuLaunchKernel (block_stream)"))?;
        self.pending = Some(stream);
        Ok(())
    }

    /// Lets the blocked stream go.
    pub fn release(&self) {
        self.flag(0).store(1, Ordering::SeqCst);
    }

    /// The blocker has finished (the caller waited for work queued behind it): its flags may
    /// be reset.
    pub fn finished(&mut self) {
        self.pending = None;
    }

    /// Releases a blocker that may still be pending and waits for its stream (outside any
    /// timed region): after a segment that failed, before the flags are reset or freed.
    pub fn settle(&mut self) -> Result<(), MeasureError> {
        if let Some(stream) = self.pending {
            self.release();
            // SAFETY: the stream outlives its timer (CudaStreamHandle's contract).
            unsafe { result::stream::synchronize(stream) }
                .map_err(driver_error("cuStreamSynchronize"))?;
            self.pending = None;
        }
        Ok(())
    }

    /// Whether the last blocker gave up waiting; read once the work after it has finished.
    pub fn timed_out(&self) -> bool {
        self.flag(1).load(Ordering::SeqCst) != 0
    }
}

impl Drop for BlockingKernel {
    fn drop(&mut self) {
        // A blocker still spinning reads the flags: release it and let it finish first.
        let _ = self.settle();
        // SAFETY: allocated by cuMemHostAlloc in `new`, freed once, no kernel reads it now.
        unsafe {
            let _ = result::free_host(self.host);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_segment_is_not_blocked_and_the_rest_are() {
        let mut schedule = BlockingSchedule::new(true);
        assert!(
            !schedule.block_next(),
            "the first warm-up call runs unblocked"
        );
        assert!((0..1000).all(|_| schedule.block_next()));
        assert!(!schedule.gave_up());
    }

    #[test]
    fn a_timeout_ends_the_blocking_for_the_rest_of_the_measurement() {
        let mut schedule = BlockingSchedule::new(true);
        schedule.block_next();
        assert!(schedule.block_next());
        schedule.timed_out();
        assert!(schedule.gave_up());
        assert!((0..100).all(|_| !schedule.block_next()));
    }

    #[test]
    fn a_disabled_schedule_never_blocks() {
        let mut schedule = BlockingSchedule::new(false);
        assert!((0..100).all(|_| !schedule.block_next()));
    }

    #[test]
    fn the_blocking_kernel_is_embedded_under_its_name() {
        let module = crate::kernels::module_for(KERNEL).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(module.name, "blocking");
    }
}
