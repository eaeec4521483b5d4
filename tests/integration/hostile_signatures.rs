//! Hostile signature files (issue 34): a signature file can ask for anything; each hostile
//! signature ends with a status and a reason, and the run goes on to the plain one after it.
//! A 10^12-element input is `oom` (refused before allocating: over the memory replay allows
//! itself, `--max-memory`), a negative size `failed`, a stride that points outside any
//! storage and a negative stride `failed`, a dtype that does not exist `unsupported`, each with
//! a reason; an op that runs past `--op-timeout` ends `failed: timed out` and the run goes on
//! in a fresh process resumed from the journal.

use std::path::Path;

use serde_json::{json, Value};

use super::common::{bloom_tiny_et_pair, quick_isolated as isolated, replay};

/// The bloom-tiny CPU step's signatures, classified by the built binary.
fn bloom_tiny(dir: &Path) -> Value {
    let sigs = dir.join("bloom_tiny.json");
    replay()
        .args(["classify", "--trace"])
        .arg(bloom_tiny_et_pair().0)
        .arg("--out")
        .arg(&sigs)
        .assert()
        .success();
    serde_json::from_slice(&std::fs::read(sigs).unwrap()).unwrap()
}

/// A copy of the first signature of op `name`, with id `id` and its first input changed by
/// `edit` (its `dims`, `strides` and `types` lists).
fn variant(file: &Value, name: &str, id: &str, edit: impl Fn(&mut Value)) -> Value {
    let mut s = file["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("bloom-tiny has {name}"))
        .clone();
    s["id"] = json!(id);
    edit(&mut s["inputs"]);
    s
}

/// A copy of the first `aten::bmm` (tier 2) with id `id` and its GEMM description changed.
fn gemm(file: &Value, id: &str, edit: impl Fn(&mut Value)) -> Value {
    let mut s = variant(file, "aten::bmm", id, |_| {});
    edit(&mut s["gemm"]);
    s
}

fn write(dir: &Path, file: &Value, signatures: Vec<Value>) -> std::path::PathBuf {
    let mut hostile = file.clone();
    hostile["signatures"] = Value::Array(signatures);
    let path = dir.join("hostile.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&hostile).unwrap()).unwrap();
    path
}

/// Each result's (id, status, reason).
fn statuses(out: &Path) -> Vec<(String, String, String)> {
    let json: Value =
        serde_json::from_slice(&std::fs::read(out.join("isolated.json")).unwrap()).unwrap();
    assert_eq!(json["complete"], true);
    json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["id"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
                r["reason"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn hostile_sizes_strides_and_dtypes_end_with_a_reason_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let file = bloom_tiny(dir.path());
    let sigs = write(
        dir.path(),
        &file,
        vec![
            variant(&file, "aten::tanh", "huge", |i| {
                i["dims"][0] = json!([1_000_000_000_000i64]);
                i["strides"][0] = json!([1]);
            }),
            variant(&file, "aten::tanh", "negative-size", |i| {
                i["dims"][0] = json!([-5]);
                i["strides"][0] = json!([1]);
            }),
            variant(&file, "aten::tanh", "stride-overflow", |i| {
                i["dims"][0] = json!([4, 3]);
                i["strides"][0] = json!([1i64 << 62, 1]);
            }),
            variant(&file, "aten::tanh", "stride-negative", |i| {
                i["dims"][0] = json!([4]);
                i["strides"][0] = json!([-1]);
            }),
            variant(&file, "aten::tanh", "dtype", |i| {
                i["types"][0] = json!("float1024")
            }),
            gemm(&file, "gemm-stride", |g| {
                g["lda"] = json!(1i64 << 62);
                g["stride_a"] = json!(1i64 << 62);
            }),
            gemm(&file, "gemm-dtype", |g| g["dtype_a"] = json!("complex9000")),
            variant(&file, "aten::tanh", "plain", |_| {}),
        ],
    );
    let out = dir.path().join("out");
    isolated(&sigs, &out, &["--max-memory", "4G"]).success();
    let got = statuses(&out);
    let status = |id: &str| {
        got.iter()
            .find(|(i, _, _)| i == id)
            .unwrap_or_else(|| panic!("{id} in {got:?}"))
            .clone()
    };
    let (_, s, reason) = status("huge");
    assert_eq!(s, "oom", "{reason}");
    assert!(
        reason.contains("over the memory replay allows itself"),
        "{reason}"
    );
    for (id, words) in [
        ("negative-size", "negative size"),
        ("stride-overflow", "point outside any storage"),
        ("stride-negative", "negative stride"),
        ("gemm-stride", "overflow"),
    ] {
        let (_, s, reason) = status(id);
        assert_eq!(s, "failed", "{id}: {reason}");
        assert!(reason.contains(words), "{id}: {reason}");
    }
    // A dtype no profiler writes: no overload can take it, and the reason names it.
    for (id, dtype) in [("dtype", "float1024"), ("gemm-dtype", "complex9000")] {
        let (_, s, reason) = status(id);
        assert_eq!(s, "unsupported", "{id}: {reason}");
        assert!(reason.contains(dtype), "{id}: {reason}");
    }
    assert_eq!(status("plain").1, "ok", "{got:?}");
}

#[test]
fn an_op_past_op_timeout_ends_failed_timed_out_and_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let file = bloom_tiny(dir.path());
    // A batched 3000^3 GEMM: seconds per call on a CPU, far past a 1 s watchdog.
    let n = 3000i64;
    let mut slow = gemm(&file, "slow", |g| {
        for key in ["m", "n", "k", "lda", "ldb", "ldc"] {
            g[key] = json!(n);
        }
        g["batch"] = json!(4);
        for key in ["stride_a", "stride_b", "stride_c"] {
            g[key] = json!(n * n);
        }
    });
    slow["inputs"]["dims"] = json!([[4, n, n], [4, n, n]]);
    slow["inputs"]["strides"] = json!([[n * n, n, 1], [n * n, n, 1]]);
    slow["inputs"]["types"] = json!(["float", "float"]);
    slow["inputs"]["concrete"] = json!(["", ""]);
    let sigs = write(
        dir.path(),
        &file,
        vec![
            variant(&file, "aten::tanh", "before", |_| {}),
            slow,
            variant(&file, "aten::tanh", "after", |_| {}),
        ],
    );
    let out = dir.path().join("out");
    isolated(&sigs, &out, &["--op-timeout", "1"])
        .success()
        .stderr(predicates::str::contains(
            "slow (round 1) timed out after 1 s",
        ));
    let got = statuses(&out);
    let ids: Vec<(&str, &str)> = got
        .iter()
        .map(|(i, s, _)| (i.as_str(), s.as_str()))
        .collect();
    assert_eq!(ids, [("before", "ok"), ("slow", "failed"), ("after", "ok")]);
    assert!(got[1].2.starts_with("timed out after 1 s"), "{}", got[1].2);
    replay()
        .args(["isolated", "--kernels"])
        .arg(&sigs)
        .args(["--op-timeout", "-1"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "not a positive number of seconds",
        ));
}
