//! `replay isolated --profile`: a kernel that cannot be replayed (a Triton kernel of a real A100
//! trace) is predicted by the profile's roofline instead, and says so.

use crate::common;

use common::{classify_shared, replay};

#[test]
fn an_unreplayable_kernel_is_estimated_by_the_profiles_roofline() {
    let dir = tempfile::tempdir().unwrap();
    let sigs = dir.path().join("sigs.json");
    classify_shared("a100_triton_example.json.gz", &sigs);
    let out = dir.path().join("iso");
    let profile = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("profiles/a100_sxm4_40gb_datasheet.json");
    replay()
        .args([
            "isolated",
            "--device",
            "cpu",
            "--max-time-per-kernel",
            "0.02",
            "-q",
            "--kernels",
        ])
        .arg(&sigs)
        .arg("--profile")
        .arg(&profile)
        .arg("--output-dir")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "estimated by the roofline of --profile",
        ));
    let results: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("isolated.json")).unwrap()).unwrap();
    let estimated: Vec<&serde_json::Value> = results["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "estimated")
        .collect();
    assert!(!estimated.is_empty(), "{results:#}");
    for r in estimated {
        let roofline = &r["roofline"];
        let us = roofline["us"].as_f64().unwrap();
        assert_eq!(r["predicted_us"].as_f64().unwrap(), us);
        // Memory-bound on the datasheet's 1555 GB/s: bytes / bandwidth.
        let bytes = roofline["bytes"].as_f64().unwrap();
        assert!((roofline["memory_us"].as_f64().unwrap() - bytes / 1555.0 / 1e3).abs() < 1e-9);
        assert!(r["method"].as_str().unwrap().contains("roofline estimate"));
        assert!(
            r["reason"].is_string(),
            "why it was not replayed stays: {r}"
        );
    }
    let csv = std::fs::read_to_string(out.join("isolated.csv")).unwrap();
    assert!(csv.contains(",estimated,"), "{csv}");
}
