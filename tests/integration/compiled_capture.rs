//! `replay capture --compile` end to end through the real binary: bloom-tiny of the zoo compiled
//! with torch.compile on the CPU, its trace, and the recording of its generated kernels that
//! `inductor/kernels.json` beside the trace holds (issue 30); and the command line's refusals.

use crate::common;
use crate::compiled_bloom_tiny;

use std::collections::BTreeSet;
use std::path::Path;

use common::replay;
use predicates::prelude::*;

fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

#[test]
fn a_compiled_zoo_model_keeps_its_generated_kernels_beside_the_trace() {
    // The process's one capture of the compiled model (its cold compile), copied here: the
    // classify and isolated runs below write beside it.
    let capture = compiled_bloom_tiny::capture();
    for said in [
        "compiled (mode default) in ",
        "(cold Inductor cache)",
        "generated kernels",
    ] {
        assert!(capture.stdout.contains(said), "{said}:\n{}", capture.stdout);
    }
    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(capture.trace.parent().unwrap(), &dir.path().join("results"));
    let trace = dir.path().join("results").join("t.json");
    let ops: BTreeSet<String> = read_json(&trace)["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["cat"] == "cpu_op")
        .filter_map(|e| e["name"].as_str())
        .filter(|n| n.starts_with("graph_") && n.contains("_cpp_fused_"))
        .map(String::from)
        .collect();
    assert!(!ops.is_empty(), "no generated kernel in the trace");

    let inductor = dir.path().join("results").join("inductor");
    let doc = read_json(&inductor.join("kernels.json"));
    assert_eq!(doc["format"], "replay-inductor-kernels");
    assert_eq!(doc["version"], 1);
    assert_eq!(doc["device"], "cpu");
    assert_eq!(doc["mode"], "default");
    let kernels = doc["kernels"].as_array().unwrap();
    let names: BTreeSet<String> = kernels
        .iter()
        .map(|k| k["trace_name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names, ops,
        "each generated op of the trace is one recorded kernel"
    );
    let mut saved_values = 0;
    for k in kernels {
        assert_eq!(k["kind"], "inductor_cpp");
        assert_eq!(k["symbol"], "replay_entry");
        for key in ["library", "kernel_source", "source"] {
            let path = inductor.join(k[key].as_str().unwrap());
            assert!(path.is_file(), "{key} {} is missing", path.display());
        }
        let arg_types = k["arg_types"].as_array().unwrap().len();
        for call in k["calls"].as_array().unwrap() {
            assert!(call["count"].as_u64() >= Some(1));
            let args = call["args"].as_array().unwrap();
            assert_eq!(args.len(), arg_types, "{}", k["name"]);
            for values in args.iter().filter_map(|a| a["tensor"]["values"].as_str()) {
                assert!(inductor.join(values).is_file(), "{values}");
                saved_values += 1;
            }
        }
    }
    // The token ids reach the embedding's kernel: integer arguments keep their values.
    assert!(saved_values >= 1, "no integer argument's values were saved");
    assert!(inductor.join("cache").is_dir(), "Inductor's cache is kept");

    // Tier 4: classify finds the cache beside the trace, and isolated replays every generated
    // kernel alone from its Python-free library, timed by the measurement core.
    let signatures = dir.path().join("results").join("signatures.json");
    replay()
        .args(["classify", "--trace"])
        .arg(&trace)
        .arg("--out")
        .arg(&signatures)
        .assert()
        .success()
        .stdout(predicate::str::contains("Inductor C++"));
    let isolated = dir.path().join("isolated");
    replay()
        .args([
            "isolated",
            "--device",
            "cpu",
            "--max-time",
            "0.05",
            "--rounds",
            "1",
            "-q",
        ])
        .arg("--kernels")
        .arg(&signatures)
        .arg("--output-dir")
        .arg(&isolated)
        .assert()
        .success();
    let results = read_json(&isolated.join("isolated.json"));
    let generated: Vec<&serde_json::Value> = results["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["tier"] == 4)
        .collect();
    let replayed: BTreeSet<String> = generated
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(replayed, ops, "every generated kernel is a tier-4 result");
    for r in generated {
        assert_eq!(r["status"], "ok", "{r}");
        assert_eq!(r["method"], "inductor C++ kernel", "{r}");
        let median = r["stats"]["median_us"].as_f64().unwrap();
        assert!(median > 0.0 && median.is_finite(), "{r}");
    }
    // The graph's extern GEMMs too: Inductor calls them with `out=`, and they replay as the
    // GEMMs they computed (read as TorchScript stack values they multiplied mismatched shapes).
    for r in results["results"].as_array().unwrap() {
        assert_eq!(r["status"], "ok", "{r}");
        if r["name"] == "aten::mm" || r["name"] == "aten::bmm" {
            assert_eq!(r["tier"], 2, "{r}");
        }
    }
}

#[test]
fn a_compile_mode_torch_compile_does_not_have_exits_2_listing_the_modes() {
    for (command, out) in [("capture", "--out"), ("compare", "--output-dir")] {
        replay()
            .args([command, "--model", "m.pt", out, "r", "--compile", "bogus"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "[possible values: default, reduce-overhead, max-autotune]",
            ));
    }
}

#[test]
fn a_pt2_that_is_no_exported_program_exits_2_naming_it() {
    let (dir, model) = common::exported_bloom_tiny();
    let pt2 = dir.path().join("torchscript.pt2");
    std::fs::copy(&model, &pt2).unwrap();
    replay()
        .args(["capture", "--compile", "--device", "cpu", "--model"])
        .arg(&pt2)
        .arg("--out")
        .arg(dir.path().join("t.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "{} is not a torch.export ExportedProgram",
            pt2.display()
        )));
    replay()
        .args(["capture", "--compile", "--device", "cpu", "--model"])
        .arg(&model)
        .arg("--out")
        .arg(dir.path().join("t.json"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "is TorchScript, which torch.compile does not compile",
        ));
    assert!(!dir.path().join("t.json").exists());
    // compare hands --compile to its capture, which refuses TorchScript the same way.
    replay()
        .args(["compare", "--compile", "--device", "cpu", "--model"])
        .arg(&model)
        .arg("--output-dir")
        .arg(dir.path().join("r"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "is TorchScript, which torch.compile does not compile",
        ));
}
