//! A GPT-2 decoder written op by op and traced with `torch.jit.trace` (one layer of
//! gpt2-small: hidden 768, 12 heads, vocabulary 50257), captured on the CPU at seq-len 16 with
//! `replay capture` (`tests/data/gpt2_1layer_cpu_seq16.json.gz`). TorchScript records some
//! calls with extra leading inputs that are not the op's arguments; classification and replay
//! must both read the arguments by the op's schema.

use crate::common;

use std::path::PathBuf;

use common::replay;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/gpt2_1layer_cpu_seq16.json.gz")
}

fn classify(dir: &std::path::Path) -> (PathBuf, serde_json::Value) {
    let out = dir.join("gpt2.json");
    replay()
        .args(["classify", "--trace"])
        .arg(fixture())
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let json = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    (out, json)
}

#[test]
fn every_linear_is_a_gemm_of_its_weight_whatever_torchscript_recorded_in_front() {
    let dir = tempfile::tempdir().unwrap();
    let (_, file) = classify(dir.path());
    let linears: Vec<&serde_json::Value> = file["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == "aten::linear")
        .collect();
    assert_eq!(
        linears.len(),
        5,
        "qkv, attention out, MLP up, MLP down, lm_head"
    );
    let mut with_extra_input = 0;
    for sig in linears {
        let dims = sig["inputs"]["dims"].as_array().unwrap();
        assert_eq!(sig["tier"], 2, "{sig}");
        let gemm = &sig["gemm"];
        // The weight is the last 2-D input before the bias: [n, k].
        let weight = dims
            .iter()
            .rev()
            .find(|d| d.as_array().is_some_and(|d| d.len() == 2))
            .unwrap();
        assert_eq!(gemm["m"], 16, "{sig}");
        assert_eq!(gemm["n"], weight[0], "{sig}");
        assert_eq!(gemm["k"], weight[1], "{sig}");
        if dims.len() == 4 {
            with_extra_input += 1;
        }
    }
    assert_eq!(
        with_extra_input, 2,
        "the fixture holds both TorchScript patterns of the issue"
    );
}

#[test]
fn every_signature_replays_on_the_cpu() {
    let dir = tempfile::tempdir().unwrap();
    let (sigs, _) = classify(dir.path());
    let results = dir.path().join("results");
    replay()
        .args([
            "isolated",
            "--device",
            "cpu",
            "--max-time-per-kernel",
            "0.02",
            "--rounds",
            "1",
            "--quiet",
            "--kernels",
        ])
        .arg(&sigs)
        .arg("--output-dir")
        .arg(&results)
        .assert()
        .success();
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(results.join("isolated.json")).unwrap()).unwrap();
    let results = json["results"].as_array().unwrap();
    assert!(results.len() > 30);
    for r in results {
        assert_eq!(r["status"], "ok", "{r}");
    }
    // floor_divide of two 0-dim long tensors (`h // n_head`) replays with a non-zero divisor.
    assert!(results.iter().any(|r| r["name"] == "aten::floor_divide"));
}
