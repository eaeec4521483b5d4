//! The CSV row of a case: the seed's columns (`BenchmarkResult.to_dict`), the compiled
//! variants beside the eager ones, and `sqnr_db`, `timing`, `status` and `error_msg`; then
//! what the quantized model's timing ran: `warmup_calls` and `timed_calls` (fewer than the
//! `timing` column's where the seed's counts did not fit the budget per case).

use replay_core::export::rows::Row;
use replay_core::suite::CaseOutcome;

use super::case::{CaseNotes, QuantCase};
use super::config::ModelParams;

pub const COLUMNS: [&str; 31] = [
    "name",
    "quantization",
    "sparsity",
    "shape_name",
    "m",
    "k",
    "n",
    "high_precision_dtype",
    "torch_compile_mode",
    "device",
    "model_type",
    "output_dir",
    "enable_profiler",
    "enable_memory_profiler",
    "baseline_inference_time_in_ms",
    "quantized_inference_time_in_ms",
    "speedup",
    "baseline_compiled_inference_time_in_ms",
    "quantized_compiled_inference_time_in_ms",
    "compiled_speedup",
    "compile_status",
    "profiler_json_path",
    "memory_profile_path",
    "memory_visualization_path",
    "memory_stats",
    "sqnr_db",
    "timing",
    "status",
    "error_msg",
    "warmup_calls",
    "timed_calls",
];

/// The seed's row name: the entry's `name`, else
/// `benchmark_<quant>_<model>_m<m>_k<k>_n<n>[_compile]`.
pub fn row_name(params: &ModelParams, case: &QuantCase) -> String {
    params.name.clone().unwrap_or_else(|| {
        format!(
            "benchmark_{}_{}_m{}_k{}_n{}{}",
            case.quantization,
            params.model_type,
            case.shape.m,
            case.shape.k,
            case.shape.n,
            if params.compile_mode.is_some() {
                "_compile"
            } else {
                ""
            }
        )
    })
}

/// Rounded as the seed rounds its speedups (two decimals).
fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn ratio(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(round2(a / b)),
        _ => None,
    }
}

pub fn row(
    params: &ModelParams,
    case: &QuantCase,
    output_dir: &str,
    timing: &str,
    outcome: &CaseOutcome,
    notes: &CaseNotes,
) -> Row {
    let row = Row::new()
        .with("name", row_name(params, case))
        .with("quantization", case.quantization.clone())
        .with("sparsity", case.sparsity.clone())
        .with("shape_name", case.shape.name.clone())
        .with("m", case.shape.m)
        .with("k", case.shape.k)
        .with("n", case.shape.n)
        .with(
            "high_precision_dtype",
            params.high_precision_dtype.torch_name(),
        )
        .with("torch_compile_mode", params.compile_mode.clone())
        .with("device", params.device.short_name())
        .with("model_type", params.model_type.to_string())
        .with("output_dir", output_dir.to_owned())
        .with("enable_profiler", params.enable_profiler)
        .with("enable_memory_profiler", params.enable_memory_profiler)
        .with("baseline_inference_time_in_ms", notes.baseline_ms)
        .with("quantized_inference_time_in_ms", notes.quantized_ms)
        .with("speedup", ratio(notes.baseline_ms, notes.quantized_ms))
        .with(
            "baseline_compiled_inference_time_in_ms",
            notes.compiled.map(|c| c.baseline_ms),
        )
        .with(
            "quantized_compiled_inference_time_in_ms",
            notes.compiled.map(|c| c.quantized_ms),
        )
        .with(
            "compiled_speedup",
            notes
                .compiled
                .and_then(|c| ratio(Some(c.baseline_ms), Some(c.quantized_ms))),
        )
        .with("compile_status", notes.compile_status.clone())
        .with("profiler_json_path", notes.profile_path.clone())
        .with("memory_profile_path", notes.memory_profile_path.clone())
        .with("memory_visualization_path", None::<String>)
        .with("memory_stats", notes.memory_stats.clone())
        .with("sqnr_db", sqnr_cell(notes.sqnr_db))
        .with("timing", timing.to_owned());
    match outcome {
        CaseOutcome::Measured(m) => row
            .with("status", "ok")
            .with("error_msg", notes.message.clone())
            .with("warmup_calls", m.summary.warmup_calls)
            .with("timed_calls", m.summary.samples as u64),
        CaseOutcome::Failed(e) => row
            .with("status", e.status.as_str())
            .with("error_msg", e.message.clone())
            .with("warmup_calls", None::<u64>)
            .with("timed_calls", None::<u64>),
    }
}

/// Two decimals, "inf" for an output equal to the reference.
fn sqnr_cell(sqnr: Option<f64>) -> serde_json::Value {
    match sqnr {
        Some(s) if s.is_finite() => serde_json::json!(round2(s)),
        Some(_) => serde_json::json!("inf"),
        None => serde_json::Value::Null,
    }
}
