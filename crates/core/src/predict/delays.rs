//! The measured delays that place each GPU activity on the trace's own timeline, and how
//! each launch call is cut into host dispatch and (for copies that block) a wait.
//!
//! Per activity, two small delays make the trace's own timeline come out again: the latency
//! from the end of its launch call to its start when the GPU was idle, and the gap after
//! the previous activity of its stream when the stream was the bottleneck. An activity is
//! classified by which bound its start in the trace (with the trace's median latency as the
//! launch bound); its delay for the other bound is capped at the trace's median, so that a
//! replay with other durations sees typical delays where the trace showed none.

use crate::trace::{Category, Event, Nanos, Trace};

use super::calls::is_synchronous_copy_call;
use super::event_map::EventMap;

/// How a launch call is modelled.
#[derive(Debug, Clone, Copy)]
pub(super) struct LaunchShape {
    /// Host time before the launched work may start.
    pub dispatch_ns: Nanos,
    /// The call returns only once its copy is done.
    pub blocking: bool,
}

/// The measured delays of one activity.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Delays {
    pub latency_ns: Nanos,
    pub stream_gap_ns: Nanos,
}

/// The lower median: with two samples, the smaller. A typical delay is taken from samples
/// some of which are inflated by waits the trace does not show, so lower is safer.
fn median(mut values: Vec<Nanos>) -> Option<Nanos> {
    values.sort_unstable();
    values.get(values.len().checked_sub(1)? / 2).copied()
}

/// How a launch call is modelled: see [`LaunchShape`]. `previous_end` is the end of the
/// work before each activity on its stream.
pub(super) fn launch_shape(
    trace: &Trace,
    call: usize,
    activities: &[usize],
    previous_end: &EventMap<Nanos>,
) -> LaunchShape {
    let events = &trace.events;
    let event = &events[call];
    let pageable_copy_waited = activities.iter().any(|&a| {
        let activity = &events[a];
        activity.category == Category::GpuMemcpy
            && trace.name(activity).contains("Pageable")
            && event.end_ns() >= activity.end_ns()
    });
    let blocking = pageable_copy_waited || is_synchronous_copy_call(trace.name(event));
    if !blocking {
        return LaunchShape {
            dispatch_ns: event.dur_ns,
            blocking,
        };
    }
    // The copy starts inside the call. On a stream that was idle when the call started, the
    // part before the copy is the dispatch. On a stream still busy with earlier work, the
    // copy waited for that work (in a pipelined trace, for up to the whole GPU backlog):
    // that wait is the GPU's, and counted as dispatch it would hold the host for it however
    // fast the replayed work. The call then lets the copy go at once, and the copy's start
    // is bound by its stream (its measured gap after the earlier work, `activity_delays`).
    let stream_was_busy = activities
        .iter()
        .any(|a| previous_end.get(a).is_some_and(|&end| end > event.ts_ns));
    if stream_was_busy {
        return LaunchShape {
            dispatch_ns: 0,
            blocking,
        };
    }
    let first_start = activities
        .iter()
        .map(|&a| events[a].ts_ns)
        .min()
        .unwrap_or(event.ts_ns);
    LaunchShape {
        dispatch_ns: first_start
            .saturating_sub(event.ts_ns)
            .clamp(0, event.dur_ns.max(0)),
        blocking,
    }
}

/// The latency and stream gap of every launched activity, and the
/// trace's typical (median) launch latency on an idle GPU.
pub(super) fn activity_delays(
    events: &[Event],
    launch_of: &EventMap<usize>,
    shapes: &EventMap<LaunchShape>,
    previous_end: &EventMap<Nanos>,
) -> (EventMap<Delays>, Nanos) {
    // (activity, its start, when its launch call let it go, when the call started)
    let launched: Vec<(usize, Nanos, Nanos, Nanos)> = launch_of
        .iter()
        .filter_map(|(activity, &call)| {
            let shape = shapes.get(&call)?;
            let call_event = &events[call];
            Some((
                activity,
                events[activity].ts_ns,
                call_event.ts_ns.saturating_add(shape.dispatch_ns),
                call_event.ts_ns,
            ))
        })
        .collect();
    // Latency on an idle GPU: the stream was free before the call even started.
    let typical_latency = median(
        launched
            .iter()
            .filter(|(a, _, _, call_start)| previous_end.get(a).is_none_or(|&p| p <= *call_start))
            .map(|&(_, start, released, _)| start.saturating_sub(released))
            .collect(),
    )
    .unwrap_or(0);
    let stream_bound = |activity: usize, released: Nanos| {
        previous_end
            .get(&activity)
            .is_some_and(|&p| p > released.saturating_add(typical_latency))
    };
    let typical_gap = median(
        launched
            .iter()
            .filter(|&&(a, _, released, _)| stream_bound(a, released))
            .filter_map(|&(a, start, _, _)| {
                previous_end
                    .get(&a)
                    .map(|&p| start.saturating_sub(p).max(0))
            })
            .collect(),
    )
    .unwrap_or(0);
    let delays = EventMap::from_pairs(
        events.len(),
        launched.iter().map(|&(activity, start, released, _)| {
            let latency = start.saturating_sub(released);
            let gap = previous_end
                .get(&activity)
                .map(|&p| start.saturating_sub(p).max(0));
            let delays = if stream_bound(activity, released) {
                Delays {
                    latency_ns: latency.min(typical_latency),
                    stream_gap_ns: gap.unwrap_or(typical_gap),
                }
            } else {
                Delays {
                    latency_ns: latency,
                    stream_gap_ns: gap.map_or(typical_gap, |g| g.min(typical_gap)),
                }
            };
            (activity, delays)
        }),
    );
    (delays, typical_latency)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lower_median_is_taken() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![5]), Some(5));
        assert_eq!(median(vec![32, 1]), Some(1));
        assert_eq!(median(vec![3, 1, 2]), Some(2));
    }
}
