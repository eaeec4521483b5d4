//! `isolated.csv`: one row per signature, the columns a pandas user wants first.

use crate::results::isolated::{IsolatedResults, Status};

pub const ISOLATED_COLUMNS: &[&str] = &[
    "id",
    "tier",
    "status",
    "method",
    "name",
    "op",
    "count",
    "share",
    "predicted_us",
    "host_us",
    "median_us",
    "mean_us",
    "min_us",
    "p10_us",
    "p90_us",
    "max_us",
    "std_us",
    "rse_median",
    "noise_target_met",
    "samples",
    "rounds",
    "calls_per_sample",
    "trace_mean_us",
    "trace_total_us",
    "replayed_as",
    "reason",
];

/// The columns of `sequence.csv`: one row per entry of the re-run step, in order.
pub const SEQUENCE_COLUMNS: &[&str] = &[
    "position",
    "name",
    "tier",
    "status",
    "method",
    "trace_us",
    "in_context_median_us",
    "in_context_p10_us",
    "in_context_p90_us",
    "samples",
    "signatures",
    "reason",
];

/// `sequence.csv`: every entry of a re-run step with its trace time and in-context spread.
pub fn sequence_to_bytes(results: &crate::results::sequence::SequenceResults) -> Vec<u8> {
    let mut writer = ::csv::Writer::from_writer(Vec::new());
    let num = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    let _ = writer.write_record(SEQUENCE_COLUMNS);
    for e in &results.entries {
        let s = e.in_context.as_ref();
        let ids: Vec<&str> = e.members.iter().map(|(id, _)| id.as_str()).collect();
        let _ = writer.write_record([
            e.position.to_string(),
            e.name.clone(),
            e.tier.to_string(),
            status_text(e.status).into(),
            e.method.clone().unwrap_or_default(),
            format!("{}", e.trace_us),
            num(s.map(|s| s.median_us)),
            num(s.map(|s| s.p10_us)),
            num(s.map(|s| s.p90_us)),
            s.map(|s| s.samples.to_string()).unwrap_or_default(),
            ids.join(" "),
            e.reason.clone().unwrap_or_default(),
        ]);
    }
    writer.into_inner().unwrap_or_default()
}

fn status_text(s: Status) -> &'static str {
    match s {
        Status::Ok => "ok",
        Status::Included => "included",
        Status::Failed => "failed",
        Status::Unsupported => "unsupported",
        Status::Oom => "oom",
        Status::Estimated => "estimated",
    }
}

pub fn isolated_to_bytes(results: &IsolatedResults) -> Vec<u8> {
    let mut writer = ::csv::Writer::from_writer(Vec::new());
    let _ = writer.write_record(ISOLATED_COLUMNS);
    for r in &results.results {
        let _ = writer.write_record(isolated_row(r));
    }
    writer.into_inner().unwrap_or_default()
}

/// `isolated.csv` written row by row (a windowed run's rows, streamed from its rows file).
pub fn isolated_writer<W: std::io::Write>(out: W) -> ::csv::Writer<W> {
    let mut writer = ::csv::Writer::from_writer(out);
    let _ = writer.write_record(ISOLATED_COLUMNS);
    writer
}

/// One row of `isolated.csv`.
pub fn isolated_row(r: &crate::results::isolated::SignatureResult) -> Vec<String> {
    let num = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    let s = r.stats.as_ref();
    vec![
        r.id.clone(),
        r.tier.to_string(),
        status_text(r.status).into(),
        r.method.clone().unwrap_or_default(),
        r.name.clone(),
        r.op.clone().unwrap_or_default(),
        r.count.to_string(),
        format!("{}", r.share),
        num(r.predicted_us),
        num(r.host_us),
        num(s.map(|s| s.median)),
        num(s.map(|s| s.mean)),
        num(s.map(|s| s.min)),
        num(s.map(|s| s.p10)),
        num(s.map(|s| s.p90)),
        num(s.map(|s| s.max)),
        num(s.map(|s| s.std)),
        num(s.and_then(|s| s.rse_median)),
        s.map(|s| s.noise_target_met.to_string())
            .unwrap_or_default(),
        s.map(|s| s.samples.to_string()).unwrap_or_default(),
        s.map(|s| s.rounds.to_string()).unwrap_or_default(),
        s.map(|s| s.calls_per_sample.to_string())
            .unwrap_or_default(),
        format!("{}", r.trace_mean_us),
        format!("{}", r.trace_total_us),
        r.replayed_as.clone(),
        r.reason.clone().unwrap_or_default(),
    ]
}
