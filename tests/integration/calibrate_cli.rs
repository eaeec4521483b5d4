//! `replay calibrate` as a user runs it: a real quick calibration of the CPU's matmul, and bad
//! input refused with exit code 2.

use crate::common;

use common::replay;
use predicates::prelude::*;

#[test]
fn a_quick_matmul_calibration_writes_the_seeds_profile() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("profiles/cpu.json");
    let run = replay()
        .args([
            "calibrate",
            "--device",
            "cpu",
            "--quick",
            "--operations",
            "matmul",
            "--quiet",
        ])
        .args([
            "--peak-gflops",
            "1000",
            "--fusion-patterns",
            "attention",
            "--output",
        ])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "peak compute  1000.0 GFLOPS fp32  [flag",
        ))
        .stdout(predicate::str::contains("float32  N=2048"));
    let _ = run;
    let p: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&out).expect("the profile was written")).unwrap();
    for field in [
        "schema_version",
        "metadata",
        "theoretical_peak_gflops",
        "theoretical_bandwidth_gbps",
        "best_measured_gflops",
        "avg_measured_gflops",
        "worst_measured_gflops",
        "measured_bandwidth_gbps",
        "bandwidth_efficiency",
        "best_efficiency",
        "avg_efficiency",
        "worst_efficiency",
        "operation_profiles",
        "fusion_profiles",
    ] {
        assert!(p.get(field).is_some(), "{field} missing from {p:#}");
    }
    assert_eq!(p["theoretical_peak_gflops"], 1000.0);
    // Without --peak-bandwidth a VM's bandwidth peak is unknown: null, with the reason.
    assert!(p["theoretical_bandwidth_gbps"].is_null());
    assert_eq!(p["theoretical_bandwidth_source"]["kind"], "unknown");
    assert_eq!(p["metadata"]["quick"], true);
    let ops = p["operation_profiles"].as_object().unwrap();
    let mut gflops = Vec::new();
    for n in [1024u64, 2048] {
        let o = &ops[&format!("matmul_float32_N={n}")];
        assert_eq!(o["operation_type"], "matmul");
        assert_eq!(o["num_trials"], 5);
        let median_s = o["median_latency_ms"].as_f64().unwrap() / 1e3;
        let g = o["measured_gflops"].as_f64().unwrap();
        let expected = 2.0 * (n as f64).powi(3) / median_s / 1e9;
        assert!(
            (g - expected).abs() / expected < 1e-9,
            "{g} vs 2N³/t = {expected}"
        );
        assert!((o["efficiency"].as_f64().unwrap() - g / 1000.0).abs() < 1e-9);
        assert!((o["arithmetic_intensity"].as_f64().unwrap() - n as f64 / 6.0).abs() < 1e-9);
        gflops.push(g);
    }
    let best = p["best_measured_gflops"].as_f64().unwrap();
    assert_eq!(best, gflops.iter().copied().fold(f64::MIN, f64::max));
    // Every size of every attention pattern is kept (the seed kept the last), with its verdict.
    let fusion = p["fusion_profiles"].as_object().unwrap();
    for pattern in ["QK_AttentionScores", "QK_Softmax", "FullAttention_SDPA"] {
        let sizes = fusion[pattern].as_array().unwrap();
        assert_eq!(sizes.len(), 2, "{pattern}: the two quick sizes");
        for f in sizes {
            let speedup = f["speedup_factor"].as_f64().unwrap();
            let ratio =
                f["unfused_latency_ms"].as_f64().unwrap() / f["fused_latency_ms"].as_f64().unwrap();
            assert!((speedup - ratio).abs() < 1e-9 * ratio);
            let verdict = f["verdict"].as_str().unwrap();
            assert!(["strong", "moderate", "minimal", "slower"].contains(&verdict));
        }
    }
}

#[test]
fn bad_flags_exit_2_saying_what_is_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.json");
    for (args, says) in [
        (
            vec!["--operations", "flops"],
            "expected matmul, memory or host",
        ),
        (
            vec!["--dtypes", "int8"],
            "expected float32, bfloat16 or float16",
        ),
        (
            vec!["--peak-gflops=-3"],
            "--peak-gflops must be a positive number",
        ),
        (
            vec!["--peak-bandwidth=0"],
            "--peak-bandwidth must be a positive number",
        ),
        (vec!["--device", "tpu"], "expected cpu, cuda or cuda:N"),
    ] {
        replay()
            .arg("calibrate")
            .args(&args)
            .arg("--output")
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(says));
    }
    assert!(!out.exists(), "nothing is written for a refused command");
}

#[test]
fn an_unwritable_output_exits_2_naming_it_before_measuring() {
    replay()
        .args([
            "calibrate",
            "--quick",
            "--operations",
            "matmul",
            "--output",
            "/proc/replay/p.json",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/proc/replay/p.json"));
}

#[test]
fn a_quick_memory_calibration_reports_both_ways_with_streams_byte_counts() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("mem.json");
    replay()
        .args([
            "calibrate",
            "--quick",
            "--operations",
            "memory",
            "--peak-bandwidth",
            "100",
            "-q",
        ])
        .arg("--output")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("measured bandwidth:"));
    let p: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    let ops = p["operation_profiles"].as_object().unwrap();
    let mut best: f64 = 0.0;
    for size in [128u64, 256] {
        for (key, bytes_per_element) in [
            (format!("memory_copy_libtorch_size_mb={size}"), 8.0),
            (format!("memory_copy_replay_size_mb={size}"), 8.0),
            (format!("memory_triad_replay_size_mb={size}"), 12.0),
        ] {
            let o = &ops[&key];
            assert_eq!(o["memory_bound"], true, "{key}");
            let elements = o["input_shape"][0].as_f64().unwrap();
            assert_eq!(
                elements,
                size as f64 * 1024.0 * 1024.0 / 4.0,
                "{key}: float32 elements"
            );
            // STREAM's counting: copy reads and writes each element once (8 B), triad reads two
            // and writes one (12 B); bandwidth over the mean latency, as the seed divides.
            let bytes = o["extra_params"]["bytes_per_call"].as_f64().unwrap();
            assert_eq!(bytes, elements * bytes_per_element, "{key}");
            let gbps = o["achieved_bandwidth_gbps"].as_f64().unwrap();
            let mean_s = o["mean_latency_ms"].as_f64().unwrap() / 1e3;
            assert!((gbps - bytes / mean_s / 1e9).abs() < 1e-9 * gbps, "{key}");
            assert!((o["efficiency"].as_f64().unwrap() - gbps / 100.0).abs() < 1e-12);
            best = best.max(gbps);
        }
    }
    assert_eq!(p["measured_bandwidth_gbps"].as_f64().unwrap(), best);
    assert_eq!(p["theoretical_bandwidth_source"]["kind"], "flag");
}

/// The seed README's validation example (`calibrator --hardware TestCPU --peak-gflops 1000
/// --peak-bandwidth 50 --fusion-patterns all --quick --output profiles/test.json`) as written,
/// read back with the seed's keys: every fusion entry names its bytes `unfused_bytes` and
/// `fused_bytes` (replay's `*_memory_bytes` beside them), and `predict --profile` reads it.
#[test]
fn the_seeds_readme_example_writes_the_seeds_fusion_keys() {
    let dir = tempfile::tempdir().unwrap();
    replay()
        .current_dir(dir.path())
        .args([
            "calibrate",
            "--hardware",
            "TestCPU",
            "--peak-gflops",
            "1000",
        ])
        .args([
            "--peak-bandwidth",
            "50",
            "--fusion-patterns",
            "all",
            "--quick",
        ])
        .args(["--output", "profiles/test.json", "--quiet"])
        .assert()
        .success();
    let path = dir.path().join("profiles/test.json");
    let p: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(p["theoretical_peak_gflops"], 1000.0);
    assert_eq!(p["theoretical_bandwidth_gbps"], 50.0);
    assert!(p["measured_bandwidth_gbps"].as_f64().unwrap() > 0.0);
    let fusion = p["fusion_profiles"].as_object().unwrap();
    assert_eq!(
        fusion.len(),
        9,
        "linear, conv and attention: the seed's nine patterns"
    );
    for (pattern, sizes) in fusion {
        for f in sizes.as_array().unwrap() {
            // The seed's scripts index these: a KeyError before issue #29.
            let unfused = f["unfused_bytes"].as_u64().unwrap();
            let fused = f["fused_bytes"].as_u64().unwrap();
            assert!(unfused > 0 && fused > 0, "{pattern}: {f}");
            assert_eq!(f["unfused_memory_bytes"].as_u64(), Some(unfused));
            assert_eq!(f["fused_memory_bytes"].as_u64(), Some(fused));
            let reduction = f["memory_reduction"].as_f64().unwrap();
            assert!((reduction - (1.0 - fused as f64 / unfused as f64)).abs() < 1e-9);
            assert!(f["speedup_factor"].as_f64().unwrap() > 0.0);
        }
    }
    // The profile is still a hardware model of `predict --profile`.
    let trace = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/gpt2_1layer_cpu_seq16.json.gz");
    replay()
        .args(["predict", "--trace"])
        .arg(&trace)
        .arg("--profile")
        .arg(&path)
        .arg("--source-profile")
        .arg(&path)
        .assert()
        .success();
}
