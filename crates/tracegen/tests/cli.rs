//! `replay-tracegen` as a user runs it: valid JSON (serde_json) with fresh ids and
//! increasing steps, deterministic for a seed, `--size` ending at the step boundary at or
//! past the size, gzip in several members that inflate to the plain bytes, ranks.

use std::collections::HashSet;
use std::io::Read;

use assert_cmd::Command;
use serde_json::Value;

fn tracegen() -> Command {
    Command::cargo_bin("replay-tracegen").expect("the replay-tracegen binary")
}

fn generate(args: &[&str]) -> Vec<u8> {
    let out = tracegen()
        .args(args)
        .args(["--out", "-", "--quiet"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn events(doc: &Value) -> &Vec<Value> {
    doc["traceEvents"].as_array().expect("traceEvents")
}

fn args_u64(event: &Value, key: &str) -> Option<u64> {
    event["args"][key].as_u64()
}

#[test]
fn a_20_mb_trace_is_valid_json_with_fresh_ids_and_ordered_steps() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("t.json");
    let out = tracegen()
        .args(["--size", "20M", "--seed", "3", "--out"])
        .arg(&path)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&path).expect("written");
    let doc: Value = serde_json::from_slice(&bytes).expect("valid JSON by serde_json");
    assert_eq!(doc["schemaVersion"], 1);
    assert!(doc["baseTimeNanoseconds"].as_u64().is_some());
    let events = events(&doc);

    // Steps: ProfilerStep#1, #2, ... in order, each after the last.
    let steps: Vec<&Value> = events
        .iter()
        .filter(|e| {
            e["cat"] == "user_annotation"
                && e["name"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("ProfilerStep#")
        })
        .collect();
    assert!(steps.len() >= 10, "{} steps in 20 MB", steps.len());
    for (i, pair) in steps.windows(2).enumerate() {
        assert_eq!(pair[0]["name"], format!("ProfilerStep#{}", i + 1));
        let end = pair[0]["ts"].as_f64().unwrap() + pair[0]["dur"].as_f64().unwrap();
        assert!(
            pair[1]["ts"].as_f64().unwrap() > end,
            "step {} starts before step {} ends",
            i + 2,
            i + 1
        );
    }

    // Fresh ids: every runtime call's correlation and every op's External id once only;
    // every GPU activity's correlation is a runtime call's, and its External id an op's.
    let mut correlations = HashSet::new();
    let mut externals = HashSet::new();
    let mut ev_idx = HashSet::new();
    for e in events {
        match e["cat"].as_str() {
            Some("cuda_runtime") => assert!(
                correlations.insert(args_u64(e, "correlation").unwrap()),
                "{e}"
            ),
            Some("cpu_op") | Some("user_annotation") => {
                assert!(externals.insert(args_u64(e, "External id").unwrap()), "{e}");
                assert!(ev_idx.insert(args_u64(e, "Ev Idx").unwrap()), "{e}");
            }
            _ => {}
        }
    }
    let mut kinds = HashSet::new();
    let mut streams = HashSet::new();
    for e in events {
        if let Some(cat @ ("kernel" | "gpu_memcpy" | "gpu_memset")) = e["cat"].as_str() {
            kinds.insert(cat.to_owned());
            streams.insert(args_u64(e, "stream").unwrap());
            assert!(
                correlations.contains(&args_u64(e, "correlation").unwrap()),
                "{e}"
            );
            assert!(
                externals.contains(&args_u64(e, "External id").unwrap()),
                "{e}"
            );
            if cat == "kernel" {
                assert_eq!(e["args"]["grid"].as_array().map(Vec::len), Some(3), "{e}");
            }
        }
    }
    assert_eq!(kinds.len(), 3, "kernels, memcpys and memsets: {kinds:?}");
    assert!(streams.len() >= 2, "several streams: {streams:?}");
    // Ops carry shapes and dtypes.
    let addmm = events
        .iter()
        .find(|e| e["name"] == "aten::addmm")
        .expect("an addmm");
    assert_eq!(
        addmm["args"]["Input Dims"][1],
        serde_json::json!([8192, 2048])
    );
    assert_eq!(addmm["args"]["Input type"][0], "c10::BFloat16");
}

#[test]
fn size_ends_at_the_step_boundary_at_or_past_it() {
    let one = generate(&["--steps", "1"]).len() as u64;
    let two = generate(&["--steps", "2"]).len() as u64;
    let step = two - one;
    for size in [5_000_000u64, 9_000_000] {
        let bytes = generate(&["--size", &size.to_string()]).len() as u64;
        assert!(bytes >= size, "{bytes} < {size}");
        assert!(
            bytes < size + step + 4096,
            "{bytes} goes more than a step past {size}"
        );
    }
}

#[test]
fn a_seed_gives_the_same_bytes_and_another_seed_other_durations() {
    let a = generate(&["--steps", "3", "--seed", "11"]);
    let b = generate(&["--steps", "3", "--seed", "11"]);
    let c = generate(&["--steps", "3", "--seed", "12"]);
    assert!(a == b, "the same seed gave different traces");
    assert!(a != c, "another seed gave the same trace");
}

#[test]
fn gzip_writes_several_members_that_inflate_to_the_plain_trace() {
    let plain = generate(&["--steps", "4", "--seed", "5"]);
    let gz = generate(&[
        "--steps",
        "4",
        "--seed",
        "5",
        "--gzip",
        "--gzip-member",
        "1M",
    ]);
    let mut all = Vec::new();
    flate2::read::MultiGzDecoder::new(&gz[..])
        .read_to_end(&mut all)
        .expect("inflates");
    assert!(all == plain, "the gzipped trace inflates to other bytes");
    let mut first = Vec::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_end(&mut first)
        .expect("first member");
    assert!(first.len() < all.len(), "one member only");
}

#[test]
fn ranks_write_distributed_info_and_all_reduces_and_a_rank_outside_the_world_is_refused() {
    let bytes = generate(&["--steps", "1", "--ranks", "8", "--rank", "5"]);
    let doc: Value = serde_json::from_slice(&bytes).expect("valid JSON");
    assert_eq!(doc["distributedInfo"]["rank"], 5);
    assert_eq!(doc["distributedInfo"]["world_size"], 8);
    let nccl: Vec<&Value> = events(&doc)
        .iter()
        .filter(|e| {
            e["cat"] == "kernel"
                && e["name"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with("ncclDevKernel_AllReduce")
        })
        .collect();
    assert!(!nccl.is_empty());
    assert!(nccl
        .iter()
        .all(|e| e["args"]["stream"] == 40 && e["args"]["Group size"] == 8));
    let single = generate(&["--steps", "1"]);
    let doc: Value = serde_json::from_slice(&single).expect("valid JSON");
    assert!(doc.get("distributedInfo").is_none());

    let out = tracegen()
        .args(["--ranks", "2", "--rank", "2", "--steps", "1"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--rank 2 is not below --ranks 2"));
    let out = tracegen().args(["--size", "lots"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_kineto_layout_writes_every_host_op_first_and_holds_the_same_events_as_the_steps_layout() {
    let kineto: Value =
        serde_json::from_slice(&generate(&["--steps", "3", "--seed", "2"])).expect("valid JSON");
    let steps: Value = serde_json::from_slice(&generate(&[
        "--steps", "3", "--seed", "2", "--layout", "steps",
    ]))
    .expect("valid JSON");
    let sorted = |doc: &Value| {
        let mut all: Vec<String> = events(doc).iter().map(Value::to_string).collect();
        all.sort();
        all
    };
    assert!(
        sorted(&kineto) == sorted(&steps),
        "the layouts hold different events"
    );
    let cats: Vec<&str> = events(&kineto)
        .iter()
        .map(|e| e["cat"].as_str().unwrap_or(""))
        .collect();
    let first_runtime = cats
        .iter()
        .position(|c| *c == "cuda_runtime")
        .expect("runtime calls");
    let last_op = cats.iter().rposition(|c| *c == "cpu_op").expect("ops");
    assert!(
        last_op < first_runtime,
        "an op after the first runtime call in the kineto layout"
    );
    // Each runtime call that launched something is followed by its flow and its activity.
    let runtime = &events(&kineto)[first_runtime];
    let next = &events(&kineto)[first_runtime + 1];
    assert_eq!(next["ph"], "s");
    assert_eq!(next["id"], runtime["args"]["correlation"]);
    let cats_steps: Vec<&str> = events(&steps)
        .iter()
        .map(|e| e["cat"].as_str().unwrap_or(""))
        .collect();
    let first_runtime = cats_steps
        .iter()
        .position(|c| *c == "cuda_runtime")
        .expect("runtime calls");
    let last_op = cats_steps
        .iter()
        .rposition(|c| *c == "cpu_op")
        .expect("ops");
    assert!(
        last_op > first_runtime,
        "the steps layout interleaves ops and calls"
    );
}
