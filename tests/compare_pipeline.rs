//! The whole pipeline on bloom-tiny on the CPU, as a user runs it: export, compare (capture,
//! classify, isolated, full, aggregate), and the seed tool's separate modes.

mod common;

use std::path::Path;

use common::{exported_bloom_tiny, replay};
use predicates::prelude::*;

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(
        &std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())),
    )
    .unwrap()
}

#[test]
fn compare_on_bloom_tiny_writes_a_consistent_report() {
    let (dir, model) = exported_bloom_tiny();
    let out = dir.path().join("results");
    replay()
        .args([
            "compare",
            "--device",
            "cpu",
            "--seq-len",
            "5",
            "--warmup",
            "3",
            "--runs",
            "20",
        ])
        .args(["--max-time-per-kernel", "0.02", "--quiet", "--model"])
        .arg(&model)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("measured full model"))
        .stdout(predicate::str::contains("predicted, timeline"));

    let report = json(&out.join("comparison_report.json"));
    let measured = report["full_model_inference_us"].as_f64().unwrap();
    let sum = report["predicted_from_kernels_us"].as_f64().unwrap();
    assert!(measured > 0.0 && sum > 0.0);
    // The original tool's fields, and the tiers adding up to the prediction.
    let tiers = &report["tier_breakdown"];
    let tier_sum: f64 = ["tier1_cuda_runtime", "tier2_cublas", "tier3_libtorch"]
        .iter()
        .map(|t| {
            assert!(
                tiers[t]["method"].is_string() && tiers[t]["unique_kernels"].is_u64(),
                "{t}"
            );
            tiers[t]["total_us"].as_f64().unwrap()
        })
        .sum();
    assert!(
        (tier_sum - sum).abs() <= 1e-6 * sum,
        "tiers {tier_sum} vs sum {sum}"
    );
    let error = report["error_percent"].as_f64().unwrap();
    assert!((error - 100.0 * (sum - measured) / measured).abs() < 1e-6);
    assert!(
        tiers["tier2_cublas"]["unique_kernels"].as_u64().unwrap() > 0,
        "BLOOM's linears are tier 2"
    );
    // Both predictions, each with its error; the timeline models the host too.
    let timeline = report["predictions"]["timeline"]["predicted_us"]
        .as_f64()
        .unwrap();
    assert!(
        timeline > sum,
        "framework time between ops is added to the kernels"
    );
    assert!(["sum", "timeline"].contains(&report["predictions"]["best"].as_str().unwrap()));
    // Coverage and the self-check.
    let coverage = report["coverage"]["replayed_share_of_trace_time"]
        .as_f64()
        .unwrap();
    assert!(coverage > 0.99, "coverage {coverage}");
    assert!(
        report["trace_self_check"]["error_percent"]
            .as_f64()
            .unwrap()
            .abs()
            < 1.0
    );
    assert!(report["top_signatures"].as_array().unwrap().len() <= 20);
    // The other files of the run.
    assert_eq!(json(&out.join("isolated.json"))["complete"], true);
    assert_eq!(json(&out.join("full_model_timing.json"))["runs"], 20);
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        html.starts_with("<!doctype html>") && html.contains("<svg") && html.ends_with("</html>\n")
    );
    assert!(
        !html.contains("<script src") && !html.contains("<link"),
        "self-contained: nothing fetched"
    );

    // The seed tool's modes keep working on their own.
    let seed_out = dir.path().join("seed");
    replay()
        .args(["full", "--runs", "5", "--warmup", "2", "--model"])
        .arg(&model)
        .arg("--output-dir")
        .arg(&seed_out)
        .assert()
        .success()
        .stdout(predicate::str::contains("median"));
    replay()
        .args([
            "isolated",
            "--quiet",
            "--max-time-per-kernel",
            "0.01",
            "--kernels",
        ])
        .arg(out.join("signatures.json"))
        .arg("--output-dir")
        .arg(&seed_out)
        .assert()
        .success();
    replay()
        .args([
            "compare",
            "--runs",
            "5",
            "--warmup",
            "2",
            "--max-time-per-kernel",
            "0.01",
            "--quiet",
            "--model",
        ])
        .arg(&model)
        .arg("--kernels")
        .arg(out.join("signatures.json"))
        .arg("--output-dir")
        .arg(&seed_out)
        .assert()
        .success();
    assert!(
        json(&seed_out.join("comparison_report.json"))["predicted_from_kernels_us"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

#[test]
fn compare_with_a_missing_model_exits_2() {
    replay()
        .args(["compare", "--model", "/nonexistent/model.pt", "--quiet"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/model.pt"));
}

#[test]
fn compare_with_an_energy_meter_reports_predicted_and_measured_energy() {
    let (dir, model) = exported_bloom_tiny();
    // A meter integrating a constant 42 W over real time (the protocol of the README).
    let meter = dir.path().join("meter.py");
    std::fs::write(
        &meter,
        "import json, sys, time\nstart = time.monotonic()\nfirst = True\nfor line in iter(sys.stdin.readline, ''):\n    c = line.strip()\n    if c == 'read':\n        now = time.monotonic()\n        d = {'joules': 42.0 * (now - start), 'timestamp': now}\n        if first:\n            d['update_period_s'] = 0.001\n            first = False\n        print(json.dumps(d), flush=True)\n    elif c == 'quit':\n        break\n",
    )
    .unwrap();
    let python = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    let out = dir.path().join("results");
    replay()
        .args([
            "compare",
            "--runs",
            "10",
            "--warmup",
            "3",
            "--max-time-per-kernel",
            "0.01",
            "--threads",
            "1",
            "--quiet",
        ])
        .arg("--model")
        .arg(&model)
        .arg("--output-dir")
        .arg(&out)
        .arg("--energy")
        .arg(format!("cmd:{} {}", python.display(), meter.display()))
        .assert()
        .success()
        .stdout(predicate::str::contains("energy (cmd"));
    let report = json(&out.join("comparison_report.json"));
    let energy = &report["energy"];
    let measured = energy["measured_joules"].as_f64().unwrap();
    let predicted = energy["predicted_joules"].as_f64().unwrap();
    assert!(measured > 0.0 && predicted > 0.0);
    let error = energy["error_percent"].as_f64().unwrap();
    assert!((error - 100.0 * (predicted - measured) / measured).abs() < 1e-6);
    assert_eq!(energy["method"], "counter");
    // 42 W over the measured seconds per pass: the meter's truth.
    let full = json(&out.join("full_model_timing.json"));
    let seconds = full["energy"]["seconds_per_invocation"]["median"]
        .as_f64()
        .unwrap();
    let joules = full["energy"]["joules_per_invocation"]["median"]
        .as_f64()
        .unwrap();
    assert!(
        (joules / (42.0 * seconds) - 1.0).abs() < 0.05,
        "{joules} J over {seconds} s"
    );
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<h2>Energy</h2>"));
}
