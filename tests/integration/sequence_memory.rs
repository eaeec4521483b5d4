//! `replay sequence --memory-budget`: the step's memory planned before anything is allocated,
//! on the H100 BERT trace re-run on this CPU, and the budgets it refuses (exit 2).

use std::path::Path;

use crate::common;

use common::{replay, shared_traces};
use predicates::prelude::*;

fn sequence(trace: &Path, out: &Path, budget: &str) -> assert_cmd::assert::Assert {
    replay()
        .args(["sequence", "--device", "cpu", "--quiet", "--max-time", "1"])
        .args(["--min-samples", "2", "--memory-budget", budget, "--trace"])
        .arg(trace)
        .arg("--output-dir")
        .arg(out)
        .assert()
}

#[test]
fn the_plan_shares_inputs_and_is_recorded_with_the_measured_peak() {
    let trace = shared_traces().join("h100_bert_small_infer.json.gz");
    let dir = tempfile::tempdir().unwrap();
    sequence(&trace, dir.path(), "8G")
        .success()
        .stdout(predicate::str::contains("memory: planned peak"));
    let rerun: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("sequence.json")).unwrap()).unwrap();
    let memory = &rerun["memory"];
    let planned = memory["planned_peak_bytes"].as_u64().unwrap();
    let unshared = memory["unshared_bytes"].as_u64().unwrap();
    assert_eq!(memory["budget_bytes"].as_u64(), Some(8 << 30));
    assert_eq!(memory["budget_from"], "--memory-budget");
    assert_eq!(memory["sharing"], "activations");
    // Inputs of one size and dtype share: fewer bytes than every op with its own.
    assert!(planned > 0 && planned < unshared, "{memory}");
    assert!(memory["shared_requests"].as_u64().unwrap() > 0, "{memory}");
    assert!(memory["oversized"].as_array().unwrap().is_empty());
    // Measured by the counting allocator. Every op ran, so every planned buffer was
    // allocated: once built, the ops hold the plan's bytes and at most what the replayers
    // asked for outside it (no op keeps its output without data flow); the peak adds the
    // running op's outputs and workspace on top.
    let held = memory["measured_held_bytes"].as_u64().unwrap();
    let unplanned = memory["unplanned_bytes"].as_u64().unwrap();
    let measured = memory["measured_peak_bytes"].as_u64().unwrap();
    assert!(held >= planned, "{memory}");
    assert!(held <= planned + unplanned, "{memory}");
    // Flash attention has no CPU kernel: the replay calls the enclosing
    // scaled_dot_product_attention, and the plan planned that op's inputs, so nothing was
    // asked for outside it.
    assert_eq!(unplanned, 0, "{memory}");
    assert!(measured >= held, "{memory}");
    let entries = rerun["entries"].as_array().unwrap();
    assert!(entries.iter().all(|e| e["status"] == "ok"), "every op ran");
}

#[test]
fn a_budget_that_is_no_size_or_below_the_largest_op_is_refused_naming_the_flag() {
    let trace = shared_traces().join("h100_bert_small_infer.json.gz");
    let dir = tempfile::tempdir().unwrap();
    sequence(&trace, dir.path(), "twelve")
        .code(2)
        .stderr(predicate::str::contains("--memory-budget"));
    sequence(&trace, dir.path(), "1K")
        .code(2)
        .stderr(predicate::str::contains("--memory-budget"))
        .stderr(predicate::str::contains("below the largest op of the step"));
    assert!(
        !dir.path().join("sequence.json").exists(),
        "refused before running"
    );
}

#[test]
fn with_an_execution_trace_outputs_live_until_their_last_reader_and_the_peak_stays_near_the_plan() {
    let (trace, et) = common::bloom_tiny_et_pair();
    let dir = tempfile::tempdir().unwrap();
    replay()
        .args([
            "sequence",
            "--device",
            "cpu",
            "--max-time",
            "1",
            "--min-samples",
            "2",
        ])
        .args(["--memory-budget", "8G", "--trace"])
        .arg(&trace)
        .arg("--execution-trace")
        .arg(&et)
        .arg("--output-dir")
        .arg(dir.path())
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "memory plan, the Execution Trace's liveness",
        ))
        .stdout(predicate::str::contains(
            "memory from the Execution Trace's liveness",
        ));
    let rerun: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("sequence.json")).unwrap()).unwrap();
    let memory = &rerun["memory"];
    let flow = &memory["liveness"];
    let live = flow["live_peak_bytes"].as_u64().unwrap();
    // Alive at once, at their most, far fewer outputs than the step makes.
    assert!(
        live > 0 && live < flow["outputs_bytes"].as_u64().unwrap(),
        "{flow}"
    );
    assert!(flow["external_tensors"].as_u64().unwrap() > 10, "{flow}");
    assert!(flow["flowing_requests"].as_u64().unwrap() > 100, "{flow}");
    // Every output a later op reads is let go by its last reader.
    let counts = &rerun["flow"];
    assert!(
        counts["released_after_last_reader"].as_u64().unwrap() > 50,
        "{counts}"
    );
    assert_eq!(counts["fallbacks"], 0, "{counts}");
    // Measured by the counting allocator: once built, the ops hold no more than the plan's
    // buffers (no output is held: each was let go by its last reader); the peak, with the
    // outputs alive and each op's workspace, stays within 20 % of the plan (the goal).
    let planned = memory["planned_peak_bytes"].as_u64().unwrap();
    let held = memory["measured_held_bytes"].as_u64().unwrap();
    let measured = memory["measured_peak_bytes"].as_u64().unwrap();
    assert_eq!(memory["unplanned_bytes"], 0, "{memory}");
    assert!(held <= planned, "{memory}");
    assert!((measured as f64) <= planned as f64 * 1.2, "{memory}");
    assert!(rerun["entries"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["status"] == "ok"));
}
