//! A log-log scatter of one time against another, one dot per item, with the diagonal
//! (equal times) drawn and the ×2 and ÷2 lines beside it: a dot's distance from the
//! diagonal is its ratio, whatever its size. Both axes share one scale, so the diagonal is at
//! 45°.

use std::fmt::Write as _;

use super::{escape, tick_text};

/// One dot.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Horizontal and vertical values (µs); a dot with a value ≤ 0 or not finite cannot be
    /// placed on a log scale and is left out.
    pub x: f64,
    pub y: f64,
    /// Share of the whole (0..1): the dot's area grows with it.
    pub weight: f64,
    pub colour: &'static str,
    /// Hover text.
    pub title: String,
}

/// The chart's axes and size.
#[derive(Debug, Clone)]
pub struct Scatter<'a> {
    pub x_label: &'a str,
    pub y_label: &'a str,
    /// Width and height of the square plot area, in pixels.
    pub size: f64,
}

const MARGIN_LEFT: f64 = 70.0;
const MARGIN_BOTTOM: f64 = 50.0;
const MARGIN_TOP: f64 = 12.0;
/// Room for half of the last decade's label (`1000 ms`, centred on the plot's edge), which a
/// narrower margin clipped.
const MARGIN_RIGHT: f64 = 32.0;

/// The dot's radius: its area is proportional to its weight, and even a tiny one is seen.
fn radius(weight: f64) -> f64 {
    3.0 + 16.0 * weight.clamp(0.0, 1.0).sqrt()
}

impl Scatter<'_> {
    /// The chart as an `<svg>` element; a sentence when no point can be placed.
    pub fn render(&self, points: &[Point]) -> String {
        let placed: Vec<&Point> = points
            .iter()
            .filter(|p| p.x.is_finite() && p.y.is_finite() && p.x > 0.0 && p.y > 0.0)
            .collect();
        if placed.is_empty() {
            return "<p>Nothing to plot: no item has both times.</p>".to_owned();
        }
        // Whole decades around every value, on both axes alike.
        let low = placed
            .iter()
            .map(|p| p.x.min(p.y))
            .fold(f64::INFINITY, f64::min)
            .log10()
            .floor();
        let high = placed
            .iter()
            .map(|p| p.x.max(p.y))
            .fold(f64::NEG_INFINITY, f64::max)
            .log10()
            .ceil()
            .max(low + 1.0);
        let size = self.size;
        let position = |value: f64| (value.log10() - low) / (high - low) * size;
        let x_of = |value: f64| MARGIN_LEFT + position(value);
        let y_of = |value: f64| MARGIN_TOP + size - position(value);
        let (width, height) = (
            MARGIN_LEFT + size + MARGIN_RIGHT,
            MARGIN_TOP + size + MARGIN_BOTTOM,
        );
        let mut svg = format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" aria-label="{} against {}, log-log">"#,
            escape(self.y_label),
            escape(self.x_label)
        );
        // Decade grid lines and their labels.
        for decade in (low as i32)..=(high as i32) {
            let value = 10f64.powi(decade);
            let (x, y) = (x_of(value), y_of(value));
            let _ = write!(
                svg,
                r##"<line x1="{x:.1}" x2="{x:.1}" y1="{MARGIN_TOP}" y2="{:.1}" stroke="#eee"/><line x1="{MARGIN_LEFT}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#eee"/><text x="{x:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"##,
                MARGIN_TOP + size,
                MARGIN_LEFT + size,
                MARGIN_TOP + size + 16.0,
                tick_text(value),
                MARGIN_LEFT - 6.0,
                y + 4.0,
                tick_text(value),
            );
        }
        // The diagonal, and the lines of twice and half.
        let (lo, hi) = (10f64.powf(low), 10f64.powf(high));
        for (factor, dash, stroke) in [
            (1.0, "", "#555"),
            (2.0, "4 4", "#bbb"),
            (0.5, "4 4", "#bbb"),
        ] {
            // y = factor·x, clipped to the square.
            let (x0, x1) = (lo.max(lo / factor), hi.min(hi / factor));
            let _ = write!(
                svg,
                r#"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="{stroke}" stroke-dasharray="{dash}"/>"#,
                x_of(x0),
                y_of(x0 * factor),
                x_of(x1),
                y_of(x1 * factor)
            );
        }
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text><text x="14" y="{:.1}" font-size="12" text-anchor="middle" transform="rotate(-90 14 {:.1})">{}</text>"#,
            MARGIN_LEFT + size / 2.0,
            height - 8.0,
            escape(self.x_label),
            MARGIN_TOP + size / 2.0,
            MARGIN_TOP + size / 2.0,
            escape(self.y_label)
        );
        // Large dots first, so that small ones stay visible on top.
        let mut ordered = placed;
        ordered.sort_by(|a, b| b.weight.total_cmp(&a.weight));
        for point in ordered {
            let _ = write!(
                svg,
                r##"<circle cx="{:.1}" cy="{:.1}" r="{:.1}" fill="{}" fill-opacity="0.7" stroke="#333" stroke-width="0.5"><title>{}</title></circle>"##,
                x_of(point.x),
                y_of(point.y),
                radius(point.weight),
                point.colour,
                escape(&point.title)
            );
        }
        svg.push_str("</svg>");
        svg
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(x: f64, y: f64, weight: f64) -> Point {
        Point {
            x,
            y,
            weight,
            colour: "#000",
            title: format!("{x}<{y}"),
        }
    }

    #[test]
    fn dots_sit_on_a_shared_log_scale_and_the_diagonal_crosses_it() {
        let chart = Scatter {
            x_label: "trace",
            y_label: "isolated",
            size: 300.0,
        };
        // Decades 1..1000: three decades of 100 px; (10, 10) is on the diagonal.
        let svg = chart.render(&[
            point(10.0, 10.0, 0.25),
            point(2.0, 500.0, 0.0),
            point(0.0, 5.0, 1.0),
        ]);
        assert_eq!(svg.matches("<circle").count(), 2, "the zero is left out");
        assert!(
            svg.contains(r#"<circle cx="170.0" cy="212.0" r="11.0""#),
            "{svg}"
        );
        // The diagonal from (1, 1) to (1000, 1000).
        assert!(
            svg.contains(r##"<line x1="70.0" y1="312.0" x2="370.0" y2="12.0" stroke="#555""##),
            "{svg}"
        );
        assert!(svg.contains("<title>10&lt;10</title>"));
        // Four decade labels per axis: 1, 10, 100, 1000 µs.
        assert_eq!(svg.matches(">1 ms<").count(), 2);
        assert!(Scatter {
            x_label: "a",
            y_label: "b",
            size: 10.0
        }
        .render(&[point(-1.0, 1.0, 0.5)])
        .starts_with("<p>"));
    }
}
