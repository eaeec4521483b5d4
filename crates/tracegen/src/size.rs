//! Sizes on the command line: `30G`, `512M`, `20MB`, `1.5GiB` or plain bytes. Decimal
//! units (1G = 10^9 bytes) unless the unit says `iB`.

use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
#[error("not a size: {0:?} (a number of bytes, or a number with K, M, G, T, KiB, MiB, GiB or TiB)")]
pub struct SizeError(String);

pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let bad = || SizeError(text.to_owned());
    let trimmed = text.trim();
    let split = trimmed
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(trimmed.len());
    let (number, unit) = trimmed.split_at(split);
    let number: f64 = number.parse().map_err(|_| bad())?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return Err(bad()),
    };
    let bytes = number * scale;
    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn units_are_decimal_unless_binary_and_nonsense_is_refused() {
        assert_eq!(parse_size("30G"), Ok(30_000_000_000));
        assert_eq!(parse_size("20MB"), Ok(20_000_000));
        assert_eq!(parse_size("1.5GiB"), Ok(1_610_612_736));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("big").is_err());
        assert!(parse_size("3X").is_err());
        assert!(parse_size("").is_err());
    }
}
