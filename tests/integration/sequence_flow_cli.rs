//! `replay sequence --execution-trace`: the bloom-tiny step re-run on the CPU with the
//! model's data flow from its Execution Trace (recorded in the same step), and an Execution
//! Trace that is not the trace's refused.

use std::path::{Path, PathBuf};

use crate::common::{bloom_tiny_et_pair, gpt2_tiny_et_pair, replay};
use predicates::prelude::*;

fn sequence(trace: &Path, et: &Path, out: &Path) -> assert_cmd::assert::Assert {
    replay()
        .args(["sequence", "--device", "cpu", "--quiet", "--max-time", "1"])
        .args(["--min-samples", "3", "--trace"])
        .arg(trace)
        .arg("--execution-trace")
        .arg(et)
        .arg("--output-dir")
        .arg(out)
        .assert()
}

#[test]
fn the_bloom_tiny_step_re_runs_with_the_models_data_flow() {
    let dir = tempfile::tempdir().unwrap();
    sequence(&bloom_tiny_et_pair().0, &bloom_tiny_et_pair().1, dir.path())
        .success()
        .stderr(predicate::str::contains(
            "bloom_tiny_cpu.et.json.gz: 357 of 357 ops linked by record-function id\n",
        ))
        .stdout(predicate::str::contains("data flow: the model's"))
        .stdout(predicate::str::contains("and its data flow"));
    let path = dir.path().join("sequence.json");
    let rerun: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    assert_eq!(rerun["data_flow"], true);
    let flow = &rerun["flow"];
    let entries = rerun["entries"].as_array().unwrap();
    assert_eq!(flow["linked_entries"].as_u64(), Some(entries.len() as u64));
    assert!(flow["flowing_inputs"].as_u64().unwrap() > 100, "{flow}");
    assert_eq!(flow["fallbacks"], 0, "{flow}");
    // Every op ran, in its place; the GEMMs through libtorch's call of the op itself.
    for e in entries {
        assert_eq!(e["status"], "ok", "{e}");
        assert!(e["in_context"]["median_us"].as_f64().unwrap() > 0.0, "{e}");
        let method = e["method"].as_str().unwrap();
        assert!(method.starts_with("libtorch dispatcher"), "{e}");
    }
    assert!(entries.iter().any(|e| e["method"]
        .as_str()
        .is_some_and(|m| m.starts_with("libtorch dispatcher aten::linear"))));
    assert!(rerun["runs"]["samples"].as_u64().unwrap() >= 3);
}

#[test]
fn gpt2s_stack_recorded_inputs_and_split_pieces_flow() {
    // Before 2026-11-30, 33 of GPT-2's inputs fell back: the Execution Trace's input index was
    // shifted by the values the Kineto event recorded before the op's arguments
    // (`aten::linear input 0: not a tensor argument of the rebuilt call`, the embedding's ids
    // matched against its weight), and `split`'s pieces did not flow (`output 0 is a list`).
    let dir = tempfile::tempdir().unwrap();
    let (trace, et) = gpt2_tiny_et_pair();
    sequence(&trace, &et, dir.path()).success();
    let rerun: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("sequence.json")).unwrap()).unwrap();
    let flow = &rerun["flow"];
    assert_eq!(flow["fallbacks"], 0, "{flow}");
    assert!(flow.get("fallback_kinds").is_none(), "{flow}");
    assert_eq!(flow["linked_entries"], 98, "{flow}");
    // Every tensor input of the 98 ops either flows or is a tensor from outside the step.
    let (flowing, external) = (
        flow["flowing_inputs"].as_u64().unwrap(),
        flow["external_inputs"].as_u64().unwrap(),
    );
    assert_eq!((flowing, external), (101, 49), "{flow}");
    // Query, key and value of the two layers: read as slices of the `linear` before `split`.
    assert!(flow["viewed_inputs"].as_u64().unwrap() >= 6, "{flow}");
    let entries = rerun["entries"].as_array().unwrap();
    assert!(entries.iter().all(|e| e["status"] == "ok"));
}

#[test]
fn an_execution_trace_that_is_not_the_traces_exits_2_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    // Not an Execution Trace at all.
    let broken = dir.path().join("broken.et.json");
    std::fs::write(
        &broken,
        b"{\"schema\": \"1.1.1-chakra.0.0.4\", \"nodes\": [",
    )
    .unwrap();
    sequence(&bloom_tiny_et_pair().0, &broken, &out)
        .code(2)
        .stderr(predicate::str::contains("broken.et.json"))
        .stderr(predicate::str::contains("panicked").not());
    // One of another run: the one-layer GPT-2 trace was recorded without it.
    let gpt2 =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/gpt2_1layer_cpu_seq16.json.gz");
    sequence(&gpt2, &bloom_tiny_et_pair().1, &out)
        .code(2)
        .stderr(predicate::str::contains("bloom_tiny_cpu.et.json.gz"))
        .stderr(predicate::str::contains("does not belong to"));
    assert!(!out.join("sequence.json").exists());
}

/// PARAM's 2023 linear pair records no record-function id in its Kineto trace, nor any input
/// shape: the ET links by op order and shapes and gives the ops their inputs, the command says
/// so, and the ET's iteration (not the whole 40-iteration window) re-runs, every op of it
/// rebuilt, each GPU launch's op wired to its node: the model's data flow, planned by the ET's
/// lifetimes, within the budget.
#[test]
fn a_pair_without_record_function_ids_links_by_op_order_and_re_runs() {
    let dir = tempfile::tempdir().unwrap();
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/traces/et");
    sequence(
        &shared.join("linear_kineto.json.gz"),
        &shared.join("linear_et.json.gz"),
        dir.path(),
    )
    .success()
    .stderr(predicate::str::contains(
        "linear_et.json.gz: 710 of 37078 ops linked by op order and shapes (the Kineto trace \
         records no record-function id): in step window, 710 of the Execution Trace's 710 \
         operators matched (0 not), 0 of the 710 Kineto ops between the first and the last \
         match unmatched",
    ))
    .stderr(predicate::str::contains(
        "input shapes, dtypes and values taken from the Execution Trace (the Kineto trace \
         recorded none) for 710 linked ops and 26980 ops of 38 iterations that repeat its own",
    ));
    let rerun: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("sequence.json")).unwrap()).unwrap();
    assert_eq!(rerun["step"], "the Execution Trace's iteration");
    let entries = rerun["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 219, "the iteration's launching ops");
    assert!(
        entries.iter().all(|e| e["status"] == "ok"),
        "every op rebuilt from the ET's inputs"
    );
    assert_eq!(rerun["data_flow"], true);
    let flow = &rerun["flow"];
    assert_eq!(flow["linked_entries"], 219, "{flow}");
    // Every input the ET says flows reads its producer's output. A GPU trace's step has no
    // entry for the view ops between its launches (they launch nothing): the bias gradients
    // (each `sum` of a layer's gradient, `[1, 1024]`) reach their `add_` through a `view` to
    // `[1024]`, the weight's `mm` reads the gradient through a `t`, the weight gradient
    // reaches its `add_` through a `t`; the reader applies them to the producer's output.
    // nll_loss_backward reads nll_loss_forward's second return (its total weight). None reads
    // a stale producer whose ids the ET reused: before the ops between were followed, 18 bias
    // gradients found an earlier layer's sum.
    let (flowing, viewed, fallbacks) = (
        flow["flowing_inputs"].as_u64().unwrap(),
        flow["viewed_inputs"].as_u64().unwrap(),
        flow["fallbacks"].as_u64().unwrap(),
    );
    assert!(flowing >= 280 && viewed >= 63 && fallbacks == 0, "{flow}");
    assert!(
        rerun["memory"]["liveness"]["external_tensors"]
            .as_u64()
            .unwrap()
            > 0
    );
    let memory = &rerun["memory"];
    let (planned, measured) = (
        memory["planned_peak_bytes"].as_u64().unwrap(),
        memory["measured_peak_bytes"].as_u64().unwrap(),
    );
    assert!(planned > 0 && measured <= planned + planned / 5, "{memory}");
    // The Kineto trace's other pair member is another model: refused naming both files.
    sequence(
        &shared.join("resnet_kineto.json.gz"),
        &shared.join("resnet_et.json.gz"),
        dir.path(),
    )
    .code(2)
    .stderr(predicate::str::contains(
        "resnet_et.json.gz does not belong to",
    ))
    .stderr(predicate::str::contains("resnet_kineto.json.gz"))
    .stderr(predicate::str::contains("at least 80 % of both must"));
}
