//! A share as a percentage, as every report and summary prints one.

/// `97.3%` for a share in [0, 1]. An empty sum of `f64`s is `-0.0`, and a share made of
/// one prints as `-0.0%`; so does a tiny negative rounding error. Both read `0.0%`.
pub fn percent_text(share: f64) -> String {
    let percent = 100.0 * share;
    if percent.is_finite() && percent.abs() < 0.05 {
        "0.0%".to_owned()
    } else {
        format!("{percent:.1}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_zero_and_rounding_dust_read_zero() {
        let empty: f64 = Vec::<f64>::new().into_iter().sum();
        assert!(empty.is_sign_negative(), "Rust's empty f64 sum is -0.0");
        assert_eq!(percent_text(empty), "0.0%");
        assert_eq!(percent_text(-1e-9), "0.0%");
        assert_eq!(percent_text(0.0), "0.0%");
        assert_eq!(percent_text(1.0), "100.0%");
        assert_eq!(percent_text(0.214), "21.4%");
    }
}
