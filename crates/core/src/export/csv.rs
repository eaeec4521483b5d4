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
    let num = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    let _ = writer.write_record(ISOLATED_COLUMNS);
    for r in &results.results {
        let s = r.stats.as_ref();
        let row: Vec<String> = vec![
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
        ];
        let _ = writer.write_record(&row);
    }
    writer.into_inner().unwrap_or_default()
}
