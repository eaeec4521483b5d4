//! A Kineto trace recorded without shapes, completed from its Execution Trace
//! (`execution_trace::fill`): PARAM's 2023 linear pair, whose Kineto trace holds 40 training
//! iterations of a 21-layer MLP on a V100 and records no input, and whose ET records the last.
//! And bloom-tiny's pair, whose Kineto trace recorded its inputs: nothing is changed there.

use std::path::PathBuf;

use replay_core::execution_trace::attach::{attach, link_file};
use replay_core::execution_trace::fill::Filled;
use replay_core::signature;
use replay_core::trace::steps::StepSource;
use replay_core::trace::{self, Platform};
use serde_json::json;

use crate::common::repo_root;

fn shared_et(name: &str) -> PathBuf {
    repo_root().join("../shared/traces/et").join(name)
}

fn bloom_tiny(name: &str) -> PathBuf {
    repo_root().join("crates/core/tests/data/et").join(name)
}

#[test]
fn the_linear_pairs_kineto_ops_take_their_inputs_from_the_execution_trace() {
    let kineto_path = shared_et("linear_kineto.json.gz");
    let mut kineto = trace::load(&kineto_path).unwrap();
    assert_eq!(kineto.platform, Platform::Cuda);
    let before = signature::classify(&kineto, &kineto_path);
    assert!(before
        .signatures
        .iter()
        .filter(|s| s.tier != signature::schema::Tier::Copy)
        .all(|s| s.inputs.is_none()));
    let linked = link_file(&mut kineto, &kineto_path, &shared_et("linear_et.json.gz")).unwrap();
    // The ET's iteration (710 operators), and 38 more that repeat it op for op. The first of
    // the 40 differs (584 ops: no gradient to accumulate into yet) and is left as recorded.
    assert_eq!(
        linked.filled,
        Filled {
            linked: 710,
            repeated: 38 * 710,
            iterations: 38,
            with_strides: 0,
        }
    );
    let mut file = signature::classify(&kineto, &kineto_path);
    let source = attach(&mut file, &kineto, &linked);
    assert!(
        source.summary().ends_with(
            "input shapes, dtypes and values taken from the Execution Trace (the Kineto trace \
             recorded none) for 710 linked ops and 26980 ops of 38 iterations that repeat its \
             own, without strides (the Execution Trace records none: contiguous tensors \
             assumed)"
        ),
        "{}",
        source.summary()
    );
    // The forward GEMM of each of the 21 layers in 39 iterations: addmm(bias, x, W^T).
    let addmm = file
        .signatures
        .iter()
        .find(|s| s.name == "volta_sgemm_64x64_tn" && s.inputs.is_some())
        .unwrap();
    assert_eq!(addmm.count, 39 * 21);
    let inputs = addmm.inputs.as_ref().unwrap();
    assert_eq!(
        inputs.dims,
        Some(json!([[1024], [512, 1024], [1024, 1024], [], []]))
    );
    assert_eq!(
        inputs.types,
        Some(json!(["float", "float", "float", "Scalar", "Scalar"]))
    );
    assert_eq!(inputs.concrete, Some(json!(["", "", "", "1", "1"])));
    assert!(addmm.replayable, "{:?}", addmm.reason);
    let gemm = addmm.gemm.as_ref().expect("a GEMM shape, derived");
    assert_eq!((gemm.m, gemm.n, gemm.k), (512, 1024, 1024), "{gemm:?}");
    // What has no shape is the first iteration's: at most one invocation per layer.
    let mut shapeless: Vec<(&str, u64)> = file
        .signatures
        .iter()
        .filter(|s| s.op.is_some() && s.inputs.is_none())
        .map(|s| (s.op.as_ref().unwrap().name.as_str(), s.count))
        .collect();
    shapeless.sort();
    assert!(
        shapeless
            .iter()
            .all(|&(op, count)| count == 1 || (count <= 21 && op != "aten::_softmax")),
        "{shapeless:?}"
    );
    // The time that is now replayable: all but the first iteration's.
    let total: f64 = file.signatures.iter().map(|s| s.trace_total_us).sum();
    let shaped: f64 = file
        .signatures
        .iter()
        .filter(|s| s.replayable)
        .map(|s| s.trace_total_us)
        .sum();
    assert!(shaped / total > 0.97, "{shaped} of {total} us");
}

#[test]
fn a_trace_that_recorded_its_inputs_is_not_changed() {
    let kineto_path = bloom_tiny("bloom_tiny_cpu.json.gz");
    let original = trace::load(&kineto_path).unwrap();
    let mut kineto = original.clone();
    let linked = link_file(
        &mut kineto,
        &kineto_path,
        &bloom_tiny("bloom_tiny_cpu.et.json.gz"),
    )
    .unwrap();
    assert_eq!(linked.filled, Filled::default());
    assert!(linked.filled.describe().is_none());
    assert_eq!(kineto.events, original.events);
    let mut file = signature::classify(&kineto, &kineto_path);
    let source = attach(&mut file, &kineto, &linked);
    assert_eq!(source.inputs_filled, None);
}

/// The check that the columns are the profiler's own: bloom-tiny's trace with every op's input
/// columns taken out, completed from its ET, classifies into exactly the signatures (ids,
/// inputs, counts, times) the trace with its recorded columns gives.
#[test]
fn columns_taken_from_the_execution_trace_are_those_record_shapes_wrote() {
    let kineto_path = bloom_tiny("bloom_tiny_cpu.json.gz");
    let et_path = bloom_tiny("bloom_tiny_cpu.et.json.gz");
    let mut recorded = trace::load(&kineto_path).unwrap();
    let linked = link_file(&mut recorded, &kineto_path, &et_path).unwrap();
    let mut expected = signature::classify(&recorded, &kineto_path);
    attach(&mut expected, &recorded, &linked);

    let mut stripped = trace::load(&kineto_path).unwrap();
    for event in &mut stripped.events {
        event.args.inputs = Default::default();
    }
    let linked = link_file(&mut stripped, &kineto_path, &et_path).unwrap();
    assert_eq!(
        (linked.filled.linked, linked.filled.with_strides),
        (356, 356),
        "every op (the 357th link is an annotation)"
    );
    let mut filled = signature::classify(&stripped, &kineto_path);
    attach(&mut filled, &stripped, &linked);
    assert_eq!(filled.signatures.len(), 43);
    assert_eq!(filled.signatures, expected.signatures);
}

#[test]
fn the_step_of_an_execution_trace_is_the_one_it_recorded() {
    // bloom-tiny: linked by record-function id inside the trace's one ProfilerStep.
    let kineto_path = bloom_tiny("bloom_tiny_cpu.json.gz");
    let mut kineto = trace::load(&kineto_path).unwrap();
    let linked = link_file(
        &mut kineto,
        &kineto_path,
        &bloom_tiny("bloom_tiny_cpu.et.json.gz"),
    )
    .unwrap();
    let (source, window) = linked.links.step_window(&kineto).unwrap();
    let (_, windows) = trace::steps::step_windows(&kineto);
    assert_eq!(source, StepSource::ProfilerStep);
    assert!(window.name.starts_with("ProfilerStep#"));
    assert!(windows.contains(&window));
    // The linear pair: no step spans, 40 iterations in the window; the ET's is the last.
    let kineto_path = shared_et("linear_kineto.json.gz");
    let mut kineto = trace::load(&kineto_path).unwrap();
    let linked = link_file(&mut kineto, &kineto_path, &shared_et("linear_et.json.gz")).unwrap();
    let (source, window) = linked.links.step_window(&kineto).unwrap();
    assert_eq!(source, StepSource::ProfiledWindow);
    assert_eq!(window.name, "the Execution Trace's iteration");
    let (_, windows) = trace::steps::step_windows(&kineto);
    let whole = &windows[0];
    assert!(whole.start_ns < window.start_ns && window.end_ns <= whole.end_ns);
    // About a fortieth of the window: one of its 40 iterations.
    let share = window.duration_ns() as f64 / whole.duration_ns() as f64;
    assert!((0.01..0.04).contains(&share), "{share}");
    for &event in linked.links.node_of_event.keys() {
        assert!(window.holds(kineto.events[event].ts_ns));
    }
}
