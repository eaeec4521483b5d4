//! Sizes of memory as users write them (`--max-memory 8G`, `--memory-budget 1.5GiB`) and the
//! memory this machine has available now.

/// A size: bytes, or a number with K, M, G or T (powers of 1024; `KB`, `KiB`, ... alike).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (number, unit) = match t.char_indices().find(|(_, c)| c.is_ascii_alphabetic()) {
        Some((i, _)) => (&t[..i], t[i..].to_ascii_uppercase()),
        None => (t, String::new()),
    };
    let not_a_size = || format!("'{text}' is not a size (bytes, or a number with K, M, G or T)");
    let shift = match unit.trim_end_matches("IB").trim_end_matches('B') {
        "" => 0,
        "K" => 10,
        "M" => 20,
        "G" => 30,
        "T" => 40,
        _ => return Err(not_a_size()),
    };
    let value: f64 = number.trim().parse().map_err(|_| not_a_size())?;
    let bytes = value * (1u64 << shift) as f64;
    if !bytes.is_finite() || bytes < 1.0 || bytes > u64::MAX as f64 {
        return Err(format!("'{text}' is not a size of at least one byte"));
    }
    Ok(bytes as u64)
}

/// `MemAvailable` of /proc/meminfo in bytes (`None` where it cannot be read).
pub fn available_bytes() -> Option<u64> {
    meminfo_bytes(
        &std::fs::read_to_string("/proc/meminfo").ok()?,
        "MemAvailable",
    )
}

/// `MemTotal` of /proc/meminfo in bytes (`None` where it cannot be read).
pub fn total_bytes() -> Option<u64> {
    meminfo_bytes(&std::fs::read_to_string("/proc/meminfo").ok()?, "MemTotal")
}

/// The field `name` of a /proc/meminfo text (`MemAvailable:   2048 kB`), in bytes: the one
/// reader of that file.
pub fn meminfo_bytes(meminfo: &str, name: &str) -> Option<u64> {
    let kib: u64 = meminfo
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}

/// Bytes for messages, in the largest binary unit that leaves at least 1 (`512 B`, `0.68 MiB`
/// is `696.32 KiB`, `17.75 GiB`), two decimals: a small step's plan reads `0.66 MiB`, not
/// `0.00 GiB`.
pub fn size_text(bytes: u64) -> String {
    size_text_to(bytes, 2)
}

/// [`size_text`] with `decimals` decimals (a signature's label takes one: `1.5 MiB`).
pub fn size_text_to(bytes: u64, decimals: usize) -> String {
    const UNITS: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.decimals$} {}", UNITS[unit])
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
    fn sizes_print_in_the_largest_unit_that_leaves_at_least_one() {
        assert_eq!(size_text(0), "0 B");
        assert_eq!(size_text(1023), "1023 B");
        assert_eq!(size_text(1024), "1.00 KiB");
        assert_eq!(size_text(708_930), "692.31 KiB");
        assert_eq!(size_text(3 << 29), "1.50 GiB");
        assert_eq!(size_text(17_750 << 20), "17.33 GiB");
        assert_eq!(size_text(u64::MAX), "16384.00 PiB");
    }

    #[test]
    fn this_machine_has_memory_available() {
        assert!(available_bytes().is_some_and(|b| b > 0));
        assert!(total_bytes() >= available_bytes());
        let text = "MemTotal:  100 kB\nMemFree: 5 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(meminfo_bytes(text, "MemAvailable"), Some(2 << 20));
        assert_eq!(meminfo_bytes(text, "MemTotal"), Some(100 << 10));
        assert_eq!(meminfo_bytes(text, "Mem"), None);
        assert_eq!(meminfo_bytes("MemTotal: 1 kB\n", "MemAvailable"), None);
    }
}
