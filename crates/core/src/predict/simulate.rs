//! Running a skeleton forward in time with a given set of durations.
//!
//! The rules, per step, all times relative to the step's start:
//! - each host thread starts at 0 and runs its items in order: a gap or host op takes its
//!   time, a launch call its dispatch time, a wait ends at max(its start, the end of the
//!   activities it waits for) + its residual;
//! - an activity starts at the latest of: its launch call's end + latency (never before the
//!   call's start), the end of the previous activity on its stream + the stream gap (or the
//!   stream's busy-until time for the first), the end of its cross-stream dependencies (plus
//!   the same gap), and its release time;
//! - the step ends when every thread and every activity has finished; in a pipelined trace
//!   (streams still busy with the previous step's work when the step starts) the device
//!   part is counted from the end of that backlog, which makes it the steady-state period.
//!
//! Host items and activities form a graph (a wait depends on activities, an activity on
//! its launch call); it is evaluated in dependency order. A trace with inconsistent
//! timestamps could make a cycle: the cycle is cut at its earliest node and counted in
//! [`SimulatedStep::broken_dependencies`] rather than looping or panicking.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::trace::Nanos;

use super::durations::{us_to_ns, Durations};
use super::skeleton::{Activity, HostItem, Skeleton, StepSkeleton};

/// A span of simulated time, relative to the step's start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interval {
    pub start_ns: Nanos,
    pub end_ns: Nanos,
}

/// One simulated step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimulatedStep {
    /// When host and device are both done.
    pub predicted_ns: Nanos,
    pub host_end_ns: Nanos,
    pub device_end_ns: Nanos,
    /// The latest a stream was busy with earlier steps' work (see [`super::Stream`]).
    pub device_backlog_ns: Nanos,
    /// Sum of the durations of the units of work as simulated, the naive prediction: the
    /// GPU activities, or the top-level ops of a CPU-only trace.
    pub kernel_sum_ns: Nanos,
    /// Time at least one activity was running (overlapping streams counted once).
    pub gpu_busy_ns: Nanos,
    /// Per thread, per item: when it ran.
    pub host: Vec<Vec<Interval>>,
    /// Per activity, in the skeleton's order.
    pub activities: Vec<Interval>,
    /// Activities and host ops whose duration came from [`Durations`].
    pub overridden_invocations: u64,
    /// Dependencies ignored to cut a cycle (0 for any consistent skeleton).
    pub broken_dependencies: u64,
}

/// Every simulated step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Simulation {
    pub steps: Vec<SimulatedStep>,
}

impl Simulation {
    /// Mean predicted step time.
    pub fn mean_predicted_ns(&self) -> f64 {
        mean(self.steps.iter().map(|s| s.predicted_ns))
    }
}

/// Mean of some nanosecond values, 0 for none.
pub(crate) fn mean(values: impl Iterator<Item = Nanos>) -> f64 {
    let (sum, count) = values.fold((0f64, 0u64), |(sum, n), v| (sum + v as f64, n + 1));
    if count == 0 {
        0.0
    } else {
        sum / count as f64
    }
}

/// Resolved replacement times, by signature index.
#[derive(Debug, Clone, Copy, Default)]
struct Replacement {
    device_ns: Option<Nanos>,
    dispatch_ns: Option<Nanos>,
}

/// Simulates every step of `skeleton` with `durations` (the trace's own where a signature
/// has none).
pub fn simulate(skeleton: &Skeleton, durations: &Durations) -> Simulation {
    let replacements: Vec<Replacement> = skeleton
        .signature_ids
        .iter()
        .map(|id| match durations.get(id) {
            Some(d) => Replacement {
                device_ns: us_to_ns(d.device_us),
                dispatch_ns: d.dispatch_us.and_then(us_to_ns),
            },
            None => Replacement::default(),
        })
        .collect();
    Simulation {
        steps: skeleton
            .steps
            .iter()
            .map(|step| simulate_step(step, &replacements, durations.profiler_overhead_ns()))
            .collect(),
    }
}

/// Node numbering of one step's graph: host items of every thread first, then activities.
struct Nodes {
    thread_offsets: Vec<usize>,
    host_count: usize,
    activity_count: usize,
}

impl Nodes {
    fn new(step: &StepSkeleton) -> Nodes {
        let mut thread_offsets = Vec::with_capacity(step.threads.len());
        let mut host_count = 0;
        for thread in &step.threads {
            thread_offsets.push(host_count);
            host_count += thread.items.len();
        }
        Nodes {
            thread_offsets,
            host_count,
            activity_count: step.activities.len(),
        }
    }

    fn total(&self) -> usize {
        self.host_count + self.activity_count
    }

    fn host(&self, thread: usize, item: usize) -> Option<usize> {
        let offset = *self.thread_offsets.get(thread)?;
        let next = self
            .thread_offsets
            .get(thread + 1)
            .copied()
            .unwrap_or(self.host_count);
        (offset + item < next).then_some(offset + item)
    }

    fn activity(&self, activity: usize) -> Option<usize> {
        (activity < self.activity_count).then_some(self.host_count + activity)
    }
}

/// The previous activity on the same stream, for each activity.
fn previous_on_stream(step: &StepSkeleton) -> Vec<Option<usize>> {
    let mut last: Vec<Option<usize>> = vec![None; step.streams.len()];
    step.activities
        .iter()
        .enumerate()
        .map(|(index, activity)| match last.get_mut(activity.stream) {
            Some(slot) => slot.replace(index),
            None => None,
        })
        .collect()
}

fn simulate_step(
    step: &StepSkeleton,
    replacements: &[Replacement],
    profiler_overhead_ns: Nanos,
) -> SimulatedStep {
    let nodes = Nodes::new(step);
    let previous = previous_on_stream(step);

    // Dependency edges (predecessor -> successor), and how many each node waits for.
    let mut successors: Vec<Vec<usize>> = vec![Vec::new(); nodes.total()];
    let mut waiting_for: Vec<u32> = vec![0; nodes.total()];
    let mut edge = |from: Option<usize>, to: Option<usize>| {
        if let (Some(from), Some(to)) = (from, to) {
            if from != to {
                successors[from].push(to);
                waiting_for[to] += 1;
            }
        }
    };
    for (t, thread) in step.threads.iter().enumerate() {
        for (k, item) in thread.items.iter().enumerate() {
            let node = nodes.host(t, k);
            if k > 0 {
                edge(nodes.host(t, k - 1), node);
            }
            if let HostItem::Wait { on, .. } = item {
                for &activity in on {
                    edge(nodes.activity(activity), node);
                }
            }
        }
    }
    for (a, activity) in step.activities.iter().enumerate() {
        let node = nodes.activity(a);
        if let Some(launch) = activity.launch {
            edge(nodes.host(launch.thread, launch.item), node);
        }
        edge(previous[a].and_then(|p| nodes.activity(p)), node);
        for &dependency in &activity.after {
            edge(nodes.activity(dependency), node);
        }
    }

    let mut host: Vec<Vec<Option<Interval>>> = step
        .threads
        .iter()
        .map(|t| vec![None; t.items.len()])
        .collect();
    let mut activities: Vec<Option<Interval>> = vec![None; step.activities.len()];
    let mut overridden = 0u64;
    let mut broken = 0u64;

    let mut queue: VecDeque<usize> = (0..nodes.total())
        .filter(|&n| waiting_for[n] == 0)
        .collect();
    let mut done = vec![false; nodes.total()];
    let mut done_count = 0;
    let mut next_unfinished = 0;
    while done_count < nodes.total() {
        let node = match queue.pop_front() {
            Some(node) => node,
            None => {
                // Only a cycle leaves nodes unfinished with nothing ready: cut it at the
                // earliest unfinished node.
                while next_unfinished < nodes.total() && done[next_unfinished] {
                    next_unfinished += 1;
                }
                if next_unfinished >= nodes.total() {
                    break;
                }
                broken += u64::from(waiting_for[next_unfinished]);
                waiting_for[next_unfinished] = 0;
                next_unfinished
            }
        };
        if done[node] {
            continue;
        }
        done[node] = true;
        done_count += 1;
        if node < nodes.host_count {
            let thread = nodes
                .thread_offsets
                .partition_point(|&offset| offset <= node)
                .saturating_sub(1);
            let item = node - nodes.thread_offsets.get(thread).copied().unwrap_or(0);
            let interval = host_interval(
                step,
                (thread, item),
                &host,
                &activities,
                replacements,
                profiler_overhead_ns,
                &mut overridden,
            );
            if let Some(slot) = host.get_mut(thread).and_then(|t| t.get_mut(item)) {
                *slot = interval;
            }
        } else {
            let a = node - nodes.host_count;
            if let Some(activity) = step.activities.get(a) {
                let interval = activity_interval(
                    step,
                    activity,
                    previous[a],
                    &host,
                    &activities,
                    replacements,
                    &mut overridden,
                );
                activities[a] = Some(interval);
            }
        }
        for &successor in &successors[node] {
            waiting_for[successor] = waiting_for[successor].saturating_sub(1);
            if waiting_for[successor] == 0 && !done[successor] {
                queue.push_back(successor);
            }
        }
    }

    let host: Vec<Vec<Interval>> = host
        .into_iter()
        .map(|t| t.into_iter().map(Option::unwrap_or_default).collect())
        .collect();
    let activities: Vec<Interval> = activities
        .into_iter()
        .map(Option::unwrap_or_default)
        .collect();
    let host_end_ns = host
        .iter()
        .filter_map(|t| t.last().map(|i| i.end_ns))
        .max()
        .unwrap_or(0);
    let device_end_ns = activities.iter().map(|i| i.end_ns).max().unwrap_or(0);
    // The units of work the naive prediction sums: GPU activities, and the top-level ops of
    // a CPU-only trace (a skeleton has one or the other).
    let host_ops_ns = step
        .threads
        .iter()
        .zip(&host)
        .flat_map(|(thread, spans)| thread.items.iter().zip(spans))
        .filter(|(item, _)| matches!(item, HostItem::HostOp { .. }))
        .map(|(_, span)| span.end_ns.saturating_sub(span.start_ns));
    let kernel_sum_ns = activities
        .iter()
        .map(|i| i.end_ns.saturating_sub(i.start_ns))
        .chain(host_ops_ns)
        .fold(0, Nanos::saturating_add);
    // In a pipelined trace the GPU spends the start of the step finishing the previous
    // step's work; that backlog was the previous step's, so this step is charged from its
    // end: the steady-state period. 0 whenever the previous step ended with a sync.
    let device_backlog_ns = step
        .streams
        .iter()
        .map(|s| s.busy_until_ns)
        .max()
        .unwrap_or(0)
        .max(0);
    SimulatedStep {
        predicted_ns: host_end_ns.max(device_end_ns.saturating_sub(device_backlog_ns)),
        device_backlog_ns,
        host_end_ns,
        device_end_ns,
        kernel_sum_ns,
        gpu_busy_ns: union_length(&activities),
        host,
        activities,
        overridden_invocations: overridden,
        broken_dependencies: broken,
    }
}

/// The interval of host item `item` of thread `thread` (`at`), once its predecessors have one.
fn host_interval(
    step: &StepSkeleton,
    (thread, item): (usize, usize),
    host: &[Vec<Option<Interval>>],
    activities: &[Option<Interval>],
    replacements: &[Replacement],
    profiler_overhead_ns: Nanos,
    overridden: &mut u64,
) -> Option<Interval> {
    let items = &step.threads.get(thread)?.items;
    let start = match item.checked_sub(1) {
        Some(previous) => host
            .get(thread)
            .and_then(|t| t.get(previous))
            .copied()
            .flatten()
            .map_or(0, |i| i.end_ns),
        None => 0,
    };
    let replacement = |signature: &Option<u32>| {
        signature
            .and_then(|s| replacements.get(s as usize))
            .copied()
            .unwrap_or_default()
    };
    let end = match items.get(item)? {
        HostItem::Gap { ns, profiled_ops } => {
            let recording = profiler_overhead_ns.saturating_mul(Nanos::from(*profiled_ops));
            start.saturating_add(ns.saturating_sub(recording).max(0))
        }
        HostItem::HostOp { signature, ns } => {
            let own = match replacement(signature).device_ns {
                Some(replaced) => {
                    *overridden += 1;
                    replaced
                }
                None => *ns,
            };
            start.saturating_add(own)
        }
        HostItem::Launch {
            signature,
            dispatch_ns,
            ..
        } => start.saturating_add(replacement(signature).dispatch_ns.unwrap_or(*dispatch_ns)),
        HostItem::Wait {
            on, residual_ns, ..
        } => {
            let finished = on
                .iter()
                .filter_map(|&a| activities.get(a).copied().flatten())
                .map(|i| i.end_ns)
                .max()
                .unwrap_or(start);
            start.max(finished).saturating_add(*residual_ns)
        }
    };
    Some(Interval {
        start_ns: start,
        end_ns: end,
    })
}

fn activity_interval(
    step: &StepSkeleton,
    activity: &Activity,
    previous: Option<usize>,
    host: &[Vec<Option<Interval>>],
    activities: &[Option<Interval>],
    replacements: &[Replacement],
    overridden: &mut u64,
) -> Interval {
    let mut start = activity.release_ns.max(0);
    if let Some(launch) = activity
        .launch
        .and_then(|l| host.get(l.thread)?.get(l.item).copied().flatten())
    {
        start = start.max(
            launch
                .start_ns
                .max(launch.end_ns.saturating_add(activity.latency_ns)),
        );
    }
    match previous.and_then(|p| activities.get(p).copied().flatten()) {
        Some(previous) => {
            start = start.max(previous.end_ns.saturating_add(activity.stream_gap_ns));
        }
        None => {
            // Work from before the step that still occupies the stream.
            let busy = step
                .streams
                .get(activity.stream)
                .map_or(0, |s| s.busy_until_ns);
            if busy > 0 {
                start = start.max(busy.saturating_add(activity.stream_gap_ns));
            }
        }
    }
    for &dependency in &activity.after {
        if let Some(finished) = activities.get(dependency).copied().flatten() {
            start = start.max(finished.end_ns.saturating_add(activity.stream_gap_ns));
        }
    }
    let duration = match activity
        .signature
        .and_then(|s| replacements.get(s as usize))
        .and_then(|r| r.device_ns)
    {
        Some(replaced) => {
            *overridden += 1;
            replaced
        }
        None => activity.trace_ns,
    };
    Interval {
        start_ns: start,
        end_ns: start.saturating_add(duration),
    }
}

/// Total length of the union of some intervals.
fn union_length(intervals: &[Interval]) -> Nanos {
    let mut sorted: Vec<Interval> = intervals
        .iter()
        .copied()
        .filter(|i| i.end_ns > i.start_ns)
        .collect();
    sorted.sort_by_key(|i| (i.start_ns, i.end_ns));
    let mut total: Nanos = 0;
    let mut current: Option<Interval> = None;
    for interval in sorted {
        current = match current {
            Some(open) if interval.start_ns <= open.end_ns => Some(Interval {
                start_ns: open.start_ns,
                end_ns: open.end_ns.max(interval.end_ns),
            }),
            Some(open) => {
                total = total.saturating_add(open.end_ns - open.start_ns);
                Some(interval)
            }
            None => Some(interval),
        };
    }
    if let Some(open) = current {
        total = total.saturating_add(open.end_ns - open.start_ns);
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::predict::skeleton::WaitKind;
    use crate::trace::steps::StepSource;

    fn one_step(step: StepSkeleton) -> Skeleton {
        let mut skeleton = Skeleton::new(StepSource::ProfiledWindow);
        skeleton.steps.push(step);
        skeleton
    }

    #[test]
    fn union_counts_overlap_once() {
        let spans = [
            Interval {
                start_ns: 0,
                end_ns: 10,
            },
            Interval {
                start_ns: 5,
                end_ns: 15,
            },
            Interval {
                start_ns: 20,
                end_ns: 30,
            },
            Interval {
                start_ns: 25,
                end_ns: 25,
            },
        ];
        assert_eq!(union_length(&spans), 25);
        assert_eq!(union_length(&[]), 0);
    }

    #[test]
    fn an_empty_step_takes_no_time() {
        let simulation = simulate(
            &one_step(StepSkeleton::new("empty", 0)),
            &Durations::default(),
        );
        assert_eq!(simulation.steps[0].predicted_ns, 0);
        assert_eq!(simulation.mean_predicted_ns(), 0.0);
    }

    #[test]
    fn a_cycle_is_cut_not_looped_on() {
        // The host waits for an activity that its own later launch issues: impossible in
        // a real trace, and must still terminate.
        let mut step = StepSkeleton::new("cycle", 0);
        let t = step.add_thread("main");
        let s = step.add_stream("0/7");
        step.push_wait(t, WaitKind::Device, vec![0], 1);
        step.push_launch(t, 2, vec![Activity::kernel(s, None, 10)]);
        let simulated = &simulate(&one_step(step), &Durations::default()).steps[0];
        assert_eq!(simulated.broken_dependencies, 1);
        assert!(simulated.predicted_ns >= 10);
    }

    #[test]
    fn out_of_range_references_are_ignored() {
        let mut step = StepSkeleton::new("bad", 0);
        let t = step.add_thread("main");
        step.push_wait(t, WaitKind::Device, vec![42], 3);
        step.activities.push(Activity {
            after: vec![99],
            ..Activity::kernel(7, Some(1000), 5)
        });
        let simulated = &simulate(&one_step(step), &Durations::default()).steps[0];
        assert_eq!(simulated.host_end_ns, 3);
        assert_eq!(simulated.device_end_ns, 5);
    }
}
