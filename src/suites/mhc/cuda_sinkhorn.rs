//! How `cuda/mhc_sinkhorn.cu` is launched: the kernel per dtype, one thread per matrix,
//! on libtorch's current stream (its inputs and outputs are libtorch tensors, and stages 1
//! and 3 around it are libtorch ops on that stream, so the order needs no extra sync).

use std::ffi::c_void;

use cudarc::driver::CudaFunction;
use tch::Tensor;

use super::fused_sinkhorn::MAX_STREAMS;
use super::shape::{MhcDtype, MhcShape, SINKHORN_EPS, SINKHORN_ITERS};
use super::MhcError;
use crate::device::CudaDevice;
use crate::kernels::KernelCache;

/// Threads per block: one matrix each.
pub const THREADS: u32 = 256;

/// The kernel for matrices stored in `dtype`, by its `extern "C"` name.
pub fn kernel_name(dtype: MhcDtype) -> &'static str {
    match dtype {
        MhcDtype::Float32 => "mhc_sinkhorn_f32",
        MhcDtype::Bfloat16 => "mhc_sinkhorn_bf16",
        MhcDtype::Float16 => "mhc_sinkhorn_f16",
    }
}

/// One 1-D launch: `blocks` × THREADS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchShape {
    pub blocks: u32,
    pub threads: u32,
}

/// Enough blocks for one thread per matrix; a grid CUDA cannot launch (more than 2³¹ − 1
/// blocks) or n beyond the kernel's 16 is refused with the numbers.
pub fn launch_shape(matrices: u64, n: usize) -> Result<LaunchShape, MhcError> {
    if n == 0 || n > MAX_STREAMS {
        return Err(MhcError::InvalidInput(format!(
            "the CUDA Sinkhorn takes n from 1 to {MAX_STREAMS}, not {n}"
        )));
    }
    let blocks = matrices.div_ceil(THREADS as u64).max(1);
    if blocks > i32::MAX as u64 {
        return Err(MhcError::InvalidInput(format!(
            "{matrices} matrices need {blocks} blocks, more than CUDA's 2^31 − 1"
        )));
    }
    Ok(LaunchShape {
        blocks: blocks as u32,
        threads: THREADS,
    })
}

/// The kernel loaded on one GPU for one dtype.
pub struct CudaSinkhorn {
    device: CudaDevice,
    function: CudaFunction,
    dtype: MhcDtype,
}

impl CudaSinkhorn {
    /// The kernel on `device`, the GPU the command opened.
    pub fn new(device: &CudaDevice, dtype: MhcDtype) -> Result<CudaSinkhorn, MhcError> {
        let device = device.clone();
        let function = KernelCache::default()
            .function(&device.context, kernel_name(dtype))
            .map_err(|e| MhcError::Unavailable(e.to_string()))?;
        Ok(CudaSinkhorn {
            device,
            function,
            dtype,
        })
    }

    /// Queues the kernel on libtorch's current stream: `logits` (…, n²) into `out`, both
    /// contiguous tensors of the dtype on this GPU.
    pub fn run(&self, logits: &Tensor, out: &mut Tensor, shape: &MhcShape) -> Result<(), MhcError> {
        let gpu = self.device.spec();
        for (what, t) in [("logits", logits), ("output", &*out)] {
            if t.device() != self.device.torch()
                || t.kind() != self.dtype.kind()
                || !t.is_contiguous()
            {
                return Err(MhcError::InvalidInput(format!(
                    "CUDA Sinkhorn {what}: want a contiguous {} tensor on {gpu}, got {:?} on {:?}",
                    self.dtype.name(),
                    t.kind(),
                    t.device()
                )));
            }
        }
        let n = shape.streams;
        let nn = (n * n) as i64;
        if logits.numel() as i64 % nn != 0 || out.numel() != logits.numel() {
            return Err(MhcError::InvalidInput(format!(
                "CUDA Sinkhorn: {} logits are not whole {n}×{n} matrices",
                logits.numel()
            )));
        }
        let mut count = logits.numel() as i64 / nn;
        let launch = launch_shape(count as u64, n)?;
        let stream = crate::torch::cuda_stream::current_cuda_stream(&self.device)
            .map_err(|e| MhcError::Cuda(e.0))?;
        self.device
            .context
            .bind_to_thread()
            .map_err(|e| MhcError::Cuda(format!("cuCtxSetCurrent: {e}")))?;
        let mut input = logits.data_ptr() as u64;
        let mut output = out.data_ptr() as u64;
        let mut n_arg = n as i32;
        let mut iters = SINKHORN_ITERS as i32;
        let mut eps = SINKHORN_EPS;
        let mut params: [*mut c_void; 6] = [
            &mut input as *mut u64 as *mut c_void,
            &mut output as *mut u64 as *mut c_void,
            &mut count as *mut i64 as *mut c_void,
            &mut n_arg as *mut i32 as *mut c_void,
            &mut iters as *mut i32 as *mut c_void,
            &mut eps as *mut f32 as *mut c_void,
        ];
        // SAFETY: the parameters match mhc_sinkhorn_*(const T*, T*, long long, int, int, float)
        // in cuda/mhc_sinkhorn.cu; both pointers hold count·n² elements of T on this GPU
        // (checked above); the stream is libtorch's live current stream of this device.
        unsafe {
            cudarc::driver::result::launch_kernel(
                self.function.cu_function(),
                (launch.blocks, 1, 1),
                (launch.threads, 1, 1),
                0,
                stream as cudarc::driver::sys::CUstream,
                &mut params,
            )
        }
        .map_err(|e| MhcError::Cuda(format!("cuLaunchKernel({}): {e}", kernel_name(self.dtype))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_thread_per_matrix_in_whole_blocks() {
        // The seed's default: 16·4096 = 65 536 matrices → 256 blocks of 256.
        assert_eq!(
            launch_shape(65_536, 4).unwrap(),
            LaunchShape {
                blocks: 256,
                threads: 256
            }
        );
        assert_eq!(launch_shape(65_537, 4).unwrap().blocks, 257);
        assert_eq!(launch_shape(1, 4).unwrap().blocks, 1);
        assert!(launch_shape(1, 17).is_err());
        assert!(launch_shape(1, 0).is_err());
        assert!(launch_shape(u64::MAX / 2, 4).is_err());
    }

    #[test]
    fn each_dtype_has_its_registered_kernel() {
        let (_, registered) = crate::kernels::REGISTERED
            .iter()
            .find(|(module, _)| *module == "mhc_sinkhorn")
            .expect("mhc_sinkhorn is registered");
        let mut names: Vec<&str> = MhcDtype::ALL.iter().map(|&d| kernel_name(d)).collect();
        names.sort();
        let mut listed = registered.to_vec();
        listed.sort();
        assert_eq!(names, listed);
    }
}
