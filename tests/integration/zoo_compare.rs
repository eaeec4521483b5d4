//! The model zoo end to end through the real binary: `replay export --model NAME` at the
//! small test size of each architecture, then a short `replay compare` on the CPU that must
//! replay every signature (coverage 100 %) and record the inputs it fed.

use crate::common;

use std::path::Path;

use common::replay;
use predicates::prelude::*;

fn export(dir: &Path, name: &str) -> std::path::PathBuf {
    let model = dir.join(format!("{name}.pt"));
    replay()
        .args(["export", "--model", name, "--out"])
        .arg(&model)
        .assert()
        .success()
        .stdout(predicate::str::contains(" parameters "));
    model
}

/// A short compare (timings are not the point here) and its report.
fn compare(dir: &Path, model: &Path, extra: &[&str]) -> serde_json::Value {
    let out = dir.join("results");
    replay()
        .args(["compare", "--model"])
        .arg(model)
        .args([
            "--device",
            "cpu",
            "--threads",
            "1",
            "--runs",
            "4",
            "--warmup",
            "2",
            "--rounds",
            "1",
            "--max-time-per-kernel",
            "0.01",
            "--quiet",
        ])
        .args(extra)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .success();
    serde_json::from_slice(&std::fs::read(out.join("comparison_report.json")).unwrap()).unwrap()
}

fn assert_everything_replayed(report: &serde_json::Value) {
    let coverage = &report["coverage"];
    assert_eq!(
        coverage["unreplayed"].as_array().map(Vec::len),
        Some(0),
        "{coverage}"
    );
    assert_eq!(coverage["replayed_share_of_trace_time"], 1.0, "{coverage}");
    assert!(report["full_model_inference_us"].as_f64().unwrap() > 0.0);
}

#[test]
fn gpt2_written_op_by_op_replays_whole() {
    let dir = tempfile::tempdir().unwrap();
    let model = export(dir.path(), "gpt2-tiny");
    let report = compare(dir.path(), &model, &["--seq-len", "7"]);
    assert_everything_replayed(&report);
    assert_eq!(report["inputs"], serde_json::json!(["int64[1,7]:0..1000"]));
    // Its linears are GEMMs (tier 2), as many as the trace has calls of them.
    assert!(report["tier_breakdown"]["tier2_cublas"]["unique_kernels"].as_u64() >= Some(4));
}

#[test]
fn bert_through_the_fused_encoder_layer_replays_whole() {
    let dir = tempfile::tempdir().unwrap();
    let model = export(dir.path(), "bert-tiny");
    // Token ids given explicitly: the same as the default, with the range written out.
    let report = compare(dir.path(), &model, &["--input", "int64[1,6]:0..1000"]);
    assert_everything_replayed(&report);
    assert_eq!(report["inputs"], serde_json::json!(["int64[1,6]:0..1000"]));
    let fused = report["top_signatures"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["name"] == "aten::_transformer_encoder_layer_fwd");
    assert!(
        fused,
        "each layer is one fused op: {}",
        report["top_signatures"]
    );
}

#[test]
fn t5_encoder_decoder_replays_whole() {
    let dir = tempfile::tempdir().unwrap();
    let model = export(dir.path(), "t5-tiny");
    assert_everything_replayed(&compare(dir.path(), &model, &["--seq-len", "5"]));
}

#[test]
fn resnet_on_an_image_input_replays_whole() {
    let dir = tempfile::tempdir().unwrap();
    let model = export(dir.path(), "resnet-tiny");
    let report = compare(dir.path(), &model, &["--input", "float32[2,3,32,32]"]);
    assert_everything_replayed(&report);
    assert_eq!(report["inputs"], serde_json::json!(["float32[2,3,32,32]"]));
    assert_eq!(
        report["full_model"]["inputs"],
        serde_json::json!(["float32[2,3,32,32]"])
    );
    // Without --input the model gets token ids, which it cannot take: exit 2, naming the
    // model and saying what to do.
    replay()
        .args(["full", "--runs", "2", "--model"])
        .arg(&model)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("resnet-tiny.pt"))
        .stderr(predicate::str::contains("--input"));
}

#[test]
fn bad_input_specs_exit_2_saying_what_is_accepted() {
    for spec in [
        "float33[1,2]",
        "int64[1,0]",
        "float32[4]:0..9",
        "int64[2]:7..3",
    ] {
        for command in ["full", "compare", "capture"] {
            replay()
                .args([command, "--model", "m.pt", "--input", spec])
                .args(if command == "capture" {
                    &["--out", "t.json"][..]
                } else {
                    &[][..]
                })
                .assert()
                .code(2)
                .stderr(predicate::str::contains(spec))
                .stderr(predicate::str::contains("accepted: DTYPE[d0,d1,...]"));
        }
    }
}
