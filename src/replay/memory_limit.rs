//! `--max-memory`: the host memory one replay may ask for, checked before a tensor is
//! allocated, so that a signature asking for more than the machine has (a size that fits the
//! address space, which an overcommitting kernel would grant and then answer with its OOM
//! killer) ends as `oom` with the sizes, and the run goes on. By default three quarters of
//! the memory available when the run starts (`MemAvailable` of /proc/meminfo).

use std::sync::atomic::{AtomicU64, Ordering};

/// Words every refusal carries: what `SetupError` reads as out of memory.
pub const OVER_LIMIT: &str = "over the memory replay allows itself";

/// The limit in bytes; 0 until set or first read.
static LIMIT: AtomicU64 = AtomicU64::new(0);

/// Sets the limit (`--max-memory`).
pub fn set(bytes: u64) {
    LIMIT.store(bytes.max(1), Ordering::SeqCst);
}

/// The limit in bytes: `--max-memory`, else three quarters of the memory available now.
pub fn limit() -> u64 {
    match LIMIT.load(Ordering::SeqCst) {
        0 => {
            let default = available_bytes().map_or(u64::MAX, |a| a / 4 * 3);
            LIMIT.store(default, Ordering::SeqCst);
            default
        }
        set => set,
    }
}

/// `MemAvailable` of /proc/meminfo in bytes.
fn available_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kb.checked_mul(1024)
}

/// `Err` with the sizes when `bytes` (`None`: more than 2^64) is over the limit.
pub fn check(bytes: Option<u64>, what: &str) -> Result<(), String> {
    let limit = limit();
    match bytes {
        Some(b) if b <= limit => Ok(()),
        _ => Err(format!(
            "{what} needs {}, {OVER_LIMIT} ({} by --max-memory); not allocated",
            bytes.map_or("more than 2^64 bytes".into(), gib),
            gib(limit)
        )),
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// A size as `--max-memory` takes it: bytes, or a number with K, M, G or T (powers of 1024).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (number, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => (&t[..i], t[i..].to_ascii_uppercase()),
        None => (t, String::new()),
    };
    let shift = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => {
            return Err(format!(
                "'{text}' is not a size (bytes, or a number with K, M, G or T)"
            ))
        }
    };
    let value: f64 = number
        .trim()
        .parse()
        .map_err(|_| format!("'{text}' is not a size (bytes, or a number with K, M, G or T)"))?;
    let bytes = value * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes > u64::MAX as f64 {
        return Err(format!("'{text}' is not a size of at least one byte"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_nonsense_is_refused() {
        assert_eq!(parse_size("1024").unwrap(), 1024);
        assert_eq!(parse_size("8G").unwrap(), 8 << 30);
        assert_eq!(parse_size("1.5 GiB").unwrap(), 3 << 29);
        assert_eq!(parse_size("512mb").unwrap(), 512 << 20);
        for bad in ["", "-1G", "0", "twelve", "5X"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_size_over_the_limit_is_refused_with_the_sizes() {
        let limit = limit();
        assert!(check(Some(1), "a tensor").is_ok());
        let err = check(None, "argument 0").unwrap_err();
        assert!(
            err.contains("more than 2^64") && err.contains(OVER_LIMIT),
            "{err}"
        );
        if limit < u64::MAX {
            assert!(check(Some(limit + 1), "x").is_err());
        }
    }
}
