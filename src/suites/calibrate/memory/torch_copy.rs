//! The libtorch way of moving memory, what a model sees: `dst.copy_(src)` of `n` float32 on
//! the device, timed as every libtorch composition is ([`TorchWork`] through
//! [`time_trials`]: the monotonic clock on the CPU, CUDA events on libtorch's stream).
//!
//! On the CPU libtorch's copy stores through the caches, so each destination line is also read
//! before it is written (write-allocate), traffic that STREAM's count, used here too, leaves
//! out: on a 2-core EPYC VM it ran at about the speed of replay's own copy with ordinary
//! stores (`--isa portable`), below replay's streaming copy.

use tch::{Kind, Tensor};

use crate::device::Device;
use crate::kernels::stream_bandwidth::StreamKernel;
use crate::suites::calibrate::timing::{time_trials, Latency, Trials};
use crate::suites::calibrate::CalibrateError;
use crate::torch::work_target::TorchWork;

/// Times `trials` copies of `n` floats on `device`.
pub fn time_torch_copy(
    device: &Device,
    n: usize,
    trials: Trials,
) -> Result<Latency, CalibrateError> {
    let len = i64::try_from(n)
        .map_err(|_| CalibrateError::Usage(format!("{n} elements are too many for libtorch")))?;
    let src = Tensor::f_ones([len], (Kind::Float, device.torch()))?;
    let mut dst = Tensor::f_zeros([len], (Kind::Float, device.torch()))?;
    // One copy before timing: pages faulted in, and on a GPU libtorch's context made current
    // for the events (TorchWork asks for it).
    dst.f_copy_(&src)?;
    let mut target = TorchWork::new(device, || dst.f_copy_(&src))?;
    time_trials(&mut target, trials)
}

/// The bytes one libtorch copy of `n` floats is counted as moving (read src, write dst).
pub fn bytes(n: usize) -> u64 {
    StreamKernel::Copy.bytes(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_libtorch_copy_is_timed_for_every_trial_and_counted_as_read_plus_write() {
        let trials = Trials {
            warmup: 1,
            trials: 3,
        };
        let latency = time_torch_copy(Device::host(), 1 << 16, trials).unwrap();
        assert_eq!(latency.num_trials, 3);
        assert!(latency.min_latency_ms > 0.0);
        assert!(latency.min_latency_ms <= latency.median_latency_ms);
        assert_eq!(bytes(1 << 16), 2 * 4 * (1 << 16));
    }
}
