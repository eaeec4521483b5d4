//! Predicted timelines as a Chrome trace (the JSON that ui.perfetto.dev and
//! `chrome://tracing` open): each timeline one process, side by side; in it one row per host
//! thread (launch calls, waits, top-level ops), one per GPU stream (kernels, copies,
//! memsets), flow arrows from each launch to its work, and a "critical path" row that repeats
//! the chain of work the step's time is made of (its events are also marked
//! `"critical": true`).
//!
//! The events use Kineto's categories and fields (`cpu_op`, `cuda_runtime`, `kernel` with
//! `correlation`, `ac2g` flows), so the file is a profiler trace in its own right:
//! `replay classify` reads it back. Correlation ids are unique across the whole file, so
//! each process's launches link to their own work. Steps are laid one after the other;
//! times are microseconds from the first step's start.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{json, Value};

use crate::predict::{
    critical_path, ActivityKind, HostItem, SignatureCatalog, SimulatedStep, StepNode, StepSkeleton,
    Timeline, WaitKind,
};
use crate::trace::Nanos;

/// The row (`tid`) of a step's critical path inside each process.
const CRITICAL_PATH_TID: u64 = 999;
/// Streams' rows come after the host threads': `tid` = this + the stream's index.
const STREAM_TID_BASE: u64 = 1000;

/// Writes `timelines` to `path` as a Chrome trace, one process each under the timeline's
/// name, in the order given (the original first). `catalog` names the work by signature id;
/// `SignatureCatalog::from_file` of the trace's signature file makes it.
pub fn write(
    path: &Path,
    timelines: &[&Timeline],
    catalog: &SignatureCatalog,
) -> crate::Result<()> {
    // Compact: a real trace's timelines run to tens of megabytes, twice that pretty-printed.
    // Encoding our own values cannot fail; `null` rather than a panic if it ever did.
    let mut bytes =
        serde_json::to_vec(&chrome_trace(timelines, catalog)).unwrap_or_else(|_| b"null".to_vec());
    bytes.push(b'\n');
    super::write_atomic(path, &bytes)
}

/// The Chrome trace of `timelines`: `{"traceEvents": [...], "displayTimeUnit": "ns"}`.
pub fn chrome_trace(timelines: &[&Timeline], catalog: &SignatureCatalog) -> Value {
    let mut writer = EventWriter {
        events: Vec::new(),
        next_correlation: 1,
        catalog,
    };
    for (index, timeline) in timelines.iter().enumerate() {
        writer.timeline(index as u64 + 1, timeline);
    }
    json!({
        "traceEvents": writer.events,
        "displayTimeUnit": "ns",
        "otherData": {"producer": "replay predict --perfetto"},
    })
}

/// Nanoseconds to the trace's microseconds, exact to the nanosecond.
fn us(ns: Nanos) -> f64 {
    ns as f64 / 1000.0
}

struct EventWriter<'c> {
    events: Vec<Value>,
    next_correlation: i64,
    catalog: &'c SignatureCatalog,
}

/// Where one step of a timeline lies in the file.
struct Placement<'t> {
    pid: u64,
    /// The timeline's signature ids, which its steps refer to by index.
    ids: &'t [String],
    /// The step's start on the file's axis.
    offset_ns: Nanos,
}

impl Placement<'_> {
    fn ts(&self, ns: Nanos) -> f64 {
        us(self.offset_ns.saturating_add(ns))
    }

    fn id(&self, signature: &Option<u32>) -> Option<&str> {
        signature
            .and_then(|s| self.ids.get(s as usize))
            .map(String::as_str)
    }
}

impl EventWriter<'_> {
    fn metadata(&mut self, pid: u64, tid: Option<u64>, what: &str, name: &str) {
        let mut event = json!({"ph": "M", "name": what, "pid": pid, "args": {"name": name}});
        if let Some(tid) = tid {
            event["tid"] = json!(tid);
        }
        self.events.push(event);
    }

    fn timeline(&mut self, pid: u64, timeline: &Timeline) {
        self.metadata(pid, None, "process_name", &timeline.name);
        self.events
            .push(json!({"ph": "M", "name": "process_sort_index", "pid": pid,
            "args": {"sort_index": pid}}));
        self.metadata(pid, Some(CRITICAL_PATH_TID), "thread_name", "critical path");
        let steps = &timeline.skeleton.steps;
        if let Some(first) = steps.first() {
            for (t, thread) in first.threads.iter().enumerate() {
                self.metadata(
                    pid,
                    Some(t as u64 + 1),
                    "thread_name",
                    &format!("host {}", thread.label),
                );
            }
            for (s, stream) in first.streams.iter().enumerate() {
                self.metadata(
                    pid,
                    Some(STREAM_TID_BASE + s as u64),
                    "thread_name",
                    &format!("stream {}", stream.label),
                );
            }
        }
        let mut offset_ns: Nanos = 0;
        for (step, simulated) in steps.iter().zip(&timeline.simulation.steps) {
            let placement = Placement {
                pid,
                ids: &timeline.skeleton.signature_ids,
                offset_ns,
            };
            self.step(&placement, step, simulated);
            // The next step starts when everything of this one has finished.
            offset_ns = offset_ns
                .saturating_add(simulated.host_end_ns.max(simulated.device_end_ns))
                .max(offset_ns);
        }
    }

    fn step(&mut self, at: &Placement, step: &StepSkeleton, simulated: &SimulatedStep) {
        let path = critical_path(step, simulated);
        let critical: HashSet<StepNode> = path.iter().copied().collect();
        let on_path = |node: StepNode| critical.contains(&node);
        self.events.push(json!({
            "ph": "X", "cat": "user_annotation", "name": step.name, "pid": at.pid, "tid": 1,
            "ts": at.ts(0), "dur": us(simulated.predicted_ns),
            "args": {"predicted_us": us(simulated.predicted_ns), "measured_us": us(step.measured_ns)},
        }));

        // Each launch's correlation id, to give its activities the same one.
        let mut correlation_of_activity: Vec<Option<i64>> = vec![None; step.activities.len()];
        for (t, (thread, spans)) in step.threads.iter().zip(&simulated.host).enumerate() {
            let tid = t as u64 + 1;
            for (k, (item, span)) in thread.items.iter().zip(spans).enumerate() {
                let critical = on_path(StepNode::Host { thread: t, item: k });
                let (ts, dur) = (at.ts(span.start_ns), us(span.end_ns - span.start_ns));
                match item {
                    HostItem::Gap { .. } => {}
                    HostItem::HostOp { signature, .. } => {
                        let (name, label, id) = self.names(at.id(signature));
                        self.events.push(json!({
                            "ph": "X", "cat": "cpu_op", "name": name, "pid": at.pid, "tid": tid,
                            "ts": ts, "dur": dur,
                            "args": {"label": label, "signature": id, "critical": critical},
                        }));
                    }
                    HostItem::Launch {
                        signature,
                        activities,
                        ..
                    } => {
                        let correlation = self.next_correlation;
                        self.next_correlation += 1;
                        for &a in activities {
                            if let Some(slot) = correlation_of_activity.get_mut(a) {
                                *slot = Some(correlation);
                            }
                        }
                        let kind = activities
                            .first()
                            .and_then(|&a| step.activities.get(a))
                            .map(|a| a.kind);
                        let call = match kind {
                            Some(ActivityKind::Memcpy) => "cudaMemcpyAsync",
                            Some(ActivityKind::Memset) => "cudaMemsetAsync",
                            _ => "cudaLaunchKernel",
                        };
                        let (_, label, id) = self.names(at.id(signature));
                        // The launching op around its call, so that a reader links the work
                        // to it as in a profiled trace.
                        if let Some(op) = id
                            .as_deref()
                            .and_then(|id| self.catalog.get(id))
                            .and_then(|info| info.ops.first())
                        {
                            self.events.push(json!({
                                "ph": "X", "cat": "cpu_op", "name": op, "pid": at.pid,
                                "tid": tid, "ts": ts, "dur": dur, "args": {"label": label},
                            }));
                        }
                        self.events.push(json!({
                            "ph": "X", "cat": "cuda_runtime", "name": call, "pid": at.pid,
                            "tid": tid, "ts": ts, "dur": dur,
                            "args": {"correlation": correlation, "label": label,
                                "critical": critical},
                        }));
                    }
                    HostItem::Wait { kind, .. } => {
                        let name = match kind {
                            WaitKind::Device => "cudaDeviceSynchronize",
                            WaitKind::Stream => "cudaStreamSynchronize",
                            WaitKind::Event => "cudaEventSynchronize",
                            WaitKind::Copy => "wait for a blocking copy",
                        };
                        self.events.push(json!({
                            "ph": "X", "cat": "cuda_runtime", "name": name, "pid": at.pid,
                            "tid": tid, "ts": ts, "dur": dur, "args": {"critical": critical},
                        }));
                    }
                }
            }
        }

        for (a, (activity, span)) in step
            .activities
            .iter()
            .zip(&simulated.activities)
            .enumerate()
        {
            let tid = STREAM_TID_BASE + activity.stream as u64;
            let (name, label, id) = self.names(at.id(&activity.signature));
            let cat = match activity.kind {
                ActivityKind::Kernel => "kernel",
                ActivityKind::Memcpy => "gpu_memcpy",
                ActivityKind::Memset => "gpu_memset",
            };
            let stream = step
                .streams
                .get(activity.stream)
                .and_then(|s| s.label.rsplit('/').next()?.parse::<i64>().ok())
                .unwrap_or(activity.stream as i64);
            let correlation = correlation_of_activity.get(a).copied().flatten();
            let ts = at.ts(span.start_ns);
            self.events.push(json!({
                "ph": "X", "cat": cat, "name": name, "pid": at.pid, "tid": tid, "ts": ts,
                "dur": us(span.end_ns - span.start_ns),
                "args": {"device": 0, "stream": stream, "correlation": correlation,
                    "label": label, "signature": id,
                    "critical": on_path(StepNode::Activity(a))},
            }));
            // The arrow from the launch call to its work.
            if let (Some(correlation), Some(launch)) = (correlation, activity.launch) {
                let call = simulated
                    .host
                    .get(launch.thread)
                    .and_then(|t| t.get(launch.item));
                if let Some(call) = call {
                    self.events.push(json!({
                        "ph": "s", "cat": "ac2g", "name": "ac2g", "id": correlation,
                        "pid": at.pid, "tid": launch.thread as u64 + 1, "ts": at.ts(call.start_ns),
                    }));
                    self.events.push(json!({
                        "ph": "f", "bp": "e", "cat": "ac2g", "name": "ac2g", "id": correlation,
                        "pid": at.pid, "tid": tid, "ts": ts,
                    }));
                }
            }
        }

        self.critical_path_row(at, step, simulated, &path);
    }

    /// The critical path again on a row of its own, framework time included: what to
    /// shorten to shorten the step.
    fn critical_path_row(
        &mut self,
        at: &Placement,
        step: &StepSkeleton,
        simulated: &SimulatedStep,
        path: &[StepNode],
    ) {
        for &node in path {
            let (span, name) = match node {
                StepNode::Host { thread, item } => {
                    let Some(span) = simulated.host.get(thread).and_then(|t| t.get(item)) else {
                        continue;
                    };
                    let name = match step.threads.get(thread).and_then(|t| t.items.get(item)) {
                        Some(HostItem::Gap { .. }) => "framework".to_owned(),
                        Some(HostItem::HostOp { signature, .. }) => self.names(at.id(signature)).1,
                        Some(HostItem::Launch { .. }) => "launch".to_owned(),
                        Some(HostItem::Wait { .. }) => "wait".to_owned(),
                        None => continue,
                    };
                    (span, name)
                }
                StepNode::Activity(a) => {
                    let (Some(span), Some(activity)) =
                        (simulated.activities.get(a), step.activities.get(a))
                    else {
                        continue;
                    };
                    (span, self.names(at.id(&activity.signature)).1)
                }
            };
            if span.end_ns <= span.start_ns {
                continue;
            }
            self.events.push(json!({
                "ph": "X", "cat": "critical_path", "name": name, "pid": at.pid,
                "tid": CRITICAL_PATH_TID, "ts": at.ts(span.start_ns),
                "dur": us(span.end_ns - span.start_ns),
            }));
        }
    }

    /// The name (kernel or op), readable label and id of a signature; placeholders for
    /// work the trace did not attribute.
    fn names(&self, id: Option<&str>) -> (String, String, Option<String>) {
        match id.and_then(|id| Some((id, self.catalog.get(id)?))) {
            Some((id, info)) => (info.name.clone(), info.label.clone(), Some(id.to_owned())),
            None => (
                "unattributed".to_owned(),
                "unattributed".to_owned(),
                id.map(str::to_owned),
            ),
        }
    }
}
