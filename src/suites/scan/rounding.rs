//! How numbers are rounded in the output files. The seed rounds times to 2 decimals of a
//! millisecond, time per position to 4 and gigabytes to 3, which suits PyTorch on a GPU but
//! would write 0 for most CPU-kernel times and memory peaks here (a 5 µs scan, a 20 kB ring
//! buffer). So we round as the seed does, except that a nonzero value keeps at least
//! [`SIGNIFICANT_DIGITS`] significant digits: every value the seed would show is shown the
//! same, and the small ones are not erased.

pub const SIGNIFICANT_DIGITS: i32 = 3;

/// `x` rounded to `decimals` decimal places, or finer when that leaves fewer than
/// [`SIGNIFICANT_DIGITS`] significant digits.
pub fn round_like_seed(x: f64, decimals: i32) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    let magnitude = x.abs().log10().floor() as i32;
    let places = decimals.max(SIGNIFICANT_DIGITS - 1 - magnitude);
    // Beyond 15 places f64 rounding gains nothing and 10^places stops being exact.
    if places > 15 {
        return x;
    }
    let scale = 10f64.powi(places);
    (x * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn as_the_seed_for_large_values_and_three_digits_for_small_ones() {
        assert_eq!(round_like_seed(12.345_67, 2), 12.35);
        assert_eq!(round_like_seed(1234.567, 2), 1234.57);
        assert_eq!(round_like_seed(1.004_9, 2), 1.0);
        assert_eq!(round_like_seed(0.123_456, 2), 0.123);
        assert_eq!(round_like_seed(0.004_567_8, 2), 0.004_57);
        assert_eq!(round_like_seed(0.000_165_58, 3), 0.000_166);
        assert_eq!(round_like_seed(0.5, 3), 0.5);
        assert_eq!(round_like_seed(0.0, 3), 0.0);
        assert_eq!(round_like_seed(-0.004_567_8, 2), -0.004_57);
    }
}
