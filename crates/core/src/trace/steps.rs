//! Which spans of a trace are "one step", and how long each measured.
//!
//! A `ProfilerStep#N` span (`user_annotation`, written by `prof.step()`) is the step when the
//! trace has one; a trace with several is predicted step by step and reported per step and
//! as a mean (every profiled step counts the same, so a slow first step shows in the per-step
//! numbers rather than being hidden by picking one). Without any, the step is the profiled
//! window: from the first start to the last end of the host events (ops and CUDA API calls)
//! and GPU activities.

use serde::{Deserialize, Serialize};

use super::{Category, ExecutionId, Nanos, Trace};

/// Prefix of the span `torch.profiler.profile.step()` records around each step.
pub const PROFILER_STEP_PREFIX: &str = "ProfilerStep#";

/// Where the measured step time comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepSource {
    /// One or more `ProfilerStep#N` spans.
    ProfilerStep,
    /// No step span: first event start to last event end.
    ProfiledWindow,
}

/// One step's time span on the trace's axis.
#[derive(Debug, Clone, PartialEq)]
pub struct StepWindow {
    /// `ProfilerStep#6`, or `window` for the profiled window.
    pub name: String,
    pub start_ns: Nanos,
    pub end_ns: Nanos,
    /// The (pid, tid) that recorded the span: its host time runs to the span's end.
    /// `None` for the profiled window, where every thread runs to its own last event.
    pub thread: Option<(ExecutionId, ExecutionId)>,
}

impl StepWindow {
    pub fn duration_ns(&self) -> Nanos {
        self.end_ns.saturating_sub(self.start_ns)
    }

    /// Whether a host event starting at `ts_ns` belongs to this step. Start inclusive,
    /// end exclusive, so that an event starting exactly where the next step starts is the
    /// next step's.
    pub fn holds(&self, ts_ns: Nanos) -> bool {
        self.start_ns <= ts_ns && ts_ns < self.end_ns
    }
}

/// The steps of `trace`, in time order, and where they came from. Steps of zero length
/// are left out; the list is empty only when the trace has nothing with a duration.
pub fn step_windows(trace: &Trace) -> (StepSource, Vec<StepWindow>) {
    let mut steps: Vec<StepWindow> = trace
        .events
        .iter()
        .filter(|e| {
            e.category == Category::UserAnnotation
                && e.dur_ns > 0
                && trace.name(e).starts_with(PROFILER_STEP_PREFIX)
        })
        .map(|e| StepWindow {
            name: trace.name(e).to_owned(),
            start_ns: e.ts_ns,
            end_ns: e.end_ns(),
            thread: Some((e.pid, e.tid)),
        })
        .collect();
    if !steps.is_empty() {
        steps.sort_by_key(|s| (s.start_ns, s.end_ns));
        return (StepSource::ProfilerStep, steps);
    }
    let timed = trace.events.iter().filter(|e| {
        matches!(e.category, Category::CpuOp)
            || e.category.is_launch_call()
            || e.category.is_gpu_activity()
    });
    let (mut start, mut end) = (Nanos::MAX, Nanos::MIN);
    for event in timed {
        start = start.min(event.ts_ns);
        end = end.max(event.end_ns());
    }
    if start < end {
        steps.push(StepWindow {
            name: "window".to_owned(),
            start_ns: start,
            end_ns: end,
            thread: None,
        });
    }
    (StepSource::ProfiledWindow, steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_holds_its_start_but_not_its_end() {
        let step = StepWindow {
            name: "ProfilerStep#1".into(),
            start_ns: 100,
            end_ns: 200,
            thread: None,
        };
        assert!(step.holds(100));
        assert!(step.holds(199));
        assert!(!step.holds(200));
        assert!(!step.holds(99));
        assert_eq!(step.duration_ns(), 100);
    }
}
