//! `report.html`: one self-contained page (inline SVG and CSS, nothing fetched) with the
//! predicted-versus-measured bars per tier, the top signatures and the timeline of one step.

use std::fmt::Write as _;

use serde::Serialize;

use super::comparison::ComparisonReport;

/// One bar of the timeline: a host op or a GPU activity of one step.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineSpan {
    /// `host`, `stream 7`, ...
    pub lane: String,
    pub start_us: f64,
    pub dur_us: f64,
    pub label: String,
    pub tier: Option<u8>,
}

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

const TIER_COLOURS: [&str; 4] = ["#9aa0a6", "#4e79a7", "#f28e2b", "#59a14f"];

fn tier_colour(tier: Option<u8>) -> &'static str {
    TIER_COLOURS[tier.map_or(0, |t| (t as usize).min(3))]
}

/// One bar of the chart: its label and its segments (value, colour, text).
type Bar<'c> = (String, Vec<(f64, &'c str, String)>);

fn bars(report: &ComparisonReport) -> String {
    let t = &report.tier_breakdown;
    let mut rows: Vec<Bar> = vec![(
        "measured (full model)".into(),
        vec![(
            report.full_model_inference_us,
            "#e15759",
            format!("{:.1} us", report.full_model_inference_us),
        )],
    )];
    rows.push((
        "predicted: sum of kernels".into(),
        [
            (&t.tier1_cuda_runtime, 1usize),
            (&t.tier2_cublas, 2),
            (&t.tier3_libtorch, 3),
        ]
        .iter()
        .map(|(b, i)| {
            (
                b.total_us,
                TIER_COLOURS[*i],
                format!("tier {i}: {:.1} us", b.total_us),
            )
        })
        .collect(),
    ));
    if let Some(tl) = &report.predictions.timeline {
        rows.push((
            "predicted: timeline".into(),
            vec![(
                tl.predicted_us,
                "#76b7b2",
                format!("{:.1} us", tl.predicted_us),
            )],
        ));
    }
    let max = rows
        .iter()
        .map(|(_, segs)| segs.iter().map(|s| s.0).sum::<f64>())
        .fold(1e-9, f64::max);
    let (width, label_w, row_h) = (900.0, 210.0, 34.0);
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{}" role="img" aria-label="predicted versus measured">"#,
        rows.len() as f64 * row_h + 10.0
    );
    for (i, (name, segs)) in rows.iter().enumerate() {
        let y = i as f64 * row_h + 5.0;
        let _ = write!(
            svg,
            r#"<text x="0" y="{}" font-size="13">{}</text>"#,
            y + 18.0,
            escape(name)
        );
        let mut x = label_w;
        for (value, colour, title) in segs {
            let w = (value / max) * (width - label_w - 110.0);
            let _ = write!(
                svg,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="24" fill="{colour}"><title>{}</title></rect>"#,
                escape(title)
            );
            x += w;
        }
        let total: f64 = segs.iter().map(|s| s.0).sum();
        let _ = write!(
            svg,
            r#"<text x="{:.1}" y="{}" font-size="12">{total:.1} us</text>"#,
            x + 6.0,
            y + 17.0
        );
    }
    svg.push_str("</svg>");
    svg
}

fn timeline_svg(spans: &[TimelineSpan]) -> String {
    if spans.is_empty() {
        return "<p>No timeline: the prediction had no trace to model.</p>".into();
    }
    let mut lanes: Vec<String> = Vec::new();
    for s in spans {
        if !lanes.contains(&s.lane) {
            lanes.push(s.lane.clone());
        }
    }
    let start = spans
        .iter()
        .map(|s| s.start_us)
        .fold(f64::INFINITY, f64::min);
    let end = spans
        .iter()
        .map(|s| s.start_us + s.dur_us)
        .fold(f64::NEG_INFINITY, f64::max);
    let span = (end - start).max(1e-9);
    let (width, label_w, lane_h) = (1100.0, 90.0, 26.0);
    let plot_w = width - label_w - 10.0;
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{}" role="img" aria-label="timeline of one step">"#,
        lanes.len() as f64 * lane_h + 30.0
    );
    for (i, lane) in lanes.iter().enumerate() {
        let y = i as f64 * lane_h + 4.0;
        let _ = write!(
            svg,
            r##"<text x="0" y="{}" font-size="12">{}</text><line x1="{label_w}" x2="{width}" y1="{}" y2="{}" stroke="#eee"/>"##,
            y + 15.0,
            escape(lane),
            y + 20.0,
            y + 20.0
        );
    }
    for s in spans {
        let lane = lanes.iter().position(|l| *l == s.lane).unwrap_or(0);
        let x = label_w + (s.start_us - start) / span * plot_w;
        let w = (s.dur_us / span * plot_w).max(0.5);
        let y = lane as f64 * lane_h + 4.0;
        let _ = write!(
            svg,
            r#"<rect x="{x:.2}" y="{y:.1}" width="{w:.2}" height="18" fill="{}" opacity="0.85"><title>{} ({:.1} us)</title></rect>"#,
            tier_colour(s.tier),
            escape(&s.label),
            s.dur_us
        );
    }
    let axis_y = lanes.len() as f64 * lane_h + 20.0;
    let _ = write!(
        svg,
        r#"<text x="{label_w}" y="{axis_y}" font-size="11">0 us</text><text x="{}" y="{axis_y}" font-size="11" text-anchor="end">{:.1} us</text>"#,
        width - 10.0,
        span
    );
    svg.push_str("</svg>");
    svg
}

/// The whole page.
pub fn render(report: &ComparisonReport, timeline: &[TimelineSpan]) -> String {
    let mut html = String::new();
    let p = &report.predictions;
    let _ = write!(
        html,
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><title>replay: {model}</title>
<style>body{{font-family:system-ui,sans-serif;margin:24px;color:#222}}table{{border-collapse:collapse;font-size:13px}}
td,th{{border-bottom:1px solid #ddd;padding:3px 8px;text-align:right}}td.l,th.l{{text-align:left;max-width:520px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}}
.k{{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}}</style></head><body>
<h1>replay: {model}</h1>
<p>{device}, sequence length {seq}, input {inputs}. Measured full model: <b>{measured:.1} us</b> (median of {runs} runs, p10 {p10:.1}, p90 {p90:.1}).
Sum of kernels: <b>{sum:.1} us</b> ({sum_err:+.1}%).{timeline_text} Coverage: {coverage:.1}% of the trace's time replayed.</p>
<h2>Predicted versus measured</h2>
<p><span class="k" style="background:{c1}"></span>tier 1 copies<span class="k" style="background:{c2}"></span>tier 2 GEMM<span class="k" style="background:{c3}"></span>tier 3 libtorch</p>
"#,
        model = escape(&report.model),
        device = escape(&report.device),
        seq = report.seq_len,
        inputs = escape(&report.full_model.inputs.join(", ")),
        measured = report.full_model_inference_us,
        runs = report.full_model.runs,
        p10 = report.full_model.p10_us,
        p90 = report.full_model.p90_us,
        sum = p.sum.predicted_us,
        sum_err = p.sum.error_percent,
        timeline_text = p
            .timeline
            .as_ref()
            .map(|t| format!(
                " Timeline: <b>{:.1} us</b> ({:+.1}%).",
                t.predicted_us, t.error_percent
            ))
            .unwrap_or_default(),
        coverage = 100.0 * report.coverage.replayed_share_of_trace_time,
        c1 = TIER_COLOURS[1],
        c2 = TIER_COLOURS[2],
        c3 = TIER_COLOURS[3],
    );
    html.push_str(&bars(report));
    if let Some(e) = &report.energy {
        let c = &e.comparison;
        let _ = write!(
            html,
            "<h2>Energy</h2><p>Probe {} ({:?}, update period {:.3} s). Measured: <b>{:.5} J</b> per forward pass; predicted from the kernels: <b>{:.5} J</b> ({}). {} signatures measured, {} without energy.</p>",
            escape(&c.probe),
            c.method,
            c.resolution.update_period_s,
            c.measured_joules,
            c.predicted_joules,
            c.error_percent.map(|x| format!("{x:+.1}%")).unwrap_or_else(|| "n/a".into()),
            e.signatures_measured,
            e.signatures_without_energy.len()
        );
        if let Some(t) = &e.timeline {
            let _ = write!(
                html,
                "<p>Predicted along the timeline: <b>{:.5} J</b> ({}): the kernels' {:.5} J plus {:.1} us of gaps at {:.1} W (the device's power while the host works and it runs nothing).</p>",
                t.predicted_joules,
                t.error_percent.map(|x| format!("{x:+.1}%")).unwrap_or_else(|| "n/a".into()),
                t.signature_joules,
                t.gap_seconds * 1e6,
                t.gap_watts
            );
        }
    }
    html.push_str("<h2>Tiers</h2><table><tr><th class=\"l\">tier</th><th class=\"l\">method</th><th>unique</th><th>invocations</th><th>predicted us</th><th>share</th><th>trace us</th></tr>");
    let t = &report.tier_breakdown;
    for (name, b) in [
        ("1 memory", &t.tier1_cuda_runtime),
        ("2 GEMM", &t.tier2_cublas),
        ("3 libtorch", &t.tier3_libtorch),
    ] {
        let _ = write!(
            html,
            "<tr><td class=\"l\">{name}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}%</td><td>{:.1}</td></tr>",
            escape(&b.method),
            b.unique_kernels,
            b.invocations,
            b.total_us,
            100.0 * b.share,
            b.trace_total_us
        );
    }
    html.push_str("</table><h2>Top signatures</h2><table><tr><th class=\"l\">name</th><th class=\"l\">op</th><th>tier</th><th>count</th><th>isolated median us</th><th>predicted total us</th><th>trace total us</th></tr>");
    for s in &report.top_signatures {
        let _ = write!(
            html,
            "<tr><td class=\"l\" title=\"{n}\">{n}</td><td class=\"l\">{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td></tr>",
            escape(s.op.as_deref().unwrap_or("")),
            s.tier,
            s.count,
            s.isolated_median_us.map(|m| format!("{m:.2}")).unwrap_or_else(|| format!("{:?}", s.status).to_lowercase()),
            s.predicted_total_us,
            s.trace_total_us,
            n = escape(&s.name),
        );
    }
    html.push_str("</table><h2>Timeline of one step (predicted)</h2>");
    html.push_str(&timeline_svg(timeline));
    html.push_str("</body></html>\n");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("void k<float, 4>(a&b)"),
            "void k&lt;float, 4&gt;(a&amp;b)"
        );
    }

    #[test]
    fn timeline_draws_one_rect_per_span_in_its_lane() {
        let spans = vec![
            TimelineSpan {
                lane: "host".into(),
                start_us: 0.0,
                dur_us: 5.0,
                label: "aten::mm".into(),
                tier: Some(2),
            },
            TimelineSpan {
                lane: "stream 7".into(),
                start_us: 4.0,
                dur_us: 10.0,
                label: "gemm<a>".into(),
                tier: Some(2),
            },
        ];
        let svg = timeline_svg(&spans);
        assert_eq!(svg.matches("<rect").count(), 2);
        assert!(svg.contains("stream 7") && svg.contains("gemm&lt;a&gt;"));
        assert!(svg.contains("14.0 us"), "the axis spans the step");
    }
}
