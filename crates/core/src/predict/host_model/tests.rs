//! The host model on hand-written traces, every answer computed by hand in the comments.
//!
//! The step (0-1000 µs, one `forward` frame) has three outermost ops on the host thread:
//! - `aten::linear` 100-300 (with `aten::addmm` inside, 2 op events), whose launch call runs
//!   200-260 and launches k1 at 260 (no latency in the trace);
//! - `aten::view` 350-400, which launches nothing;
//! - `aten::relu` 450-600, whose launch call runs 500-560 and launches k2 at 560;
//!
//! then a `cudaDeviceSynchronize` at 700-710. The host section: dispatch 1 µs per op event,
//! interpreter 2 µs per op, launch 3 µs, wake-up after a sync 4 µs. The replay measured
//! k1's op at 20 µs of host time and k2's at 15.
//!
//! Modelled host time: linear 20 + 1 × (2 - 1) = 21 µs; view 1 µs; relu 15 µs; 2 µs of
//! interpreter before each op and before the sync. The items on the trace's axis, cut at the
//! ops' edges (B = between ops, U = inside one):
//! - gap 0-200: B 100 (→ 2), U-linear 100; launch 200-260: U-linear 60; gap 260-500:
//!   U-linear 40, B 50 (→ 2), U-view 50, B 50 (→ 2), U-relu 50; launch 500-560: U-relu 60;
//!   gap 560-700: U-relu 40, B 100; wait; gap 710-1000: B 290 (with the 100: → 2).
//! - linear's 200 µs of profiled host become 21 (× 0.105), view's 50 become 1, relu's 150
//!   become 15 (× 0.1).
//! - so: gap 2 + 10.5 = 12.5; launch 6.3; gap 4.2 + 2 + 1 + 2 + 5 = 14.2; launch 6; gap
//!   4 + 2 × 100/390 = 4.513; the sync's own 4; gap 2 × 290/390 = 1.487.

use std::collections::HashMap;
use std::path::Path;

use crate::predict::{model_call_ns, simulate, skeleton, Durations, HostSettings, HostTimes};
use crate::results::host_profile::{HostMachine, HostProfile};
use crate::trace::{Nanos, Trace};

/// `(cat, name, tid or stream, ts_us, dur_us, correlation)`: pid 1 is the host, pid 0 the GPU.
type Row<'r> = (&'r str, &'r str, i64, f64, f64, Option<i64>);

fn trace(rows: &[Row]) -> Trace {
    let events: Vec<String> = rows
        .iter()
        .map(|(cat, name, tid, ts, dur, correlation)| {
            let gpu = matches!(*cat, "kernel" | "gpu_memcpy" | "cuda_sync");
            let mut args = Vec::new();
            if let Some(c) = correlation {
                args.push(format!("\"correlation\": {c}"));
            }
            if gpu {
                args.push(format!("\"stream\": {tid}"));
            }
            format!(
                "{{\"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"pid\": {}, \
                 \"tid\": {tid}, \"ts\": {ts}, \"dur\": {dur}, \"args\": {{{}}}}}",
                if gpu { 0 } else { 1 },
                args.join(", ")
            )
        })
        .collect();
    let json = format!("{{\"traceEvents\": [{}]}}", events.join(",\n"));
    crate::trace::load_bytes(json.into_bytes(), Path::new("hand.json"))
        .unwrap_or_else(|e| panic!("hand-written trace: {e}"))
}

/// The step above, with k2 on `k2_stream` and `sync` as the call at 700.
fn step_trace(k2_stream: i64, sync: &str) -> Trace {
    trace(&[
        ("user_annotation", "ProfilerStep#1", 1, 0.0, 1000.0, None),
        ("cpu_op", "forward", 1, 0.0, 1000.0, None),
        ("cpu_op", "aten::linear", 1, 100.0, 200.0, None),
        ("cpu_op", "aten::addmm", 1, 150.0, 130.0, None),
        ("cuda_runtime", "cudaLaunchKernel", 1, 200.0, 60.0, Some(1)),
        ("kernel", "k1", 7, 260.0, 10.0, Some(1)),
        ("cpu_op", "aten::view", 1, 350.0, 50.0, None),
        ("cpu_op", "aten::relu", 1, 450.0, 150.0, None),
        ("cuda_runtime", "cudaLaunchKernel", 1, 500.0, 60.0, Some(2)),
        ("kernel", "k2", k2_stream, 560.0, 5.0, Some(2)),
        ("cuda_runtime", sync, 1, 700.0, 10.0, Some(3)),
    ])
}

fn host() -> HostProfile {
    HostProfile {
        machine: HostMachine {
            device: "NVIDIA H200".into(),
            ..HostMachine::default()
        },
        source: "by hand".into(),
        dispatch_us_per_op: Some(1.0),
        interpreter_us_per_op: Some(2.0),
        launch_us: Some(3.0),
        sync_us: Some(4.0),
        ..HostProfile::default()
    }
}

/// The model call (µs) of `trace` with the host model, k1 taking `k1_us` and k2 `k2_us` on
/// the device.
fn model_call_us(trace: &Trace, k1_us: f64, k2_us: f64) -> f64 {
    let mut skeleton = skeleton(trace).unwrap_or_else(|e| panic!("{e}"));
    let ids = skeleton.signature_ids.clone();
    assert_eq!(ids.len(), 2, "k1 and k2 are two signatures");
    let settings = HostSettings {
        times: Some(HostTimes::Model),
        host: Some((host(), "hand".into())),
        measured_host_us: HashMap::from([(ids[0].clone(), 20.0), (ids[1].clone(), 15.0)]),
    };
    let report = settings
        .apply(trace, &mut skeleton)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.host_times, HostTimes::Model);
    assert_eq!(
        (report.units, report.launches, report.launches_measured),
        (3, 2, 2)
    );
    let mut durations = Durations::trace_own();
    durations
        .set(ids[0].clone(), k1_us)
        .set(ids[1].clone(), k2_us);
    let simulation = simulate(&skeleton, &durations);
    model_call_ns(&skeleton.steps[0], &simulation.steps[0]) as f64 / 1000.0
}

fn close(actual: f64, expected: f64) {
    assert!(
        (actual - expected).abs() < 0.002,
        "{actual} us, by hand {expected} us"
    );
}

#[test]
fn host_bound_the_host_sets_the_pace() {
    // Host: gap 0-12.5, launch 12.5-18.8, gap -33.0, launch -39.0, gap -43.513. k1 18.8-28.8,
    // k2 39.0-44.0. The sync waits until 44.0 and takes 4 more: 48.0. The model call runs
    // from the first launch (12.5): 35.5 µs.
    close(
        model_call_us(&step_trace(7, "cudaDeviceSynchronize"), 10.0, 5.0),
        35.5,
    );
}

#[test]
fn device_bound_the_kernels_set_the_pace() {
    // k1 18.8-118.8; k2 issued at 39.0 waits for its stream: 118.8-218.8; the sync ends at
    // 222.8: 210.3 µs from the first launch.
    close(
        model_call_us(&step_trace(7, "cudaDeviceSynchronize"), 100.0, 100.0),
        210.3,
    );
}

#[test]
fn two_streams_overlap() {
    // k2 on its own stream starts when issued (39.0), beside k1 (18.8-118.8), and ends at
    // 139.0 instead of 218.8; the device sync waits for both: 139.0 + 4 = 143.0, 130.5 µs.
    close(
        model_call_us(&step_trace(9, "cudaDeviceSynchronize"), 100.0, 100.0),
        130.5,
    );
}

#[test]
fn a_mid_step_sync_holds_the_host_until_the_device_is_done() {
    // The sync moved inside relu (after its launch): relu's host time is then its gaps and
    // launch only, the wait apart. relu's profiled pieces: 500-560 launch, 450-500 and
    // 570-600 gaps = 140 µs → 15 µs (× 15/140). k1 long (100 µs): 18.8-118.8; k2 118.8-123.8.
    let t = trace(&[
        ("user_annotation", "ProfilerStep#1", 1, 0.0, 1000.0, None),
        ("cpu_op", "forward", 1, 0.0, 1000.0, None),
        ("cpu_op", "aten::linear", 1, 100.0, 200.0, None),
        ("cpu_op", "aten::addmm", 1, 150.0, 130.0, None),
        ("cuda_runtime", "cudaLaunchKernel", 1, 200.0, 60.0, Some(1)),
        ("kernel", "k1", 7, 260.0, 10.0, Some(1)),
        ("cpu_op", "aten::view", 1, 350.0, 50.0, None),
        ("cpu_op", "aten::relu", 1, 450.0, 150.0, None),
        ("cuda_runtime", "cudaLaunchKernel", 1, 500.0, 60.0, Some(2)),
        ("kernel", "k2", 7, 560.0, 5.0, Some(2)),
        (
            "cuda_runtime",
            "cudaStreamSynchronize",
            1,
            560.0,
            10.0,
            Some(3),
        ),
    ]);
    // Host: gap 2 + 10.5 = 12.5, launch 6.3 (to 18.8), gap 4.2 + 2 + 1 + 2 + 50 × 15/140
    // (5.357) = 14.557 (to 33.357), launch 60 × 15/140 = 6.429 (to 39.786); the sync waits
    // for k2 (123.8) and takes 4: 127.8; 115.3 µs from the first launch.
    close(model_call_us(&t, 100.0, 5.0), 115.3);
}

#[test]
fn the_trace_and_the_corrected_host_times_keep_or_trim_the_recorded_ones() {
    let t = step_trace(7, "cudaDeviceSynchronize");
    let mut skeleton = skeleton(&t).unwrap_or_else(|e| panic!("{e}"));
    let untouched = skeleton.clone();
    let settings = |times| HostSettings {
        times: Some(times),
        host: Some((host(), "hand".into())),
        measured_host_us: HashMap::new(),
    };
    settings(HostTimes::Trace)
        .apply(&t, &mut skeleton)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(skeleton, untouched);
    // Corrected, 2 µs per op event and 5 per runtime call: the gap 260-500 held 2 op
    // events (view, relu) → 236 µs; each launch 60 → 55.
    let mut host_costs = host();
    host_costs.profiler_us_per_cpu_event = Some(2.0);
    host_costs.profiler_us_per_runtime_event = Some(5.0);
    let corrected = HostSettings {
        times: Some(HostTimes::Corrected),
        host: Some((host_costs, "hand".into())),
        measured_host_us: HashMap::new(),
    };
    let report = corrected
        .apply(&t, &mut skeleton)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.profiler_us_per_cpu_event, 2.0);
    let durations: Vec<Nanos> = skeleton.steps[0].threads[0]
        .items
        .iter()
        .map(|item| match item {
            crate::predict::HostItem::Gap { ns, .. } => *ns,
            crate::predict::HostItem::Launch { dispatch_ns, .. } => *dispatch_ns,
            crate::predict::HostItem::Wait { residual_ns, .. } => *residual_ns,
            crate::predict::HostItem::HostOp { ns, .. } => *ns,
        })
        .collect();
    // gap 0-200 (forward? no: starts at 0, not in the gap's open start... forward, linear,
    // addmm start in [0, 200]: 3 events, 6 µs) 194; launch 55; gap 260-500: 236; launch 55;
    // gap 560-700: 140; the sync's 10 less 5: 5; gap 710-1000: 290.
    assert_eq!(
        durations,
        vec![194_000, 55_000, 236_000, 55_000, 140_000, 5_000, 290_000]
    );
}

#[test]
fn a_model_without_a_usable_host_section_falls_back_and_says_so() {
    let t = step_trace(7, "cudaDeviceSynchronize");
    let mut skeleton = skeleton(&t).unwrap_or_else(|e| panic!("{e}"));
    let settings = HostSettings {
        times: Some(HostTimes::Model),
        host: None,
        measured_host_us: HashMap::new(),
    };
    let report = settings
        .apply(&t, &mut skeleton)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.host_times, HostTimes::Corrected);
    assert!(
        report.notes[0].contains("no host section"),
        "{:?}",
        report.notes
    );
}

#[test]
fn a_gpu_host_section_for_a_cpu_trace_is_refused() {
    let t = trace(&[
        ("user_annotation", "ProfilerStep#1", 1, 0.0, 100.0, None),
        ("cpu_op", "aten::relu", 1, 10.0, 20.0, None),
    ]);
    let mut skeleton = skeleton(&t).unwrap_or_else(|e| panic!("{e}"));
    let settings = HostSettings {
        times: Some(HostTimes::Model),
        host: Some((host(), "h200.json".into())),
        measured_host_us: HashMap::new(),
    };
    let error = settings.apply(&t, &mut skeleton).expect_err("a GPU model");
    assert!(
        error.contains("h200.json") && error.contains("CPU trace"),
        "{error}"
    );
}
