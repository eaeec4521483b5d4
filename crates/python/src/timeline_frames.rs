//! The timeline model's frames: `Trace.steps()` (the measured steps), `Trace.predict()` (the
//! original timeline and each what-if, the numbers `replay predict` prints) and
//! `Trace.critical_path()` (the chain of host items and GPU activities the step's time is
//! made of, what the Perfetto export draws on its "critical path" row).

use replay_core::predict::{
    ActivityKind, HostItem, PredictOutput, SignatureCatalog, StepNode, StepSource, Timeline,
};
use replay_core::trace::steps::step_windows;
use replay_core::trace::Trace;

use crate::columns::{Builder, Table};
use crate::kernels::us;
use crate::signatures::serde_name;

/// The trace's steps (`ProfilerStep#N` spans, else the profiled window), in time order.
pub fn steps(trace: &Trace) -> Table {
    let (source, windows) = step_windows(trace);
    let from = match source {
        StepSource::ProfilerStep => "profiler_step",
        StepSource::ProfiledWindow => "profiled_window",
    };
    let mut name = Builder::strs("name");
    let mut ts = Builder::floats("ts");
    let mut dur = Builder::floats("dur");
    let mut source = Builder::strs("source");
    for w in &windows {
        name.str(Some(&w.name));
        ts.float(Some(us(w.start_ns)));
        dur.float(Some(us(w.duration_ns())));
        source.str(Some(from));
    }
    Table::new(vec![name, ts, dur, source])
}

/// One row for the original timeline, one per what-if (each on top of the ones before
/// it), and one for the replayed durations of an `isolated.json` when given.
pub fn predictions(out: &PredictOutput) -> Table {
    let mut timeline = Builder::strs("timeline");
    let mut applied = Builder::strs("applied");
    let mut predicted = Builder::floats("predicted_us");
    let mut measured = Builder::floats("measured_us");
    let mut error = Builder::floats("error_percent");
    let mut change = Builder::floats("change_percent");
    let mut kernel_sum = Builder::floats("kernel_sum_us");
    let mut busy = Builder::floats("gpu_busy_fraction");
    let mut changed = Builder::ints("changed_durations");
    let p = &out.prediction;
    timeline.str(Some("original"));
    applied.str(Some(""));
    predicted.float(Some(p.predicted_us));
    measured.float(Some(p.measured_us));
    error.float(Some(p.error_percent));
    change.float(Some(0.0));
    kernel_sum.float(Some(p.kernel_sum_us));
    busy.float(Some(p.gpu_busy_fraction));
    changed.int(Some(0));
    for o in &out.outcomes {
        timeline.str(Some(&o.expression));
        applied.str(Some(&o.applied.join(" ; ")));
        predicted.float(Some(o.predicted_us));
        measured.float(Some(p.measured_us));
        error.float(Some(o.error_percent));
        change.float(Some(o.change_percent));
        kernel_sum.float(Some(o.kernel_sum_us));
        busy.float(Some(o.gpu_busy_fraction));
        changed.uint(Some(o.changed_durations));
    }
    if let Some(r) = &out.replayed {
        timeline.str(Some(&format!("isolated={}", r.isolated)));
        applied.str(Some(&format!(
            "durations of {} ({}, {} signatures replayed)",
            r.isolated, r.isolated_device, r.replayed_signatures
        )));
        predicted.float(Some(r.predicted_us));
        measured.float(Some(r.measured_us));
        error.float(Some(r.error_percent));
        change.float(None);
        kernel_sum.float(None);
        busy.float(None);
        changed.uint(Some(r.replayed_signatures as u64));
    }
    Table::new(vec![
        timeline, applied, predicted, measured, error, change, kernel_sum, busy, changed,
    ])
}

/// The critical path of each step of `timeline`, first element first. `start_us` is on the
/// predicted step's own axis (0 = the step's start).
pub fn critical_path(timeline: &Timeline, catalog: &SignatureCatalog) -> Table {
    let mut step_col = Builder::strs("step");
    let mut position = Builder::ints("position");
    let mut node_col = Builder::strs("node");
    let mut name = Builder::strs("name");
    let mut label = Builder::strs("label");
    let mut signature = Builder::strs("signature");
    let mut lane = Builder::strs("lane");
    let mut start = Builder::floats("start_us");
    let mut dur = Builder::floats("dur");
    let ids = &timeline.skeleton.signature_ids;
    let id_of = |s: &Option<u32>| s.and_then(|s| ids.get(s as usize)).map(String::as_str);
    let paths = timeline.critical_paths();
    let steps = timeline
        .skeleton
        .steps
        .iter()
        .zip(&timeline.simulation.steps);
    for ((step, simulated), path) in steps.zip(&paths) {
        for (at, node) in path.iter().enumerate() {
            let (span, kind, id, where_) = match *node {
                StepNode::Host { thread, item } => {
                    let span = simulated.host.get(thread).and_then(|t| t.get(item));
                    let host = step.threads.get(thread);
                    let (kind, id) = match host.and_then(|t| t.items.get(item)) {
                        Some(HostItem::Gap { .. }) => ("framework".to_owned(), None),
                        Some(HostItem::HostOp { signature, .. }) => {
                            ("host_op".to_owned(), id_of(signature))
                        }
                        Some(HostItem::Launch { signature, .. }) => {
                            ("launch".to_owned(), id_of(signature))
                        }
                        Some(HostItem::Wait { kind, .. }) => (
                            format!("wait:{}", serde_name(kind).unwrap_or_default()),
                            None,
                        ),
                        None => continue,
                    };
                    (span, kind, id, host.map(|t| format!("host {}", t.label)))
                }
                StepNode::Activity(a) => {
                    let activity = step.activities.get(a);
                    let kind = match activity.map(|a| a.kind) {
                        Some(ActivityKind::Kernel) => "kernel".to_owned(),
                        Some(ActivityKind::Memcpy) => "memcpy".to_owned(),
                        Some(ActivityKind::Memset) => "memset".to_owned(),
                        None => continue,
                    };
                    let stream = activity
                        .and_then(|a| step.streams.get(a.stream))
                        .map(|s| format!("stream {}", s.label));
                    (
                        simulated.activities.get(a),
                        kind,
                        activity.and_then(|a| id_of(&a.signature)),
                        stream,
                    )
                }
            };
            let Some(span) = span else { continue };
            let info = id.and_then(|id| catalog.get(id));
            step_col.str(Some(&step.name));
            position.uint(Some(at as u64));
            node_col.str(Some(&kind));
            name.str(info.map(|i| i.name.as_str()));
            label.str(info.map(|i| i.label.as_str()));
            signature.str(id);
            lane.str(where_.as_deref());
            start.float(Some(us(span.start_ns)));
            dur.float(Some(us(span.end_ns - span.start_ns)));
        }
    }
    Table::new(vec![
        step_col, position, node_col, name, label, signature, lane, start, dur,
    ])
}
