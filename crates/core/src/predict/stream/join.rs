//! The GPU side of the streamed predict, in two merges of sorted records:
//! 1. per stream, by start ([`sweep_streams`]): the end of the work before each activity,
//!    over the whole trace (what [`crate::predict::build`] measures on the trace's stream
//!    order);
//! 2. by correlation id ([`join_correlations`]): each activity meets the launch call with
//!    its correlation id (the first in the file, as [`crate::trace::link`] links), the
//!    call's shape is measured as the in-memory builder measures it ([`shape_of_call`]),
//!    each activity's delay samples go to the medians, and the activities and `cuda_sync`
//!    rows are routed to the steps of their calls.
//!
//! Each `cudaEventRecord` call and each stream wait's request for one go on to
//! [`super::event_records`].
//!
//! An activity whose correlation id no call has is unattributed: it is routed to the steps
//! its own start lies in, as the builder takes unattributed work.

use crate::predict::delays::{shape_of_call, LaunchedActivity};
use crate::trace::{Category, ExecutionId, Nanos, StringTable};

use super::event_records::{last_record, request};
use super::medians::SampleSink;
use super::record::Record;
use super::sink::{route, Sorter};
use super::windows::Windows;

/// Sweeps the activities (sorted by stream and start): each gets the end of the work
/// before it on its stream, then goes to `correlated` (it has a correlation id) or, being
/// unattributed, to the steps its start lies in.
pub fn sweep_streams(
    activities: impl Iterator<Item = std::io::Result<Record>>,
    correlated: &mut Sorter,
    routed: &mut Sorter,
    windows: &Windows,
) -> std::io::Result<()> {
    let mut stream: Option<(ExecutionId, ExecutionId)> = None;
    let mut busy_until: Option<Nanos> = None;
    for record in activities {
        let mut record = record?;
        let key = (record.event.pid, record.event.tid);
        if stream != Some(key) {
            stream = Some(key);
            busy_until = None;
        }
        record.previous_end = busy_until;
        let end = record.event.end_ns();
        busy_until = Some(busy_until.map_or(end, |b| b.max(end)));
        if record.event.args.correlation.is_some() {
            correlated.push(record)?;
        } else {
            let holding = windows.holding(record.event.ts_ns);
            route(routed, &record, holding)?;
        }
    }
    Ok(())
}

/// Joins the records sorted by correlation id, one id at a time.
pub fn join_correlations(
    correlated: impl Iterator<Item = std::io::Result<Record>>,
    strings: &StringTable,
    windows: &Windows,
    routed: &mut Sorter,
    requests: &mut Sorter,
    samples: &mut SampleSink,
) -> std::io::Result<()> {
    let mut group: Vec<Record> = Vec::new();
    for record in correlated {
        let record = record?;
        if group
            .first()
            .is_some_and(|first| first.event.args.correlation != record.event.args.correlation)
        {
            join_group(&group, strings, windows, routed, requests, samples)?;
            group.clear();
        }
        group.push(record);
    }
    join_group(&group, strings, windows, routed, requests, samples)
}

/// The records of one correlation id, in file order.
fn join_group(
    group: &[Record],
    strings: &StringTable,
    windows: &Windows,
    routed: &mut Sorter,
    requests: &mut Sorter,
    samples: &mut SampleSink,
) -> std::io::Result<()> {
    if let Some(record) = last_record(group.iter(), strings) {
        requests.push(record.clone())?;
    }
    let activities = || group.iter().filter(|r| r.event.category.is_gpu_activity());
    let calls = || group.iter().filter(|r| r.event.category.is_launch_call());
    let Some(call) = calls().next() else {
        // No launch call in the trace: unattributed work, the steps' where it started.
        for activity in activities() {
            route(routed, activity, windows.holding(activity.event.ts_ns))?;
        }
        return Ok(());
    };
    if activities().next().is_some() {
        let shape = shape_of_call(
            &call.event,
            strings.get(call.event.name),
            activities().map(|a| (&a.event, strings.get(a.event.name), a.previous_end)),
        );
        let released = call.event.ts_ns.saturating_add(shape.dispatch_ns);
        for activity in activities() {
            samples.add(&LaunchedActivity {
                start: activity.event.ts_ns,
                released,
                call_start: call.event.ts_ns,
                previous_end: activity.previous_end,
            })?;
            route(routed, activity, windows.holding(call.event.ts_ns))?;
        }
    }
    // A call's `cuda_sync` row goes wherever a call with its id is walked.
    let mut steps: Vec<usize> = calls()
        .flat_map(|c| windows.holding(c.event.ts_ns))
        .collect();
    steps.sort_unstable();
    steps.dedup();
    for row in group
        .iter()
        .filter(|r| r.event.category == Category::CudaSync)
    {
        route(routed, row, steps.iter().copied())?;
        // A stream wait's row names its event's record: the steps need it too.
        for &step in &steps {
            if let Some(request) = request(row, step) {
                requests.push(request)?;
            }
        }
    }
    Ok(())
}
