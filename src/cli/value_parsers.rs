//! Value parsers the commands share for their flags, so that a count or a time is accepted
//! and refused alike everywhere (and says why in the same words).

use crate::pipeline::CompileMode;

/// A whole number of at least 1 (`--iters`, `--repeats`, `--bs`).
pub fn positive_count(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("'{text}' is not a whole number of at least 1")),
    }
}

/// A whole number of at least 1 of type `T` (`--runs`, `--rounds`, `--seq-len`), refused in
/// [`positive_count`]'s words, or as too large for `T`.
pub fn positive<T: TryFrom<usize>>(text: &str) -> Result<T, String> {
    let n = positive_count(text)?;
    T::try_from(n).map_err(|_| format!("'{text}' is too large"))
}

/// A whole number of at least 0 of type `T` (`--warmup`), refused in the same words.
pub fn whole<T: TryFrom<u64>>(text: &str) -> Result<T, String> {
    let n = text
        .trim()
        .parse::<u64>()
        .map_err(|_| format!("'{text}' is not a whole number of at least 0"))?;
    T::try_from(n).map_err(|_| format!("'{text}' is too large"))
}

/// A positive, finite number of seconds below a million (a time budget).
pub fn positive_seconds(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x > 0.0 && x < 1e6 => Ok(x),
        _ => Err(format!("'{text}' is not a positive number of seconds")),
    }
}

/// `--compile [MODE]`: one of torch.compile's modes, refused with the list of them.
pub fn compile_mode() -> impl clap::builder::TypedValueParser<Value = CompileMode> {
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(CompileMode::ALL.map(CompileMode::as_str)).try_map(
        |name: String| {
            CompileMode::from_name(&name).ok_or_else(|| format!("'{name}' is not a compile mode"))
        },
    )
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
        assert_eq!(positive::<u32>("7"), Ok(7));
        assert_eq!(positive::<i64>("7"), Ok(7));
        assert_eq!(
            positive::<u32>("0"),
            Err("'0' is not a whole number of at least 1".to_string())
        );
        assert_eq!(
            positive::<u64>("-5"),
            Err("'-5' is not a whole number of at least 1".to_string())
        );
        assert!(positive::<u32>("99999999999")
            .unwrap_err()
            .contains("too large"));
        assert_eq!(whole::<u64>("0"), Ok(0));
        assert_eq!(
            whole::<u32>("-1"),
            Err("'-1' is not a whole number of at least 0".to_string())
        );
        assert_eq!(positive_seconds("0.25"), Ok(0.25));
        for bad in ["0", "-1", "nan", "inf", "1e7", "x"] {
            assert!(positive_seconds(bad).is_err(), "{bad}");
        }
    }
}
