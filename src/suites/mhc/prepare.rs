//! The inputs every case of a run shares, made once on first use: x_streams, the module's
//! parameters, and torch's outputs of stages 1 and 2, which are the inputs of stages 2 and 3
//! for both implementations (so the two are timed on, and checked against, the same values).

use tch::Tensor;

use super::cuda_sinkhorn::CudaSinkhorn;
use super::fused_stages::FusedStages;
use super::settings::MhcSettings;
use super::shape::{check_fits, gib};
use super::stages::{Impl, Placement};
use super::torch_stages::{self as torch, make_x_streams, MhcWeights};
use super::MhcError;
use crate::device::Device;
use replay_core::memory_size::available_bytes;

/// Everything the cases share, made on first use.
pub(super) struct Prepared {
    pub(super) weights: MhcWeights,
    /// x_streams where stages 1–3 read it: host memory (pinned in the offload simulation),
    /// or the GPU with `--device cuda`.
    pub(super) x: Tensor,
    /// The offload simulation's inputs on the GPU (stage 0's source).
    pub(super) x_gpu: Option<Tensor>,
    /// torch's stage-1 and stage-2 outputs: the inputs of stages 2 and 3.
    pub(super) logits: Tensor,
    pub(super) mix: Tensor,
    pub(super) fused: Option<FusedBuffers>,
    pub(super) cuda_sinkhorn: Option<(CudaSinkhorn, Tensor)>,
    /// The offload simulation's pinned host result (stage 4's source) and its GPU copy.
    pub(super) result_host: Option<Tensor>,
    pub(super) result_gpu: Option<Tensor>,
    /// Why torch's stage 1 does not run here (it would not fit in memory).
    pub(super) torch_linear_refusal: Option<String>,
}

/// The fused CPU kernels with their output tensors.
pub(super) struct FusedBuffers {
    pub(super) stages: FusedStages,
    pub(super) logits: Tensor,
    pub(super) mix: Tensor,
    pub(super) out: Tensor,
}

/// Makes the inputs of a run's cases: x_streams where stages 1–3 read them (and the
/// offload simulation's GPU copies), the module's parameters, torch's stage-1 and stage-2
/// outputs, and the fused kernels' buffers.
pub(super) fn prepare(s: &MhcSettings) -> Result<Prepared, MhcError> {
    let shape = s.shape;
    let offload = matches!(s.placement, Placement::Offload);
    let on_host = !matches!(s.placement, Placement::Gpu);
    let mut torch_linear_fits = true;
    let mut torch_linear_refusal = None;
    if on_host {
        let available = available_bytes();
        check_fits(shape.host_bytes_needed(offload), available, &shape)?;
        let with_torch = shape.host_bytes_needed(offload) + shape.torch_linear_extra_bytes();
        if let Err(e) = check_fits(with_torch, available, &shape) {
            torch_linear_fits = false;
            torch_linear_refusal = Some(format!(
                "torch's RMSNorm upcasts x_streams to float32 (about {:.1} GiB more): {e}; the fused rows run",
                gib(shape.torch_linear_extra_bytes())
            ));
        }
    }
    let dims = [
        shape.batch as i64,
        shape.seq as i64,
        shape.streams as i64,
        shape.dim as i64,
    ];
    let kind = shape.dtype.kind();
    let device = s.compute_device()?;
    let (x, x_gpu, result_host, result_gpu) = match s.placement {
        Placement::Offload => {
            let gpu = s.gpu()?;
            let on_gpu = make_x_streams(&shape, &gpu)?;
            let pinned = |_: ()| -> Result<Tensor, MhcError> {
                Ok(Tensor::f_empty(dims, (kind, Device::host().torch()))?
                    .f_pin_memory(gpu.torch())?)
            };
            let mut x = pinned(())?;
            x.f_copy_(&on_gpu)?;
            let result_gpu = Tensor::f_empty(dims, (kind, gpu.torch()))?;
            (x, Some(on_gpu), Some(pinned(())?), Some(result_gpu))
        }
        _ => (make_x_streams(&shape, &device)?, None, None, None),
    };
    let weights = MhcWeights::new(&shape, &device)?;
    let (b, t, n) = (dims[0], dims[1], dims[2]);
    // Stage 2's input is torch's stage-1 output; where torch's RMSNorm would not fit in
    // memory, the fused stage 1's (checked against torch on slices of the sequence).
    let host_stages = if on_host {
        Some(FusedStages::new(shape, &weights, s.threads)?)
    } else {
        None
    };
    let logits = match (&host_stages, torch_linear_fits) {
        (Some(stages), false) => {
            let mut logits = stages.empty(&[b, t, n * n])?;
            stages.linear(&x, &mut logits)?;
            logits
        }
        _ => torch::linear(&weights, &x, &shape)?,
    };
    let mix = torch::sinkhorn(&logits, &shape)?;
    let fused = match (s.impls.contains(&Impl::Fused), host_stages) {
        (true, Some(stages)) => Some(FusedBuffers {
            logits: stages.empty(&[b, t, n * n])?,
            mix: stages.empty(&[b, t, n, n])?,
            out: stages.empty(&dims)?,
            stages,
        }),
        _ => None,
    };
    let cuda_sinkhorn = match (s.impls.contains(&Impl::Fused), s.placement, &s.gpu) {
        (true, Placement::Gpu, Some(gpu)) => Some((
            CudaSinkhorn::new(gpu, shape.dtype)?,
            Tensor::f_empty_like(&mix)?,
        )),
        _ => None,
    };
    Ok(Prepared {
        weights,
        x,
        x_gpu,
        logits,
        mix,
        fused,
        cuda_sinkhorn,
        result_host,
        result_gpu,
        torch_linear_refusal,
    })
}
