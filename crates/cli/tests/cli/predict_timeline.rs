//! The timeline model: the self-check on real traces (the trace's own durations must give
//! back the trace's own step time), hand-built timelines checked against times worked out
//! by hand, and `replay predict`.

use crate::common;

use std::collections::HashMap;
use std::path::Path;

use common::{replay, shared_traces};
use predicates::prelude::*;
use replay_core::predict::{
    self, simulate, Activity, Durations, Prediction, Skeleton, StepSkeleton, StepSource, WaitKind,
};
use replay_core::signature;
use replay_core::trace::{self, Trace};

const US: i64 = 1000;

fn load(name: &str) -> Trace {
    let path = shared_traces().join(name);
    trace::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

// ---------------------------------------------------------------------------------------
// Real traces
// ---------------------------------------------------------------------------------------

#[test]
fn bert_self_check_is_within_5_percent_and_the_kernel_sum_is_far_below() {
    let prediction = predict::self_check(&load("h100_bert_small_infer.json.gz"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(prediction.measured_from, StepSource::ProfilerStep);
    assert_eq!(prediction.steps.len(), 1);
    assert_eq!(prediction.steps[0].name, "ProfilerStep#6");
    // The ProfilerStep#6 span of the file: 4426.114 us.
    assert!(
        (prediction.measured_us - 4426.114).abs() < 1e-6,
        "{prediction:?}"
    );
    assert!(
        prediction.error_percent.abs() < 5.0,
        "self-check error {:.2} %",
        prediction.error_percent
    );
    // Launch-bound: the kernels are busy ~7 % of the step, so their sum is ~93 % short.
    let busy_share = prediction.kernel_sum_us / prediction.measured_us;
    assert!((0.05..0.10).contains(&busy_share), "{busy_share}");
    assert!(prediction.kernel_sum_error_percent < -85.0);
    assert!((0.05..0.10).contains(&prediction.gpu_busy_fraction));
    assert_eq!(prediction.overridden_invocations, 0);
}

#[test]
fn vit_self_check_is_within_5_percent() {
    let prediction =
        predict::self_check(&load("h100_vit_infer.json.gz")).unwrap_or_else(|e| panic!("{e}"));
    assert!((prediction.measured_us - 7894.065).abs() < 1e-6);
    assert!(
        prediction.error_percent.abs() < 5.0,
        "self-check error {:.2} %",
        prediction.error_percent
    );
    assert!(prediction.kernel_sum_us < 0.2 * prediction.measured_us);
}

/// Mean |simulated start − traced start| of a step's activities, in µs.
fn mean_start_shift_us(step: &StepSkeleton, simulated: &predict::SimulatedStep) -> f64 {
    let shifts: Vec<f64> = step
        .activities
        .iter()
        .zip(&simulated.activities)
        .map(|(activity, interval)| (interval.start_ns - activity.trace_start_ns).abs() as f64)
        .collect();
    shifts.iter().sum::<f64>() / shifts.len().max(1) as f64 / 1000.0
}

/// Not only the step's end: every kernel of the H100 traces starts where the trace says.
#[test]
fn the_simulated_timeline_follows_the_traces_own_timeline() {
    for name in ["h100_bert_small_infer.json.gz", "h100_vit_infer.json.gz"] {
        let trace = load(name);
        let skeleton = predict::skeleton(&trace).unwrap_or_else(|e| panic!("{e}"));
        let simulation = simulate(&skeleton, &Durations::trace_own());
        let step = &skeleton.steps[0];
        assert_eq!(step.activities.len() as u64, trace.gpu_activity_count());
        let shift = mean_start_shift_us(step, &simulation.steps[0]);
        assert!(shift < 1.0, "{name}: mean start shift {shift:.3} us");
    }
}

/// Every trace gets a prediction, and its self-check reproduces the trace's own step time:
/// to <0.01 % on every step, except in the pipelined trace (why is in the comments below).
#[test]
fn every_shared_trace_predicts() {
    let mut table = String::new();
    for path in common::all_shared_traces() {
        let name = file_name(&path);
        let trace = trace::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let skeleton = predict::skeleton(&trace).unwrap_or_else(|e| panic!("{name}: {e}"));
        let simulation = simulate(&skeleton, &Durations::trace_own());
        let prediction = Prediction::from_simulation(&skeleton, &simulation).for_trace(&trace);
        assert!(!prediction.steps.is_empty(), "{name}");
        assert!(prediction.predicted_us > 0.0, "{name}");
        assert!(prediction.measured_us > 0.0, "{name}");
        assert!(prediction.error_percent.is_finite(), "{name}");
        assert!(
            (0.0..=1.0).contains(&prediction.gpu_busy_fraction),
            "{name}"
        );
        assert!(
            simulation.steps.iter().all(|s| s.broken_dependencies == 0),
            "{name}: the trace's own timeline has no cycle"
        );
        let shift = skeleton
            .steps
            .iter()
            .zip(&simulation.steps)
            .map(|(step, simulated)| mean_start_shift_us(step, simulated))
            .fold(0.0, f64::max);
        table.push_str(&format!(
            "{name:40} {:>3} step(s) predicted {:>14.1} us measured {:>14.1} us error {:>+7.2} % \
             kernel sum {:>+7.1} % start shift {shift:.2} us\n",
            prediction.steps.len(),
            prediction.predicted_us,
            prediction.measured_us,
            prediction.error_percent,
            prediction.kernel_sum_error_percent,
        ));
        // a100_train_cudagraph_rank0 is pipelined (no sync at a step's end, GPU ~160 ms
        // behind the host): each step is charged from the end of the previous step's GPU
        // work, its steady-state period, which a step's span only approximates. Measured:
        // +3.12 % for the first step (its span is 6.5 ms shorter than the GPU's period for
        // it), +0.00 to +0.35 % for the others, +0.72 % on the mean; the bounds leave a
        // quarter of that room. Everything else reproduces its own step time to <0.01 %.
        if name == "a100_train_cudagraph_rank0.json.gz" {
            assert!(
                (0.0..0.9).contains(&prediction.error_percent),
                "{name}: mean {:.3} %",
                prediction.error_percent
            );
            for step in &prediction.steps {
                assert!(
                    (0.0..3.9).contains(&step.error_percent),
                    "{name} {}: {:.3} %",
                    step.name,
                    step.error_percent
                );
            }
        } else {
            for step in &prediction.steps {
                assert!(
                    step.error_percent.abs() < 0.01,
                    "{name} {}: {:.4} %",
                    step.name,
                    step.error_percent
                );
            }
        }
    }
    println!("{table}");
}

#[test]
fn a_cpu_only_trace_is_timed_from_its_host_ops() {
    let trace = load("cpu_only.json.gz");
    let skeleton = predict::skeleton(&trace).unwrap_or_else(|e| panic!("{e}"));
    let step = &skeleton.steps[0];
    assert!(step.activities.is_empty());
    // Every top-level op inside the step span is a host op of the timeline. (This capture's
    // four `aten::empty` ops come after its ProfilerStep span, so there are none here; the
    // unit tests of `predict::build` time ops inside a span.)
    let links = trace::link::link(&trace);
    let ids = signature::signature_ids(&trace, &links);
    let (start, end) = (1_212_075_529_876_817, 1_212_075_529_876_817 + 210_109_162);
    let inside = ids
        .events()
        .filter(|&e| (start..end).contains(&trace.events[e].ts_ns))
        .count();
    assert_eq!(ids.event_count(), 4);
    assert_eq!(step.host_op_count(), inside);
    let prediction = predict::self_check(&trace).unwrap_or_else(|e| panic!("{e}"));
    assert!(prediction.error_percent.abs() < 5.0);
    assert_eq!(prediction.gpu_busy_fraction, 0.0);
}

/// A launch-bound model hides slower kernels behind the host: doubling every kernel of
/// BERT barely moves the step; making them 20× slower makes it GPU-bound.
#[test]
fn bert_is_launch_bound_until_its_kernels_are_much_slower() {
    let trace = load("h100_bert_small_infer.json.gz");
    let skeleton = predict::skeleton(&trace).unwrap_or_else(|e| panic!("{e}"));
    let step = &skeleton.steps[0];
    let scaled = |factor: f64| {
        let mut totals: HashMap<u32, (i64, i64)> = HashMap::new();
        for activity in &step.activities {
            if let Some(s) = activity.signature {
                let entry = totals.entry(s).or_default();
                entry.0 += activity.trace_ns;
                entry.1 += 1;
            }
        }
        let mut durations = Durations::trace_own();
        for (s, (total, count)) in totals {
            let id = skeleton.signature_id(s).unwrap_or_default();
            durations.set(id, factor * total as f64 / count as f64 / 1000.0);
        }
        let simulation = simulate(&skeleton, &durations);
        Prediction::from_simulation(&skeleton, &simulation)
    };
    let own = predict::self_check(&trace).unwrap_or_else(|e| panic!("{e}"));
    let doubled = scaled(2.0);
    assert!((doubled.kernel_sum_us - 2.0 * own.kernel_sum_us).abs() < 1.0);
    assert!(
        (doubled.predicted_us - own.predicted_us).abs() < 0.01 * own.predicted_us,
        "{} vs {}",
        doubled.predicted_us,
        own.predicted_us
    );
    let much_slower = scaled(20.0);
    assert!(much_slower.predicted_us > much_slower.kernel_sum_us);
    assert!(much_slower.gpu_busy_fraction > 0.8);
}

/// The ids the model uses are the signature file's: same ids, same invocation counts.
#[test]
fn signature_ids_of_activities_match_the_signature_file() {
    for path in common::all_shared_traces() {
        let name = file_name(&path);
        let trace = trace::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let file = signature::classify(&trace, &path);
        let links = trace::link::link(&trace);
        let ids = signature::signature_ids(&trace, &links);
        let mut counts: HashMap<&str, u64> = HashMap::new();
        for event in ids.events() {
            let id = ids.of_event(event).unwrap_or_else(|| panic!("{name}"));
            *counts.entry(id).or_default() += 1;
        }
        let expected: HashMap<&str, u64> = file
            .signatures
            .iter()
            .map(|s| (s.id.as_str(), s.count))
            .collect();
        assert_eq!(counts, expected, "{name}");
        assert_eq!(ids.ids().len(), file.signatures.len(), "{name}");
        // Unattributed activities have no signature, hence no id.
        for link in links.activities.iter().filter(|l| l.launch.is_none()) {
            assert_eq!(ids.of_event(link.activity), None, "{name}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Hand-built timelines: every number below is worked out by hand in the comments.
// ---------------------------------------------------------------------------------------

fn one_step(step: StepSkeleton, ids: &[&str]) -> Skeleton {
    let mut skeleton = Skeleton::new(StepSource::ProfiledWindow);
    for id in ids {
        skeleton.intern_signature(id);
    }
    skeleton.steps.push(step);
    skeleton
}

/// A kernel of `trace_us` on `stream` with signature `signature`, starting 1 µs after its
/// launch call returns on an idle GPU.
fn kernel(stream: usize, signature: u32, trace_us: i64) -> Activity {
    Activity {
        latency_ns: US,
        ..Activity::kernel(stream, Some(signature), trace_us * US)
    }
}

/// Host: 10 µs of framework time, then three launches of 5 µs each of a 2 µs kernel
/// (signatures a, b, a), then a device sync costing 1 µs.
fn launch_bound() -> Skeleton {
    let mut step = StepSkeleton::new("launch-bound", 29 * US);
    let t = step.add_thread("host");
    let s = step.add_stream("0/7");
    step.push_gap(t, 10 * US);
    for signature in [0, 1, 0] {
        step.push_launch(t, 5 * US, vec![kernel(s, signature, 2)]);
    }
    let on = step.last_on_every_stream();
    step.push_wait(t, WaitKind::Device, on, US);
    one_step(step, &["a", "b"])
}

#[test]
fn launch_bound_steps_are_host_time() {
    // Launches end at 15, 20, 25; kernels run 16-18, 21-23, 26-28; the sync starts at 25,
    // waits until 28, returns at 29.
    let simulation = simulate(&launch_bound(), &Durations::trace_own());
    let step = &simulation.steps[0];
    let starts: Vec<i64> = step.activities.iter().map(|i| i.start_ns / US).collect();
    assert_eq!(starts, vec![16, 21, 26]);
    assert_eq!(step.predicted_ns, 29 * US);
    assert_eq!(step.kernel_sum_ns, 6 * US);
    assert_eq!(step.gpu_busy_ns, 6 * US);
    let prediction = Prediction::from_simulation(&launch_bound(), &simulation);
    assert_eq!(prediction.error_percent, 0.0);
    // The naive sum: 6 of 29 µs.
    assert!((prediction.kernel_sum_error_percent - 100.0 * (6.0 - 29.0) / 29.0).abs() < 1e-9);
}

#[test]
fn gpu_bound_steps_are_kernel_time() {
    // Launches of 1 µs (end at 1, 2, 3) of 10 µs kernels: the first starts at 2, each next
    // one when the previous ends (12, 22); the sync from 3 waits until 32, returns at 33.
    let mut step = StepSkeleton::new("gpu-bound", 0);
    let t = step.add_thread("host");
    let s = step.add_stream("0/7");
    for _ in 0..3 {
        step.push_launch(t, US, vec![kernel(s, 0, 10)]);
    }
    let on = step.last_on_every_stream();
    step.push_wait(t, WaitKind::Device, on, US);
    let simulation = simulate(&one_step(step, &["a"]), &Durations::trace_own());
    let simulated = &simulation.steps[0];
    let starts: Vec<i64> = simulated
        .activities
        .iter()
        .map(|i| i.start_ns / US)
        .collect();
    assert_eq!(starts, vec![2, 12, 22]);
    assert_eq!(simulated.predicted_ns, 33 * US);
    assert_eq!(simulated.host_end_ns, 33 * US);
    assert_eq!(simulated.device_end_ns, 32 * US);
}

#[test]
fn a_sync_in_the_middle_holds_the_host_until_the_gpu_is_done() {
    // Launch (0-5) of a 20 µs kernel (6-26); a stream sync from 5 waits until 26, +2 = 28;
    // 10 µs of host time (28-38); launch (38-43) of a 3 µs kernel (44-47). No sync at the
    // end: the step ends with the kernel, at 47.
    let mut step = StepSkeleton::new("sync", 0);
    let t = step.add_thread("host");
    let s = step.add_stream("0/7");
    step.push_launch(t, 5 * US, vec![kernel(s, 0, 20)]);
    let on: Vec<usize> = step.last_on_stream(s).into_iter().collect();
    step.push_wait(t, WaitKind::Stream, on, 2 * US);
    step.push_gap(t, 10 * US);
    step.push_launch(t, 5 * US, vec![kernel(s, 1, 3)]);
    let simulation = simulate(&one_step(step, &["a", "b"]), &Durations::trace_own());
    let simulated = &simulation.steps[0];
    assert_eq!(simulated.host[0][1].end_ns, 28 * US);
    assert_eq!(simulated.activities[1].start_ns, 44 * US);
    assert_eq!(simulated.host_end_ns, 43 * US);
    assert_eq!(simulated.predicted_ns, 47 * US);
}

#[test]
fn two_streams_overlap_unless_one_waits_for_the_other() {
    // k1 (20 µs) on stream 0 launched 0-5, k2 (20 µs) on stream 1 launched 5-10, k3 (10 µs)
    // on stream 0 launched 10-15 and made to wait for k2: k1 5-25, k2 10-30, k3 30-40. A
    // device sync from 15 waits until 40. Without the wait k3 runs 25-35.
    let build = |wait_for_k2: bool| {
        let mut step = StepSkeleton::new("two streams", 0);
        let t = step.add_thread("host");
        let s0 = step.add_stream("0/7");
        let s1 = step.add_stream("0/9");
        let no_latency = |stream, signature, us| Activity {
            latency_ns: 0,
            ..kernel(stream, signature, us)
        };
        step.push_launch(t, 5 * US, vec![no_latency(s0, 0, 20)]);
        let k2 = step.push_launch(t, 5 * US, vec![no_latency(s1, 1, 20)]);
        let after = if wait_for_k2 { k2 } else { Vec::new() };
        step.push_launch(
            t,
            5 * US,
            vec![Activity {
                after,
                ..no_latency(s0, 2, 10)
            }],
        );
        let on = step.last_on_every_stream();
        step.push_wait(t, WaitKind::Device, on, 0);
        one_step(step, &["k1", "k2", "k3"])
    };
    let ordered = simulate(&build(true), &Durations::trace_own());
    let starts: Vec<i64> = ordered.steps[0]
        .activities
        .iter()
        .map(|i| i.start_ns / US)
        .collect();
    assert_eq!(starts, vec![5, 10, 30]);
    assert_eq!(ordered.steps[0].predicted_ns, 40 * US);
    // Overlapping streams: 50 µs of kernels in 35 µs of busy GPU.
    assert_eq!(ordered.steps[0].kernel_sum_ns, 50 * US);
    assert_eq!(ordered.steps[0].gpu_busy_ns, 35 * US);

    let free = simulate(&build(false), &Durations::trace_own());
    assert_eq!(free.steps[0].activities[2].start_ns, 25 * US);
    assert_eq!(free.steps[0].predicted_ns, 35 * US);
}

#[test]
fn overriding_a_signature_changes_every_invocation_of_it() {
    let skeleton = launch_bound();
    // a = 30 µs: k1 16-46, k2 (2 µs) waits for it: 46-48, k3 (a) 48-78; the sync returns
    // at 79.
    let mut slower = Durations::trace_own();
    slower.set("a", 30.0);
    let simulated = &simulate(&skeleton, &slower).steps[0];
    let spans: Vec<(i64, i64)> = simulated
        .activities
        .iter()
        .map(|i| (i.start_ns / US, i.end_ns / US))
        .collect();
    assert_eq!(spans, vec![(16, 46), (46, 48), (48, 78)]);
    assert_eq!(simulated.predicted_ns, 79 * US);
    assert_eq!(simulated.overridden_invocations, 2);

    // b's launch costs 1 µs instead of 5: every later host item is 4 µs earlier, and the
    // step too (launches end at 15, 16, 21; kernels 16-18, 18-20, 22-24; sync returns 25).
    let mut cheaper = Durations::trace_own();
    cheaper.set_with_dispatch("b", 2.0, 1.0);
    let simulated = &simulate(&skeleton, &cheaper).steps[0];
    let starts: Vec<i64> = simulated
        .activities
        .iter()
        .map(|i| i.start_ns / US)
        .collect();
    assert_eq!(starts, vec![16, 18, 22]);
    assert_eq!(simulated.predicted_ns, 25 * US);

    // An id the skeleton does not have changes nothing.
    let mut unknown = Durations::trace_own();
    unknown.set("not-a-signature", 1000.0);
    let simulated = &simulate(&skeleton, &unknown).steps[0];
    assert_eq!(simulated.predicted_ns, 29 * US);
    assert_eq!(simulated.overridden_invocations, 0);
}

#[test]
fn host_ops_take_their_signatures_time() {
    // 5 µs, mm (10 µs), 3 µs, add (2 µs), 1 µs = 21 µs; mm at 4 µs makes it 15.
    let mut step = StepSkeleton::new("cpu", 21 * US);
    let t = step.add_thread("host");
    step.push_gap(t, 5 * US);
    step.push_host_op(t, Some(0), 10 * US);
    step.push_gap(t, 3 * US);
    step.push_host_op(t, Some(1), 2 * US);
    step.push_gap(t, US);
    let skeleton = one_step(step, &["mm", "add"]);
    let own = simulate(&skeleton, &Durations::trace_own());
    assert_eq!(own.steps[0].predicted_ns, 21 * US);
    let mut faster = Durations::trace_own();
    faster.set("mm", 4.0);
    let faster = simulate(&skeleton, &faster);
    assert_eq!(faster.steps[0].predicted_ns, 15 * US);
    // The naive sum of a CPU timeline is its ops: 4 + 2 µs.
    assert_eq!(faster.steps[0].kernel_sum_ns, 6 * US);
    assert_eq!(faster.steps[0].gpu_busy_ns, 0);
}

#[test]
fn several_steps_are_reported_each_and_as_their_mean() {
    let mut skeleton = launch_bound();
    let mut second = skeleton.steps[0].clone();
    second.name = "second".into();
    second.measured_ns = 31 * US;
    skeleton.steps.push(second);
    let prediction =
        Prediction::from_simulation(&skeleton, &simulate(&skeleton, &Durations::trace_own()));
    assert_eq!(prediction.steps.len(), 2);
    assert_eq!(prediction.predicted_us, 29.0);
    assert_eq!(prediction.measured_us, 30.0);
    assert!((prediction.error_percent - 100.0 * (29.0 - 30.0) / 30.0).abs() < 1e-9);
    assert!((prediction.steps[1].error_percent - 100.0 * (29.0 - 31.0) / 31.0).abs() < 1e-9);
}

// ---------------------------------------------------------------------------------------
// replay predict
// ---------------------------------------------------------------------------------------

#[test]
fn predict_command_prints_json_within_5_percent_on_the_h100_traces() {
    for name in ["h100_bert_small_infer.json.gz", "h100_vit_infer.json.gz"] {
        let output = replay()
            .args(["predict", "--json", "--trace"])
            .arg(shared_traces().join(name))
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let json: serde_json::Value =
            serde_json::from_slice(&output).unwrap_or_else(|e| panic!("{name}: {e}"));
        for field in [
            "predicted_us",
            "measured_us",
            "error_percent",
            "kernel_sum_us",
            "kernel_sum_error_percent",
            "gpu_busy_fraction",
        ] {
            assert!(json[field].is_number(), "{name}: {field} in {json}");
        }
        assert_eq!(json["measured_from"], "profiler_step");
        assert_eq!(json["steps"].as_array().map(Vec::len), Some(1));
        let error = json["error_percent"].as_f64().unwrap_or(f64::NAN);
        assert!(error.abs() < 5.0, "{name}: {error}");
    }
}

#[test]
fn predict_command_prints_a_summary() {
    replay()
        .args(["predict", "--trace"])
        .arg(shared_traces().join("h100_bert_small_infer.json.gz"))
        .assert()
        .success()
        .stdout(predicate::str::contains("predicted step time"))
        .stdout(predicate::str::contains("measured step time"))
        .stdout(predicate::str::contains("naive kernel sum"))
        .stdout(predicate::str::contains("GPU busy"))
        .stdout(predicate::str::contains("ProfilerStep#6"));
}

#[test]
fn predict_command_rejects_unusable_traces_with_status_2() {
    replay()
        .args(["predict", "--trace", "no/such/trace.json"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no/such/trace.json"));

    let dir = tempfile::tempdir().expect("temp dir");
    let empty = dir.path().join("empty.json");
    std::fs::write(&empty, r#"{"traceEvents": []}"#).expect("write");
    replay()
        .args(["predict", "--trace"])
        .arg(&empty)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nothing to time"));
}
