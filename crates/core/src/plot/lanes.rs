//! A timeline of lanes: one row per lane (a host thread, a GPU stream), one bar per span,
//! a time axis with round ticks, and a hover title on every bar with its label, start and
//! duration.

use std::fmt::Write as _;

use super::{escape, linear_ticks, tick_text, tier_colour};

/// One bar.
#[derive(Debug, Clone, PartialEq)]
pub struct Bar<'a> {
    pub lane: &'a str,
    pub start_us: f64,
    pub dur_us: f64,
    pub label: &'a str,
    /// Colours the bar by replay tier (grey without one).
    pub tier: Option<u8>,
}

const WIDTH: f64 = 1100.0;
const LABEL_WIDTH: f64 = 120.0;
const LANE_HEIGHT: f64 = 26.0;
const BAR_HEIGHT: f64 = 18.0;

/// The lanes in order of first appearance, as an `<svg>` element; a sentence when there is
/// nothing to draw.
pub fn render(bars: &[Bar]) -> String {
    if bars.is_empty() {
        return "<p>No timeline: the prediction had no trace to model.</p>".into();
    }
    let mut lanes: Vec<&str> = Vec::new();
    for bar in bars {
        if !lanes.contains(&bar.lane) {
            lanes.push(bar.lane);
        }
    }
    let start = bars
        .iter()
        .map(|b| b.start_us)
        .fold(f64::INFINITY, f64::min);
    let end = bars
        .iter()
        .map(|b| b.start_us + b.dur_us)
        .fold(f64::NEG_INFINITY, f64::max);
    let span = (end - start).max(1e-9);
    // Room on the right for half of the last tick's label, centred on it (clipped before).
    let plot_width = WIDTH - LABEL_WIDTH - 30.0;
    let x_of = |us: f64| LABEL_WIDTH + (us - start) / span * plot_width;
    let axis_y = lanes.len() as f64 * LANE_HEIGHT + 8.0;
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{}" role="img" aria-label="timeline of one step">"#,
        axis_y + 22.0
    );
    for (i, lane) in lanes.iter().enumerate() {
        let y = i as f64 * LANE_HEIGHT + 4.0;
        let _ = write!(
            svg,
            r##"<text x="0" y="{}" font-size="12">{}</text><line x1="{LABEL_WIDTH}" x2="{WIDTH}" y1="{}" y2="{}" stroke="#eee"/>"##,
            y + 14.0,
            escape(lane),
            y + BAR_HEIGHT + 2.0,
            y + BAR_HEIGHT + 2.0
        );
    }
    // Round ticks along the step, each with a faint line across the lanes.
    for tick in linear_ticks(span, 8) {
        let x = x_of(start + tick);
        let _ = write!(
            svg,
            r##"<line x1="{x:.1}" x2="{x:.1}" y1="4" y2="{axis_y:.1}" stroke="#f3f3f3"/><text x="{x:.1}" y="{:.1}" font-size="10" text-anchor="middle" fill="#777">{}</text>"##,
            axis_y + 10.0,
            tick_text(tick)
        );
    }
    for bar in bars {
        let lane = lanes.iter().position(|l| *l == bar.lane).unwrap_or(0);
        let x = x_of(bar.start_us);
        let width = (bar.dur_us / span * plot_width).max(0.5);
        let y = lane as f64 * LANE_HEIGHT + 4.0;
        let _ = write!(
            svg,
            r#"<rect x="{x:.2}" y="{y:.1}" width="{width:.2}" height="{BAR_HEIGHT}" fill="{}" opacity="0.85"><title>{} ({:.1} us, from {:.1} us)</title></rect>"#,
            tier_colour(bar.tier),
            escape(bar.label),
            bar.dur_us,
            bar.start_us - start
        );
    }
    // The step's length at the end of the axis (the ticks start at 0).
    let _ = write!(
        svg,
        r#"<text x="{}" y="{:.1}" font-size="11" text-anchor="end">{:.1} us</text>"#,
        WIDTH - 10.0,
        axis_y + 21.0,
        span
    );
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_lane_is_a_row_and_each_bar_says_what_and_when() {
        let bars = [
            Bar {
                lane: "host",
                start_us: 10.0,
                dur_us: 5.0,
                label: "launch",
                tier: None,
            },
            Bar {
                lane: "stream 0/7",
                start_us: 16.0,
                dur_us: 40.0,
                label: "aten::mm [8,8]×[8,8] f32",
                tier: Some(2),
            },
            Bar {
                lane: "host",
                start_us: 20.0,
                dur_us: 1.0,
                label: "launch",
                tier: None,
            },
        ];
        let svg = render(&bars);
        assert_eq!(svg.matches("<rect").count(), 3);
        assert_eq!(svg.matches(">host</text>").count(), 1, "one row per lane");
        assert!(svg.contains("<title>aten::mm [8,8]×[8,8] f32 (40.0 us, from 6.0 us)</title>"));
        // The step spans 10..56: 46 µs, ticks every 10 µs.
        assert!(svg.contains(">46.0 us</text>"));
        assert!(svg.contains(">40 us</text>"));
        assert!(render(&[]).starts_with("<p>"));
    }
}
