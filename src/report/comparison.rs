//! `comparison_report.json`: the whole model's measured latency against what its replayed
//! kernels predict, tier by tier.
//!
//! Keeps the original tool's fields (`full_model_inference_us`, `predicted_from_kernels_us`,
//! `error_percent`, `tier_breakdown`) and adds the timeline prediction, coverage, the top
//! signatures and the trace self-check.

use serde::{Deserialize, Serialize};

use crate::model::full::FullModelTiming;
use crate::replay::isolated::{IsolatedResults, SignatureResult, Status};
use crate::signature::schema::{SignatureFile, Tier, Unit};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TierBreakdown {
    /// How this tier was replayed on the device that ran it.
    pub method: String,
    pub unique_kernels: usize,
    pub invocations: u64,
    /// Σ predicted time of one invocation × count (µs); unreplayed signatures at trace time.
    pub total_us: f64,
    /// Share of the summed prediction.
    pub share: f64,
    /// Σ of the trace's own durations for this tier (µs).
    pub trace_total_us: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tiers {
    pub tier1_cuda_runtime: TierBreakdown,
    pub tier2_cublas: TierBreakdown,
    pub tier3_libtorch: TierBreakdown,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PredictionError {
    pub predicted_us: f64,
    /// (predicted − measured) / measured × 100.
    pub error_percent: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TopSignature {
    pub id: String,
    pub tier: Tier,
    pub name: String,
    pub op: Option<String>,
    pub count: u64,
    pub status: Status,
    pub isolated_median_us: Option<f64>,
    /// Isolated median × share × count, or the trace time when not replayed.
    pub predicted_total_us: f64,
    pub trace_total_us: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Unreplayed {
    pub id: String,
    pub name: String,
    pub status: Status,
    pub reason: String,
    pub trace_total_us: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Coverage {
    /// Share of the trace's time whose signatures replayed `ok` (or are `included`).
    pub replayed_share_of_trace_time: f64,
    /// How unreplayed signatures enter the predictions.
    pub accounting: String,
    pub unreplayed: Vec<Unreplayed>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ComparisonReport {
    pub model: String,
    pub device: String,
    pub seq_len: i64,
    /// The model's inputs as fed to the profiled and the timed runs (`--input`, or token ids).
    #[serde(default)]
    pub inputs: Vec<String>,
    pub trace: Option<String>,
    pub signatures: String,
    /// Median of the measured full-model runs (µs).
    pub full_model_inference_us: f64,
    pub full_model: FullModelTiming,
    /// The original tool's prediction: Σ isolated median × count.
    pub predicted_from_kernels_us: f64,
    pub error_percent: f64,
    pub predictions: Predictions,
    pub invocations: u64,
    pub tier_breakdown: Tiers,
    pub top_signatures: Vec<TopSignature>,
    pub coverage: Coverage,
    /// The timeline model fed with the trace's own durations, against the trace's step time.
    pub trace_self_check: Option<SelfCheck>,
    /// Host gaps inside the profiled model call far longer than its others (the process was
    /// preempted while profiled), replaced by a typical gap in the timeline prediction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline_interruptions: Option<crate::predict::Interruptions>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<EnergyReport>,
}

/// Energy predicted from the kernels (Σ joules per invocation × count) against the measured
/// full-model energy per forward pass.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EnergyReport {
    #[serde(flatten)]
    pub comparison: crate::energy::EnergyComparison,
    /// Signatures whose energy was measured, and those without (not replayed, or the probe failed).
    pub signatures_measured: usize,
    pub signatures_without_energy: Vec<String>,
}

/// The energy comparison, when the run measured energy.
pub fn energy_comparison(
    results: &IsolatedResults,
    full: &FullModelTiming,
) -> Option<EnergyReport> {
    let full_energy = full.energy.as_ref()?;
    let measured: Vec<(f64, u64)> = results
        .results
        .iter()
        .filter_map(|r| r.joules_per_invocation.map(|j| (j, r.count)))
        .collect();
    let without = results
        .results
        .iter()
        .filter(|r| r.joules_per_invocation.is_none() && r.status != Status::Included)
        .map(|r| r.id.clone())
        .collect();
    Some(EnergyReport {
        signatures_measured: measured.len(),
        comparison: crate::energy::EnergyComparison::new(measured, full_energy),
        signatures_without_energy: without,
    })
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Predictions {
    pub sum: PredictionError,
    pub timeline: Option<PredictionError>,
    /// `sum` or `timeline`: the one closer to the measured time.
    pub best: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SelfCheck {
    pub predicted_us: f64,
    pub measured_us: f64,
    pub error_percent: f64,
}

pub fn error_percent(predicted: f64, measured: f64) -> f64 {
    if measured > 0.0 {
        100.0 * (predicted - measured) / measured
    } else {
        0.0
    }
}

/// Predicted time of all invocations of one signature, and whether it was replayed.
pub fn predicted_total(r: &SignatureResult) -> (f64, bool) {
    match (r.status, r.predicted_us) {
        (Status::Ok | Status::Included, Some(p)) => (p * r.count as f64, true),
        _ => (r.trace_total_us, false),
    }
}

fn methods_of(results: &IsolatedResults, tier: Tier, fallback: &str) -> String {
    let mut methods: Vec<String> = results
        .results
        .iter()
        .filter(|r| r.tier == tier && r.status == Status::Ok)
        .filter_map(|r| r.method.as_ref())
        .map(|m| {
            // "libtorch dispatcher aten::add.Tensor" -> "libtorch dispatcher"
            if let Some(rest) = m.strip_prefix("libtorch dispatcher ") {
                let _ = rest;
                "libtorch dispatcher (aten ops by name)".to_string()
            } else {
                m.clone()
            }
        })
        .collect();
    methods.sort();
    methods.dedup();
    if methods.is_empty() {
        fallback.to_string()
    } else {
        methods.join(", ")
    }
}

fn tier_breakdown(
    results: &IsolatedResults,
    tier: Tier,
    fallback_method: &str,
    grand_total: f64,
) -> TierBreakdown {
    let rows: Vec<&SignatureResult> = results.results.iter().filter(|r| r.tier == tier).collect();
    // `+ 0.0`: an empty f64 sum is -0.0, which would print as "-0.0".
    let total: f64 = rows.iter().map(|r| predicted_total(r).0).sum::<f64>() + 0.0;
    TierBreakdown {
        method: methods_of(results, tier, fallback_method),
        unique_kernels: rows.len(),
        invocations: rows.iter().map(|r| r.count).sum(),
        total_us: total,
        share: if grand_total > 0.0 {
            total / grand_total
        } else {
            0.0
        },
        trace_total_us: rows.iter().map(|r| r.trace_total_us).sum::<f64>() + 0.0,
    }
}

/// What `aggregate` needs besides the three inputs.
pub struct Context {
    pub model: String,
    pub seq_len: i64,
    pub trace: Option<String>,
    pub signatures: String,
    pub timeline_predicted_us: Option<f64>,
    pub timeline_interruptions: Option<crate::predict::Interruptions>,
    pub self_check: Option<SelfCheck>,
}

/// Builds the report.
pub fn aggregate(
    file: &SignatureFile,
    results: &IsolatedResults,
    full: &FullModelTiming,
    ctx: Context,
) -> ComparisonReport {
    let measured = full.median_us;
    let sum: f64 = results.results.iter().map(|r| predicted_total(r).0).sum();
    let on_cpu = results.device.starts_with("cpu");
    let host_ops = file
        .signatures
        .first()
        .is_some_and(|s| s.unit == Unit::HostOp);
    let (m1, m2) = if on_cpu {
        (
            "host memcpy/memset",
            "torch mm/addmm/bmm (libtorch CPU BLAS)",
        )
    } else {
        ("cudaMemcpy/cudaMemset", "cublasGemmEx")
    };
    let tiers = Tiers {
        tier1_cuda_runtime: tier_breakdown(
            results,
            Tier::Copy,
            if host_ops {
                "none (no copies in a host-op trace)"
            } else {
                m1
            },
            sum,
        ),
        tier2_cublas: tier_breakdown(results, Tier::Gemm, m2, sum),
        tier3_libtorch: tier_breakdown(
            results,
            Tier::Op,
            "libtorch dispatcher (aten ops by name)",
            sum,
        ),
    };
    let sum_prediction = PredictionError {
        predicted_us: sum,
        error_percent: error_percent(sum, measured),
    };
    let timeline = ctx.timeline_predicted_us.map(|t| PredictionError {
        predicted_us: t,
        error_percent: error_percent(t, measured),
    });
    let best = match &timeline {
        Some(t) if t.error_percent.abs() < sum_prediction.error_percent.abs() => "timeline",
        _ => "sum",
    };

    let mut top: Vec<TopSignature> = results
        .results
        .iter()
        .map(|r| TopSignature {
            id: r.id.clone(),
            tier: r.tier,
            name: r.name.clone(),
            op: r.op.clone(),
            count: r.count,
            status: r.status,
            isolated_median_us: r.stats.as_ref().map(|s| s.median),
            predicted_total_us: predicted_total(r).0,
            trace_total_us: r.trace_total_us,
        })
        .collect();
    top.sort_by(|a, b| b.predicted_total_us.total_cmp(&a.predicted_total_us));
    top.truncate(20);

    let trace_total: f64 = results.results.iter().map(|r| r.trace_total_us).sum();
    let replayed: f64 = results
        .results
        .iter()
        .filter(|r| predicted_total(r).1)
        .map(|r| r.trace_total_us)
        .sum();
    let unreplayed = results
        .results
        .iter()
        .filter(|r| !predicted_total(r).1)
        .map(|r| Unreplayed {
            id: r.id.clone(),
            name: r.name.clone(),
            status: r.status,
            reason: r.reason.clone().unwrap_or_default(),
            trace_total_us: r.trace_total_us,
        })
        .collect();

    ComparisonReport {
        model: ctx.model,
        device: results.device.clone(),
        seq_len: ctx.seq_len,
        inputs: full.inputs.clone(),
        trace: ctx.trace,
        signatures: ctx.signatures,
        full_model_inference_us: measured,
        full_model: full.clone(),
        predicted_from_kernels_us: sum,
        error_percent: sum_prediction.error_percent,
        predictions: Predictions {
            sum: sum_prediction,
            timeline,
            best: best.to_string(),
        },
        invocations: results.results.iter().map(|r| r.count).sum(),
        tier_breakdown: tiers,
        top_signatures: top,
        coverage: Coverage {
            replayed_share_of_trace_time: if trace_total > 0.0 {
                replayed / trace_total
            } else {
                0.0
            },
            accounting:
                "signatures that did not replay enter both predictions with their trace time".into(),
            unreplayed,
        },
        trace_self_check: ctx.self_check,
        timeline_interruptions: ctx.timeline_interruptions,
        energy: None,
    }
}
