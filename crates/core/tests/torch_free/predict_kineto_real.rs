//! The timeline model on the shared traces that hold the patterns `predict_kineto_cases`
//! works out by hand (event and stream synchronisations on several streams, CUDA-graph
//! launches, blocking copies): each skeleton checked against what the trace's events say,
//! read by hand.

use replay_core::predict::{simulate, ActivityKind, Durations, HostItem, WaitKind};
use replay_core::trace::{self, Nanos, Trace};

use crate::common::shared_traces;
use crate::predict_kineto_cases::{skeleton_of, wait, US};

fn load(name: &str) -> Trace {
    trace::load(&shared_traces().join(name)).unwrap_or_else(|e| panic!("{e}"))
}

/// a100_multistream_sync (63 events, read by hand): no step span, so the window is timed,
/// from the first `aten::matmul` (ts 42535 µs after the trace's start) to the end of the
/// closing `cudaDeviceSynchronize` (62445 + 20 µs). Three matmuls on streams 20, 28 and 24,
/// each a `cudaMemsetAsync` + a `cudaLaunchKernel` of an `ampere_sgemm_128x64_nn`; its
/// `cudaEventQuery` calls do not block (their "Event Sync" rows are polls), so the only wait
/// is the device sync, on the last kernel of each stream, returning 13 µs after the last
/// one ends (62452 µs). Its `cudaStreamWaitEvent` (61961) makes stream 24 wait for the
/// event recorded (61945) on stream 20, whose last work is the first matmul's kernel: the
/// `cuda_sync` row names both the stream and the record.
#[test]
fn multistream_sync_trace_has_one_device_wait_on_every_streams_last_kernel() {
    let trace = load("a100_multistream_sync.json.gz");
    let skeleton = skeleton_of(&trace);
    assert_eq!(skeleton.steps.len(), 1);
    let step = &skeleton.steps[0];
    assert_eq!(step.measured_ns, (62_465 - 42_535) * US);
    assert_eq!(step.streams.len(), 3);
    let kinds: Vec<ActivityKind> = step.activities.iter().map(|a| a.kind).collect();
    assert_eq!(
        kinds,
        [ActivityKind::Memset, ActivityKind::Kernel].repeat(3),
        "memset then kernel, three times"
    );
    assert_eq!(step.threads.len(), 1);
    assert_eq!(step.launch_count(), 6);
    let waits: Vec<&HostItem> = step.threads[0]
        .items
        .iter()
        .filter(|item| matches!(item, HostItem::Wait { .. }))
        .collect();
    assert_eq!(waits, vec![&wait(WaitKind::Device, vec![1, 3, 5], 13)]);
    // The third matmul's memset (4, the next work on stream 24) follows the first kernel (1).
    assert_eq!(step.activities[4].after, vec![1]);
    // The trace's own durations give the trace's own timeline: every activity at its
    // traced start, and the window's length.
    let simulated = &simulate(&skeleton, &Durations::trace_own()).steps[0];
    let starts: Vec<Nanos> = simulated.activities.iter().map(|i| i.start_ns).collect();
    let traced: Vec<Nanos> = step.activities.iter().map(|a| a.trace_start_ns).collect();
    assert_eq!(starts, traced);
    assert_eq!(
        traced.iter().map(|t| t / US).collect::<Vec<_>>(),
        vec![411, 444, 825, 841, 19_778, 19_794]
    );
    assert_eq!(simulated.predicted_ns, step.measured_ns);
}

/// a100_train_cudagraph_rank0: five steps, each (counted in the file) with 14
/// `cudaGraphLaunch` calls of 2, 1, 1, 2, 2, 9, 3, 1, 20, 3, 3, 1, 1 and 20 kernels,
/// 50 memsets, 15 `cudaStreamSynchronize` and 6 `.item()`-style device-to-pageable copies
/// the host waits for (7 in the last step, whose extra one is a pageable host-to-device
/// copy that ended before its call returned).
#[test]
fn cudagraph_trace_has_graph_launches_copies_and_waits_in_every_step() {
    let trace = load("a100_train_cudagraph_rank0.json.gz");
    let skeleton = skeleton_of(&trace);
    assert_eq!(skeleton.steps.len(), 5);
    for (index, step) in skeleton.steps.iter().enumerate() {
        let mut multi_kernel_launches = Vec::new();
        let mut copy_waits = 0;
        let mut stream_waits = 0;
        for item in step.threads.iter().flat_map(|t| &t.items) {
            match item {
                HostItem::Launch { activities, .. } if activities.len() > 1 => {
                    multi_kernel_launches.push(activities.len());
                    // A graph's work all points back at the one launch.
                    let first = &step.activities[activities[0]];
                    for &a in activities {
                        assert_eq!(step.activities[a].launch, first.launch, "{}", step.name);
                    }
                }
                HostItem::Wait {
                    kind: WaitKind::Copy,
                    ..
                } => copy_waits += 1,
                HostItem::Wait {
                    kind: WaitKind::Stream,
                    ..
                } => stream_waits += 1,
                _ => {}
            }
        }
        assert_eq!(
            multi_kernel_launches,
            vec![2, 2, 2, 9, 3, 20, 3, 3, 20],
            "{}",
            step.name
        );
        assert_eq!(copy_waits, if index == 4 { 7 } else { 6 }, "{}", step.name);
        assert_eq!(stream_waits, 15, "{}", step.name);
        let memsets = step
            .activities
            .iter()
            .filter(|a| a.kind == ActivityKind::Memset)
            .count();
        assert_eq!(memsets, 50, "{}", step.name);
    }
}

/// The GPU of a100_train_cudagraph_rank0 runs up to ~147 ms behind the host, and the
/// `.item()` copies wait for it: one call lasts 146.9 ms, of which the copy itself is 2 µs
/// and the host's own part a few µs. That wait belongs to the GPU: a launch item that
/// counted it as host dispatch would hold the host for it in any what-if, however fast
/// the replayed kernels. The wait is on the timeline as the host's wait for the copy
/// instead, and no copy's dispatch reaches 5 ms: the longest, 4.9 ms, is a copy on stream
/// 27 that waited for an NCCL kernel on stream 84 through a dependency the trace does not
/// show (no `cuda_sync` rows), so nothing says that wait was the GPU's.
#[test]
fn cudagraph_trace_blocking_copies_wait_for_the_gpu_not_in_their_dispatch() {
    let trace = load("a100_train_cudagraph_rank0.json.gz");
    let skeleton = skeleton_of(&trace);
    let simulation = simulate(&skeleton, &Durations::trace_own());
    let mut longest_wait_ns = 0;
    for (step, simulated) in skeleton.steps.iter().zip(&simulation.steps) {
        for (thread, spans) in step.threads.iter().zip(&simulated.host) {
            for (k, pair) in thread.items.windows(2).enumerate() {
                if let [HostItem::Launch { dispatch_ns, .. }, HostItem::Wait {
                    kind: WaitKind::Copy,
                    ..
                }] = pair
                {
                    assert!(
                        *dispatch_ns < 5000 * US,
                        "{}: a blocking copy with {dispatch_ns} ns of dispatch",
                        step.name
                    );
                    let waited = spans[k + 1].end_ns - spans[k + 1].start_ns;
                    longest_wait_ns = longest_wait_ns.max(waited);
                }
            }
        }
    }
    assert!(longest_wait_ns > 100_000 * US, "{longest_wait_ns}");
}
