//! `replay predict --isolated --host-times trace|corrected|model` through the executable, on
//! the shared traces and on the GPU truth recorded on an H200 (`../shared/gpu-truth/`).

use std::path::{Path, PathBuf};

use crate::common::{all_shared_traces, replay, repo_root};

/// An `isolated.json` in which every signature of `trace` "replayed" in its own trace mean:
/// the prediction with it must give the trace's own timeline back.
fn own_means_isolated(dir: &Path, trace: &Path) -> PathBuf {
    let signatures = dir.join("signatures.json");
    replay()
        .args(["classify", "--trace"])
        .arg(trace)
        .arg("--out")
        .arg(&signatures)
        .assert()
        .success();
    let file: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&signatures).unwrap()).unwrap();
    let results: Vec<serde_json::Value> = file["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            serde_json::json!({"id": s["id"], "tier": s["tier"], "name": s["name"], "op": null,
                "count": s["count"], "trace_mean_us": s["trace_mean_us"],
                "trace_total_us": s["trace_total_us"], "status": "ok", "method": "trace mean",
                "reason": null, "replayed_as": s["id"], "share": 1.0,
                "predicted_us": s["trace_mean_us"], "host_us": null, "stats": null})
        })
        .collect();
    let isolated = serde_json::json!({"schema_version": 1, "tool": "replay", "device": "cpu",
        "signatures_file": "signatures.json", "config": {"cold": false,
        "max_time_per_kernel_s": 0.1, "noise_target": 0.005, "min_samples": 5, "rounds": 1},
        "signatures_total": results.len(), "complete": true, "results": results});
    let path = dir.join("isolated.json");
    std::fs::write(&path, serde_json::to_vec(&isolated).unwrap()).unwrap();
    path
}

fn predict_json(trace: &Path, isolated: &Path, extra: &[&str]) -> serde_json::Value {
    let output = replay()
        .args(["predict", "--json", "--trace"])
        .arg(trace)
        .arg("--isolated")
        .arg(isolated)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}: {}",
        trace.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn with_the_traces_own_means_and_host_times_the_trace_gives_its_own_model_call_back() {
    for trace in all_shared_traces() {
        let dir = tempfile::tempdir().unwrap();
        let isolated = own_means_isolated(dir.path(), &trace);
        let out = predict_json(&trace, &isolated, &["--host-times", "trace"]);
        let error = out["error_percent"].as_f64().unwrap();
        assert!(
            error.abs() <= 2.0,
            "{}: {error} % (predicted {} against {} us, the same span: {})",
            trace.display(),
            out["predicted_us"],
            out["measured_us"],
            out["span"]
        );
        assert_eq!(out["host"]["host_times"], "trace");
        // Like with like: the span is the model call, measured in the trace itself.
        assert!(out["span"].as_str().unwrap().contains("model call"));
        assert!(out["measured_us"].as_f64().unwrap() > 0.0);
    }
}

fn gpu_truth() -> PathBuf {
    repo_root().join("../shared/gpu-truth/h200-2026-11-28")
}

fn h200_profile() -> PathBuf {
    repo_root().join("profiles/h200_sxm_datasheet.json")
}

#[test]
fn on_the_h200_truth_the_host_model_takes_the_profilers_cost_out() {
    let folders: Vec<PathBuf> = std::fs::read_dir(gpu_truth())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("trace.json.gz").exists())
        .collect();
    assert_eq!(folders.len(), 8, "the eight configurations: {folders:?}");
    for folder in folders {
        let trace = folder.join("trace.json.gz");
        let isolated = folder.join("isolated.json");
        let profile = h200_profile();
        let model = predict_json(
            &trace,
            &isolated,
            &["--host-profile", profile.to_str().unwrap()],
        );
        let recorded = predict_json(&trace, &isolated, &["--host-times", "trace"]);
        let name = folder.display();
        // The default with a host section is the model, and it says whose.
        assert_eq!(model["host"]["host_times"], "model", "{name}");
        assert!(
            model["host"]["host_model"]
                .as_str()
                .unwrap()
                .contains("h200_sxm_datasheet.json"),
            "{name}"
        );
        // The replay measured the host time of most launching ops itself.
        let launches = model["host"]["launches"].as_u64().unwrap();
        let measured = model["host"]["launches_measured"].as_u64().unwrap();
        assert!(
            launches > 0 && measured * 10 >= launches * 8,
            "{name}: {measured}/{launches}"
        );
        // The profiler at least doubled the host's time on this machine: the model's host
        // time is below half the recorded one, and every step is host-bound.
        let (m, r) = (
            model["predicted_us"].as_f64().unwrap(),
            recorded["predicted_us"].as_f64().unwrap(),
        );
        assert!(
            m < 0.75 * r,
            "{name}: model {m} us against the trace's {r} us"
        );
        assert_eq!(model["bound"], "host", "{name}");
        assert!(
            model["host_us"].as_f64().unwrap() > model["device_us"].as_f64().unwrap(),
            "{name}"
        );
    }
}

#[test]
fn host_model_bad_input_is_named() {
    let folder = gpu_truth().join("bert-base-seq128");
    let trace = folder.join("trace.json.gz");
    let isolated = folder.join("isolated.json");
    // A profile without a host section: exit 2 naming it.
    let plain = repo_root().join("profiles/h100_sxm_datasheet.json");
    let output = replay()
        .args(["predict", "--trace"])
        .arg(&trace)
        .arg("--isolated")
        .arg(&isolated)
        .arg("--host-profile")
        .arg(&plain)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("h100_sxm_datasheet.json") && stderr.contains("no host section"),
        "{stderr}"
    );
    // A host section of another machine: a warning naming both, and the prediction goes on.
    let dir = tempfile::tempdir().unwrap();
    let mut other: serde_json::Value =
        serde_json::from_slice(&std::fs::read(h200_profile()).unwrap()).unwrap();
    other["host"]["machine"]["device"] = "NVIDIA A100-SXM4-40GB".into();
    let other_path = dir.path().join("a100.json");
    std::fs::write(&other_path, serde_json::to_vec(&other).unwrap()).unwrap();
    let out = predict_json(
        &trace,
        &isolated,
        &["--host-profile", other_path.to_str().unwrap()],
    );
    let notes = out["host"]["notes"].to_string();
    assert!(
        notes.contains("NVIDIA A100-SXM4-40GB") && notes.contains("NVIDIA H200"),
        "{notes}"
    );
    // A GPU host section for a CPU trace: exit 2 naming the trace.
    let cpu = crate::common::shared_traces().join("cpu_only.json.gz");
    let cpu_dir = tempfile::tempdir().unwrap();
    let cpu_isolated = own_means_isolated(cpu_dir.path(), &cpu);
    let output = replay()
        .args(["predict", "--trace"])
        .arg(&cpu)
        .arg("--isolated")
        .arg(&cpu_isolated)
        .arg("--host-profile")
        .arg(h200_profile())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cpu_only.json.gz") && stderr.contains("CPU trace"),
        "{stderr}"
    );
    // --host-times without --isolated: clap refuses it (exit 2).
    replay()
        .args(["predict", "--host-times", "model", "--trace"])
        .arg(&trace)
        .assert()
        .code(2);
}
