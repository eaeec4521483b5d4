//! libtorch's current CUDA stream: where tier-3 ops and whole models really run.

use std::ffi::c_void;
use std::ptr;

use super::shim_error::{take_error, ShimError};
use super::sys;

use crate::device::CudaDevice;

/// libtorch's current CUDA stream on the opened `gpu`, as a raw `cudaStream_t`.
pub fn current_cuda_stream(gpu: &CudaDevice) -> Result<*mut c_void, ShimError> {
    torch_current_cuda_stream(gpu.info.index)
}

/// libtorch's current CUDA stream for device ordinal `device`, as a raw `cudaStream_t`.
fn torch_current_cuda_stream(device: usize) -> Result<*mut c_void, ShimError> {
    let index = i32::try_from(device)
        .map_err(|_| ShimError(format!("CUDA device index {device} is out of range")))?;
    let mut error = ptr::null_mut();
    // SAFETY: the shim catches every C++ exception.
    let stream = unsafe { sys::replay_torch_current_cuda_stream(index, &mut error) };
    if !error.is_null() {
        return Err(take_error(error));
    }
    Ok(stream)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_cuda_stream_without_a_gpu_is_an_error() {
        if tch::Cuda::is_available() {
            // With CUDA, selftest check "CUDA events on libtorch's stream" gets the stream
            // and times libtorch's work on it.
            return;
        }
        assert!(torch_current_cuda_stream(0).is_err());
    }
}
