//! The seed's pipeline as a composition of libtorch ops (the `torch` implementation): its
//! module's parameters and inputs, and stages 1–3 exactly as `mHC_benchmark.py` writes them.

use tch::{Kind, Tensor};

use super::shape::{MhcShape, ALPHA, RMS_EPS, SINKHORN_EPS, SINKHORN_ITERS};
use super::MhcError;
use crate::device::Device;

/// The module's parameters: `RMSNorm(n·D)` (weight ones, torch's init),
/// `phi_res = Linear(n·D → n², bias=False)` (torch's default init, U(±1/√(n·D)), drawn from
/// a fixed seed), `b_res = zeros(n²)`; all in the run's dtype on one device.
pub struct MhcWeights {
    pub norm_weight: Tensor,
    pub phi_res: Tensor,
    pub b_res: Tensor,
}

/// The seed's fixed draw.
pub const SEED: i64 = 0;

impl MhcWeights {
    pub fn new(shape: &MhcShape, device: &Device) -> Result<MhcWeights, MhcError> {
        let device = device.torch();
        let (width, mix) = (shape.width() as i64, shape.mix() as i64);
        let kind = shape.dtype.kind();
        tch::manual_seed(SEED);
        let bound = 1.0 / (width as f64).sqrt();
        let phi_res = Tensor::f_rand([mix, width], (Kind::Float, Device::host().torch()))?
            .f_mul_scalar(2.0 * bound)?
            .f_sub_scalar(bound)?
            .f_to_device_(device, kind, false, false)?;
        Ok(MhcWeights {
            norm_weight: Tensor::f_ones([width], (kind, device))?,
            phi_res,
            b_res: Tensor::f_zeros([mix], (kind, device))?,
        })
    }

    /// The same parameters on another device (the fused kernels read host copies).
    pub fn to_device(&self, device: &Device) -> Result<MhcWeights, MhcError> {
        let to = |t: &Tensor| t.f_to_device_(device.torch(), t.kind(), false, false);
        Ok(MhcWeights {
            norm_weight: to(&self.norm_weight)?,
            phi_res: to(&self.phi_res)?,
            b_res: to(&self.b_res)?,
        })
    }
}

/// `x = randn(B, T, D)`; `x_streams = x.unsqueeze(-2).expand(B, T, n, D).contiguous()`.
pub fn make_x_streams(shape: &MhcShape, device: &Device) -> Result<Tensor, MhcError> {
    let (b, t, d, n) = (
        shape.batch as i64,
        shape.seq as i64,
        shape.dim as i64,
        shape.streams as i64,
    );
    tch::manual_seed(SEED + 1);
    let x = Tensor::f_randn([b, t, d], (shape.dtype.kind(), device.torch()))?;
    Ok(x.f_unsqueeze(-2)?
        .f_expand([b, t, n, d], false)?
        .f_contiguous()?)
}

/// Stage 1, "H_res Gen (Linear)": `alpha · phi_res(RMSNorm(x_streams.view(B, T, n·D))) + b_res`.
pub fn linear(w: &MhcWeights, x_streams: &Tensor, shape: &MhcShape) -> Result<Tensor, MhcError> {
    let (b, t, width) = (shape.batch as i64, shape.seq as i64, shape.width() as i64);
    let normed =
        x_streams
            .f_view([b, t, width])?
            .f_rms_norm([width], Some(&w.norm_weight), RMS_EPS)?;
    Ok(normed
        .f_linear::<&Tensor>(&w.phi_res, None)?
        .f_mul_scalar(ALPHA)?
        .f_add(&w.b_res)?)
}

/// Stage 2, "H_res Gen (Sinkhorn-Knopp)": in float32, `x − amax` over each n×n matrix, exp,
/// then 20 × {x / (column sums + 1e-8); x / (row sums + 1e-8)}, back to the dtype.
pub fn sinkhorn(logits: &Tensor, shape: &MhcShape) -> Result<Tensor, MhcError> {
    let (b, t, n) = (shape.batch as i64, shape.seq as i64, shape.streams as i64);
    let x = logits.f_to_kind(Kind::Float)?.f_view([b, t, n, n])?;
    let mut x = x.f_sub(&x.f_amax([-1, -2], true)?)?.f_exp()?;
    let eps = SINKHORN_EPS as f64;
    for _ in 0..SINKHORN_ITERS {
        x = x.f_div(
            &x.f_sum_dim_intlist([-2i64].as_slice(), true, Kind::Float)?
                .f_add_scalar(eps)?,
        )?;
        x = x.f_div(
            &x.f_sum_dim_intlist([-1i64].as_slice(), true, Kind::Float)?
                .f_add_scalar(eps)?,
        )?;
    }
    Ok(x.f_to_kind(shape.dtype.kind())?)
}

/// Stage 3, "h_res App (BMM)": `einsum("btij,btjc->btic", H_res, x_streams)`.
pub fn apply(mix: &Tensor, x_streams: &Tensor) -> Result<Tensor, MhcError> {
    Ok(Tensor::f_einsum(
        "btij,btjc->btic",
        &[mix, x_streams],
        None::<&[i64]>,
    )?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::mhc::shape::MhcDtype;

    #[test]
    fn the_pipeline_has_the_seed_shapes_and_a_doubly_stochastic_mix() {
        let shape = MhcShape::new(2, 3, 8, 4, MhcDtype::Float32).unwrap();
        let w = MhcWeights::new(&shape, Device::host()).unwrap();
        let x = make_x_streams(&shape, Device::host()).unwrap();
        assert_eq!(x.size(), [2, 3, 4, 8]);
        // Every stream starts as the same copy of x.
        let d = (x.select(2, 0) - x.select(2, 3))
            .abs()
            .max()
            .double_value(&[]);
        assert_eq!(d, 0.0);
        let h = linear(&w, &x, &shape).unwrap();
        assert_eq!(h.size(), [2, 3, 16]);
        let m = sinkhorn(&h, &shape).unwrap();
        assert_eq!(m.size(), [2, 3, 4, 4]);
        let rows = (m.sum_dim_intlist([-1i64].as_slice(), false, Kind::Float) - 1.0)
            .abs()
            .max();
        let cols = (m.sum_dim_intlist([-2i64].as_slice(), false, Kind::Float) - 1.0)
            .abs()
            .max();
        assert!(rows.double_value(&[]) < 1e-3 && cols.double_value(&[]) < 1e-3);
        let out = apply(&m, &x).unwrap();
        assert_eq!(out.size(), [2, 3, 4, 8]);
        // Identical streams and rows summing to 1: every output stream equals x.
        let err = (&out - &x).abs().max().double_value(&[]);
        assert!(err < 1e-4, "{err}");
    }
}
