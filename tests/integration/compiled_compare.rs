//! `replay compare --compile` end to end through the real binary (issue 30, item 4): bloom-tiny
//! of the zoo compiled with torch.compile on the CPU, its generated and extern kernels replayed
//! alone, the compiled model timed whole in the capture's Python process (and a second one
//! after the isolated replay), and the report of
//! both predictions, the tiers (generated kernels their own line) and the coverage; and a zoo
//! name that does not exist.

use crate::common;
use crate::compiled_bloom_tiny;

use std::path::Path;

use common::replay;
use predicates::prelude::*;

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_compiled_zoo_model_is_predicted_from_its_kernels_and_timed_whole() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    // The capture that compare runs finds the Inductor cache of this process's earlier capture
    // of the same model beside its trace (`r/inductor/`), and compiles from it: what is asserted
    // here is the same warm or cold; compiled_capture keeps the one cold compile.
    compiled_bloom_tiny::seed_cache(&out.join("inductor"));
    let assert = replay()
        .args([
            "compare",
            "--compile",
            "--zoo",
            "bloom-tiny",
            "--device",
            "cpu",
            "--max-time",
            "0.02",
            "--rounds",
            "1",
            "--runs",
            "10",
            "--warmup",
            "3",
            "--output-dir",
        ])
        .arg(&out)
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&assert.get_output().stdout).to_string();

    // The measured side: the compiled model timed with compare's protocol, half the runs in
    // the capture's Python process before the isolated replay, half in a second one after it.
    let before = read_json(&out.join("compiled_model_timing.json"));
    let after = read_json(&out.join("compiled_model_timing_after.json"));
    for (half, timed_in) in [
        (&before, "the capture's Python process"),
        (&after, "a second Python process after the isolated replay"),
    ] {
        assert_eq!(half["model_format"], "torch_compile");
        assert_eq!(half["compile_mode"], "default");
        assert_eq!(half["timed_in"], timed_in);
        assert_eq!(
            (half["runs"].as_u64(), half["warmup"].as_u64()),
            (Some(5), Some(3))
        );
        assert_eq!(half["samples_us"].as_array().unwrap().len(), 5);
    }
    let samples: Vec<serde_json::Value> = [&before, &after]
        .iter()
        .flat_map(|h| h["samples_us"].as_array().unwrap().clone())
        .collect();

    let report = read_json(&out.join("comparison_report.json"));
    let full = &report["full_model"];
    assert_eq!(full["model_format"], "torch_compile");
    assert_eq!(full["model"], "zoo model bloom-tiny");
    assert_eq!(report["model"], "zoo model bloom-tiny");
    assert_eq!(full["runs"], 10);
    assert_eq!(full["runs_after_isolated"], 5);
    assert_eq!(
        full["samples_us"].as_array().unwrap(),
        &samples,
        "both halves, in order"
    );
    let measured = report["full_model_inference_us"].as_f64().unwrap();
    let (p10, p90) = (
        full["p10_us"].as_f64().unwrap(),
        full["p90_us"].as_f64().unwrap(),
    );
    assert!(
        measured > 0.0 && p10 <= measured && measured <= p90,
        "{full}"
    );
    let note = report["full_model_note"].as_str().unwrap();
    assert!(
        note.starts_with("timed in the capture's Python process: torch.compile (mode default)")
            && note.contains("5 timed runs before the isolated replay and 5 after it")
            && note.contains("drift control does not apply"),
        "{note}"
    );
    assert!(stdout.contains(note), "the table says it too:\n{stdout}");
    // full_model_timing.json, which the run's files list names, holds the same timing.
    assert_eq!(
        read_json(&out.join("full_model_timing.json"))["samples_us"],
        full["samples_us"]
    );

    // Both predictions.
    let sum = report["predictions"]["sum"]["predicted_us"]
        .as_f64()
        .unwrap();
    let timeline = report["predictions"]["timeline"]["predicted_us"]
        .as_f64()
        .unwrap();
    assert!(sum > 0.0 && timeline > 0.0, "{}", report["predictions"]);
    assert!(stdout.contains("predicted, kernel sum") && stdout.contains("predicted, timeline"));

    // Tier 4, the generated kernels, on its own line of the table and of the report.
    let tier4 = &report["tier_breakdown"]["tier4_generated"];
    assert!(tier4["unique_kernels"].as_u64() >= Some(1), "{tier4}");
    assert!(tier4["total_us"].as_f64().unwrap() > 0.0, "{tier4}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("4 "))
        .unwrap_or_else(|| panic!("no tier-4 line:\n{stdout}"));
    assert!(line.contains("inductor"), "{line}");

    // Coverage: every signature replayed, and the compiled code no op covers said apart.
    let coverage = &report["coverage"];
    let replayed = coverage["replayed_share_of_trace_time"].as_f64().unwrap();
    assert!(replayed > 0.99999, "{coverage}");
    assert!(coverage["unreplayed"].as_array().unwrap().is_empty());
    let unseen = coverage["unseen_share_of_step"].as_f64().unwrap();
    assert!((0.0..1.0).contains(&unseen), "{coverage}");
    let uninstrumented = coverage["uninstrumented_compiled_us"].as_f64().unwrap();
    assert!(uninstrumented >= 0.0, "{coverage}");
    assert!(
        stdout.contains("coverage: 100.0% of the trace's time replayed"),
        "{stdout}"
    );
    let said = if uninstrumented > 0.0 {
        "of uninstrumented compiled code"
    } else {
        "every part of the compiled regions was recorded"
    };
    assert!(stdout.contains(said), "{stdout}");
}

#[test]
fn compare_of_a_zoo_model_that_does_not_exist_exits_2_listing_the_zoo() {
    let dir = tempfile::tempdir().unwrap();
    replay()
        .args([
            "compare",
            "--compile",
            "--zoo",
            "bloom-7b",
            "--device",
            "cpu",
        ])
        .arg("--output-dir")
        .arg(dir.path().join("r"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--zoo bloom-7b: unknown model (known: bert-base",
        ))
        .stderr(predicate::str::contains("bloom-tiny"));
    // --zoo names the model torch.compile compiles: without --compile it is refused.
    replay()
        .args(["compare", "--zoo", "bloom-tiny", "--device", "cpu"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--compile"));
}
