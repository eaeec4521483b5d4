//! Making the skeleton of every step of a trace.
//!
//! Per step window ([`super::steps`]) and host thread, the thread's CUDA/HIP API calls
//! that start inside the window are walked in time order:
//! - a call that launched GPU activities (same correlation id) becomes a launch item of the
//!   call's measured duration; a copy call that returns only when its copy is done
//!   (synchronous API, or a pageable copy that ended after its GPU copy) is split into the
//!   launch and a wait for the copy;
//! - `cudaDeviceSynchronize`/`cudaStreamSynchronize`/`cudaEventSynchronize` (and `cudaFree`,
//!   which synchronises the device) become waits. A stream sync's stream is the one of the
//!   kineto `cuda_sync` row with the same correlation id when the trace has it, else the
//!   stream of the thread's last launch. `aten::item`/`_local_scalar_dense` and `.cpu()`
//!   block through exactly these calls, so they need no rule of their own;
//! - `cudaEventRecord` + `cudaStreamWaitEvent` make the next activity launched on the
//!   waiting stream depend on the last activity issued before the record: to the stream the
//!   wait's `cuda_sync` row names as the event's (newer kineto), else the thread's last;
//! - everything between those calls (framework code, other API calls) is a gap, as measured.
//!
//! In a CPU-only trace the items are the top-level ops (the units `replay classify` makes
//! signatures of) and the gaps between them.
//!
//! Each activity carries the measured delays of [`super::delays`].

mod context;
mod facts;
mod step;
mod thread;
mod waits;

use crate::signature;
use crate::trace::link;
use crate::trace::Trace;

use super::error::PredictError;
use super::skeleton::{Skeleton, StepSkeleton};
use crate::trace::steps::{step_windows, StepWindow};

use context::TraceContext;
pub(crate) use facts::StepFacts;

/// The skeleton of the step in `window` and its signature ids, from `trace`, which holds
/// the events the step reads (as [`super::stream`] gathers them) and `facts`, what it
/// reads of the rest.
pub(crate) fn step_skeleton(trace: &Trace, window: &StepWindow, facts: &StepFacts) -> Skeleton {
    let links = link::link(trace);
    let ids = signature::signature_ids(trace, &links);
    let context = TraceContext::new(trace, &links, &ids, Some(facts));
    Skeleton {
        source: crate::trace::steps::StepSource::ProfilerStep,
        signature_ids: ids.ids().to_vec(),
        steps: vec![context.step(window)],
    }
}

/// Builds the skeleton of every step of `trace`.
pub fn skeleton(trace: &Trace) -> Result<Skeleton, PredictError> {
    let links = link::link(trace);
    let ids = signature::signature_ids(trace, &links);
    let (source, windows) = step_windows(trace);
    if windows.is_empty() {
        return Err(PredictError::NothingToTime {
            path: trace.source.path.clone(),
        });
    }
    let context = TraceContext::new(trace, &links, &ids, None);
    Ok(Skeleton {
        source,
        signature_ids: ids.ids().to_vec(),
        steps: build_steps(&context, &windows),
    })
}

/// The skeleton of the one step `window` of `trace` (from `source`): `replay sequence
/// --execution-trace` re-runs the step the Execution Trace recorded
/// ([`crate::execution_trace::link::EtLinks::step_window`]).
pub fn skeleton_of_window(
    trace: &Trace,
    source: crate::trace::steps::StepSource,
    window: &StepWindow,
) -> Skeleton {
    let links = link::link(trace);
    let ids = signature::signature_ids(trace, &links);
    let context = TraceContext::new(trace, &links, &ids, None);
    Skeleton {
        source,
        signature_ids: ids.ids().to_vec(),
        steps: vec![context.step(window)],
    }
}

/// The skeleton of each window, in order: the later half of the windows built on a second
/// core (each step reads the shared context only).
fn build_steps(context: &TraceContext<'_>, windows: &[StepWindow]) -> Vec<StepSkeleton> {
    let build = |windows: &[StepWindow]| windows.iter().map(|w| context.step(w)).collect();
    if windows.len() < 2 {
        return build(windows);
    }
    let (first, second) = windows.split_at(windows.len() / 2);
    std::thread::scope(|scope| {
        let later = scope.spawn(|| build(second));
        let mut steps: Vec<StepSkeleton> = build(first);
        steps.extend(later.join().unwrap_or_else(|_| build(second)));
        steps
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::predict::skeleton::{HostItem, WaitKind};
    use crate::predict::{simulate, Durations};
    use crate::trace::Nanos;

    /// `(cat, name, pid, tid, ts_us, dur_us, correlation)`.
    type EventRow<'r> = (&'r str, &'r str, i64, i64, f64, f64, Option<i64>);

    /// A trace from `(cat, name, pid, tid, ts_us, dur_us, correlation, stream)` rows.
    fn trace(rows: &[EventRow]) -> Trace {
        let events: Vec<String> = rows
            .iter()
            .map(|(cat, name, pid, tid, ts, dur, correlation)| {
                let mut args = Vec::new();
                if let Some(c) = correlation {
                    args.push(format!("\"correlation\": {c}"));
                }
                if *pid == 0 {
                    args.push(format!("\"stream\": {tid}"));
                }
                format!(
                    "{{\"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"pid\": {pid}, \
                     \"tid\": {tid}, \"ts\": {ts}, \"dur\": {dur}, \"args\": {{{}}}}}",
                    args.join(", ")
                )
            })
            .collect();
        let json = format!("{{\"traceEvents\": [{}]}}", events.join(",\n"));
        crate::trace::load_bytes(json.into_bytes(), Path::new("synthetic.json"))
            .unwrap_or_else(|e| panic!("synthetic trace: {e}"))
    }

    const STEP: (&str, &str, i64, i64, f64, f64, Option<i64>) =
        ("user_annotation", "ProfilerStep#1", 1, 1, 0.0, 100.0, None);

    #[test]
    fn launches_copies_and_syncs_become_items() {
        let trace = trace(&[
            STEP,
            ("cuda_runtime", "cudaLaunchKernel", 1, 1, 10.0, 5.0, Some(1)),
            ("kernel", "k1", 0, 7, 16.0, 30.0, Some(1)),
            // A pageable copy whose call returns after the copy: the host waits for it.
            ("cuda_runtime", "cudaMemcpyAsync", 1, 1, 20.0, 40.0, Some(2)),
            (
                "gpu_memcpy",
                "Memcpy DtoH (Device -> Pageable)",
                0,
                7,
                47.0,
                10.0,
                Some(2),
            ),
            (
                "cuda_runtime",
                "cudaStreamSynchronize",
                1,
                1,
                65.0,
                3.0,
                Some(3),
            ),
            ("cuda_sync", "Stream Sync", 0, 7, 65.5, 2.0, Some(3)),
        ]);
        let skeleton = skeleton(&trace).unwrap_or_else(|e| panic!("{e}"));
        let step = &skeleton.steps[0];
        assert_eq!(step.measured_ns, 100_000);
        assert_eq!(step.threads.len(), 1);
        assert_eq!(
            step.threads[0].items,
            vec![
                HostItem::Gap {
                    ns: 10_000,
                    profiled_ops: 0
                },
                HostItem::Launch {
                    signature: Some(0),
                    dispatch_ns: 5_000,
                    activities: vec![0]
                },
                HostItem::Gap {
                    ns: 5_000,
                    profiled_ops: 0
                },
                // The copy started 27 us into the call, 1 us after k1 freed the stream:
                // that wait is the GPU's, not dispatch...
                HostItem::Launch {
                    signature: Some(1),
                    dispatch_ns: 0,
                    activities: vec![1]
                },
                // ...and the call returned 3 us after the copy ended.
                HostItem::Wait {
                    kind: WaitKind::Copy,
                    on: vec![1],
                    residual_ns: 3_000
                },
                HostItem::Gap {
                    ns: 5_000,
                    profiled_ops: 0
                },
                HostItem::Wait {
                    kind: WaitKind::Stream,
                    on: vec![1],
                    residual_ns: 3_000
                },
                HostItem::Gap {
                    ns: 32_000,
                    profiled_ops: 0
                },
            ]
        );
        assert_eq!(step.activities[0].latency_ns, 1_000);
        // The copy is bound by its stream: the typical latency, and its 1 us gap after k1.
        assert_eq!(step.activities[1].latency_ns, 1_000);
        assert_eq!(step.activities[1].stream_gap_ns, 1_000);

        let own = simulate(&skeleton, &Durations::trace_own());
        assert_eq!(own.steps[0].predicted_ns, 100_000);
        let starts: Vec<Nanos> = own.steps[0].activities.iter().map(|i| i.start_ns).collect();
        assert_eq!(starts, vec![16_000, 47_000]);

        // A 30 us longer copy holds the host 30 us longer: every later item shifts.
        let mut slower = Durations::trace_own();
        slower.set(skeleton.signature_ids[1].clone(), 40.0);
        let slower = simulate(&skeleton, &slower);
        assert_eq!(slower.steps[0].predicted_ns, 130_000);
        assert_eq!(slower.steps[0].overridden_invocations, 1);
    }

    #[test]
    fn a_stream_wait_event_orders_two_streams() {
        let trace = trace(&[
            ("user_annotation", "ProfilerStep#1", 1, 1, 0.0, 200.0, None),
            ("cuda_runtime", "cudaLaunchKernel", 1, 1, 10.0, 5.0, Some(1)),
            ("kernel", "k1", 0, 7, 16.0, 50.0, Some(1)),
            ("cuda_runtime", "cudaEventRecord", 1, 1, 20.0, 1.0, Some(2)),
            (
                "cuda_runtime",
                "cudaStreamWaitEvent",
                1,
                1,
                25.0,
                1.0,
                Some(3),
            ),
            ("cuda_sync", "Stream Wait Event", 0, 9, 25.5, 0.5, Some(3)),
            ("cuda_runtime", "cudaLaunchKernel", 1, 1, 30.0, 5.0, Some(4)),
            ("kernel", "k2", 0, 9, 67.0, 10.0, Some(4)),
            (
                "cuda_runtime",
                "cudaDeviceSynchronize",
                1,
                1,
                40.0,
                40.0,
                Some(5),
            ),
        ]);
        let skeleton = skeleton(&trace).unwrap_or_else(|e| panic!("{e}"));
        let step = &skeleton.steps[0];
        assert_eq!(step.streams.len(), 2);
        assert_eq!(step.activities[1].after, vec![0]);
        assert_eq!(step.activities[1].stream_gap_ns, 1_000);
        let sync = step.threads[0].items.iter().find_map(|item| match item {
            HostItem::Wait {
                kind,
                on,
                residual_ns,
            } => Some((*kind, on.clone(), *residual_ns)),
            _ => None,
        });
        assert_eq!(sync, Some((WaitKind::Device, vec![0, 1], 3_000)));

        let own = simulate(&skeleton, &Durations::trace_own());
        let starts: Vec<Nanos> = own.steps[0].activities.iter().map(|i| i.start_ns).collect();
        assert_eq!(starts, vec![16_000, 67_000]);
        assert_eq!(own.steps[0].predicted_ns, 200_000);

        // k1 100 us instead of 50: k2 follows it across streams, the sync waits for k2.
        let mut longer = Durations::trace_own();
        longer.set(skeleton.signature_ids[0].clone(), 100.0);
        let longer = &simulate(&skeleton, &longer).steps[0];
        assert_eq!(longer.activities[1].start_ns, 117_000);
        // Sync from 40: waits until 127, +3 residual = 130; then the measured 120 us tail.
        assert_eq!(longer.predicted_ns, 250_000);
    }

    #[test]
    fn a_cpu_only_trace_is_top_level_ops_and_gaps() {
        let trace = trace(&[
            STEP,
            ("cpu_op", "aten::linear", 1, 1, 10.0, 20.0, None),
            ("cpu_op", "aten::addmm", 1, 1, 12.0, 15.0, None),
            ("cpu_op", "aten::relu", 1, 1, 40.0, 10.0, None),
        ]);
        let skeleton = skeleton(&trace).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(skeleton.signature_ids.len(), 2);
        let items = &skeleton.steps[0].threads[0].items;
        assert_eq!(items.len(), 5);
        assert_eq!(
            items[0],
            HostItem::Gap {
                ns: 10_000,
                profiled_ops: 1
            }
        );
        assert!(matches!(items[1], HostItem::HostOp { ns: 20_000, .. }));
        assert_eq!(
            items[2],
            HostItem::Gap {
                ns: 10_000,
                profiled_ops: 1
            }
        );
        assert!(matches!(items[3], HostItem::HostOp { ns: 10_000, .. }));
        assert_eq!(
            items[4],
            HostItem::Gap {
                ns: 50_000,
                profiled_ops: 0
            }
        );
        assert_eq!(
            simulate(&skeleton, &Durations::trace_own()).steps[0].predicted_ns,
            100_000
        );
        // The gap before each top-level op holds that op's profiler recording cost: with
        // 1.5 us per op calibrated, the two ops' gaps shrink by 1.5 us each.
        let mut unprofiled = Durations::trace_own();
        unprofiled.remove_profiler_overhead(1.5);
        assert_eq!(
            simulate(&skeleton, &unprofiled).steps[0].predicted_ns,
            97_000
        );
    }

    #[test]
    fn without_a_step_span_the_window_is_timed() {
        let trace = trace(&[
            ("cpu_op", "aten::add", 1, 1, 5.0, 20.0, None),
            ("cuda_runtime", "cudaLaunchKernel", 1, 1, 10.0, 5.0, Some(1)),
            ("kernel", "k", 0, 7, 16.0, 30.0, Some(1)),
        ]);
        let skeleton = skeleton(&trace).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(skeleton.source, crate::predict::StepSource::ProfiledWindow);
        // From the op's start (5) to the kernel's end (46).
        assert_eq!(skeleton.steps[0].measured_ns, 41_000);
        assert_eq!(
            simulate(&skeleton, &Durations::trace_own()).steps[0].predicted_ns,
            41_000
        );
    }

    #[test]
    fn a_trace_with_nothing_to_time_is_an_error() {
        let trace = trace(&[("cpu_instant_event", "x", 1, 1, 0.0, 0.0, None)]);
        assert!(matches!(
            skeleton(&trace),
            Err(PredictError::NothingToTime { .. })
        ));
    }
}
