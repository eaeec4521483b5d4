//! Honest coverage of compiled code: time inside a torch.compile'd region that no recorded
//! op covers is *uninstrumented compiled code*, not framework time between ops, in
//! classify's overhead, predict's summary and JSON, and the share of the step it is.

use std::path::{Path, PathBuf};

use replay_core::signature::compiled_code::is_compiled_region;
use replay_core::signature::{self, SignatureFile, Tier};
use replay_core::trace::{self, Category, Trace};

use crate::common;

fn compiled_data(name: &str) -> PathBuf {
    common::repo_root()
        .join("crates/core/tests/data/compiled")
        .join(name)
}

fn load(path: &Path) -> (Trace, SignatureFile) {
    let trace = trace::load(path).unwrap_or_else(|e| panic!("{e}"));
    let file = signature::classify(&trace, path);
    (trace, file)
}

/// The host thread's gaps between consecutive top-level ops, counted here from the trace
/// alone: (outside compiled regions, inside them), in µs.
fn gaps_by_hand(trace: &Trace) -> (f64, f64) {
    let events = &trace.events;
    let mut spans: Vec<(i64, i64)> = events
        .iter()
        .filter(|e| is_compiled_region(trace.name(e)))
        .map(|e| (e.ts_ns, e.end_ns()))
        .collect();
    spans.sort();
    // Merged: `CompiledFunction` lies inside `Torch-Compiled Region`.
    let mut region_spans: Vec<(i64, i64)> = Vec::new();
    for (s, e) in spans {
        match region_spans.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => region_spans.push((s, e)),
        }
    }
    // Top level: operators (and generated kernels) that no other operator contains.
    let is_op = |e: &trace::Event| {
        let name = trace.name(e);
        e.category == Category::CpuOp
            && (name.contains("::") || (name.starts_with("graph_") && name.contains("cpp_fused")))
    };
    let ops: Vec<&trace::Event> = events.iter().filter(|e| is_op(e)).collect();
    let mut top: Vec<&trace::Event> = ops
        .iter()
        .copied()
        .filter(|e| {
            !ops.iter().any(|o| {
                !std::ptr::eq(*o, *e) && o.contains(e) && (o.dur_ns > e.dur_ns || o.ts_ns < e.ts_ns)
            })
        })
        .collect();
    top.sort_by_key(|e| e.ts_ns);
    let (mut outside, mut inside) = (0i64, 0i64);
    let mut until: Option<i64> = None;
    for e in top {
        if let Some(u) = until.filter(|&u| u < e.ts_ns) {
            // Nanosecond by nanosecond would be exact but slow; the gaps are split at the
            // region edges instead.
            let mut covered = 0;
            for &(s, end) in &region_spans {
                covered += (end.min(e.ts_ns) - s.max(u)).max(0);
            }
            let covered = covered.min(e.ts_ns - u);
            inside += covered;
            outside += e.ts_ns - u - covered;
        }
        until = Some(until.map_or(e.end_ns(), |u| u.max(e.end_ns())));
    }
    (outside as f64 / 1000.0, inside as f64 / 1000.0)
}

#[test]
fn without_kernel_profiling_the_generated_code_is_uninstrumented_not_framework_time() {
    let (trace, file) = load(&compiled_data("mlp_plain.json.gz"));
    assert!(
        file.signatures.iter().all(|s| s.tier != Tier::Generated),
        "no generated kernel was recorded"
    );
    let overhead = file.host_overhead.as_ref().unwrap();
    let compiled = file.compiled_code.as_ref().expect("compiled regions");
    let (outside, inside) = gaps_by_hand(&trace);
    assert!(
        (overhead.overhead_us - outside).abs() < 0.01,
        "{overhead:?} vs {outside}"
    );
    assert!(
        (overhead.uninstrumented_compiled_us - inside).abs() < 0.01,
        "{overhead:?} vs {inside}"
    );
    // The hidden kernels are most of the gaps: more than the framework time around them.
    assert!(inside > outside, "inside {inside} us, outside {outside} us");
    assert!(compiled.uninstrumented_us >= overhead.uninstrumented_compiled_us - 0.01);
    assert!(compiled.uninstrumented_us <= compiled.region_us);
    assert!(compiled.region_us <= compiled.steps_us);
    let table = file.summary_table();
    assert!(table.contains("uninstrumented compiled code"), "{table}");
}

#[test]
fn with_kernel_profiling_little_of_the_compiled_region_is_unseen() {
    let (_, profiled) = load(&compiled_data("mlp_kernel_profile.json.gz"));
    let (_, plain) = load(&compiled_data("mlp_plain.json.gz"));
    let seen = profiled.compiled_code.as_ref().unwrap();
    let unseen = plain.compiled_code.as_ref().unwrap();
    let generated_us: f64 = profiled
        .signatures
        .iter()
        .filter(|s| s.tier == Tier::Generated)
        .map(|s| s.trace_total_us)
        .sum();
    // The recorded kernels are what the plain trace could not see: its unseen share is
    // larger. (The two are separate runs on a shared machine, so only shares compare.)
    assert!(
        seen.uninstrumented_share() < unseen.uninstrumented_share(),
        "{seen:?} vs {unseen:?}"
    );
    assert!(generated_us > 0.0);
    // With the kernels recorded, what stays unseen is the wrapper's own glue around them:
    // a sliver of the step.
    assert!(seen.uninstrumented_share() < 0.05, "{seen:?}");
}

#[test]
fn predict_reports_the_unseen_compiled_code_in_its_summary_and_json() {
    let trace = compiled_data("mlp_plain.json.gz");
    let output = common::replay()
        .args(["predict", "--trace"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("uninstrumented compiled code"), "{text}");
    assert!(text.contains("not framework time"), "{text}");
    assert!(!text.contains("-0.0"), "{text}");

    let output = common::replay()
        .args(["predict", "--json", "--trace"])
        .arg(&trace)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let prediction = &json;
    let mean = prediction["uninstrumented_compiled_us"]
        .as_f64()
        .expect("field");
    let step = prediction["steps"][0]["uninstrumented_compiled_us"]
        .as_f64()
        .expect("per step");
    assert!(mean > 0.0 && (mean - step).abs() < 0.01, "{prediction}");
    // The same figure classify gives for the one profiled step.
    let (_, file) = load(&trace);
    let compiled = file.compiled_code.unwrap();
    assert!((compiled.uninstrumented_us - step).abs() < 0.01);
    assert!(compiled.uninstrumented_us < prediction["measured_us"].as_f64().unwrap());
}

#[test]
fn the_a100_triton_region_is_counted_exactly() {
    let (_, file) = load(&common::shared_traces().join("a100_triton_example.json.gz"));
    let compiled = file.compiled_code.expect("a compiled region");
    assert_eq!(compiled.regions, 1);
    assert_eq!(compiled.region_us, 1352.964);
    // Less the launcher op (95.812 us), which holds the cuLaunchKernel call.
    assert_eq!(compiled.uninstrumented_us, 1257.152);
    // The ProfilerStep#1 span.
    assert_eq!(compiled.steps_us, 13336315.805);
}
