//! How far a result tensor is from the reference: the largest absolute difference over the
//! reference's largest magnitude, in double precision.

use tch::{Kind, Tensor};

/// `max |got - want| / max |want|` (the scale floored at 1e-12).
pub(super) fn max_relative_error(got: &Tensor, want: &Tensor) -> Result<f64, String> {
    let diff = (got.to_kind(Kind::Double) - want.to_kind(Kind::Double))
        .abs()
        .max()
        .double_value(&[]);
    let scale = want
        .to_kind(Kind::Double)
        .abs()
        .max()
        .double_value(&[])
        .max(1e-12);
    Ok(diff / scale)
}
