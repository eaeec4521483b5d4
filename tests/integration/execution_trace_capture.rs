//! `replay capture --execution-trace` end to end through the real binary: bloom-tiny of the
//! zoo on the CPU, its PyTorch Execution Trace beside the trace and linked to it by
//! record-function ids (copied from the ET's own step onto the kept one); `classify --execution-trace` records each op's exact overload, and
//! `isolated` calls those overloads and draws index tensors from the recorded value ranges
//! (issue 31, part 4). `isolated --trace --execution-trace` and `compare --execution-trace` on
//! the checked-in bloom-tiny pair and on Execution Traces that are not the trace's.

use crate::common;

use std::path::{Path, PathBuf};

use common::replay;
use predicates::prelude::*;

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_captured_execution_trace_links_and_names_the_overloads_isolated_calls() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    let et = dir.path().join("t.et.json");
    replay()
        .args([
            "capture",
            "--zoo",
            "bloom-tiny",
            "--device",
            "cpu",
            "--warmup",
            "1",
            "--candidates",
            "2",
            "--execution-trace",
            "--out",
        ])
        .arg(&trace)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "t.et.json  execution trace of one more step of the same input",
        ));
    // The kept step was profiled without the observer (it slows every op several times over)
    // and carries the ids of the ET's step, copied op for op.
    let kept = read_json(&trace);
    let note = &kept["replayExecutionTrace"];
    assert_eq!(note["file"], "t.et.json");
    assert!(note["ids_copied"].as_u64() >= Some(100), "{note}");
    let doc = read_json(&et);
    assert!(
        doc["schema"]
            .as_str()
            .is_some_and(|s| s.starts_with("1.1.")),
        "{}",
        doc["schema"]
    );

    let signatures = dir.path().join("s.json");
    replay()
        .args(["classify", "--trace"])
        .arg(&trace)
        .arg("--execution-trace")
        .arg(&et)
        .arg("--out")
        .arg(&signatures)
        .assert()
        .success()
        .stdout(predicate::str::contains("ops linked by record-function id"));
    let file = read_json(&signatures);
    let source = &file["source"]["execution_trace"];
    let number = |key: &str| source[key].as_u64().unwrap();
    // Every op the Kineto trace recorded in the step carries an id, and (nearly) every id
    // names an ET node of the same name.
    assert!(
        number("kineto_ops_with_id") * 10 >= number("kineto_ops") * 9,
        "{source}"
    );
    assert!(
        number("linked_ops") * 10 >= number("kineto_ops_with_id") * 9,
        "{source}"
    );
    assert!(number("signatures_with_op") >= 20, "{source}");
    assert!(
        number("signatures_with_schema") * 10 >= number("signatures_with_op") * 9,
        "{source}"
    );
    assert!(
        number("invocations_linked") * 10 >= number("invocations") * 9,
        "{source}"
    );
    // The observer recorded each integer input's range: at least the token embedding's ids.
    assert!(number("signatures_with_ranges") >= 1, "{source}");
    for signature in file["signatures"].as_array().unwrap() {
        let op = &signature["op"];
        let Some(schema) = op["schema"].as_str() else {
            continue;
        };
        // The schema is the op's own, and its arguments' values are recorded beside it.
        let name = op["name"].as_str().unwrap();
        assert!(
            schema.starts_with(&format!("{name}(")) || schema.starts_with(&format!("{name}.")),
            "{name}: {schema}"
        );
        assert!(op["exact_inputs"].is_array(), "{signature}");
    }

    let results = dir.path().join("results");
    replay()
        .args([
            "isolated",
            "--device",
            "cpu",
            "--max-time",
            "0.02",
            "--rounds",
            "1",
            "--quiet",
            "--kernels",
        ])
        .arg(&signatures)
        .arg("--output-dir")
        .arg(&results)
        .assert()
        .success();
    let rows = read_json(&results.join("isolated.json"))["results"]
        .as_array()
        .unwrap()
        .clone();
    let tier3: Vec<&serde_json::Value> = rows.iter().filter(|r| r["tier"] == 3).collect();
    let exact = tier3
        .iter()
        .filter(|r| {
            r["method"]
                .as_str()
                .is_some_and(|m| m.contains("the execution trace's exact overload"))
        })
        .count();
    assert!(!tier3.is_empty());
    assert!(
        exact * 10 >= tier3.len() * 9,
        "{exact} of {} tier-3 rows: {tier3:?}",
        tier3.len()
    );
}

/// `replay isolated --trace T --execution-trace ET` with a short budget into `out`.
fn isolated_with(trace: &Path, et: &Path, out: &Path) -> assert_cmd::assert::Assert {
    replay()
        .args([
            "isolated",
            "--device",
            "cpu",
            "--max-time",
            "0.02",
            "--rounds",
            "1",
        ])
        .arg("--trace")
        .arg(trace)
        .arg("--execution-trace")
        .arg(et)
        .arg("--output-dir")
        .arg(out)
        .assert()
}

#[test]
fn isolated_classifies_a_trace_with_its_execution_trace_and_draws_indices_from_its_ranges() {
    let (trace, et) = crate::common::bloom_tiny_et_pair();
    let dir = tempfile::tempdir().unwrap();
    isolated_with(&trace, &et, dir.path())
        .success()
        .stderr(predicate::str::contains(
            "357 of 357 ops linked by record-function id",
        ));
    // The signatures it classified are kept beside the results, with the ET's link.
    let file = read_json(&dir.path().join("signatures.json"));
    let source = &file["source"]["execution_trace"];
    assert_eq!(source["linked_ops"], source["kineto_ops"], "{source}");
    let embedding = file["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["op"]["name"] == "aten::embedding")
        .unwrap();
    let range = &embedding["op"]["input_ranges"][0];
    assert_eq!(range["input"], 1, "{embedding}");
    let rows = read_json(&dir.path().join("isolated.json"))["results"]
        .as_array()
        .unwrap()
        .clone();
    let row = rows.iter().find(|r| r["id"] == embedding["id"]).unwrap();
    let method = row["method"].as_str().unwrap();
    assert!(
        method.contains("the execution trace's exact overload")
            && method.contains("1 tensors drawn from the recorded value ranges"),
        "{row}"
    );
    assert_eq!(row["status"], "ok", "{row}");
}

#[test]
fn an_execution_trace_that_is_not_the_traces_exits_2_naming_it() {
    let (trace, _) = crate::common::bloom_tiny_et_pair();
    let dir = tempfile::tempdir().unwrap();
    // Another run's ET (the shared linear stack's): no record-function id in common.
    let other =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/traces/et/linear_et.json.gz");
    isolated_with(&trace, &other, dir.path())
        .code(2)
        .stderr(predicate::str::contains(
            "linear_et.json.gz does not belong to",
        ))
        .stderr(predicate::str::contains("bloom_tiny_cpu.json.gz"));
    let missing = dir.path().join("missing.et.json");
    isolated_with(&trace, &missing, dir.path())
        .code(2)
        .stderr(predicate::str::contains(missing.display().to_string()))
        .stderr(predicate::str::contains("cannot read file"));
    assert!(
        !dir.path().join("isolated.json").exists(),
        "nothing is replayed with a refused ET"
    );
    // compare captures its own trace: a given ET without --trace would belong to none.
    replay()
        .args(["compare", "--model", "m.pt", "--execution-trace", "e.et.json", "--output-dir"])
        .arg(dir.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "e.et.json: --execution-trace FILE is the Execution Trace of the trace given with --trace",
        ));
}

/// `compare --execution-trace` captures the ET with its own trace, classifies and replays with
/// it, and says so in its report (bloom-tiny, a short budget: about 15 s on this VM).
#[test]
fn compare_captures_and_uses_an_execution_trace() {
    let (_model_dir, model) = common::exported_bloom_tiny();
    let out = tempfile::tempdir().unwrap();
    replay()
        .args(["compare", "--device", "cpu", "--runs", "4", "--warmup", "1"])
        .args([
            "--max-time",
            "0.02",
            "--rounds",
            "1",
            "--no-sequence",
            "--quiet",
        ])
        .arg("--model")
        .arg(&model)
        .arg("--execution-trace")
        .arg("--output-dir")
        .arg(out.path())
        .assert()
        .success()
        .stdout(predicate::str::contains("trace.et.json (schema 1.1."));
    let report = read_json(&out.path().join("comparison_report.json"));
    let et = &report["execution_trace"];
    assert!(
        et["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("trace.et.json")),
        "{et}"
    );
    assert_eq!(et["linked_ops"], et["kineto_ops"], "{et}");
    assert!(et["signatures_with_ranges"].as_u64() >= Some(1), "{et}");
    assert!(out.path().join("trace.et.json").exists());
}
