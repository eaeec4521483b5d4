//! Tier 4: the kernels torch.compile generated, named as their own kind, on real traces:
//! a Triton kernel of an A100 trace, the Triton kernel an Execution Trace and Inductor's own
//! output code name, and the Inductor C++ kernels of a compiled MLP profiled on this CPU.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use replay_core::signature::compiled_code::is_compiled_region;
use replay_core::signature::generated::{inductor_cpp_op, triton_kernel};
use replay_core::signature::{self, GeneratedKind, SignatureFile, Tier, Unit};
use replay_core::trace::{self, Category, Trace};

use crate::common;

fn load(path: &Path) -> (Trace, SignatureFile) {
    let trace = trace::load(path).unwrap_or_else(|e| panic!("{e}"));
    let file = signature::classify(&trace, path);
    (trace, file)
}

fn compiled_data(name: &str) -> PathBuf {
    common::repo_root()
        .join("crates/core/tests/data/compiled")
        .join(name)
}

#[test]
fn a_triton_kernel_on_an_a100_is_tier_4_and_says_what_it_needs() {
    let (_, file) = load(&common::shared_traces().join("a100_triton_example.json.gz"));
    let sig = &file.signatures[0];
    assert_eq!(sig.tier, Tier::Generated);
    let generated = sig.generated.as_ref().expect("generated block");
    assert_eq!(generated.kind, GeneratedKind::Triton);
    assert_eq!(generated.kernel, "triton_poi_fused_add_cos_sin_0");
    assert_eq!((generated.graph, generated.source.as_deref()), (None, None));
    assert!(!sig.replayable);
    let reason = sig.reason.as_deref().unwrap();
    assert!(
        reason.contains("replay capture --compile") && reason.contains("--inductor-cache DIR"),
        "{reason}"
    );
    // Launched by Inductor's launcher op, inside the compiled region.
    let op = sig.op.as_ref().unwrap();
    assert_eq!(op.name, "triton_poi_fused_add_cos_sin_0");
    assert!(
        op.ancestry.iter().any(|a| is_compiled_region(a)),
        "{:?}",
        op.ancestry
    );
    let tier4 = file
        .summary
        .tiers
        .iter()
        .find(|t| t.tier == Tier::Generated)
        .unwrap();
    assert_eq!((tier4.unique, tier4.invocations), (1, 1));
    assert_eq!(tier4.total_us, sig.trace_total_us);
    assert!(file.summary_table().contains("Triton kernels"));
    // The file says "tier": 4 and reads back.
    let json = serde_json::to_value(&file).unwrap();
    assert_eq!(json["signatures"][0]["tier"], 4);
    assert_eq!(json["signatures"][0]["generated"]["kind"], "triton");
    let back: SignatureFile = serde_json::from_value(json).unwrap();
    assert_eq!(back, file);
}

#[test]
fn traces_without_generated_kernels_write_what_they_wrote_before() {
    for path in common::all_shared_traces() {
        if path.to_string_lossy().contains("triton") {
            continue;
        }
        let (trace, file) = load(&path);
        let json = serde_json::to_value(&file).unwrap();
        assert_eq!(json["summary"]["tiers"].as_array().unwrap().len(), 3);
        assert!(file.signatures.iter().all(|s| s.generated.is_none()));
        let text = json.to_string();
        assert!(!text.contains("\"generated\""), "{}", path.display());
        // Only a trace of compiled code gains the compiled-code summary (the cudagraph
        // training trace is one: its steps run `CompiledFunction`).
        let has_regions = trace
            .events
            .iter()
            .any(|e| is_compiled_region(trace.name(e)));
        assert_eq!(
            file.compiled_code.is_some(),
            has_regions,
            "{}",
            path.display()
        );
        if !has_regions {
            assert!(!text.contains("compiled_code"), "{}", path.display());
            assert!(!text.contains("uninstrumented"), "{}", path.display());
        }
    }
}

/// `pt2_et.json.tar.gz`, unpacked into a temporary folder.
fn pt2_et() -> (tempfile::TempDir, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let archive = common::repo_root().join("../shared/traces/et/pt2_et.json.tar.gz");
    let status = std::process::Command::new("tar")
        .arg("xzf")
        .arg(&archive)
        .arg("-C")
        .arg(dir.path())
        .status()
        .expect("tar runs");
    assert!(status.success());
    let et: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("pt2_et.json")).unwrap()).unwrap();
    (dir, et)
}

#[test]
fn the_execution_trace_and_inductors_output_code_name_the_same_triton_kernels() {
    let (dir, et) = pt2_et();
    let nodes = et["nodes"].as_array().unwrap();
    let attr = |node: &serde_json::Value, name: &str| {
        node["attrs"]
            .as_array()
            .and_then(|a| a.iter().find(|x| x["name"] == name))
            .and_then(|x| x["value"].as_str())
            .map(str::to_owned)
    };
    let mut in_trace = BTreeSet::new();
    for node in nodes {
        let name = node["name"].as_str().unwrap();
        let backend = attr(node, "kernel_backend").unwrap_or_default();
        // Every node the rule calls a Triton kernel is one Inductor launched as such, and
        // every Triton launch of the trace is recognised.
        assert_eq!(
            triton_kernel(name).is_some(),
            backend == "triton",
            "{name} ({backend:?})"
        );
        assert!(inductor_cpp_op(name).is_none(), "{name}");
        if backend == "triton" {
            in_trace.insert(name.to_owned());
            let file = attr(node, "kernel_file").unwrap();
            let code =
                std::fs::read_to_string(dir.path().join("pt2_et_resources").join(file)).unwrap();
            assert!(
                code.contains(&format!("def {name}(")),
                "{name} defined in its kernel file"
            );
        }
    }
    assert_eq!(
        in_trace,
        BTreeSet::from(["triton_poi_fused_add_cos_neg_sin_0".to_owned()])
    );
    // The output code's `call()` launches the same kernels: `<name>.run(...)`.
    let mut launched = BTreeSet::new();
    for entry in std::fs::read_dir(dir.path().join("pt2_et_resources")).unwrap() {
        let code = std::fs::read_to_string(entry.unwrap().path()).unwrap();
        for line in code.lines() {
            if let Some((callee, _)) = line.trim().split_once(".run(") {
                if triton_kernel(callee).is_some() {
                    launched.insert(callee.to_owned());
                }
            }
        }
    }
    assert_eq!(launched, in_trace);
    // Its compiled regions are named as the rule expects.
    let regions: BTreeSet<&str> = nodes
        .iter()
        .filter_map(|n| n["name"].as_str())
        .filter(|n| is_compiled_region(n))
        .collect();
    assert_eq!(
        regions,
        BTreeSet::from(["CompiledFunction", "Torch-Compiled Region: 0/0"])
    );
}

#[test]
fn profiled_inductor_cpp_kernels_are_tier_4_host_ops() {
    let (trace, file) = load(&compiled_data("mlp_kernel_profile.json.gz"));
    assert_eq!(file.summary.unit, Unit::HostOp);
    let recorded: Vec<&str> = trace
        .events
        .iter()
        .filter(|e| e.category == Category::CpuOp)
        .map(|e| trace.name(e))
        .filter(|n| n.starts_with("graph_") && n.contains("_cpp_fused_"))
        .collect();
    assert!(recorded.len() >= 4, "{recorded:?}");
    let generated: Vec<_> = file
        .signatures
        .iter()
        .filter(|s| s.tier == Tier::Generated)
        .collect();
    // Every recorded kernel call is one invocation of a tier-4 signature.
    assert_eq!(
        generated.iter().map(|s| s.count).sum::<u64>(),
        recorded.len() as u64
    );
    for sig in &generated {
        let params = sig.generated.as_ref().unwrap();
        assert_eq!(params.kind, GeneratedKind::InductorCpp);
        assert_eq!(params.graph, Some(0), "{}", sig.name);
        assert!(params.kernel.starts_with("cpp_fused_"), "{}", params.kernel);
        assert_eq!(sig.name, format!("graph_0_{}", params.kernel));
        assert!(!sig.replayable && sig.reason.as_deref().unwrap().contains("--inductor-cache"));
    }
    // The extern GEMMs beside them stay tier 2.
    assert!(file
        .signatures
        .iter()
        .any(|s| s.tier == Tier::Gemm && s.name == "aten::addmm"));
    let table = file.summary_table();
    assert!(table.contains("Inductor C++"), "{table}");
}
