//! How `cuda/mhc_sinkhorn.cu` is launched: the kernel per dtype, one thread per matrix, on the
//! stream the caller gives (the mHC suite gives libtorch's current stream: its inputs and
//! outputs are libtorch tensors, and stages 1 and 3 around it are libtorch ops on that stream,
//! so the order needs no extra sync).

use std::ffi::c_void;

use cudarc::driver::sys::CUstream;
use cudarc::driver::CudaFunction;

use super::{MhcDtype, MAX_STREAMS, SINKHORN_EPS, SINKHORN_ITERS};
use crate::kernels::KernelError;

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
pub fn launch_shape(matrices: u64, n: usize) -> Result<LaunchShape, KernelError> {
    if n == 0 || n > MAX_STREAMS {
        return Err(KernelError::InvalidInput(format!(
            "the CUDA Sinkhorn takes n from 1 to {MAX_STREAMS}, not {n}"
        )));
    }
    let blocks = matrices.div_ceil(THREADS as u64).max(1);
    if blocks > i32::MAX as u64 {
        return Err(KernelError::InvalidInput(format!(
            "{matrices} matrices need {blocks} blocks, more than CUDA's 2^31 − 1"
        )));
    }
    Ok(LaunchShape {
        blocks: blocks as u32,
        threads: THREADS,
    })
}

/// Where one launch reads and writes: `count` n×n matrices of logits at `input` made doubly
/// stochastic into `output`, both device pointers.
#[derive(Debug, Clone, Copy)]
pub struct SinkhornArgs {
    pub input: u64,
    pub output: u64,
    pub count: i64,
    pub n: usize,
}

/// Queues `function` (the kernel of `dtype`) in `shape` on `stream`, with the seed's
/// iterations and epsilon.
///
/// # Safety
///
/// `function` is [`kernel_name`]`(dtype)` loaded in the context bound to this thread; both
/// pointers of `args` hold `count·n²` elements of `dtype` on that context's GPU; `stream` is a
/// live stream of that context; `shape` is [`launch_shape`] of `count` and `n`.
pub unsafe fn launch(
    function: &CudaFunction,
    dtype: MhcDtype,
    shape: LaunchShape,
    stream: CUstream,
    args: SinkhornArgs,
) -> Result<(), KernelError> {
    let SinkhornArgs {
        mut input,
        mut output,
        mut count,
        n,
    } = args;
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
    // in cuda/mhc_sinkhorn.cu; the caller vouches for the pointers, the stream and the shape.
    unsafe {
        cudarc::driver::result::launch_kernel(
            function.cu_function(),
            (shape.blocks, 1, 1),
            (shape.threads, 1, 1),
            0,
            stream,
            &mut params,
        )
    }
    .map_err(|e| KernelError::Device(format!("cuLaunchKernel({}): {e}", kernel_name(dtype))))
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
