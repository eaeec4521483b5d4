//! The CUDA caching allocator's own peaks (what `torch.cuda.max_memory_allocated` and
//! `max_memory_reserved` report), read through the shim. Builds whose libtorch has no CUDA say
//! so as an error.

use std::ptr;

use super::shim_error::{take_error, ShimError};
use super::sys;
use crate::device::CudaDevice;

fn device_index(device: usize) -> Result<i32, ShimError> {
    i32::try_from(device)
        .map_err(|_| ShimError(format!("CUDA device index {device} is out of range")))
}

/// Peak bytes allocated to tensors and reserved from the driver on the opened `gpu` since the
/// last [`reset_peak`], as `(allocated, reserved)`.
pub fn peak(gpu: &CudaDevice) -> Result<(u64, u64), ShimError> {
    peak_at(gpu.info.index)
}

/// Resets both peaks on the opened `gpu` to what the caching allocator holds now.
pub fn reset_peak(gpu: &CudaDevice) -> Result<(), ShimError> {
    reset_peak_at(gpu.info.index)
}

fn peak_at(device: usize) -> Result<(u64, u64), ShimError> {
    let index = device_index(device)?;
    let (mut allocated, mut reserved) = (0u64, 0u64);
    let mut error = ptr::null_mut();
    // SAFETY: the out-pointers are live; the shim catches every C++ exception.
    let rc =
        unsafe { sys::replay_cuda_memory_peak(index, &mut allocated, &mut reserved, &mut error) };
    if rc != 0 {
        return Err(take_error(error));
    }
    Ok((allocated, reserved))
}

fn reset_peak_at(device: usize) -> Result<(), ShimError> {
    let index = device_index(device)?;
    let mut error = ptr::null_mut();
    // SAFETY: the shim catches every C++ exception.
    let rc = unsafe { sys::replay_cuda_memory_reset_peak(index, &mut error) };
    if rc != 0 {
        return Err(take_error(error));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_statistics_are_read_on_a_gpu_and_an_error_without_one() {
        // A device index past the last is an error everywhere.
        assert!(peak_at(usize::MAX).is_err());
        if tch::Cuda::is_available() {
            // With a GPU (and a shim built with CUDA), the torch backend's peaks come from here.
            let gpu = CudaDevice::open(0).expect("open cuda:0");
            reset_peak(&gpu).expect("reset the peak of cuda:0");
            assert!(peak(&gpu).is_ok());
        } else {
            assert!(peak_at(0).is_err());
            assert!(reset_peak_at(0).is_err());
        }
    }
}
