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
/// alone: (outside compiled regions, inside them), in µs. `with_kernels`: Inductor's
/// recorded C++ kernels count as ops (as classify counts them); without, as if they had
/// not been recorded.
fn gaps_by_hand(trace: &Trace, with_kernels: bool) -> (f64, f64) {
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
            && (name.contains("::")
                || (with_kernels && name.starts_with("graph_") && name.contains("cpp_fused")))
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
    let (outside, inside) = gaps_by_hand(&trace, true);
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
fn recorded_kernels_leave_the_unseen_time_for_tier_4() {
    let (trace, file) = load(&compiled_data("mlp_kernel_profile.json.gz"));
    let overhead = file.host_overhead.as_ref().unwrap();
    let generated_us: f64 = file
        .signatures
        .iter()
        .filter(|s| s.tier == Tier::Generated)
        .map(|s| s.trace_total_us)
        .sum();
    assert!(generated_us > 0.0);
    let (outside, inside) = gaps_by_hand(&trace, true);
    assert!(
        (overhead.overhead_us - outside).abs() < 0.01,
        "{overhead:?}"
    );
    assert!(
        (overhead.uninstrumented_compiled_us - inside).abs() < 0.01,
        "{overhead:?}"
    );
    // Had the kernels not been recorded, the ones between two ops would be unseen gaps
    // inside the compiled region; the time outside it would not change.
    let (outside_unrecorded, inside_unrecorded) = gaps_by_hand(&trace, false);
    assert!((outside_unrecorded - outside).abs() < 0.01);
    assert!(
        inside_unrecorded > inside,
        "{inside_unrecorded} vs {inside} (kernels {generated_us} us)"
    );
}

#[test]
fn the_unseen_time_is_the_regions_less_every_recorded_op_in_them() {
    for name in ["mlp_plain.json.gz", "mlp_kernel_profile.json.gz"] {
        let (trace, file) = load(&compiled_data(name));
        let compiled = file.compiled_code.as_ref().expect("compiled regions");
        // One thread, one region, one step here: its span less the union of the ops in it.
        let region = trace
            .events
            .iter()
            .find(|e| trace.name(e).starts_with("Torch-Compiled Region"))
            .unwrap();
        let mut ops: Vec<(i64, i64)> = trace
            .events
            .iter()
            .filter(|e| e.category == Category::CpuOp && region.contains(e))
            .filter(|e| !std::ptr::eq(*e, region))
            .map(|e| (e.ts_ns, e.end_ns()))
            .collect();
        ops.sort();
        let (mut covered, mut until) = (0i64, i64::MIN);
        for (start, end) in ops {
            let from = start.max(until);
            if end > from {
                covered += end - from;
            }
            until = until.max(end);
        }
        let unseen = (region.dur_ns - covered) as f64 / 1000.0;
        assert_eq!(compiled.regions, 1, "{name}");
        assert_eq!(compiled.region_us, region.dur_ns as f64 / 1000.0, "{name}");
        assert!(
            (compiled.uninstrumented_us - unseen).abs() < 0.0015,
            "{name}: {compiled:?} vs {unseen}"
        );
        assert!(compiled.uninstrumented_share() > 0.0 && compiled.uninstrumented_share() < 1.0);
    }
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
