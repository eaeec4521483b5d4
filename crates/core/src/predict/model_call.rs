//! The model call inside a simulated step: from the first op (or launch) to the end of the
//! last op, launch, wait or kernel.
//!
//! A profiled step (`ProfilerStep#N`) also holds the loop around the model: the profiler's own
//! step bookkeeping, the Python that calls the model, the synchronisation after it. For a small
//! model that is most of the step (bloom-tiny on a CPU: ~200 µs of a ~1.3 ms profiled step are
//! before `forward` starts or after it ends). `replay full` times the model call alone, so the
//! comparison predicts the model call: the framework time before the first item that does work
//! and after the last one is left out; framework time between ops stays.

use super::simulate::SimulatedStep;
use super::skeleton::{HostItem, StepSkeleton};
use crate::trace::Nanos;

/// Length of the model call in `simulated`, a run of `step`; the whole step when nothing in
/// it does work.
pub fn model_call_ns(step: &StepSkeleton, simulated: &SimulatedStep) -> Nanos {
    let mut start: Option<Nanos> = None;
    let mut end: Option<Nanos> = None;
    for (thread, intervals) in step.threads.iter().zip(&simulated.host) {
        for (item, interval) in thread.items.iter().zip(intervals) {
            if matches!(item, HostItem::Gap { .. }) {
                continue;
            }
            start = Some(start.map_or(interval.start_ns, |s| s.min(interval.start_ns)));
            end = Some(end.map_or(interval.end_ns, |e| e.max(interval.end_ns)));
        }
    }
    for activity in &simulated.activities {
        end = Some(end.map_or(activity.end_ns, |e| e.max(activity.end_ns)));
        start = Some(start.map_or(activity.start_ns, |s| s.min(activity.start_ns)));
    }
    match (start, end) {
        (Some(start), Some(end)) if end >= start => end - start,
        _ => simulated.predicted_ns,
    }
}

/// The same span in the trace itself: from the first op, launch, wait or activity to the
/// end of the last, on the trace's own times. `None` for a step not built from a trace (its
/// threads do not know their items' trace times).
pub fn measured_model_call_ns(step: &StepSkeleton) -> Option<Nanos> {
    let mut start: Option<Nanos> = None;
    let mut end: Option<Nanos> = None;
    let mut widen = |from: Nanos, to: Nanos| {
        start = Some(start.map_or(from, |s| s.min(from)));
        end = Some(end.map_or(to, |e| e.max(to)));
    };
    let mut any_thread = false;
    for thread in &step.threads {
        let Some(place) = &thread.trace else {
            continue;
        };
        any_thread = true;
        for (index, item) in thread.items.iter().enumerate() {
            if matches!(item, HostItem::Gap { .. }) {
                continue;
            }
            let (Some(&from), to) = (place.item_starts.get(index), place.item_end(index)) else {
                continue;
            };
            let from = from.saturating_sub(place.step_start_ns);
            widen(from, to.saturating_sub(place.step_start_ns).max(from));
        }
    }
    if !any_thread {
        return None;
    }
    for activity in &step.activities {
        widen(
            activity.trace_start_ns,
            activity.trace_start_ns.saturating_add(activity.trace_ns),
        );
    }
    match (start, end) {
        (Some(start), Some(end)) if end >= start => Some(end - start),
        _ => Some(step.measured_ns),
    }
}

/// How a simulated model call splits: the host's own time (every item but the time a wait
/// spent waiting: the busiest thread's) and the device's (any activity running).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HostDeviceSplit {
    pub host_ns: Nanos,
    pub device_ns: Nanos,
}

impl HostDeviceSplit {
    /// The split of `simulated`, a run of `step`. On a CPU-only trace the "device" is the CPU
    /// running the ops: their time is the device's, the framework between them the host's.
    pub fn of(step: &StepSkeleton, simulated: &SimulatedStep) -> HostDeviceSplit {
        let mut host_ns: Nanos = 0;
        let mut op_ns: Nanos = 0;
        for (thread, intervals) in step.threads.iter().zip(&simulated.host) {
            let (mut busy, mut ops): (Nanos, Nanos) = (0, 0);
            let mut seen_work = false;
            let mut pending_gap: Nanos = 0;
            for (item, interval) in thread.items.iter().zip(intervals) {
                let length = interval.end_ns - interval.start_ns;
                // Framework time counts between the first and last item that works (the
                // model call), as in `model_call_ns`.
                if let HostItem::Gap { .. } = item {
                    pending_gap += length;
                    continue;
                }
                if seen_work {
                    busy += pending_gap;
                }
                pending_gap = 0;
                seen_work = true;
                match item {
                    HostItem::Wait { residual_ns, .. } => busy += (*residual_ns).min(length),
                    HostItem::HostOp { .. } => ops += length,
                    _ => busy += length,
                }
            }
            host_ns = host_ns.max(busy);
            op_ns = op_ns.max(ops);
        }
        HostDeviceSplit {
            host_ns,
            device_ns: simulated.gpu_busy_ns.max(op_ns),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::skeleton::Skeleton;
    use crate::predict::{simulate, Durations, StepSource};

    /// A CPU step: 100 µs of loop before the model, two ops with 5 µs between, 50 µs after.
    fn cpu_step() -> Skeleton {
        let mut skeleton = Skeleton::new(StepSource::ProfilerStep);
        let a = skeleton.intern_signature("a");
        let b = skeleton.intern_signature("b");
        let mut step = StepSkeleton::new("ProfilerStep#1", 185_000);
        let t = step.add_thread("1/1");
        step.push_gap(t, 100_000);
        step.push_host_op(t, Some(a), 20_000);
        step.push_gap(t, 5_000);
        step.push_host_op(t, Some(b), 10_000);
        step.push_gap(t, 50_000);
        skeleton.steps.push(step);
        skeleton
    }

    #[test]
    fn the_loop_around_the_model_is_left_out_and_the_gaps_between_ops_stay() {
        let skeleton = cpu_step();
        let simulation = simulate(&skeleton, &Durations::trace_own());
        let step = &simulation.steps[0];
        assert_eq!(step.predicted_ns, 185_000);
        assert_eq!(model_call_ns(&skeleton.steps[0], step), 35_000);
    }

    #[test]
    fn replaced_durations_move_the_end() {
        let skeleton = cpu_step();
        let mut durations = Durations::trace_own();
        durations.set("b", 30.0);
        let simulation = simulate(&skeleton, &durations);
        assert_eq!(
            model_call_ns(&skeleton.steps[0], &simulation.steps[0]),
            55_000
        );
    }

    #[test]
    fn a_step_with_only_framework_time_is_the_whole_step() {
        let mut skeleton = Skeleton::new(StepSource::ProfilerStep);
        let mut step = StepSkeleton::new("ProfilerStep#1", 7_000);
        let t = step.add_thread("1/1");
        step.push_gap(t, 7_000);
        skeleton.steps.push(step);
        let simulation = simulate(&skeleton, &Durations::trace_own());
        assert_eq!(
            model_call_ns(&skeleton.steps[0], &simulation.steps[0]),
            7_000
        );
    }
}
