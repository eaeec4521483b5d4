//! `replay classify` then `replay isolated` on real traces, through the real binary.

use crate::common;

use common::{classify_shared, replay, shared_traces};
use predicates::prelude::*;

#[test]
fn classify_writes_a_signature_file_and_prints_the_tiers() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("bert.json");
    replay()
        .args(["classify", "--trace"])
        .arg(shared_traces().join("h100_bert_small_infer.json.gz"))
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("tier"))
        .stdout(predicate::str::contains("wrote"));
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert!(json["signatures"].as_array().unwrap().len() > 10);
}

#[test]
fn classify_rejects_bad_files_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in [
        ("empty.json", &b""[..]),
        ("bad.json", &b"{\"traceEvents\": [ {"[..]),
        ("list.json", &b"[1, 2, 3]"[..]),
        ("trunc.json.gz", &[0x1f, 0x8b, 0x08, 0x00, 0x00][..]),
    ] {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        replay()
            .args(["classify", "--trace"])
            .arg(&path)
            .arg("--out")
            .arg(dir.path().join("out.json"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(name))
            .stderr(predicate::str::contains("panicked").not());
    }
    assert!(
        !dir.path().join("out.json").exists(),
        "nothing written for bad input"
    );
}

#[test]
fn isolated_on_cpu_replays_bert_signatures_and_writes_json_and_csv() {
    let dir = tempfile::tempdir().unwrap();
    let sigs = dir.path().join("bert.json");
    classify_shared("h100_bert_small_infer.json.gz", &sigs);
    let results = dir.path().join("results");
    replay()
        .args([
            "isolated",
            "--device",
            "cpu",
            "--max-time-per-kernel",
            "0.03",
            "--rounds",
            "3",
            "--quiet",
            "--kernels",
        ])
        .arg(&sigs)
        .arg("--output-dir")
        .arg(&results)
        .assert()
        .success()
        .stdout(predicate::str::contains("coverage"));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(results.join("isolated.json")).unwrap()).unwrap();
    assert_eq!(json["complete"], true);
    let rows = json["results"].as_array().unwrap();
    assert_eq!(
        rows.len(),
        json["signatures_total"].as_u64().unwrap() as usize
    );
    assert_eq!(json["config"]["rounds"], 3);
    // Three interleaved rounds, pooled: every measured signature has samples from each (the
    // slowest hit the hard time cap of a 10 ms round, so only one per round is certain), and
    // the results stay in the file's order.
    let file: serde_json::Value = serde_json::from_slice(&std::fs::read(&sigs).unwrap()).unwrap();
    let file_ids: Vec<&str> = file["signatures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].as_str().unwrap())
        .collect();
    let row_ids: Vec<&str> = rows.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(row_ids, file_ids);
    for r in rows.iter().filter(|r| r["status"] == "ok") {
        assert_eq!(r["stats"]["rounds"], 3, "{r}");
        assert!(r["stats"]["samples"].as_u64().unwrap() >= 3, "{r}");
        // What timed it (on a GPU: CUDA events, behind the blocking kernel or not); no
        // blocking kernel on the CPU, so no timeout to count.
        assert_eq!(r["stats"]["timer"], "monotonic clock", "{r}");
        assert!(r["stats"].get("blocking_timeouts").is_none(), "{r}");
    }
    for tier in [2, 3] {
        assert!(
            rows.iter().any(|r| r["tier"] == tier
                && r["status"] == "ok"
                && r["stats"]["median_us"].as_f64().unwrap() > 0.0),
            "tier {tier} replayed ok on the CPU"
        );
    }
    let csv = std::fs::read_to_string(results.join("isolated.csv")).unwrap();
    assert!(csv.starts_with("id,tier,status,method"));
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let records: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(records.len(), rows.len());
    // The CSV carries the same medians as the JSON.
    for (record, row) in records.iter().zip(rows) {
        assert_eq!(&record[0], row["id"].as_str().unwrap());
        if row["status"] == "ok" {
            let median: f64 = record[10].parse().unwrap();
            assert_eq!(&record[20], "3", "rounds column");
            assert!((median - row["stats"]["median_us"].as_f64().unwrap()).abs() < 1e-6);
        }
    }
}

#[test]
fn isolated_rejects_a_file_that_is_not_a_signature_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope.json");
    std::fs::write(&path, b"{\"hello\": 1}").unwrap();
    replay()
        .args(["isolated", "--device", "cpu", "--kernels"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nope.json"))
        .stderr(predicate::str::contains("replay classify"));
}
