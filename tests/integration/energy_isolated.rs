//! `replay isolated --energy` with the faulty meter of the core's energy probe tests
//! (`crates/core/tests/torch_free/energy_probes.rs`, which tests the probes themselves):
//! `isolated` runs in `replay-torch`, which this package builds.

use std::fs;
use std::path::PathBuf;

use crate::common;

/// A meter that answers its first `AFTER` reads (1 J each, 0.1 ms update period), then
/// fails as its `MODE` says (`die`: exit 3 with a message).
const FAULTY_METER: &str = include_str!("../../crates/core/tests/torch_free/faulty_meter.py");

/// The repository root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The project's Python (`make test` sets it up), else `python3`.
fn python() -> String {
    let venv = root().join(".venv/bin/python");
    if venv.exists() {
        venv.display().to_string()
    } else {
        "python3".to_string()
    }
}

/// `replay isolated --energy` with a meter that dies part-way: the run goes on, every
/// signature keeps its timing, the signatures measured before the meter died keep their
/// energy, and each later one says why it has none, naming the meter.
#[test]
fn isolated_keeps_what_it_measured_when_the_meter_dies() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let sigs = tmp.path().join("bert.json");
    common::replay()
        .args(["classify", "--trace"])
        .arg(common::shared_traces().join("h100_bert_small_infer.json.gz"))
        .arg("--out")
        .arg(&sigs)
        .assert()
        .success();
    let meter = tmp.path().join("faulty_meter.py");
    fs::write(&meter, FAULTY_METER).expect("write the meter");
    // One read to start, then 6 per replay unit (3 windows): the meter dies on the 14th
    // read, opening the first window of the third unit.
    let results = tmp.path().join("results");
    let output = common::replay()
        .args([
            "isolated",
            "--device",
            "cpu",
            "--rounds",
            "1",
            "--max-time-per-kernel",
            "0.01",
            "--quiet",
            "--kernels",
        ])
        .arg(&sigs)
        .arg("--output-dir")
        .arg(&results)
        .arg("--energy")
        .arg(format!("cmd:{} {} die 13", python(), meter.display()))
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "energy failed: energy meter program",
        ))
        .stdout(predicates::str::contains("lost the serial port"))
        .get_output()
        .clone();
    let json: serde_json::Value =
        serde_json::from_slice(&fs::read(results.join("isolated.json")).expect("isolated.json"))
            .expect("JSON");
    assert_eq!(json["complete"], true);
    let rows = json["results"].as_array().expect("results");
    assert_eq!(
        rows.len() as u64,
        json["signatures_total"].as_u64().unwrap_or(0)
    );
    let measured: Vec<&serde_json::Value> = rows
        .iter()
        .filter(|r| r["status"] == "ok" && r["replayed_as"] == r["id"])
        .collect();
    assert!(measured.len() > 3, "{} units measured", measured.len());
    let with_energy = rows
        .iter()
        .filter(|r| r["energy"]["Ok"].is_object())
        .count();
    assert!(
        std::str::from_utf8(&output.stdout).is_ok_and(|out| out.contains(&format!(
            "energy: measured for {with_energy} of {} signatures",
            rows.len()
        )))
    );
    for (index, row) in measured.iter().enumerate() {
        assert!(
            row["stats"]["median_us"].as_f64().unwrap_or(0.0) > 0.0,
            "{row}"
        );
        let energy = &row["energy"];
        match index {
            // Each of the first two units: 3 windows of 1 J (one read each way).
            0 | 1 => {
                let windows = energy["Ok"]["windows"].as_array().expect("windows");
                assert_eq!(windows.len(), 3, "{row}");
                for w in windows {
                    assert_eq!(w["busy"]["joules"], 1.0, "{row}");
                }
            }
            2 => {
                let error = energy["Err"].as_str().expect("an error");
                assert!(
                    error.contains("faulty_meter.py die 13' exited before answering")
                        && error.contains("lost the serial port"),
                    "{error}"
                );
            }
            _ => {
                let error = energy["Err"].as_str().expect("an error");
                assert!(
                    error.contains("faulty_meter.py die 13' is not read any more"),
                    "{error}"
                );
            }
        }
    }
}
