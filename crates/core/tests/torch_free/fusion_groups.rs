//! TorchScript's fusion groups (`fused_*` ops, issue 51 part A) in classification: on the
//! H200 traces of `../shared/gpu-truth/` (a trace alone: the reason says why it cannot be
//! replayed), and on a bloom-tiny step captured on this CPU with the fuser on
//! (`replay capture --fuse-on-cpu`), where each fused op gets its group's subgraph.

use std::path::{Path, PathBuf};

use replay_core::signature::fusion_group::{is_fusion_group_op, TENSOR_EXPR_GROUP};
use replay_core::signature::{self, Signature, SignatureFile};
use replay_core::trace;

use crate::common;

fn classify(path: &Path) -> SignatureFile {
    let trace = trace::load(path).unwrap_or_else(|e| panic!("{e}"));
    signature::classify(&trace, path)
}

fn op_name(sig: &Signature) -> &str {
    sig.op.as_ref().map_or(&sig.name, |op| &op.name)
}

fn fused(file: &SignatureFile) -> Vec<&Signature> {
    file.signatures
        .iter()
        .filter(|s| is_fusion_group_op(op_name(s)))
        .collect()
}

/// bloom-tiny (seq 16, one thread) captured with `capture_trace.py --fuse-on-cpu`.
fn bloom_tiny_fused() -> PathBuf {
    common::repo_root().join("crates/core/tests/data/fusion/bloom_tiny_cpu_fused.json.gz")
}

fn gpu_truth(config: &str) -> PathBuf {
    common::repo_root()
        .join("../shared/gpu-truth/h200-2026-11-28")
        .join(config)
        .join("trace.json.gz")
}

#[test]
fn the_h200_traces_fused_ops_say_why_a_trace_alone_cannot_replay_them() {
    for config in ["resnet50-b8", "t5-small-seq16", "bloom-560m-bf16-seq128"] {
        let file = classify(&gpu_truth(config));
        let groups = fused(&file);
        assert!(!groups.is_empty(), "{config}: no fused_* signature");
        for sig in groups {
            assert!(!sig.replayable, "{config}: {}", sig.name);
            assert!(sig.fusion.is_none());
            let reason = sig.reason.as_deref().unwrap_or("");
            assert!(
                reason.contains("is a TorchScript fusion group")
                    && reason.contains("optimised graph")
                    && !reason.contains("record_shapes=False"),
                "{config}: {reason}"
            );
        }
    }
}

#[test]
fn a_cpu_capture_with_the_fuser_on_gives_each_fused_op_its_group() {
    let file = classify(&bloom_tiny_fused());
    let groups = fused(&file);
    // The GELU of both layers (one signature: same inputs) and the ALiBi mask.
    let mut names: Vec<&str> = groups.iter().map(|s| s.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "fused_mul_mul_mul_mu_5065363705190979294",
            "fused_unsqueeze_gt"
        ]
    );
    for sig in &groups {
        assert!(sig.replayable, "{}: {:?}", sig.name, sig.reason);
        let fusion = sig.fusion.as_ref().expect("the group's subgraph");
        assert_eq!(fusion.kind, TENSOR_EXPR_GROUP);
        assert!(fusion.graph.starts_with("graph("), "{}", fusion.graph);
        // The capture ran NNC's interpreter on this CPU (a wheel without LLVM).
        assert_eq!(fusion.te_must_use_llvm_cpu, Some(false));
        let inputs = sig.inputs.as_ref().expect("input types from the group");
        assert!(inputs.dims.is_some() && inputs.types.is_some());
    }
    let gelu = groups
        .iter()
        .find(|s| s.name.starts_with("fused_mul"))
        .unwrap();
    // The hashed name the capture computed is TorchScript's: it is the one the H200 recorded
    // for the same GELU of bloom-560m.
    assert_eq!(gelu.count, 2);
    let graph = &gelu.fusion.as_ref().unwrap().graph;
    assert_eq!(graph.matches("= aten::").count(), 9, "{graph}");
    assert!(graph.contains("aten::tanh"));
    let h200 = classify(&gpu_truth("bloom-560m-bf16-seq128"));
    assert!(h200.signatures.iter().any(|s| op_name(s) == gelu.name));
}

#[test]
fn without_the_capture_s_groups_the_same_trace_says_why() {
    let mut doc: serde_json::Value = {
        let bytes = std::fs::read(bloom_tiny_fused()).unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)
            .unwrap();
        serde_json::from_str(&text).unwrap()
    };
    // As the profiler wrote it: no groups section, no inputs on the fused ops.
    doc.as_object_mut().unwrap().remove("replayFusionGroups");
    for event in doc["traceEvents"].as_array_mut().unwrap() {
        if event["name"]
            .as_str()
            .is_some_and(|n| n.starts_with("fused_"))
        {
            event["args"] = serde_json::json!({"External id": event["args"]["External id"]});
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let file = classify(&path);
    let groups = fused(&file);
    assert_eq!(groups.len(), 2, "{groups:?}");
    for sig in groups {
        assert!(!sig.replayable);
        let reason = sig.reason.as_deref().unwrap();
        assert!(
            reason.starts_with(&format!("{} is a TorchScript fusion group", sig.name)),
            "{reason}"
        );
    }
}

#[test]
fn a_groups_section_that_does_not_read_is_said_so() {
    let bytes = std::fs::read(bloom_tiny_fused()).unwrap();
    let mut text = String::new();
    std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut text)
        .unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    doc["replayFusionGroups"]["groups"] = serde_json::json!("not a list");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.json");
    std::fs::write(&path, serde_json::to_vec(&doc).unwrap()).unwrap();
    let file = classify(&path);
    let groups = fused(&file);
    assert_eq!(groups.len(), 2, "{groups:?}");
    for sig in groups {
        assert!(!sig.replayable);
        let reason = sig.reason.as_deref().unwrap();
        assert!(
            reason.contains("replayFusionGroups does not read"),
            "{reason}"
        );
    }
}
