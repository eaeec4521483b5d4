//! Value parsers the commands share for their flags, so that a count or a time is accepted
//! and refused alike everywhere (and says why in the same words).

/// A whole number of at least 1 (`--iters`, `--repeats`, `--bs`).
pub fn positive_count(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("'{text}' is not a whole number of at least 1")),
    }
}

/// A positive, finite number of seconds below a million (a time budget).
pub fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x < 1e6 => Ok(x),
        _ => Err(format!("'{text}' is not a positive number of seconds")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_seconds_are_checked() {
        assert_eq!(positive_count(" 3 "), Ok(3));
        assert!(positive_count("0").is_err());
        assert!(positive_count("-1").is_err());
        assert!(positive_count("1.5").is_err());
        assert_eq!(positive_seconds("0.25"), Ok(0.25));
        for bad in ["0", "-1", "nan", "inf", "1e7", "x"] {
            assert!(positive_seconds(bad).is_err(), "{bad}");
        }
    }
}
