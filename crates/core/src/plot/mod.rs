//! Charts drawn as inline SVG, for pages that fetch nothing: a log-log scatter
//! ([`scatter`]) and a timeline of lanes ([`lanes`]). Written by hand rather than through a
//! plotting crate: each chart is a few dozen elements whose every attribute the pages
//! control (hover titles, tier colours), and the core stays small. Suites that draw later
//! reuse these.

pub mod charts;
pub mod lanes;
pub mod scatter;

/// `text` with the characters that mean something in HTML and SVG escaped.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// The colour of work of replay tier 1, 2 or 3; grey for anything else (host time,
/// unattributed work). One palette for every chart, so a tier looks the same everywhere.
pub const TIER_COLOURS: [&str; 5] = ["#9aa0a6", "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1"];

pub fn tier_colour(tier: Option<u8>) -> &'static str {
    TIER_COLOURS[tier.map_or(0, |t| (t as usize).min(4))]
}

/// A time in µs, short: `0.85 us`, `12.3 us`, `4.21 ms`, `1.50 s`.
pub fn time_text(us: f64) -> String {
    if us.abs() >= 1e6 {
        format!("{:.2} s", us / 1e6)
    } else if us.abs() >= 1000.0 {
        format!("{:.2} ms", us / 1000.0)
    } else if us.abs() >= 10.0 {
        format!("{us:.1} us")
    } else {
        format!("{us:.2} us")
    }
}

/// An axis tick's time in µs, as short as its round value allows: `0`, `50 ms`, `1 s`,
/// `0.01 us` (ticks sit close together, so no trailing zeros).
pub fn tick_text(us: f64) -> String {
    if us == 0.0 {
        return "0".to_string();
    }
    let (value, unit) = if us.abs() >= 1e6 {
        (us / 1e6, "s")
    } else if us.abs() >= 1000.0 {
        (us / 1000.0, "ms")
    } else {
        (us, "us")
    };
    let digits = format!("{value:.2}");
    let digits = digits.trim_end_matches('0').trim_end_matches('.');
    format!("{digits} {unit}")
}

/// Evenly spaced round values covering [0, `end`]: steps of 1, 2 or 5 × 10^k, about
/// `count` of them.
pub fn linear_ticks(end: f64, count: usize) -> Vec<f64> {
    if !(end.is_finite() && end > 0.0) || count == 0 {
        return vec![0.0];
    }
    let raw = end / count as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * magnitude);
    (0..)
        .map(|i| i as f64 * step)
        .take_while(|&t| t <= end * (1.0 + 1e-9))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_is_escaped() {
        assert_eq!(escape("k<float, 4>(a&b)"), "k&lt;float, 4&gt;(a&amp;b)");
    }

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(
            linear_ticks(100.0, 5),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(linear_ticks(14.0, 4), vec![0.0, 5.0, 10.0]);
        assert_eq!(linear_ticks(0.0, 4), vec![0.0]);
        assert_eq!(time_text(1234.0), "1.23 ms");
        assert_eq!(time_text(12.34), "12.3 us");
        assert_eq!(time_text(0.5), "0.50 us");
        assert_eq!(time_text(2.5e6), "2.50 s");
        assert_eq!(tick_text(0.0), "0");
        assert_eq!(tick_text(50_000.0), "50 ms");
        assert_eq!(tick_text(1e6), "1 s");
        assert_eq!(tick_text(0.01), "0.01 us");
        assert_eq!(tick_text(2500.0), "2.5 ms");
    }
}
