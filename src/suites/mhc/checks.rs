//! The checks a case passes before it is timed: stage 2 against the float64 reference (and
//! its rows and columns summing to 1), and each fused stage against torch's on the same input.

use tch::{Kind, Tensor};

use super::fused_stages::relative_difference;
use super::shape::{MhcDtype, MhcShape, SINKHORN_ITERS};
use super::torch_stages::{self as torch, MhcWeights};
use super::MhcError;
use crate::device::Device;
use crate::kernels::mhc_sinkhorn::cpu::{marginal_error, sinkhorn_reference};

/// Matrices of stage 2 checked against the float64 reference (all of them at small sizes).
const REFERENCE_MATRICES: i64 = 4096;
/// Tokens of stage 3 checked against torch's einsum (at each end of the sequence).
const APPLY_CHECK_TOKENS: i64 = 64;

/// Stage 2 of either implementation against the float64 reference on the first
/// REFERENCE_MATRICES matrices, and its rows and columns summing to 1.
pub(super) fn sinkhorn(
    shape: &MhcShape,
    logits: &Tensor,
    mix: &Tensor,
) -> Result<String, MhcError> {
    let n = shape.streams;
    let nn = (n * n) as i64;
    let count = (shape.tokens() as i64).min(REFERENCE_MATRICES);
    let flat = |t: &Tensor| -> Result<Vec<f64>, MhcError> {
        let t = t
            .f_reshape([-1])?
            .f_narrow(0, 0, count * nn)?
            .f_to_device_(Device::host().torch(), Kind::Double, false, false)?;
        Ok(Vec::<f64>::try_from(&t)?)
    };
    let want = sinkhorn_reference(&flat(logits)?, n, SINKHORN_ITERS);
    let got = flat(mix)?;
    let worst = got
        .iter()
        .zip(&want)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    let tolerance = shape.dtype.tolerance();
    if worst > tolerance {
        return Err(MhcError::Measure(format!(
            "wrong result: Sinkhorn differs from the float64 reference by {worst:.3e} (tolerance {tolerance:.0e})"
        )));
    }
    // Each of n entries rounded to the dtype moves a sum by up to n half-ulps.
    let marginal_limit = 1e-3f64.max(n as f64 * half_ulp_at_one(shape));
    let marginal = marginal_error(&got, n);
    if marginal > marginal_limit {
        return Err(MhcError::Measure(format!(
            "wrong result: a row or column of H_res sums to 1 ± {marginal:.3e} (limit {marginal_limit:.1e})"
        )));
    }
    Ok(format!(
        "checked {count} matrices: max diff vs float64 reference {worst:.1e}; rows/columns sum to 1 ± {marginal:.1e}"
    ))
}

/// A fused output against torch's on the same input.
pub(super) fn against_torch(
    shape: &MhcShape,
    what: &str,
    fused: &Tensor,
    torch: &Tensor,
) -> Result<String, MhcError> {
    let diff = relative_difference(fused, torch)?;
    let tolerance = shape.dtype.tolerance();
    if diff > tolerance {
        return Err(MhcError::Measure(format!(
            "wrong result: fused {what} differs from torch's by {diff:.3e} of its largest value (tolerance {tolerance:.0e})"
        )));
    }
    Ok(format!(
        "checked vs torch: max diff {diff:.1e} of the largest value"
    ))
}

/// Stage 1 fused against torch's RMSNorm+Linear on the first and last
/// APPLY_CHECK_TOKENS positions of the sequence (torch's whole stage 1 may not fit).
pub(super) fn linear(
    shape: &MhcShape,
    weights: &MhcWeights,
    x: &Tensor,
    fused: &Tensor,
) -> Result<String, MhcError> {
    let seq = shape.seq as i64;
    let k = seq.min(APPLY_CHECK_TOKENS);
    let part_shape = MhcShape {
        seq: k as usize,
        ..*shape
    };
    let mut worst = 0.0f64;
    for start in [0, seq - k] {
        let xs = x.f_narrow(1, start, k)?.f_contiguous()?;
        let want = torch::linear(weights, &xs, &part_shape)?;
        worst = worst.max(relative_difference(&fused.f_narrow(1, start, k)?, &want)?);
    }
    let tolerance = shape.dtype.tolerance();
    if worst > tolerance {
        return Err(MhcError::Measure(format!(
            "wrong result: fused RMSNorm+Linear differs from torch's by {worst:.3e} of its largest value (tolerance {tolerance:.0e})"
        )));
    }
    Ok(format!(
        "checked vs torch on {} positions: max diff {worst:.1e} of the largest value",
        2 * k * shape.batch as i64
    ))
}

/// Stage 3 fused against torch's einsum on the first and last APPLY_CHECK_TOKENS
/// positions of the sequence (the whole result of torch would double the memory).
pub(super) fn apply(
    shape: &MhcShape,
    mix: &Tensor,
    x: &Tensor,
    fused: &Tensor,
) -> Result<String, MhcError> {
    let seq = shape.seq as i64;
    let k = seq.min(APPLY_CHECK_TOKENS);
    let mut worst = 0.0f64;
    for start in [0, seq - k] {
        let part = |t: &Tensor| t.f_narrow(1, start, k);
        let want = torch::apply(&part(mix)?, &part(x)?)?;
        worst = worst.max(relative_difference(&part(fused)?, &want)?);
    }
    let tolerance = shape.dtype.tolerance();
    if worst > tolerance {
        return Err(MhcError::Measure(format!(
            "wrong result: fused apply differs from torch's einsum by {worst:.3e} of its largest value (tolerance {tolerance:.0e})"
        )));
    }
    Ok(format!(
        "checked vs torch's einsum on {} positions: max diff {worst:.1e} of the largest value",
        2 * k * shape.batch as i64
    ))
}

fn half_ulp_at_one(shape: &MhcShape) -> f64 {
    match shape.dtype {
        MhcDtype::Float32 => f32::EPSILON as f64 / 2.0,
        MhcDtype::Bfloat16 => 2f64.powi(-9),
        MhcDtype::Float16 => 2f64.powi(-12),
    }
}
