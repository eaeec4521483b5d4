//! A float32 `exp` in plain arithmetic, so that loops over it vectorise (the libm call does
//! not). Cephes' `expf`: round x/ln 2 to n, reduce r = x − n·ln 2 in two parts, a degree-6
//! polynomial for e^r, and 2^n built from the exponent bits. Relative error about 2 ulp;
//! arguments below −86 give exactly 0 (the terms a logsumexp drops). The clamp keeps 2^n and
//! the product normal: a subnormal result costs a microcode assist of ~100 cycles on x86,
//! which made the padded lanes (−1e30) dominate the whole scan.

const LOG2_E: f32 = std::f32::consts::LOG2_E;
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
/// Adding 1.5·2^23 rounds a float below 2^22 to the nearest integer, held in the low mantissa
/// bits: rounding without `round()` (a libm call on baseline x86-64).
const ROUNDING: f32 = 12_582_912.0;

#[inline(always)]
pub fn exp_approx(x: f32) -> f32 {
    let clamped = x.clamp(-86.0, 88.0);
    let shifted = clamped * LOG2_E + ROUNDING;
    let n_int = shifted.to_bits() as i32 - ROUNDING.to_bits() as i32;
    let n = shifted - ROUNDING;
    let r = clamped - n * LN2_HI - n * LN2_LO;
    let poly = ((((1.987_569_2e-4 * r + 1.398_2e-3) * r + 8.333_452e-3) * r + 4.166_579_6e-2) * r
        + 0.166_666_65)
        * r
        + 0.5;
    let e_r = poly * r * r + r + 1.0;
    let scale = f32::from_bits(((n_int + 127) << 23) as u32);
    if x < -86.0 {
        0.0
    } else {
        e_r * scale
    }
}

#[cfg(test)]
mod tests {
    use super::exp_approx;

    #[test]
    fn matches_libm_within_a_few_ulp() {
        let mut x = -86.0f32;
        while x < 88.0 {
            let want = x.exp();
            let got = exp_approx(x);
            assert!(
                ((got - want) / want).abs() < 4e-7,
                "exp({x}) = {got}, libm {want}"
            );
            x += 0.0137;
        }
        assert_eq!(exp_approx(f32::NEG_INFINITY), 0.0);
        assert_eq!(exp_approx(-1e30), 0.0);
        assert_eq!(exp_approx(0.0), 1.0);
    }
}
