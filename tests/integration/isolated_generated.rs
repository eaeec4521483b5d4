//! `replay isolated` on a trace of compiled code: its generated kernels (tier 4) end
//! `unsupported` with the reason and the remedy, and a run that replayed nothing reports
//! coverage 0.0%, never -0.0% (issue 30, on the real A100 Triton trace).

use std::path::Path;

use crate::common;

use common::{classify_shared, replay};

/// `replay isolated --device cpu` of a signature file with a short budget: its printed summary
/// and its isolated.json.
fn isolated_on_cpu(sigs: &Path, out: &Path) -> (String, serde_json::Value) {
    let output = replay()
        .args([
            "isolated",
            "--device",
            "cpu",
            "--max-time-per-kernel",
            "0.02",
            "-q",
            "--kernels",
        ])
        .arg(sigs)
        .arg("--output-dir")
        .arg(out)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let results =
        serde_json::from_slice(&std::fs::read(out.join("isolated.json")).unwrap()).unwrap();
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        results,
    )
}

#[test]
fn a_triton_kernel_is_unsupported_with_its_remedy_and_coverage_is_zero() {
    let dir = tempfile::tempdir().unwrap();
    let sigs = dir.path().join("sigs.json");
    classify_shared("a100_triton_example.json.gz", &sigs);
    let (stdout, results) = isolated_on_cpu(&sigs, &dir.path().join("iso"));
    assert!(
        stdout.contains("coverage: 0.0% of the trace's time replayed"),
        "{stdout}"
    );
    assert!(!stdout.contains("-0.0"), "{stdout}");
    assert!(stdout.contains("1 unsupported"), "{stdout}");
    assert!(
        stdout.contains("uninstrumented compiled code"),
        "the unseen part of the compiled region is named: {stdout}"
    );
    let row = &results["results"][0];
    assert_eq!(row["tier"], 4);
    assert_eq!(row["status"], "unsupported");
    let reason = row["reason"].as_str().unwrap();
    assert!(
        reason.contains("generated kernels are replayed from the kept Inductor cache")
            && reason.contains("--inductor-cache DIR"),
        "{reason}"
    );
}

/// The H200 capture of bloom-tiny compiled (`crates/core/tests/data/compiled/h200_bloom_tiny`):
/// with its kept cache its ten Triton kernels are replayable signatures, and on the CPU each
/// ends `unsupported` saying a Triton kernel runs on CUDA only.
#[test]
fn the_triton_kernels_of_a_real_capture_need_cuda() {
    let capture = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("crates/core/tests/data/compiled/h200_bloom_tiny");
    let dir = tempfile::tempdir().unwrap();
    let sigs = dir.path().join("sigs.json");
    let output = replay()
        .args(["classify", "--trace"])
        .arg(capture.join("trace.json"))
        .arg("--out")
        .arg(&sigs)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let (_, results) = isolated_on_cpu(&sigs, &dir.path().join("iso"));
    let triton: Vec<&serde_json::Value> = results["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["tier"] == 4)
        .collect();
    assert_eq!(triton.len(), 10, "{results}");
    for row in triton {
        assert!(
            row["name"].as_str().unwrap().starts_with("triton_"),
            "{row}"
        );
        assert_eq!(row["status"], "unsupported", "{row}");
        let reason = row["reason"].as_str().unwrap();
        assert!(
            reason.contains("a Triton kernel runs on CUDA only")
                && reason.contains("--device cuda"),
            "{reason}"
        );
    }
}
