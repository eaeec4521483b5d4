//! The critical path of a simulated step: the chain of host items and GPU activities whose
//! durations the step's time is made of. Shortening anything off the path does not shorten
//! the step; it is what a what-if should aim at.
//!
//! The simulation keeps no record of which constraint set each start time, so the path is
//! found afterwards, backwards from whatever finished last: a host item follows the item
//! before it on its thread, unless it is a wait that really waited, which follows the
//! activity it waited for; an activity follows whichever of its bounds its start equals:
//! the previous activity on its stream (the GPU was busy), an activity of another stream
//! it waited for, or its launch call.

use serde::Serialize;

use super::simulate::SimulatedStep;
use super::skeleton::{HostItem, StepSkeleton};

/// One element of a step: a host item or a GPU activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepNode {
    /// `threads[thread].items[item]`.
    Host { thread: usize, item: usize },
    /// `activities[index]`.
    Activity(usize),
}

/// The critical path of a step, from its first element to its last.
pub fn critical_path(step: &StepSkeleton, simulated: &SimulatedStep) -> Vec<StepNode> {
    let mut path = Vec::new();
    let Some(mut node) = last_to_finish(simulated) else {
        return path;
    };
    // A consistent step has no cycle; the bound keeps a broken one from looping.
    let limit = step.activities.len() + step.threads.iter().map(|t| t.items.len()).sum::<usize>();
    loop {
        path.push(node);
        if path.len() > limit {
            break;
        }
        match predecessor(step, simulated, node) {
            Some(previous) => node = previous,
            None => break,
        }
    }
    path.reverse();
    path
}

/// What finished last: the step's end (device time counts from its backlog, as the
/// prediction does). Host wins a tie: its last item is then on the path too.
fn last_to_finish(simulated: &SimulatedStep) -> Option<StepNode> {
    let host = simulated
        .host
        .iter()
        .enumerate()
        .filter_map(|(t, items)| Some((t, items.len().checked_sub(1)?, items.last()?.end_ns)))
        .max_by_key(|&(_, _, end)| end);
    let device = simulated
        .activities
        .iter()
        .enumerate()
        .max_by_key(|(_, interval)| interval.end_ns);
    match (host, device) {
        (Some((_, _, host_end)), Some((activity, interval)))
            if interval.end_ns.saturating_sub(simulated.device_backlog_ns) > host_end =>
        {
            Some(StepNode::Activity(activity))
        }
        (Some((thread, item, _)), _) => Some(StepNode::Host { thread, item }),
        (None, Some((activity, _))) => Some(StepNode::Activity(activity)),
        (None, None) => None,
    }
}

fn predecessor(step: &StepSkeleton, simulated: &SimulatedStep, node: StepNode) -> Option<StepNode> {
    match node {
        StepNode::Host { thread, item } => {
            let interval = *simulated.host.get(thread)?.get(item)?;
            if let Some(HostItem::Wait {
                on, residual_ns, ..
            }) = step.threads.get(thread)?.items.get(item)
            {
                let blocked_until = interval.end_ns.saturating_sub(*residual_ns);
                if blocked_until > interval.start_ns {
                    let waited_for = on
                        .iter()
                        .copied()
                        .filter(|&a| {
                            simulated
                                .activities
                                .get(a)
                                .is_some_and(|i| i.end_ns == blocked_until)
                        })
                        .max();
                    if let Some(activity) = waited_for {
                        return Some(StepNode::Activity(activity));
                    }
                }
            }
            let previous = item.checked_sub(1)?;
            Some(StepNode::Host {
                thread,
                item: previous,
            })
        }
        StepNode::Activity(index) => {
            let activity = step.activities.get(index)?;
            let start = simulated.activities.get(index)?.start_ns;
            let ends_at = |other: usize| {
                simulated
                    .activities
                    .get(other)
                    .map(|i| i.end_ns.saturating_add(activity.stream_gap_ns))
            };
            // The GPU was the bottleneck: the previous activity on the stream...
            let previous_on_stream = step.activities[..index]
                .iter()
                .rposition(|a| a.stream == activity.stream);
            if let Some(previous) = previous_on_stream {
                if ends_at(previous) == Some(start) {
                    return Some(StepNode::Activity(previous));
                }
            }
            // ...or work on another stream it waited for...
            if let Some(&dependency) = activity.after.iter().find(|&&d| ends_at(d) == Some(start)) {
                return Some(StepNode::Activity(dependency));
            }
            // ...or the host, through the launch call.
            let launch = activity.launch?;
            let call = simulated.host.get(launch.thread)?.get(launch.item)?;
            let launched = call
                .start_ns
                .max(call.end_ns.saturating_add(activity.latency_ns));
            (launched == start).then_some(StepNode::Host {
                thread: launch.thread,
                item: launch.item,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::skeleton::{Activity, Skeleton, WaitKind};
    use crate::predict::{simulate, Durations};
    use crate::trace::steps::StepSource;

    fn path_of(step: StepSkeleton) -> Vec<StepNode> {
        let mut skeleton = Skeleton::new(StepSource::ProfiledWindow);
        skeleton.steps.push(step);
        let simulation = simulate(&skeleton, &Durations::trace_own());
        critical_path(&skeleton.steps[0], &simulation.steps[0])
    }

    #[test]
    fn a_gpu_bound_step_runs_through_its_kernels_and_back_to_the_host() {
        // gap 2 | launch 1 (k0: 3-13) | launch 1 (k1 behind k0: 13-23) | sync until 23 +1 | gap 5
        let mut step = StepSkeleton::new("s", 0);
        let t = step.add_thread("main");
        let s = step.add_stream("0/7");
        step.push_gap(t, 2);
        step.push_launch(t, 1, vec![Activity::kernel(s, None, 10)]);
        step.push_launch(t, 1, vec![Activity::kernel(s, None, 10)]);
        step.push_wait(t, WaitKind::Device, vec![1], 1);
        step.push_gap(t, 5);
        let host = |item| StepNode::Host { thread: 0, item };
        assert_eq!(
            path_of(step),
            vec![
                host(0),
                host(1),
                StepNode::Activity(0),
                StepNode::Activity(1),
                host(3),
                host(4)
            ]
        );
    }

    #[test]
    fn a_host_bound_step_is_all_host() {
        // The kernel (1) ends long before the host's 50 of framework time.
        let mut step = StepSkeleton::new("s", 0);
        let t = step.add_thread("main");
        let s = step.add_stream("0/7");
        step.push_launch(t, 1, vec![Activity::kernel(s, None, 1)]);
        step.push_gap(t, 50);
        let host = |item| StepNode::Host { thread: 0, item };
        assert_eq!(path_of(step), vec![host(0), host(1)]);
    }

    #[test]
    fn a_device_tail_ends_on_the_kernel() {
        let mut step = StepSkeleton::new("s", 0);
        let t = step.add_thread("main");
        let s = step.add_stream("0/7");
        step.push_gap(t, 3);
        step.push_launch(t, 2, vec![Activity::kernel(s, None, 40)]);
        assert_eq!(
            path_of(step),
            vec![
                StepNode::Host { thread: 0, item: 0 },
                StepNode::Host { thread: 0, item: 1 },
                StepNode::Activity(0)
            ]
        );
        assert!(path_of(StepSkeleton::new("empty", 0)).is_empty());
    }
}
