//! `report.html`: one self-contained page (inline SVG and CSS, nothing fetched) with the
//! predicted-versus-measured bars per tier, the top signatures (labelled with their shapes,
//! their isolated time against the trace's), a log-log scatter of isolated against trace
//! time per signature, and the timeline of one step.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::comparison::ComparisonReport;
use crate::predict::TimelineSpan;

pub use crate::plot::escape;
use crate::plot::{lanes, scatter, tier_colour, TIER_COLOURS};

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
        t.numbered()
            .into_iter()
            .map(|(i, b)| {
                (
                    b.total_us,
                    TIER_COLOURS[usize::from(i)],
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
    if let Some(hm) = &report.predictions.host_model {
        rows.push((
            "predicted: host model".into(),
            vec![(
                hm.predicted_us,
                "#b07aa1",
                format!("{:.1} us", hm.predicted_us),
            )],
        ));
    }
    if let Some(sq) = &report.predictions.sequence {
        rows.push((
            "predicted: sequence".into(),
            vec![(
                sq.predicted_us,
                "#59a14f",
                format!("{:.1} us", sq.predicted_us),
            )],
        ));
    }
    let totals: Vec<f64> = rows
        .iter()
        .map(|(_, segs)| segs.iter().map(|s| s.0).sum::<f64>())
        .collect();
    let scale = BarScale::for_totals(&totals);
    let (width, label_w, row_h) = (900.0, 210.0, 34.0);
    let mut svg = String::new();
    if let BarScale::Log { spread, .. } = scale {
        let _ = write!(
            svg,
            "<p>Logarithmic scale: the bars span {spread:.0}x, which a linear one would squash \
             (each bar's tiers share its length in proportion).</p>"
        );
    }
    let _ = write!(
        svg,
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
        let total: f64 = segs.iter().map(|s| s.0).sum();
        let length = scale.length(total) * (width - label_w - 110.0);
        for (value, colour, title) in segs {
            let w = if total > 0.0 {
                value / total * length
            } else {
                0.0
            };
            let _ = write!(
                svg,
                r#"<rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="24" fill="{colour}"><title>{}</title></rect>"#,
                escape(title)
            );
            x += w;
        }
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

/// How a bar's total becomes its length, as a share of the longest.
#[derive(Debug, Clone, Copy, PartialEq)]
enum BarScale {
    Linear {
        max: f64,
    },
    /// From a floor of half the shortest bar, for bars that span more than [`LOG_SPREAD`]x.
    Log {
        floor: f64,
        max: f64,
        spread: f64,
    },
}

/// Bars whose longest is more than this many times the shortest are drawn on a log scale.
const LOG_SPREAD: f64 = 20.0;

impl BarScale {
    fn for_totals(totals: &[f64]) -> BarScale {
        let positive = totals.iter().copied().filter(|t| *t > 0.0 && t.is_finite());
        let max = positive.clone().fold(1e-9, f64::max);
        let min = positive.fold(f64::INFINITY, f64::min);
        let spread = max / min;
        if spread.is_finite() && spread > LOG_SPREAD {
            BarScale::Log {
                floor: min / 2.0,
                max,
                spread,
            }
        } else {
            BarScale::Linear { max }
        }
    }

    fn length(self, total: f64) -> f64 {
        match self {
            BarScale::Linear { max } => (total / max).clamp(0.0, 1.0),
            BarScale::Log { floor, max, .. } if total > floor => {
                ((total / floor).ln() / (max / floor).ln()).clamp(0.0, 1.0)
            }
            BarScale::Log { .. } => 0.0,
        }
    }
}

/// The timeline of one step: host threads and each stream on their own row, each bar
/// titled with its signature's label (shapes and dtypes) when the report knows it.
fn timeline_svg(spans: &[TimelineSpan], labels: &HashMap<&str, &str>) -> String {
    let bars: Vec<lanes::Bar> = spans
        .iter()
        .map(|s| lanes::Bar {
            lane: &s.lane,
            start_us: s.start_us,
            dur_us: s.dur_us,
            label: s
                .signature
                .as_deref()
                .and_then(|id| labels.get(id).copied())
                .unwrap_or(&s.label),
            tier: s.tier,
        })
        .collect();
    lanes::render(&bars)
}

/// A replayed time against trace time per invocation, one dot per signature that has one:
/// `which` picks the isolated or the in-context time.
fn scatter_svg(report: &ComparisonReport, which: Replayed) -> String {
    let points: Vec<scatter::Point> = report
        .signature_times
        .iter()
        .filter_map(|s| {
            let replayed = match which {
                Replayed::Isolated => s.isolated_us?,
                Replayed::InContext => s.in_context_us?,
            };
            Some(scatter::Point {
                x: s.trace_mean_us,
                y: replayed,
                weight: s.share_of_trace,
                colour: tier_colour(Some(s.tier.number())),
                title: format!(
                    "{} (tier {}, {}×): {} {:.2} us, trace {:.2} us, ratio {:.2}, {:.1}% of the trace",
                    s.label,
                    s.tier.number(),
                    s.count,
                    which.word(),
                    replayed,
                    s.trace_mean_us,
                    replayed / s.trace_mean_us,
                    100.0 * s.share_of_trace
                ),
            })
        })
        .collect();
    scatter::Scatter {
        x_label: "trace: mean per invocation",
        y_label: which.axis(),
        size: 420.0,
    }
    .render(&points)
}

/// Which replayed time a scatter draws.
#[derive(Clone, Copy)]
enum Replayed {
    /// Each signature alone (`isolated`).
    Isolated,
    /// Each op in its place in the step re-run in order (`sequence`).
    InContext,
}

impl Replayed {
    fn word(self) -> &'static str {
        match self {
            Replayed::Isolated => "isolated",
            Replayed::InContext => "in context",
        }
    }

    fn axis(self) -> &'static str {
        match self {
            Replayed::Isolated => "isolated: median per invocation",
            Replayed::InContext => "in context: median per invocation",
        }
    }
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
<p>{device}, {input_text}. Measured full model: <b>{measured:.1} us</b> (median of {runs} runs, p10 {p10:.1}, p90 {p90:.1}){note}.
Sum of kernels: <b>{sum:.1} us</b> ({sum_err:+.1}%).{timeline_text} Coverage: {coverage} of the trace's time replayed{unseen}.</p>
{warnings}<h2>Predicted versus measured</h2>
<p><span class="k" style="background:{c1}"></span>tier 1 copies<span class="k" style="background:{c2}"></span>tier 2 GEMM<span class="k" style="background:{c3}"></span>tier 3 libtorch{tier4}</p>
"#,
        model = escape(&report.model),
        device = escape(&report.device),
        input_text = escape(&super::input_text(report)),
        measured = report.full_model_inference_us,
        runs = report.full_model.runs,
        p10 = report.full_model.p10_us,
        p90 = report.full_model.p90_us,
        note = report
            .full_model_note
            .as_ref()
            .map(|n| format!("; {}", escape(n)))
            .unwrap_or_default(),
        warnings = report
            .machine_disturbed
            .iter()
            .map(|w| format!("<p style=\"color:#a40\"><b>Warning:</b> {}.</p>\n", escape(w)))
            .collect::<String>(),
        sum = p.sum.predicted_us,
        sum_err = p.sum.error_percent,
        timeline_text = p
            .timeline
            .as_ref()
            .map(|t| format!(
                " Timeline: <b>{:.1} us</b> ({:+.1}%).",
                t.predicted_us, t.error_percent
            ))
            .into_iter()
            .chain(p.sequence.as_ref().map(|s| format!(
                " Sequence (the step re-run in order): <b>{:.1} us</b> ({:+.1}%).",
                s.predicted_us, s.error_percent
            )))
            .chain(p.host_model.as_ref().map(|h| format!(
                " Host model (the host's costs measured without the profiler): <b>{:.1} us</b> ({:+.1}%).",
                h.predicted_us, h.error_percent
            )))
            .chain(report.host_device.as_ref().map(|d| format!(
                " The step: host {:.1} us, device {:.1} us, {}-bound.",
                d.host_us, d.device_us, escape(&d.bound)
            )))
            .chain((!p.chosen.is_empty()).then(|| format!(
                " <b>The prediction: {}</b> ({}){}.",
                escape(&p.chosen),
                escape(&p.chosen_because),
                match p.chosen_inside_p10_p90 {
                    Some(true) => ", inside the measured p10-p90",
                    Some(false) => ", outside the measured p10-p90",
                    None => "",
                }
            )))
            .collect::<String>(),
        coverage = crate::percent::percent_text(report.coverage.replayed_share_of_trace_time),
        unseen = escape(&super::unseen_text(&report.coverage)),
        tier4 = if report.tier_breakdown.tier4_generated.is_some() {
            format!(
                "<span class=\"k\" style=\"background:{}\"></span>tier 4 generated",
                TIER_COLOURS[4]
            )
        } else {
            String::new()
        },
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
            super::signed_percent(c.error_percent),
            e.signatures_measured,
            e.signatures_without_energy.len()
        );
        if let Some(t) = &e.timeline {
            let _ = write!(
                html,
                "<p>Predicted along the timeline: <b>{:.5} J</b> ({}): the kernels' {:.5} J plus {:.1} us of gaps at {:.1} W (the device's power while the host works and it runs nothing).</p>",
                t.predicted_joules,
                super::signed_percent(t.error_percent),
                t.signature_joules,
                t.gap_seconds * 1e6,
                t.gap_watts
            );
        }
    }
    html.push_str("<h2>Tiers</h2><table><tr><th class=\"l\">tier</th><th class=\"l\">method</th><th>unique</th><th>invocations</th><th>predicted us</th><th>share</th><th>trace us</th></tr>");
    let t = &report.tier_breakdown;
    for (number, b) in t.numbered() {
        let name = match number {
            1 => "1 memory",
            2 => "2 GEMM",
            3 => "3 libtorch",
            _ => "4 generated",
        };
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
    html.push_str("</table><h2>Top signatures</h2><table><tr><th class=\"l\">signature</th><th class=\"l\">kernel</th><th>tier</th><th>count</th><th>isolated median us</th><th>trace mean us</th><th>isolated / trace</th><th>predicted total us</th><th>trace total us</th></tr>");
    for s in &report.top_signatures {
        let label = s.label.as_deref().or(s.op.as_deref()).unwrap_or(&s.name);
        let _ = write!(
            html,
            "<tr><td class=\"l\" title=\"{l}\">{l}</td><td class=\"l\" title=\"{n}\">{n}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td></tr>",
            s.tier,
            s.count,
            s.isolated_median_us.map(|m| format!("{m:.2}")).unwrap_or_else(|| format!("{:?}", s.status).to_lowercase()),
            s.trace_mean_us,
            s.isolated_over_trace.map(|r| format!("{r:.2}")).unwrap_or_default(),
            s.predicted_total_us,
            s.trace_total_us,
            l = escape(label),
            n = escape(&s.name),
        );
    }
    html.push_str("</table>");
    if !report.signature_times.is_empty() {
        html.push_str("<h2>Isolated against trace time, per signature</h2><p>One dot per signature that replayed, its area its share of the trace's time, coloured by tier; on the diagonal the replay took as long as the traced run, the dashed lines are twice and half. Hover a dot for its label.</p>");
        html.push_str(&scatter_svg(report, Replayed::Isolated));
    }
    if report
        .signature_times
        .iter()
        .any(|s| s.in_context_us.is_some())
    {
        html.push_str("<h2>In context against trace time, per signature</h2><p>The same dots with each op's time in its place in the step re-run in order (<code>replay sequence</code>): against the isolated scatter above, the context effect (caches, prefetchers and clocks an op meets after its predecessor instead of after itself).</p>");
        html.push_str(&scatter_svg(report, Replayed::InContext));
    }
    html.push_str("<h2>Timeline of one step (predicted)</h2><p>The host and each stream on a row of their own; hover a bar for what it is and when.</p>");
    let labels: HashMap<&str, &str> = report
        .signature_times
        .iter()
        .map(|s| (s.id.as_str(), s.label.as_str()))
        .collect();
    html.push_str(&timeline_svg(timeline, &labels));
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
                signature: None,
            },
            TimelineSpan {
                lane: "stream 7".into(),
                start_us: 4.0,
                dur_us: 10.0,
                label: "gemm<a>".into(),
                tier: Some(2),
                signature: None,
            },
        ];
        let svg = timeline_svg(&spans, &HashMap::new());
        assert_eq!(svg.matches("<rect").count(), 2);
        assert!(svg.contains("stream 7") && svg.contains("gemm&lt;a&gt;"));
        assert!(svg.contains("14.0 us"), "the axis spans the step");
    }

    #[test]
    fn bars_that_span_more_than_twenty_times_go_on_a_log_scale() {
        // A +12849 % prediction beside the measured time: linear, the measured bar would be
        // 0.8 % of the longest, a sliver.
        let scale = BarScale::for_totals(&[100.0, 12949.0, 90.0]);
        let BarScale::Log { floor, max, spread } = scale else {
            panic!("{scale:?}")
        };
        assert_eq!((floor, max), (45.0, 12949.0));
        assert!((spread - 12949.0 / 90.0).abs() < 1e-9);
        assert_eq!(scale.length(12949.0), 1.0);
        // ln(100/45) / ln(12949/45) = 0.7985 / 5.6622 = 0.1410.
        assert!(
            (scale.length(100.0) - 0.14103).abs() < 1e-4,
            "{}",
            scale.length(100.0)
        );
        assert!(scale.length(90.0) > 0.1 && scale.length(90.0) < scale.length(100.0));
        // Close bars stay linear.
        assert_eq!(
            BarScale::for_totals(&[100.0, 130.0]),
            BarScale::Linear { max: 130.0 }
        );
    }
}
