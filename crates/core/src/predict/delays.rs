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
pub(crate) struct LaunchShape {
    /// Host time before the launched work may start.
    pub dispatch_ns: Nanos,
    /// The call returns only once its copy is done.
    pub blocking: bool,
}

/// The measured delays of one activity.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Delays {
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
    shape_of_call(
        &events[call],
        trace.name(&events[call]),
        activities.iter().map(|&a| {
            let activity = &events[a];
            (
                activity,
                trace.name(activity),
                previous_end.get(&a).copied(),
            )
        }),
    )
}

/// [`launch_shape`] of the call `event` (named `name`) from its activities: each with its
/// name and the end of the work before it on its stream. The streamed predict
/// ([`super::stream`]) asks it with the activities of one correlation id at a time.
pub(crate) fn shape_of_call<'a>(
    event: &Event,
    name: &str,
    activities: impl Iterator<Item = (&'a Event, &'a str, Option<Nanos>)> + Clone,
) -> LaunchShape {
    let pageable_copy_waited = activities.clone().any(|(activity, activity_name, _)| {
        activity.category == Category::GpuMemcpy
            && activity_name.contains("Pageable")
            && event.end_ns() >= activity.end_ns()
    });
    let blocking = pageable_copy_waited || is_synchronous_copy_call(name);
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
        .clone()
        .any(|(_, _, previous)| previous.is_some_and(|end| end > event.ts_ns));
    if stream_was_busy {
        return LaunchShape {
            dispatch_ns: 0,
            blocking,
        };
    }
    let first_start = activities
        .map(|(activity, _, _)| activity.ts_ns)
        .min()
        .unwrap_or(event.ts_ns);
    LaunchShape {
        dispatch_ns: first_start
            .saturating_sub(event.ts_ns)
            .clamp(0, event.dur_ns.max(0)),
        blocking,
    }
}

/// The trace's typical delays: the median launch latency on an idle GPU, and the median
/// gap after the previous activity of a stream-bound activity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TypicalDelays {
    pub latency_ns: Nanos,
    pub gap_ns: Nanos,
}

/// One launched activity as the delays see it: its start, when its launch call let it go
/// (the call's start plus its dispatch), when the call started, and the end of the work
/// before it on its stream.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LaunchedActivity {
    pub start: Nanos,
    pub released: Nanos,
    pub call_start: Nanos,
    pub previous_end: Option<Nanos>,
}

impl LaunchedActivity {
    /// Its launch latency, when it counts towards the typical one: the stream was free
    /// before the call even started (latency on an idle GPU).
    pub(crate) fn latency_sample(&self) -> Option<Nanos> {
        self.previous_end
            .is_none_or(|p| p <= self.call_start)
            .then(|| self.start.saturating_sub(self.released))
    }

    /// Whether its start was bound by its stream rather than its launch.
    fn stream_bound(&self, typical_latency: Nanos) -> bool {
        self.previous_end
            .is_some_and(|p| p > self.released.saturating_add(typical_latency))
    }

    /// Its gap after the previous activity, when it counts towards the typical one.
    pub(crate) fn gap_sample(&self, typical_latency: Nanos) -> Option<Nanos> {
        if !self.stream_bound(typical_latency) {
            return None;
        }
        self.previous_end
            .map(|p| self.start.saturating_sub(p).max(0))
    }

    fn delays(&self, typical: TypicalDelays) -> Delays {
        let latency = self.start.saturating_sub(self.released);
        let gap = self
            .previous_end
            .map(|p| self.start.saturating_sub(p).max(0));
        if self.stream_bound(typical.latency_ns) {
            Delays {
                latency_ns: latency.min(typical.latency_ns),
                stream_gap_ns: gap.unwrap_or(typical.gap_ns),
            }
        } else {
            Delays {
                latency_ns: latency,
                stream_gap_ns: gap.map_or(typical.gap_ns, |g| g.min(typical.gap_ns)),
            }
        }
    }
}

/// The latency and stream gap of every launched activity, and the
/// trace's typical (median) launch latency on an idle GPU. `typical`: the typical delays
/// when they are known already (the streamed predict measures them over the whole trace
/// and builds one step at a time), else measured over `events`.
pub(super) fn activity_delays(
    events: &[Event],
    launch_of: &EventMap<usize>,
    shapes: &EventMap<LaunchShape>,
    previous_end: &EventMap<Nanos>,
    typical: Option<TypicalDelays>,
) -> (EventMap<Delays>, Nanos) {
    let launched: Vec<(usize, LaunchedActivity)> = launch_of
        .iter()
        .filter_map(|(activity, &call)| {
            let shape = shapes.get(&call)?;
            let call_event = &events[call];
            Some((
                activity,
                LaunchedActivity {
                    start: events[activity].ts_ns,
                    released: call_event.ts_ns.saturating_add(shape.dispatch_ns),
                    call_start: call_event.ts_ns,
                    previous_end: previous_end.get(&activity).copied(),
                },
            ))
        })
        .collect();
    let typical = typical.unwrap_or_else(|| {
        let latency_ns = median(
            launched
                .iter()
                .filter_map(|(_, a)| a.latency_sample())
                .collect(),
        )
        .unwrap_or(0);
        let gap_ns = median(
            launched
                .iter()
                .filter_map(|(_, a)| a.gap_sample(latency_ns))
                .collect(),
        )
        .unwrap_or(0);
        TypicalDelays { latency_ns, gap_ns }
    });
    let delays = EventMap::from_pairs(
        events.len(),
        launched
            .iter()
            .map(|(activity, launched)| (*activity, launched.delays(typical))),
    );
    (delays, typical.latency_ns)
}

/// The lower median of `count` sorted values, by its position: what [`median`] picks.
pub(crate) fn median_position(count: u64) -> Option<u64> {
    count.checked_sub(1).map(|last| last / 2)
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
