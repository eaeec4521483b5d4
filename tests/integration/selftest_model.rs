//! `replay selftest --model`: the whole-model stage on bloom-tiny on the CPU, run for real
//! (model output against the CPU, timing, a small compare pipeline), and its usage errors.

use crate::common;

use common::{exported_bloom_tiny, has_nvidia_driver, replay};
use predicates::prelude::*;

const MODEL_CHECKS: [&str; 3] = [
    "whole model output vs the CPU",
    "whole model timing",
    "compare pipeline end to end",
];

#[test]
fn selftest_with_a_model_checks_the_whole_model_on_cpu() {
    let (dir, model) = exported_bloom_tiny();
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let output = replay()
        .args(["selftest", "--device", "cpu", "--seq-len", "4", "--json"])
        .arg("--model")
        .arg(&model)
        // The pipeline's scratch folder goes here, so the test can see it is cleaned up.
        .env("TMPDIR", &tmp)
        .assert()
        .success()
        .get_output()
        .clone();
    // Standard output is the JSON alone: the pipeline's own printing went to standard error.
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}",
            String::from_utf8_lossy(&output.stdout)
        )
    });
    let checks = json["checks"].as_array().unwrap();
    // Four tiers, three scan checks, three calibration checks and three mhc checks, then the
    // model stage.
    assert_eq!(checks.len(), 13 + MODEL_CHECKS.len(), "{json:#}");
    for c in checks {
        assert_eq!(c["passed"], true, "{c}");
    }
    let model_stage: Vec<&serde_json::Value> =
        checks.iter().filter(|c| c["stage"] == "model").collect();
    assert_eq!(
        model_stage
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect::<Vec<_>>(),
        MODEL_CHECKS
    );
    assert!(model_stage.iter().all(|c| c["tier"] == 0));
    let detail = |i: usize| model_stage[i]["detail"].as_str().unwrap();
    assert!(
        detail(0).contains("output [1, 4, 1000] fp32") && detail(0).contains("bound 1e-3"),
        "{}",
        detail(0)
    );
    assert!(
        detail(1).contains("median") && detail(1).contains("p10") && detail(1).contains("p90"),
        "{}",
        detail(1)
    );
    for part in [
        "kernel sum",
        "= tiers",
        "timeline",
        "coverage",
        "trace self-check",
    ] {
        assert!(detail(2).contains(part), "{part}: {}", detail(2));
    }
    // The pipeline really ran (its steps are on standard error) and left nothing behind.
    let stderr = String::from_utf8_lossy(&output.stderr);
    for step in ["==> capture", "==> classify", "==> isolated", "==> full"] {
        assert!(stderr.contains(step), "{step} missing from:\n{stderr}");
    }
    // (torch's Python side may leave its own cache folder there.)
    let left: Vec<String> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("replay-selftest"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn selftest_with_a_missing_or_malformed_model_exits_2_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.pt");
    replay()
        .args(["selftest", "--device", "cpu", "--model"])
        .arg(&missing)
        .assert()
        .code(2)
        .stdout(predicate::str::is_empty())
        .stderr(predicate::str::contains(missing.display().to_string()));
    let malformed = dir.path().join("malformed.pt");
    std::fs::write(&malformed, b"not a TorchScript archive").unwrap();
    replay()
        .args(["selftest", "--device", "cpu", "--model"])
        .arg(&malformed)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(malformed.display().to_string()))
        .stderr(predicate::str::contains("not a TorchScript model"));
    replay()
        .args(["selftest", "--device", "cpu", "--seq-len", "0", "--model"])
        .arg(&malformed)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--seq-len"));
}

#[test]
fn selftest_seq_len_needs_a_model() {
    replay()
        .args(["selftest", "--device", "cpu", "--seq-len", "3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--model"));
}

#[test]
fn selftest_with_a_model_on_cuda_without_a_gpu_still_says_so() {
    if has_nvidia_driver() {
        // With a GPU, `selftest --device cuda --model M` runs the model stage there:
        // selftest check "whole model output vs the CPU", its timing and compare pipeline.
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    replay()
        .args(["selftest", "--device", "cuda", "--model"])
        .arg(dir.path().join("missing.pt"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("libcuda.so not found"));
}
