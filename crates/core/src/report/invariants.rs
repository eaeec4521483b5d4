//! The invariants a comparison report holds whatever the machine: `replay selftest` checks
//! them on the report of its compare run, and suites reuse them for their own reports.

use super::comparison::ComparisonReport;

impl ComparisonReport {
    /// The invariants every `replay compare` report must hold: the tiers add up to the
    /// kernel-sum prediction, each share and the coverage lie in [0, 1], the predictions and
    /// the measured time are finite and positive, and the trace self-check is there. `Ok` says
    /// what holds, `Err` every broken invariant.
    pub fn check_invariants(&self) -> Result<String, String> {
        let r = self;
        let mut problems = Vec::new();
        let positive = |x: f64| x.is_finite() && x > 0.0;
        let measured = r.full_model_inference_us;
        if !positive(measured) {
            problems.push(format!(
                "measured time {measured} us is not finite and positive"
            ));
        }
        let sum = r.predicted_from_kernels_us;
        if !positive(sum) {
            problems.push(format!(
                "kernel-sum prediction {sum} us is not finite and positive"
            ));
        }
        if r.predictions.sum.predicted_us != sum {
            problems.push(format!(
                "predictions.sum {} us is not predicted_from_kernels_us {sum} us",
                r.predictions.sum.predicted_us
            ));
        }
        let tiers = r.tier_breakdown.numbered();
        let tier_sum: f64 = tiers.iter().map(|(_, t)| t.total_us).sum();
        // NaN anywhere fails this too.
        let tiers_agree = (tier_sum - sum).abs() <= 1e-6 * sum.abs().max(1e-9);
        if !tiers_agree {
            problems.push(format!(
                "the tiers add up to {tier_sum} us, not the prediction {sum} us"
            ));
        }
        for (i, t) in &tiers {
            if !(0.0..=1.0).contains(&t.share) {
                problems.push(format!("tier {i} share {} is outside [0, 1]", t.share));
            }
            if !(t.total_us.is_finite() && t.total_us >= 0.0) {
                problems.push(format!("tier {i} total {} us is negative", t.total_us));
            }
        }
        let coverage = r.coverage.replayed_share_of_trace_time;
        if !(0.0..=1.0).contains(&coverage) {
            problems.push(format!("coverage share {coverage} is outside [0, 1]"));
        }
        let timeline = r.predictions.timeline.as_ref().map(|t| t.predicted_us);
        match timeline {
            Some(t) if !positive(t) => problems.push(format!(
                "timeline prediction {t} us is not finite and positive"
            )),
            Some(_) => {}
            None => problems.push("no timeline prediction".into()),
        }
        match &r.trace_self_check {
            None => problems.push("no trace self-check".into()),
            Some(c) if !(positive(c.predicted_us) && positive(c.measured_us)) => {
                problems.push(format!(
                    "trace self-check {} us vs {} us is not finite and positive",
                    c.predicted_us, c.measured_us
                ))
            }
            Some(_) => {}
        }
        if !problems.is_empty() {
            return Err(problems.join("; "));
        }
        let parts: Vec<String> = tiers
            .iter()
            .map(|(_, t)| format!("{:.1}", t.total_us))
            .collect();
        Ok(format!(
            "measured {measured:.1} us; kernel sum {sum:.1} us = tiers {}; \
             timeline {:.1} us; coverage {}; trace self-check {:+.1}%",
            parts.join(" + "),
            timeline.unwrap_or_default(),
            crate::percent::percent_text(coverage),
            r.trace_self_check.as_ref().map_or(0.0, |c| c.error_percent)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A report as `replay compare` writes it, holding every invariant.
    fn valid_report() -> ComparisonReport {
        let tier = |total: f64, share: f64| {
            serde_json::json!({"method": "m", "unique_kernels": 1, "invocations": 2,
                "total_us": total, "share": share, "trace_total_us": total})
        };
        serde_json::from_value(serde_json::json!({
            "model": "m.pt", "device": "cpu", "seq_len": 5, "trace": "t.json",
            "signatures": "s.json", "full_model_inference_us": 200.0,
            "full_model": {"model": "m.pt", "device": "cpu", "seq_len": 5, "batch": 1,
                "warmup": 3, "runs": 2, "threads": 1, "timer": "monotonic clock",
                "mean_us": 200.0, "median_us": 200.0, "min_us": 190.0, "max_us": 210.0,
                "std_us": 10.0, "p10_us": 190.0, "p90_us": 210.0, "rse_median": null,
                "samples_us": [190.0, 210.0]},
            "predicted_from_kernels_us": 100.0, "error_percent": -50.0,
            "predictions": {"sum": {"predicted_us": 100.0, "error_percent": -50.0},
                "timeline": {"predicted_us": 180.0, "error_percent": -10.0}, "best": "timeline"},
            "invocations": 6,
            "tier_breakdown": {"tier1_cuda_runtime": tier(0.0, 0.0),
                "tier2_cublas": tier(60.0, 0.6), "tier3_libtorch": tier(40.0, 0.4)},
            "top_signatures": [],
            "coverage": {"replayed_share_of_trace_time": 1.0, "accounting": "a", "unreplayed": []},
            "trace_self_check": {"predicted_us": 300.0, "measured_us": 300.0, "error_percent": 0.0}
        }))
        .unwrap()
    }

    #[test]
    fn a_consistent_report_passes_its_invariants() {
        let detail = valid_report().check_invariants().unwrap();
        assert!(
            detail.contains("kernel sum 100.0 us = tiers 0.0 + 60.0 + 40.0"),
            "{detail}"
        );
        assert!(detail.contains("coverage 100.0%"), "{detail}");
    }

    #[test]
    fn each_broken_invariant_is_named() {
        type Break = fn(&mut ComparisonReport);
        let cases: [(&str, Break); 7] = [
            ("tiers add up", |r| {
                r.tier_breakdown.tier2_cublas.total_us = 70.0
            }),
            ("coverage share", |r| {
                r.coverage.replayed_share_of_trace_time = 1.5
            }),
            ("kernel-sum prediction", |r| {
                r.predicted_from_kernels_us = f64::NAN;
                r.predictions.sum.predicted_us = f64::NAN;
            }),
            ("timeline prediction", |r| {
                r.predictions.timeline.as_mut().unwrap().predicted_us = -1.0
            }),
            ("no trace self-check", |r| r.trace_self_check = None),
            ("measured time", |r| r.full_model_inference_us = 0.0),
            ("tier 3 share", |r| {
                r.tier_breakdown.tier3_libtorch.share = -0.1
            }),
        ];
        for (expected, breaks) in cases {
            let mut report = valid_report();
            breaks(&mut report);
            let err = report.check_invariants().unwrap_err();
            assert!(err.contains(expected), "{expected}: {err}");
        }
    }
}
