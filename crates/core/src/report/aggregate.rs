//! Building `comparison_report.json` from the signatures, their isolated results and the
//! full-model timing: the kernel-sum and timeline predictions, the tiers, the top signatures,
//! every signature against its trace time, and the coverage.

use std::collections::HashMap;

use super::comparison::{
    ComparisonReport, Coverage, PredictionError, Predictions, SelfCheck, SignatureTime,
    TierBreakdown, Tiers, TopSignature, Unreplayed,
};
use crate::results::full_model::FullModelTiming;
use crate::results::isolated::{IsolatedResults, SignatureResult, Status};
use crate::signature::label::signature_label;
use crate::signature::schema::{GeneratedKind, SignatureFile, Tier, Unit};

/// The seed's `error_percent`: (measured − predicted) / measured × 100, positive when the
/// prediction falls short (the opposite sign to [`error_percent`]).
pub fn seed_error_percent(predicted: f64, measured: f64) -> f64 {
    -error_percent(predicted, measured)
}

/// replay's signed error: (predicted − measured) / measured × 100.
pub fn error_percent(predicted: f64, measured: f64) -> f64 {
    if measured > 0.0 {
        100.0 * (predicted - measured) / measured
    } else {
        0.0
    }
}

/// Predicted time of all invocations of one signature, and whether it was replayed. A
/// signature estimated by a profile's roofline (`--profile`) is predicted by the estimate but
/// not counted as replayed: the report lists it among the unreplayed, with its status.
pub fn predicted_total(r: &SignatureResult) -> (f64, bool) {
    match (r.status, r.predicted_us) {
        (Status::Ok | Status::Included, Some(p)) => (p * r.count as f64, true),
        (Status::Estimated, Some(p)) => (p * r.count as f64, false),
        _ => (r.trace_total_us, false),
    }
}

/// Isolated time per invocation of a signature that replayed on its own (`ok`).
fn isolated_per_invocation(r: &SignatureResult) -> Option<f64> {
    match (r.status, r.predicted_us) {
        (Status::Ok, Some(p)) if p.is_finite() => Some(p),
        _ => None,
    }
}

/// `isolated / trace`, when both are times.
fn ratio(isolated: Option<f64>, trace: f64) -> Option<f64> {
    isolated.filter(|_| trace > 0.0).map(|i| i / trace)
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
    /// The timeline with the in-context times of the re-run step (`replay sequence`).
    pub sequence_predicted_us: Option<f64>,
    /// In-context time per invocation by signature id, from the same re-run.
    pub in_context_us: HashMap<String, f64>,
    /// The step re-run in order in real time (`replay sequence`'s `real_time.step_ops_us`).
    pub sequence_real_time_us: Option<f64>,
    /// The timeline with the host model's host durations, and its host/device split.
    pub host_model_predicted_us: Option<f64>,
    pub host_device: Option<super::comparison::HostDevice>,
    /// Whether the device is a GPU (the rule of [`super::comparison::chosen_prediction`]).
    pub on_gpu: bool,
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
    // A compiled model's wrapper runs between its kernels: host time the kernels' sum lacks.
    let wrapper_us = wrapper_us(file);
    let mut predictions = predictions(
        sum + wrapper_us.unwrap_or(0.0),
        ctx.timeline_predicted_us,
        ctx.sequence_predicted_us,
        ctx.host_model_predicted_us,
        measured,
    );
    let (chosen, because) = super::comparison::chosen_prediction(
        ctx.on_gpu,
        predictions.host_model.is_some(),
        predictions.sequence.is_some(),
        predictions.timeline.is_some(),
    );
    let chosen_us = match chosen {
        "host_model" => predictions.host_model.as_ref().map(|p| p.predicted_us),
        "timeline" => predictions.timeline.as_ref().map(|p| p.predicted_us),
        "sequence" => predictions.sequence.as_ref().map(|p| p.predicted_us),
        _ => Some(predictions.sum.predicted_us),
    };
    predictions.sequence_real_time = ctx.sequence_real_time_us.map(|t| PredictionError {
        predicted_us: t,
        error_percent: error_percent(t, measured),
    });
    predictions.chosen = chosen.to_owned();
    predictions.chosen_because = because.to_owned();
    predictions.chosen_inside_p10_p90 = chosen_us
        .filter(|_| full.p10_us > 0.0)
        .map(|us| full.p10_us <= us && us <= full.p90_us);
    let labels: HashMap<&str, String> = file
        .signatures
        .iter()
        .map(|s| (s.id.as_str(), signature_label(s)))
        .collect();
    let mut report = ComparisonReport {
        model: ctx.model,
        device: results.device.clone(),
        seq_len: ctx.seq_len,
        inputs: full.inputs.clone(),
        trace: ctx.trace,
        signatures: ctx.signatures,
        full_model_inference_us: measured,
        full_model: full.clone(),
        full_model_note: crate::results::compiled_model::measured_note(full),
        predicted_from_kernels_us: sum,
        error_percent: seed_error_percent(sum, measured),
        prediction_error_percent: predictions.sum.error_percent,
        predictions,
        invocations: results.results.iter().map(|r| r.count).sum(),
        tier_breakdown: tiers(file, results, sum),
        top_signatures: top_signatures(results, &labels, &ctx.in_context_us),
        coverage: coverage(file, results),
        trace_self_check: ctx.self_check,
        timeline_interruptions: ctx.timeline_interruptions,
        energy: None,
        signature_times: signature_times(results, &labels, &ctx.in_context_us),
        execution_trace: file.source.execution_trace.clone(),
        host_device: ctx.host_device,
        machine_disturbed: Vec::new(),
        full_model_fifths_us: crate::measure::stats::fifth_medians(&full.samples_us),
    };
    report.machine_disturbed = super::disturbed::disturbances(&report);
    report
}

/// The three tiers' shares of the summed prediction `sum`, each with how it was replayed.
fn tiers(file: &SignatureFile, results: &IsolatedResults, sum: f64) -> Tiers {
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
    Tiers {
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
        tier4_generated: results
            .results
            .iter()
            .any(|r| r.tier == Tier::Generated)
            .then(|| {
                let triton = file.signatures.iter().any(|s| {
                    s.generated
                        .as_ref()
                        .is_some_and(|g| g.kind == GeneratedKind::Triton)
                });
                let method = if triton {
                    "triton kernel"
                } else {
                    "inductor C++ kernel"
                };
                tier_breakdown(results, Tier::Generated, method, sum)
            }),
    }
}

/// The kernel sum, the timeline and the sequence against the measured time, and which is
/// closest (the earlier one on a tie).
fn predictions(
    sum: f64,
    timeline_us: Option<f64>,
    sequence_us: Option<f64>,
    host_model_us: Option<f64>,
    measured: f64,
) -> Predictions {
    let against = |t: f64| PredictionError {
        predicted_us: t,
        error_percent: error_percent(t, measured),
    };
    let sum_prediction = against(sum);
    let timeline = timeline_us.map(against);
    let sequence = sequence_us.map(against);
    let host_model = host_model_us.map(against);
    let mut best = ("sum", sum_prediction.error_percent.abs());
    for (name, p) in [
        ("timeline", &timeline),
        ("sequence", &sequence),
        ("host_model", &host_model),
    ] {
        if let Some(p) = p {
            if p.error_percent.abs() < best.1 {
                best = (name, p.error_percent.abs());
            }
        }
    }
    Predictions {
        sum: sum_prediction,
        timeline,
        sequence,
        host_model,
        sequence_real_time: None,
        best: best.0.to_string(),
        chosen: String::new(),
        chosen_because: String::new(),
        chosen_inside_p10_p90: None,
    }
}

/// The twenty signatures with the largest predicted time.
fn top_signatures(
    results: &IsolatedResults,
    labels: &HashMap<&str, String>,
    in_context: &HashMap<String, f64>,
) -> Vec<TopSignature> {
    let mut top: Vec<TopSignature> = results
        .results
        .iter()
        .map(|r| TopSignature {
            label: labels.get(r.id.as_str()).cloned(),
            trace_mean_us: r.trace_mean_us,
            isolated_over_trace: ratio(isolated_per_invocation(r), r.trace_mean_us),
            id: r.id.clone(),
            tier: r.tier,
            name: r.name.clone(),
            op: r.op.clone(),
            count: r.count,
            status: r.status,
            isolated_median_us: r.stats.as_ref().map(|s| s.median),
            predicted_total_us: predicted_total(r).0,
            trace_total_us: r.trace_total_us,
            in_context_us: in_context.get(&r.id).copied(),
        })
        .collect();
    top.sort_by(|a, b| b.predicted_total_us.total_cmp(&a.predicted_total_us));
    top.truncate(20);
    top
}

/// Every signature's isolated time against its trace time, largest share of the trace first.
fn signature_times(
    results: &IsolatedResults,
    labels: &HashMap<&str, String>,
    in_context: &HashMap<String, f64>,
) -> Vec<SignatureTime> {
    let trace_total: f64 = results.results.iter().map(|r| r.trace_total_us).sum();
    let mut signature_times: Vec<SignatureTime> = results
        .results
        .iter()
        .map(|r| {
            let isolated = isolated_per_invocation(r);
            SignatureTime {
                id: r.id.clone(),
                tier: r.tier,
                label: labels
                    .get(r.id.as_str())
                    .cloned()
                    .unwrap_or_else(|| r.name.clone()),
                count: r.count,
                isolated_us: isolated,
                trace_mean_us: r.trace_mean_us,
                isolated_over_trace: ratio(isolated, r.trace_mean_us),
                share_of_trace: if trace_total > 0.0 {
                    r.trace_total_us / trace_total
                } else {
                    0.0
                },
                in_context_us: in_context.get(&r.id).copied(),
            }
        })
        .collect();
    signature_times.sort_by(|a, b| b.share_of_trace.total_cmp(&a.share_of_trace));
    signature_times
}

/// The compiled wrapper's measured host time per forward pass, when it can be counted.
fn wrapper_us(file: &SignatureFile) -> Option<f64> {
    file.compiled_code
        .as_ref()
        .and_then(|c| c.wrapper.as_ref())
        .and_then(|w| w.counted_us())
}

/// The share of the trace's time that replayed, the signatures that did not, and the
/// compiled code no recorded op covers.
fn coverage(file: &SignatureFile, results: &IsolatedResults) -> Coverage {
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
    // `+ 0.0`: an empty sum is -0.0, which would print as "-0.0%".
    let replayed_share = if trace_total > 0.0 {
        replayed / trace_total + 0.0
    } else {
        0.0
    };
    let wrapper = wrapper_us(file);
    // Only what was measured counts: the wrapper's share of the (one) profiled step, at most
    // the unseen share. What the trace shows beyond it between the ops (the profiler's own
    // cost, a preemption, thread wake-ups) stays unseen.
    let accounted_share_of_step = file.compiled_code.as_ref().map(|c| {
        let unseen = c.uninstrumented_share();
        let measured = match wrapper {
            Some(us) if c.steps_us > 0.0 => (us / c.steps_us).min(unseen),
            _ => 0.0,
        };
        replayed_share * (1.0 - unseen) + measured
    });
    Coverage {
        replayed_share_of_trace_time: replayed_share,
        wrapper_us: wrapper,
        accounted_share_of_step,
        uninstrumented_compiled_us: file.compiled_code.as_ref().map(|c| c.uninstrumented_us),
        unseen_share_of_step: file
            .compiled_code
            .as_ref()
            .map(|c| c.uninstrumented_share()),
        accounting: "signatures that did not replay enter both predictions with their trace \
                     time, or with the roofline estimate of a calibration profile (status \
                     `estimated`, `--profile`)"
            .into(),
        unreplayed,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::path::Path;

    use serde_json::{json, Value};

    use super::*;
    use crate::signature::schema::Signature;

    /// The committed signature file of the real BERT trace: 1 copy, 4 GEMMs, 11 other kernels.
    fn bert_signatures() -> SignatureFile {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../signatures/h100_bert_small_infer.json");
        crate::signature::read_file(&path).expect("committed signature file reads")
    }

    fn stats(median: f64) -> Value {
        json!({"samples": 10, "calls_per_sample": 1, "warmup_calls": 1, "min_us": median,
            "p10_us": median, "median_us": median, "p90_us": median, "max_us": median,
            "mean_us": median, "std_us": 0.0, "mad_us": 0.0, "rse_median": null,
            "noise_target": null, "noise_target_met": true, "stopped_by": "time_budget",
            "host_median_us": median, "host_mean_us": median, "elapsed_us": 1.0, "rounds": 1})
    }

    /// How one signature fared in the made-up run.
    #[derive(Clone, Copy)]
    enum Outcome {
        /// Measured alone (share 1) or as one of a unit's members (share < 1).
        Measured {
            median: f64,
            share: f64,
        },
        /// Runs inside the previous signature's replay.
        Included,
        Unsupported,
        Failed,
    }

    fn result(s: &Signature, outcome: Outcome, lead: &str) -> Value {
        let base = json!({"id": s.id, "tier": s.tier, "name": s.name, "op": null,
            "count": s.count, "trace_mean_us": s.trace_mean_us,
            "trace_total_us": s.trace_total_us, "method": "m", "reason": null,
            "replayed_as": s.id, "share": 1.0, "predicted_us": null, "host_us": null,
            "stats": null});
        let mut r = base.as_object().unwrap().clone();
        match outcome {
            Outcome::Measured { median, share } => {
                r.insert("status".into(), json!("ok"));
                r.insert("share".into(), json!(share));
                r.insert("predicted_us".into(), json!(median * share));
                r.insert("stats".into(), stats(median));
            }
            Outcome::Included => {
                r.insert("status".into(), json!("included"));
                r.insert("replayed_as".into(), json!(lead));
                r.insert("share".into(), json!(0.0));
                r.insert("predicted_us".into(), json!(0.0));
            }
            Outcome::Unsupported => {
                r.insert("status".into(), json!("unsupported"));
                r.insert("reason".into(), json!("not replayable"));
            }
            Outcome::Failed => {
                r.insert("status".into(), json!("failed"));
                r.insert("reason".into(), json!("went wrong"));
            }
        }
        Value::Object(r)
    }

    fn isolated(results: Vec<Value>) -> IsolatedResults {
        let total = results.len();
        serde_json::from_value(
            json!({"schema_version": 1, "tool": "replay", "device": "cpu",
            "signatures_file": "s.json", "config": {"cold": false, "max_time_per_kernel_s": 0.1,
            "noise_target": 0.005, "min_samples": 5, "rounds": 1}, "signatures_total": total,
            "complete": true, "results": results}),
        )
        .expect("isolated results")
    }

    fn full_model(median_us: f64) -> FullModelTiming {
        serde_json::from_value(json!({"model": "m.pt", "device": "cpu", "seq_len": 5,
            "batch": 1, "warmup": 1, "runs": 1, "threads": 1, "timer": "monotonic clock",
            "mean_us": median_us, "median_us": median_us, "min_us": median_us,
            "max_us": median_us, "std_us": 0.0, "p10_us": median_us, "p90_us": median_us,
            "rse_median": null, "samples_us": [median_us]}))
        .expect("full model timing")
    }

    fn context(timeline_predicted_us: Option<f64>) -> Context {
        Context {
            model: "m.pt".into(),
            seq_len: 5,
            trace: None,
            signatures: "s.json".into(),
            timeline_predicted_us,
            timeline_interruptions: None,
            self_check: None,
            sequence_predicted_us: None,
            in_context_us: HashMap::new(),
            host_model_predicted_us: None,
            sequence_real_time_us: None,
            host_device: None,
            on_gpu: false,
        }
    }

    /// Every outcome, cycled over the real signatures.
    fn outcome_of(index: usize) -> Outcome {
        match index % 5 {
            0 => Outcome::Measured {
                median: 1.5 + index as f64,
                share: 1.0,
            },
            1 => Outcome::Included,
            2 => Outcome::Unsupported,
            3 => Outcome::Measured {
                median: 10.0 + index as f64,
                share: 0.25,
            },
            _ => Outcome::Failed,
        }
    }

    #[test]
    fn sums_tiers_and_coverage_follow_median_times_count() {
        let file = bert_signatures();
        let outcomes: Vec<Outcome> = (0..file.signatures.len()).map(outcome_of).collect();
        let results = isolated(
            file.signatures
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let lead = &file.signatures[i.saturating_sub(1)].id;
                    result(s, outcomes[i], lead)
                })
                .collect(),
        );
        let measured = 250.0;
        let report = aggregate(&file, &results, &full_model(measured), context(None));

        // The same numbers from the signatures and the outcomes alone.
        let mut by_tier: HashMap<u8, (usize, u64, f64, f64)> = HashMap::new();
        let (mut sum, mut trace, mut replayed_trace) = (0.0, 0.0, 0.0);
        let mut unreplayed = Vec::new();
        for (s, outcome) in file.signatures.iter().zip(&outcomes) {
            let predicted = match *outcome {
                Outcome::Measured { median, share } => median * share * s.count as f64,
                Outcome::Included => 0.0,
                Outcome::Unsupported | Outcome::Failed => {
                    unreplayed.push(s.id.clone());
                    s.trace_total_us
                }
            };
            if !matches!(outcome, Outcome::Unsupported | Outcome::Failed) {
                replayed_trace += s.trace_total_us;
            }
            let entry = by_tier.entry(s.tier as u8).or_default();
            *entry = (
                entry.0 + 1,
                entry.1 + s.count,
                entry.2 + predicted,
                entry.3 + s.trace_total_us,
            );
            sum += predicted;
            trace += s.trace_total_us;
        }
        let close = |got: f64, want: f64, what: &str| {
            assert!(
                (got - want).abs() <= 1e-9 * want.abs().max(1.0),
                "{what}: {got} vs {want}"
            )
        };
        close(report.predicted_from_kernels_us, sum, "kernel sum");
        close(report.predictions.sum.predicted_us, sum, "sum prediction");
        close(
            report.error_percent,
            100.0 * (measured - sum) / measured,
            "the seed's error",
        );
        close(
            report.prediction_error_percent,
            100.0 * (sum - measured) / measured,
            "signed error",
        );
        let tiers = [
            (1u8, &report.tier_breakdown.tier1_cuda_runtime),
            (2, &report.tier_breakdown.tier2_cublas),
            (3, &report.tier_breakdown.tier3_libtorch),
        ];
        for (tier, got) in tiers {
            let (unique, calls, total, tier_trace) = by_tier[&tier];
            assert_eq!(
                (got.unique_kernels, got.invocations),
                (unique, calls),
                "tier {tier}"
            );
            close(got.total_us, total, &format!("tier {tier} total"));
            close(got.share, total / sum, &format!("tier {tier} share"));
            close(
                got.trace_total_us,
                tier_trace,
                &format!("tier {tier} trace"),
            );
        }
        assert_eq!(
            report.invocations,
            file.signatures.iter().map(|s| s.count).sum::<u64>()
        );
        close(
            report.coverage.replayed_share_of_trace_time,
            replayed_trace / trace,
            "coverage",
        );
        let reported: Vec<&str> = report
            .coverage
            .unreplayed
            .iter()
            .map(|u| u.id.as_str())
            .collect();
        assert_eq!(reported, unreplayed, "unreplayed, in result order");
        assert!(
            report
                .coverage
                .unreplayed
                .iter()
                .all(|u| !u.reason.is_empty()),
            "each unreplayed signature says why"
        );
        // Top signatures: largest predicted total first, each with its own median.
        let totals: Vec<f64> = report
            .top_signatures
            .iter()
            .map(|t| t.predicted_total_us)
            .collect();
        assert!(totals.windows(2).all(|w| w[0] >= w[1]), "{totals:?}");
        assert_eq!(totals.len(), file.signatures.len().min(20));
    }

    #[test]
    fn top_signatures_keep_the_twenty_largest() {
        let file = bert_signatures();
        let template = &file.signatures[0];
        // 25 results with medians 1..=25 and count 2: the top 20 are medians 25 down to 6.
        let results = isolated(
            (1..=25)
                .map(|i| {
                    let s = Signature {
                        id: format!("{i:016x}"),
                        count: 2,
                        ..template.clone()
                    };
                    result(
                        &s,
                        Outcome::Measured {
                            median: i as f64,
                            share: 1.0,
                        },
                        &s.id,
                    )
                })
                .collect(),
        );
        let report = aggregate(&file, &results, &full_model(100.0), context(None));
        let totals: Vec<f64> = report
            .top_signatures
            .iter()
            .map(|t| t.predicted_total_us)
            .collect();
        let want: Vec<f64> = (6..=25).rev().map(|m| 2.0 * m as f64).collect();
        assert_eq!(totals, want);
        assert_eq!(report.top_signatures[0].isolated_median_us, Some(25.0));
        assert_eq!(
            report.predicted_from_kernels_us,
            2.0 * (1..=25).sum::<i32>() as f64
        );
    }

    #[test]
    fn the_best_prediction_is_the_one_closer_to_the_measured_time() {
        let file = bert_signatures();
        let results = isolated(vec![result(
            &file.signatures[0],
            Outcome::Measured {
                median: 10.0,
                share: 1.0,
            },
            "",
        )]);
        let sum = 10.0 * file.signatures[0].count as f64;
        // Measured 100: the sum is off by 100 - sum; a timeline at 95 is closer.
        let report = aggregate(&file, &results, &full_model(100.0), context(Some(95.0)));
        assert_eq!(report.predictions.best, "timeline");
        let timeline = report.predictions.timeline.as_ref().unwrap();
        assert!((timeline.error_percent - -5.0).abs() < 1e-12);
        // A timeline further off than the sum loses.
        let far = 100.0 + 2.0 * (100.0 - sum).abs();
        let report = aggregate(&file, &results, &full_model(100.0), context(Some(far)));
        assert_eq!(report.predictions.best, "sum");
        assert_eq!(error_percent(150.0, 100.0), 50.0);
        // The seed's README example: measured 12,500 µs, predicted 11,800 µs, 5.6.
        let seed = seed_error_percent(11_800.0, 12_500.0);
        assert_eq!(format!("{seed:.1}"), "5.6");
        assert_eq!(format!("{:.1}", error_percent(11_800.0, 12_500.0)), "-5.6");
        assert_eq!(error_percent(1.0, 0.0), 0.0, "no measured time: no error");
    }

    #[test]
    fn signatures_carry_their_label_and_isolated_time_against_the_trace() {
        let file = bert_signatures();
        // The first signature replays at twice its trace mean, the second is included in
        // it, the third unsupported.
        let outcomes = [
            Outcome::Measured {
                median: 2.0 * file.signatures[0].trace_mean_us,
                share: 1.0,
            },
            Outcome::Included,
            Outcome::Unsupported,
        ];
        let results = isolated(
            file.signatures
                .iter()
                .zip(outcomes)
                .map(|(s, outcome)| result(s, outcome, &file.signatures[0].id))
                .collect(),
        );
        let report = aggregate(&file, &results, &full_model(100.0), context(None));
        let trace_total: f64 = file.signatures[..3].iter().map(|s| s.trace_total_us).sum();
        assert_eq!(report.signature_times.len(), 3);
        for (s, outcome) in file.signatures.iter().zip(outcomes) {
            let time = report
                .signature_times
                .iter()
                .find(|t| t.id == s.id)
                .expect("every signature has a time");
            assert_eq!(time.label, signature_label(s));
            assert_eq!(time.trace_mean_us, s.trace_mean_us);
            assert!((time.share_of_trace - s.trace_total_us / trace_total).abs() < 1e-12);
            let top = report
                .top_signatures
                .iter()
                .find(|t| t.id == s.id)
                .expect("three signatures are all in the top");
            assert_eq!(top.label.as_deref(), Some(time.label.as_str()));
            assert_eq!(top.trace_mean_us, s.trace_mean_us);
            match outcome {
                Outcome::Measured { median, .. } => {
                    assert_eq!(time.isolated_us, Some(median));
                    assert!((time.isolated_over_trace.unwrap() - 2.0).abs() < 1e-12);
                    assert_eq!(top.isolated_over_trace, time.isolated_over_trace);
                }
                _ => {
                    assert_eq!(time.isolated_us, None);
                    assert_eq!(time.isolated_over_trace, None);
                    assert_eq!(top.isolated_over_trace, None);
                }
            }
        }
        let shares: Vec<f64> = report
            .signature_times
            .iter()
            .map(|t| t.share_of_trace)
            .collect();
        assert!(
            shares.windows(2).all(|w| w[0] >= w[1]),
            "largest first: {shares:?}"
        );
        // The page and the summary show the labels, the page the scatter.
        let page = super::super::html::render(&report, &[]);
        let label = super::super::html::escape(&report.signature_times[0].label);
        assert!(page.contains(&label), "{label}");
        assert!(page.contains("Isolated against trace time, per signature"));
        assert!(page.contains("<circle"));
        let summary = super::super::table::render(&report);
        assert!(summary.contains("top signatures"), "{summary}");
    }

    #[test]
    fn an_empty_tier_is_a_positive_zero() {
        let file = bert_signatures();
        // Only the GEMMs: tiers 1 and 3 have nothing.
        let results = isolated(
            file.signatures
                .iter()
                .filter(|s| s.tier == Tier::Gemm)
                .map(|s| {
                    result(
                        s,
                        Outcome::Measured {
                            median: 3.0,
                            share: 1.0,
                        },
                        &s.id,
                    )
                })
                .collect(),
        );
        let report = aggregate(&file, &results, &full_model(100.0), context(None));
        let empty = &report.tier_breakdown.tier1_cuda_runtime;
        assert_eq!((empty.unique_kernels, empty.invocations), (0, 0));
        assert!(empty.total_us == 0.0 && empty.total_us.is_sign_positive());
        assert!(empty.trace_total_us.is_sign_positive());
        let text = serde_json::to_string(&report).unwrap();
        assert!(!text.contains("-0.0"), "no negative zero printed");
        assert_eq!(report.tier_breakdown.tier2_cublas.share, 1.0);
    }

    /// The case: the Triton kernel of the real A100 trace does not replay, so nothing
    /// of the trace replayed; coverage reads 0.0%, never -0.0%, and says what of the step no
    /// recorded op covered.
    #[test]
    fn a_trace_that_replayed_nothing_has_zero_coverage_and_names_its_unseen_compiled_code() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/traces/kineto/a100_triton_example.json.gz");
        let trace = crate::trace::load(&path).expect("the shared A100 Triton trace");
        let file = crate::signature::classify(&trace, &path);
        let results = isolated(
            file.signatures
                .iter()
                .map(|s| result(s, Outcome::Unsupported, &s.id))
                .collect(),
        );
        let report = aggregate(&file, &results, &full_model(100.0), context(None));
        let coverage = report.coverage.replayed_share_of_trace_time;
        assert!(coverage == 0.0 && coverage.is_sign_positive());
        let generated = report
            .tier_breakdown
            .tier4_generated
            .as_ref()
            .expect("tier 4");
        assert_eq!(generated.method, "triton kernel");
        assert_eq!(generated.unique_kernels, 1);
        // Dynamo's region (1352.964 us) less the launcher op that covers the launch call
        // (95.812 us).
        assert_eq!(report.coverage.uninstrumented_compiled_us, Some(1257.152));
        let text = super::super::table::render(&report);
        assert!(
            text.contains("coverage: 0.0% of the trace's time replayed"),
            "{text}"
        );
        assert!(text.contains("uninstrumented compiled code"), "{text}");
        assert!(!text.contains("-0.0"), "{text}");
        assert!(text.contains("\n4     triton kernel"), "{text}");
    }

    /// A compiled model's wrapper, measured by the capture, is the unseen part of its step:
    /// added to the kernel sum (not to the seed's figure) and counted as measured; a wrapper
    /// marked not usable changes nothing.
    #[test]
    fn a_measured_wrapper_joins_the_sum_and_accounts_for_the_unseen_step() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/traces/kineto/a100_triton_example.json.gz");
        let trace = crate::trace::load(&path).expect("the shared A100 Triton trace");
        let mut file = crate::signature::classify(&trace, &path);
        let results = isolated(
            file.signatures
                .iter()
                .enumerate()
                .map(|(i, s)| result(s, outcome_of(i), &s.id))
                .collect(),
        );
        let plain = aggregate(&file, &results, &full_model(2000.0), context(None));
        let kernels = plain.predicted_from_kernels_us;
        let unseen = plain
            .coverage
            .unseen_share_of_step
            .expect("a compiled trace");
        let replayed = plain.coverage.replayed_share_of_trace_time;
        assert!(
            unseen > 0.0 && plain.coverage.wrapper_us.is_none(),
            "{unseen}"
        );
        assert_eq!(plain.predictions.sum.predicted_us, kernels);
        assert_eq!(
            plain.coverage.accounted_share_of_step,
            Some(replayed * (1.0 - unseen))
        );

        let timing: crate::signature::compiled_step::WrapperTiming =
            serde_json::from_value(json!({"median_us": 250.0, "p10_us": 240.0, "p90_us": 270.0,
                "runs": 50, "method": "m", "usable": true}))
            .unwrap();
        file.compiled_code.as_mut().unwrap().wrapper = Some(timing.clone());
        let counted = aggregate(&file, &results, &full_model(2000.0), context(None));
        assert_eq!(
            counted.predicted_from_kernels_us, kernels,
            "the seed's sum stays"
        );
        assert_eq!(counted.predictions.sum.predicted_us, kernels + 250.0);
        assert_eq!(counted.coverage.wrapper_us, Some(250.0));
        let accounted = counted.coverage.accounted_share_of_step.unwrap();
        let steps_us = file.compiled_code.as_ref().unwrap().steps_us;
        assert!(250.0 / steps_us < unseen, "{steps_us}");
        let expected = replayed * (1.0 - unseen) + 250.0 / steps_us;
        assert!(
            (accounted - expected).abs() < 1e-12,
            "{accounted} {expected}"
        );
        let text = super::super::table::render(&counted);
        assert!(
            text.contains("its wrapper measured without the profiler"),
            "{text}"
        );

        file.compiled_code.as_mut().unwrap().wrapper =
            Some(crate::signature::compiled_step::WrapperTiming {
                usable: false,
                why_not_usable: Some("1 graph break(s)".into()),
                ..timing
            });
        let refused = aggregate(&file, &results, &full_model(2000.0), context(None));
        assert_eq!(refused.predictions.sum.predicted_us, kernels);
        assert_eq!(refused.coverage.wrapper_us, None);
        assert_eq!(
            refused.coverage.accounted_share_of_step,
            plain.coverage.accounted_share_of_step
        );
    }
}
