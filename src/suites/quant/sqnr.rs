//! Signal-to-quantization-noise ratio: how far a quantized output is from the high-precision
//! one on the same input, in decibels (torchao's `compute_error`), so that a fast wrong
//! kernel cannot look good.

use tch::{Kind, Tensor};

/// 20·log10(‖reference‖ / ‖reference − output‖), in float64; infinite when they are equal.
pub fn sqnr_db(reference: &Tensor, output: &Tensor) -> Result<f64, tch::TchError> {
    let r = reference.f_to_kind(Kind::Double)?;
    let o = output.f_to_kind(Kind::Double)?;
    let signal = r.f_norm()?.f_double_value(&[])?;
    let noise = r.f_sub(&o)?.f_norm()?.f_double_value(&[])?;
    Ok(if noise == 0.0 {
        f64::INFINITY
    } else {
        20.0 * (signal / noise).log10()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ten_percent_noise_is_twenty_decibels() {
        let r = Tensor::from_slice(&[3.0f64, 4.0]);
        let o = Tensor::from_slice(&[3.3f64, 4.4]);
        assert!((sqnr_db(&r, &o).unwrap() - 20.0).abs() < 1e-9);
        assert_eq!(sqnr_db(&r, &r).unwrap(), f64::INFINITY);
    }
}
