//! The `fused` implementation on host tensors: stages 1–3 as the Rust kernels, reading and
//! writing the same (B, T, …) tensors torch's stages do, dispatched on the dtype.

use half::{bf16, f16};
use tch::{Kind, Tensor};

use super::element::{host_slice, host_slice_mut, Element};
use super::fused_apply;
use super::fused_linear::{self, FoldedLinear};
use super::shape::{MhcDtype, MhcShape, ALPHA, RMS_EPS, SINKHORN_ITERS};
use super::torch_stages::MhcWeights;
use super::MhcError;
use crate::device::Device;
use crate::kernels::mhc_sinkhorn::cpu as fused_sinkhorn;

/// The fused stages of one shape, with the Linear's weight folded once.
pub struct FusedStages {
    shape: MhcShape,
    linear: FoldedLinear,
    threads: usize,
}

fn to_f32_vec(t: &Tensor) -> Result<Vec<f32>, MhcError> {
    let t = t
        .f_to_device_(Device::host().torch(), Kind::Float, false, false)?
        .f_contiguous()?
        .f_view([-1])?;
    Ok(Vec::<f32>::try_from(&t)?)
}

impl FusedStages {
    pub fn new(shape: MhcShape, weights: &MhcWeights, threads: usize) -> Result<Self, MhcError> {
        let linear = FoldedLinear::new(
            &to_f32_vec(&weights.phi_res)?,
            &to_f32_vec(&weights.norm_weight)?,
            &to_f32_vec(&weights.b_res)?,
            ALPHA as f32,
            RMS_EPS as f32,
        )?;
        Ok(FusedStages {
            shape,
            linear,
            threads,
        })
    }

    /// An output tensor of `dims` in the dtype on the host, for the stages to write into.
    pub fn empty(&self, dims: &[i64]) -> Result<Tensor, MhcError> {
        Ok(Tensor::f_empty(
            dims,
            (self.shape.dtype.kind(), Device::host().torch()),
        )?)
    }

    /// Stage 1 into `out` (B, T, n²).
    pub fn linear(&self, x_streams: &Tensor, out: &mut Tensor) -> Result<(), MhcError> {
        fn run<T: Element>(s: &FusedStages, x: &Tensor, out: &mut Tensor) -> Result<(), MhcError> {
            let x = host_slice::<T>(x, "x_streams")?;
            let out = host_slice_mut::<T>(out, "H_res logits")?;
            fused_linear::rmsnorm_linear(x, &s.linear, out, s.threads)
        }
        match self.shape.dtype {
            MhcDtype::Float32 => run::<f32>(self, x_streams, out),
            MhcDtype::Bfloat16 => run::<bf16>(self, x_streams, out),
            MhcDtype::Float16 => run::<f16>(self, x_streams, out),
        }
    }

    /// Stage 2 into `out` (B, T, n, n).
    pub fn sinkhorn(&self, logits: &Tensor, out: &mut Tensor) -> Result<(), MhcError> {
        fn run<T: Element>(s: &FusedStages, h: &Tensor, out: &mut Tensor) -> Result<(), MhcError> {
            let h = host_slice::<T>(h, "H_res logits")?;
            let out = host_slice_mut::<T>(out, "H_res")?;
            fused_sinkhorn::sinkhorn(h, out, s.shape.streams, SINKHORN_ITERS, s.threads)?;
            Ok(())
        }
        match self.shape.dtype {
            MhcDtype::Float32 => run::<f32>(self, logits, out),
            MhcDtype::Bfloat16 => run::<bf16>(self, logits, out),
            MhcDtype::Float16 => run::<f16>(self, logits, out),
        }
    }

    /// Stage 3 into `out` (B, T, n, D).
    pub fn apply(
        &self,
        mix: &Tensor,
        x_streams: &Tensor,
        out: &mut Tensor,
    ) -> Result<(), MhcError> {
        fn run<T: Element>(
            s: &FusedStages,
            mix: &Tensor,
            x: &Tensor,
            out: &mut Tensor,
        ) -> Result<(), MhcError> {
            let mix = host_slice::<T>(mix, "H_res")?;
            let x = host_slice::<T>(x, "x_streams")?;
            let out = host_slice_mut::<T>(out, "h_res output")?;
            fused_apply::apply(mix, x, out, s.shape.streams, s.shape.dim, s.threads)
        }
        match self.shape.dtype {
            MhcDtype::Float32 => run::<f32>(self, mix, x_streams, out),
            MhcDtype::Bfloat16 => run::<bf16>(self, mix, x_streams, out),
            MhcDtype::Float16 => run::<f16>(self, mix, x_streams, out),
        }
    }
}

/// The largest |a − b| over the largest |b|: how far a fused result is from torch's.
pub fn relative_difference(a: &Tensor, b: &Tensor) -> Result<f64, MhcError> {
    let a = a.f_to_kind(Kind::Double)?;
    let b = b.f_to_kind(Kind::Double)?;
    let diff = a.f_sub(&b)?.f_abs()?.f_max()?.f_double_value(&[])?;
    let scale = b.f_abs()?.f_max()?.f_double_value(&[])?;
    Ok(if scale > 0.0 { diff / scale } else { diff })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::mhc::torch_stages::{self, make_x_streams};

    /// Each fused stage against torch's on the same input, in every dtype.
    #[test]
    fn each_fused_stage_matches_torch_within_the_dtype_tolerance() {
        for dtype in MhcDtype::ALL {
            let shape = MhcShape::new(2, 33, 96, 4, dtype).unwrap();
            let w = MhcWeights::new(&shape, Device::host()).unwrap();
            let x = make_x_streams(&shape, Device::host()).unwrap();
            let fused = FusedStages::new(shape, &w, 2).unwrap();

            let h = torch_stages::linear(&w, &x, &shape).unwrap();
            let mut h_fused = fused.empty(&[2, 33, 16]).unwrap();
            fused.linear(&x, &mut h_fused).unwrap();
            let d1 = relative_difference(&h_fused, &h).unwrap();
            assert!(d1 <= dtype.tolerance(), "{dtype:?} linear {d1}");

            let m = torch_stages::sinkhorn(&h, &shape).unwrap();
            let mut m_fused = fused.empty(&[2, 33, 4, 4]).unwrap();
            fused.sinkhorn(&h, &mut m_fused).unwrap();
            let d2 = relative_difference(&m_fused, &m).unwrap();
            assert!(d2 <= dtype.tolerance(), "{dtype:?} sinkhorn {d2}");
            let sums = |dim: i64| {
                (m_fused
                    .to_kind(Kind::Float)
                    .sum_dim_intlist([dim].as_slice(), false, Kind::Float)
                    - 1.0)
                    .abs()
                    .max()
                    .double_value(&[])
            };
            // The dtype's rounding of each of n entries moves a sum by at most n·ulp/2.
            let marginal = if dtype == MhcDtype::Bfloat16 {
                8e-3
            } else {
                1e-3
            };
            assert!(sums(-1) < marginal && sums(-2) < marginal, "{dtype:?}");

            let out = torch_stages::apply(&m, &x).unwrap();
            let mut out_fused = fused.empty(&[2, 33, 4, 96]).unwrap();
            fused.apply(&m, &x, &mut out_fused).unwrap();
            let d3 = relative_difference(&out_fused, &out).unwrap();
            assert!(d3 <= dtype.tolerance(), "{dtype:?} apply {d3}");
        }
    }
}
