//! `replay predict --profile`: a real H100 trace re-timed onto the A100 datasheet profile.

use crate::common;

use common::replay;
use predicates::prelude::*;

fn shared(name: &str) -> std::path::PathBuf {
    common::shared_traces().join(name)
}

#[test]
fn an_h100_trace_on_the_a100_datasheet_slows_its_kernels_by_the_peak_ratios() {
    let out = replay()
        .current_dir(common::repo_root())
        .args([
            "predict",
            "--json",
            "--profile",
            "profiles/a100_sxm4_40gb_datasheet.json",
            "--trace",
        ])
        .arg(shared("h100_bert_small_infer.json.gz"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let p: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let w = &p["what_ifs"][0];
    assert!(w["expression"]
        .as_str()
        .unwrap()
        .starts_with("profile=NVIDIA A100 SXM4 40GB (from NVIDIA H100"));
    // The source profile was found in profiles/ by the trace's device name.
    let (before, after) = (
        p["kernel_sum_us"].as_f64().unwrap(),
        w["kernel_sum_us"].as_f64().unwrap(),
    );
    // Every kernel is slowed by the bandwidth ratio (3350/1555) or the bf16 peak ratio
    // (989.4/312): the kernel sum by something in between.
    let ratio = after / before;
    assert!(
        ratio > 3350.0 / 1555.0 - 1e-6 && ratio < 989.4 / 312.0 + 1e-6,
        "{ratio}"
    );
    // The step is host-bound (the GPU is busy a few % of it): it hardly moves.
    assert!(w["predicted_us"].as_f64().unwrap() >= p["predicted_us"].as_f64().unwrap());
}

#[test]
fn a_trace_without_a_device_or_a_bad_profile_exits_2_naming_the_file() {
    replay()
        .current_dir(common::repo_root())
        .args([
            "predict",
            "--profile",
            "profiles/h100_sxm_datasheet.json",
            "--trace",
        ])
        .arg(shared("cpu_only.json.gz"))
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("cpu_only.json.gz")
                .and(predicate::str::contains("--source-profile")),
        );
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"schema_version\": 1}").unwrap();
    replay()
        .args(["predict", "--profile"])
        .arg(&bad)
        .arg("--trace")
        .arg(shared("h100_vit_infer.json.gz"))
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("bad.json")
                .and(predicate::str::contains("not a calibration profile")),
        );
}

#[test]
fn the_traces_own_profile_is_found_from_any_directory_and_a_local_one_comes_first() {
    let elsewhere = tempfile::tempdir().unwrap();
    let a100 = common::repo_root().join("profiles/a100_sxm4_40gb_datasheet.json");
    let run = |dir: &std::path::Path| {
        let out = replay()
            .current_dir(dir)
            .args(["predict", "--json", "--profile"])
            .arg(&a100)
            .arg("--trace")
            .arg(shared("h100_bert_small_infer.json.gz"))
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let p: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        p["what_ifs"][0]["expression"].as_str().unwrap().to_string()
    };
    // No profiles/ here: the shipped H100 profile stands for the trace's device.
    assert!(
        run(elsewhere.path()).contains("(from NVIDIA H100"),
        "{}",
        run(elsewhere.path())
    );
    // A profiles/ of the user's own that names the device wins over the shipped one.
    let mine = elsewhere.path().join("profiles");
    std::fs::create_dir(&mine).unwrap();
    let shipped = common::repo_root().join("profiles/h100_sxm_datasheet.json");
    let mut profile: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(shipped).unwrap()).unwrap();
    profile["metadata"]["hardware_name"] = serde_json::json!("my own H100 profile");
    std::fs::write(mine.join("h100.json"), profile.to_string()).unwrap();
    let expression = run(elsewhere.path());
    assert!(
        expression.contains("(from my own H100 profile"),
        "{expression}"
    );
}
