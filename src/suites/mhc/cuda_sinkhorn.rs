//! The CUDA Sinkhorn ([`crate::kernels::mhc_sinkhorn::cuda`]) on one GPU, on libtorch
//! tensors: loaded for the command's device and queued on libtorch's current stream (stages 1
//! and 3 around it are libtorch ops on that stream, so the order needs no extra sync).

use cudarc::driver::CudaFunction;
use tch::Tensor;

use super::shape::{MhcDtype, MhcShape};
use super::MhcError;
use crate::device::CudaDevice;
use crate::kernels::mhc_sinkhorn::cuda::{kernel_name, launch, launch_shape, SinkhornArgs};
use crate::kernels::KernelCache;

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
        let count = logits.numel() as i64 / nn;
        let launch_shape = launch_shape(count as u64, n)?;
        let stream = crate::torch::cuda_stream::current_cuda_stream(&self.device)
            .map_err(|e| MhcError::Cuda(e.0))?;
        self.device
            .context
            .bind_to_thread()
            .map_err(|e| MhcError::Cuda(format!("cuCtxSetCurrent: {e}")))?;
        let args = SinkhornArgs {
            input: logits.data_ptr() as u64,
            output: out.data_ptr() as u64,
            count,
            n,
        };
        // SAFETY: the function is this dtype's kernel, loaded in this device's context, now
        // bound; both pointers hold count·n² elements of the dtype on this GPU (checked
        // above); the stream is libtorch's live current stream of this device.
        let stream = stream as cudarc::driver::sys::CUstream;
        unsafe { launch(&self.function, self.dtype, launch_shape, stream, args) }?;
        Ok(())
    }
}
