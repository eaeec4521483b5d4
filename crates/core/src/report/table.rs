//! The readable summary `replay compare` prints.

use std::fmt::Write as _;

use super::comparison::ComparisonReport;

pub fn render(r: &ComparisonReport) -> String {
    let mut out = String::new();
    let f = &r.full_model;
    let _ = writeln!(
        out,
        "{} on {} ({}input {})",
        r.model,
        r.device,
        if super::takes_tokens(r) {
            format!("seq-len {}; ", r.seq_len)
        } else {
            String::new()
        },
        r.full_model.inputs.join(", ")
    );
    let _ = writeln!(
        out,
        "measured full model     {:>12.1} us   (median of {} runs; p10 {:.1}, p90 {:.1})",
        r.full_model_inference_us, f.runs, f.p10_us, f.p90_us
    );
    if let Some(note) = &r.full_model_note {
        let _ = writeln!(out, "  {note}");
    }
    for warning in &r.machine_disturbed {
        let _ = writeln!(out, "warning: {warning}");
    }
    let _ = writeln!(
        out,
        "predicted, kernel sum   {:>12.1} us   {:+.1}%",
        r.predictions.sum.predicted_us, r.predictions.sum.error_percent
    );
    if let Some(t) = &r.predictions.timeline {
        let _ = writeln!(
            out,
            "predicted, timeline     {:>12.1} us   {:+.1}%",
            t.predicted_us, t.error_percent
        );
    }
    if let Some(t) = &r.predictions.sequence {
        let _ = writeln!(
            out,
            "predicted, sequence     {:>12.1} us   {:+.1}%   (the timeline with the step re-run in order)",
            t.predicted_us, t.error_percent
        );
    }
    if let Some(t) = &r.predictions.sequence_real_time {
        let _ = writeln!(
            out,
            "re-run in real time     {:>12.1} us   {:+.1}%   (the step's ops back to back, one timing around them)",
            t.predicted_us, t.error_percent
        );
    }
    if let Some(t) = &r.predictions.host_model {
        let _ = writeln!(
            out,
            "predicted, host model   {:>12.1} us   {:+.1}%   (the timeline with the host's costs measured without the profiler)",
            t.predicted_us, t.error_percent
        );
    }
    if let Some(split) = &r.host_device {
        let _ = writeln!(
            out,
            "step split: host {:.1} us, device {:.1} us: {}-bound (host times: {})",
            split.host_us, split.device_us, split.bound, split.host_times
        );
        for note in &split.notes {
            let _ = writeln!(out, "  note: {note}");
        }
    }
    if r.predictions.chosen.is_empty() {
        let _ = writeln!(out, "better prediction: {}", r.predictions.best);
    } else {
        let inside = match r.predictions.chosen_inside_p10_p90 {
            Some(true) => ", inside the measured p10-p90",
            Some(false) => ", outside the measured p10-p90",
            None => "",
        };
        let _ = writeln!(
            out,
            "the prediction: {} ({}){inside}; closest after measuring: {}",
            r.predictions.chosen, r.predictions.chosen_because, r.predictions.best
        );
    }
    match &r.execution_trace {
        Some(et) => {
            let _ = writeln!(out, "{}", et.summary());
        }
        None => {
            let _ = writeln!(out, "no execution trace (signatures matched by schema)");
        }
    }
    let _ = writeln!(out, "\ntier  method                                        unique  invocations   predicted us   share");
    for (n, b) in r.tier_breakdown.numbered() {
        let method: String = b.method.chars().take(44).collect();
        let _ = writeln!(
            out,
            "{n:<5} {method:<44} {:>7} {:>12} {:>14.1} {:>6.1}%",
            b.unique_kernels,
            b.invocations,
            b.total_us,
            100.0 * b.share
        );
    }
    top_signatures(&mut out, r);
    let estimated = r
        .coverage
        .unreplayed
        .iter()
        .filter(|u| u.status == crate::results::isolated::Status::Estimated)
        .count();
    let _ = writeln!(
        out,
        "\ncoverage: {} of the trace's time replayed; {} unreplayed signature(s) counted at trace time{}{}",
        crate::percent::percent_text(r.coverage.replayed_share_of_trace_time),
        r.coverage.unreplayed.len() - estimated,
        match estimated {
            0 => String::new(),
            n => format!(", {n} estimated by the roofline of --profile"),
        },
        super::unseen_text(&r.coverage)
    );
    if let Some(e) = &r.energy {
        let c = &e.comparison;
        let error = super::signed_percent(c.error_percent);
        let _ = writeln!(
            out,
            "energy ({}, {:?}): measured {:.5} J per pass, predicted from kernels {:.5} J ({error}); {} signatures measured",
            c.probe, c.method, c.measured_joules, c.predicted_joules, e.signatures_measured
        );
        if let Some(t) = &e.timeline {
            let error = super::signed_percent(t.error_percent);
            let _ = writeln!(
                out,
                "energy along the timeline: {:.5} J ({error}): kernels {:.5} J + gaps {:.1} us at {:.1} W",
                t.predicted_joules, t.signature_joules, t.gap_seconds * 1e6, t.gap_watts
            );
        }
    }
    if let Some(c) = &r.trace_self_check {
        let _ = writeln!(out, "trace self-check: timeline from the trace's own durations {:.1} us vs step {:.1} us ({:+.1}%)", c.predicted_us, c.measured_us, c.error_percent);
    }
    if let Some(i) = r.timeline_interruptions.filter(|i| i.gaps > 0) {
        let _ = writeln!(
            out,
            "timeline: {} interruption(s) of the profiled model call left out ({:.1} us; the process was not running)",
            i.gaps, i.removed_us
        );
    }
    out
}

/// How many of the top signatures the summary lists (the report keeps 20).
const TOP_LISTED: usize = 10;
/// Width of the label column; longer labels are cut with an ellipsis.
const LABEL_WIDTH: usize = 56;

/// The largest signatures by predicted time, each labelled with its shapes and dtypes,
/// with its isolated time per invocation against the trace's mean.
fn top_signatures(out: &mut String, r: &ComparisonReport) {
    if r.top_signatures.is_empty() {
        return;
    }
    let in_context = r.top_signatures.iter().any(|s| s.in_context_us.is_some());
    let _ = writeln!(
        out,
        "\n{:<LABEL_WIDTH$} {:>4} {:>6} {:>12} {:>12} {:>8}{}",
        "top signatures",
        "tier",
        "count",
        "isolated us",
        "trace us",
        "ratio",
        if in_context { "  in context us" } else { "" }
    );
    for s in r.top_signatures.iter().take(TOP_LISTED) {
        let label = s.label.as_deref().or(s.op.as_deref()).unwrap_or(&s.name);
        let isolated = match (s.isolated_over_trace, s.isolated_median_us) {
            (Some(ratio), _) => format!("{:.2}", ratio * s.trace_mean_us),
            (None, Some(median)) => format!("{median:.2}"),
            (None, None) => format!("{:?}", s.status).to_lowercase(),
        };
        let ratio = s
            .isolated_over_trace
            .map(|x| format!("{x:.2}"))
            .unwrap_or_else(|| "-".into());
        let context = match (in_context, s.in_context_us) {
            (false, _) => String::new(),
            (true, Some(us)) => format!(" {us:>14.2}"),
            (true, None) => format!(" {:>14}", "-"),
        };
        let _ = writeln!(
            out,
            "{:<LABEL_WIDTH$} {:>4} {:>6} {:>12} {:>12.2} {:>8}{context}",
            cut(label, LABEL_WIDTH),
            s.tier.number(),
            s.count,
            isolated,
            s.trace_mean_us,
            ratio
        );
    }
}

/// `text` in at most `width` characters, an ellipsis marking a cut.
fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut kept: String = text.chars().take(width.saturating_sub(1)).collect();
    kept.push('…');
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_labels_are_cut_to_the_column() {
        assert_eq!(cut("aten::mm", 10), "aten::mm");
        assert_eq!(cut("aten::linear [1,5,1024]", 10), "aten::lin…");
        assert_eq!(cut("aten::linear [1,5,1024]", 10).chars().count(), 10);
    }
}
