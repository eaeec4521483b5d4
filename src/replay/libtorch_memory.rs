//! Tier 1's copies and memsets issued by libtorch (`aten::copy_`, `aten::fill_`) on its
//! current CUDA stream: how `replay sequence` runs them on CUDA, so that every op of the step
//! runs on one stream ([`super::sequence_route`]). Alone, `isolated` issues them through the
//! CUDA runtime on replay's stream ([`super::tier1_memory`]).
//!
//! A copy is `copy_` of the recorded byte count between byte tensors where the trace's
//! copy went (pinned or pageable host memory as recorded); a memset is `fill_` of a byte
//! tensor, which libtorch issues as a fill kernel, not `cudaMemsetAsync`: the method says so.

use tch::{Kind, Tensor};

use super::registry::{Method, SetupError};
use super::rotating_op::RotatingOp;
use super::tier1_memory::{host_memory, HostMemory, MemoryWork};
use crate::device::{CudaDevice, Device};
use crate::signature::schema::MemcpyKind;
use crate::torch::{OpArg, PreparedOp};

fn failed(e: impl std::fmt::Display) -> SetupError {
    SetupError::Failed(e.to_string())
}

/// A byte tensor of `bytes` on the host (pinned for `gpu` when asked).
fn host_bytes(bytes: i64, memory: HostMemory, gpu: &CudaDevice) -> Result<Tensor, SetupError> {
    let t = Tensor::f_zeros([bytes], (Kind::Uint8, Device::host().torch())).map_err(failed)?;
    match memory {
        HostMemory::Pageable => Ok(t),
        HostMemory::Pinned => t.f_pin_memory(gpu.torch()).map_err(failed),
    }
}

/// `work` as a libtorch call on `gpu`, prepared (not yet run).
pub fn prepare(work: MemoryWork, gpu: &CudaDevice) -> Result<(RotatingOp, Method), SetupError> {
    let device_bytes =
        |bytes: i64| Tensor::f_zeros([bytes], (Kind::Uint8, gpu.torch())).map_err(failed);
    let (call, method) = match work {
        MemoryWork::Copy(p) => {
            let bytes = i64::try_from(p.bytes)
                .map_err(|_| SetupError::Unsupported(format!("a copy of {} bytes", p.bytes)))?;
            let host = host_memory(&p).unwrap_or(HostMemory::Pageable);
            let (dst, src) = match p.kind {
                MemcpyKind::HtoD => (device_bytes(bytes)?, host_bytes(bytes, host, gpu)?),
                MemcpyKind::DtoH => (host_bytes(bytes, host, gpu)?, device_bytes(bytes)?),
                MemcpyKind::DtoD => (device_bytes(bytes)?, device_bytes(bytes)?),
                MemcpyKind::HtoH | MemcpyKind::PtoP => {
                    return Err(SetupError::Unsupported(format!(
                        "a {:?} copy is not issued on a stream of this device by libtorch",
                        p.kind
                    )))
                }
            };
            let call = PreparedOp::new(
                "aten::copy_",
                "",
                vec![OpArg::Tensor(dst), OpArg::Tensor(src), OpArg::Bool(true)],
            )
            .map_err(|e| failed(e.0))?;
            (
                call,
                format!("libtorch copy_ {:?} on its current stream", p.kind),
            )
        }
        MemoryWork::Set(p) => {
            let bytes = i64::try_from(p.bytes)
                .map_err(|_| SetupError::Unsupported(format!("a memset of {} bytes", p.bytes)))?;
            let call = PreparedOp::new(
                "aten::fill_",
                "Scalar",
                vec![OpArg::Tensor(device_bytes(bytes)?), OpArg::Int(0)],
            )
            .map_err(|e| failed(e.0))?;
            (
                call,
                "libtorch fill_ on its current stream (a fill kernel, not cudaMemsetAsync)"
                    .to_owned(),
            )
        }
    };
    Ok((RotatingOp::new(vec![call]), Method(method)))
}
