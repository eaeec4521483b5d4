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

/// Whether two numbers read back from the results agree to their written precision (the
/// JSON carries 15 significant digits).
fn same(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

/// Checks that every window of an energy summary holds the counting meter's 0.25 J, that
/// each window's joules per invocation are those 0.25 J over its invocations, and that the
/// summary's median is the middle window's. Returns the median.
fn check_counted_windows(energy: &serde_json::Value, what: &str) -> f64 {
    let windows = energy["windows"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: {energy}"));
    assert_eq!(windows.len(), 3, "{what}");
    let mut per_invocation: Vec<f64> = windows
        .iter()
        .map(|w| {
            assert_eq!(w["busy"]["joules"].as_f64(), Some(0.25), "{what}: {w}");
            let invocations = w["invocations"].as_u64().unwrap() as f64;
            let joules = w["joules_per_invocation"].as_f64().unwrap();
            assert!(same(joules, 0.25 / invocations), "{what}: {w}");
            joules
        })
        .collect();
    per_invocation.sort_by(f64::total_cmp);
    let median = energy["joules_per_invocation"]["median"].as_f64().unwrap();
    assert!(same(median, per_invocation[1]), "{what}");
    median
}

#[test]
fn compare_with_an_energy_meter_reports_predicted_and_measured_energy() {
    let (dir, model) = exported_bloom_tiny();
    // A meter whose energy replay controls: 0.25 J more at every 'read', so each window
    // (one read to open, one to close) holds exactly 0.25 J, whatever the scheduling.
    let meter = dir.path().join("meter.py");
    std::fs::write(
        &meter,
        "import json, sys, time\nreads = 0\nfor line in iter(sys.stdin.readline, ''):\n    c = line.strip()\n    if c == 'read':\n        reads += 1\n        d = {'joules': 0.25 * reads, 'timestamp': time.monotonic()}\n        if reads == 1:\n            d['update_period_s'] = 0.001\n        print(json.dumps(d), flush=True)\n    elif c == 'quit':\n        break\n",
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
    // The full model: 0.25 J per window over the window's forward passes.
    let full = json(&out.join("full_model_timing.json"));
    let full_joules = check_counted_windows(&full["energy"], "full model");
    // Each replayed signature: the same, times its share of its replay unit.
    let isolated = json(&out.join("isolated.json"));
    let mut predicted = 0.0;
    let mut measured_signatures = 0;
    for row in isolated["results"].as_array().unwrap() {
        let Some(joules) = row["joules_per_invocation"].as_f64() else {
            continue;
        };
        let median = check_counted_windows(&row["energy"]["Ok"], row["id"].as_str().unwrap());
        assert!(
            same(joules, median * row["share"].as_f64().unwrap()),
            "{row}"
        );
        predicted += joules * row["count"].as_u64().unwrap() as f64;
        measured_signatures += 1;
    }
    assert!(measured_signatures > 0);
    // The report sets the signatures' sum against the full model's median.
    let report = json(&out.join("comparison_report.json"));
    let energy = &report["energy"];
    let measured = energy["measured_joules"].as_f64().unwrap();
    assert!(same(measured, full_joules), "{measured} vs {full_joules}");
    let reported = energy["predicted_joules"].as_f64().unwrap();
    assert!(same(reported, predicted), "{reported} vs {predicted}");
    let error = energy["error_percent"].as_f64().unwrap();
    assert!((error - 100.0 * (reported - full_joules) / full_joules).abs() < 1e-9);
    assert_eq!(energy["method"], "counter");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<h2>Energy</h2>"));
}
