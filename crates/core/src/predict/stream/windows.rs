//! The trace's steps as the streamed predict routes events to them: the `ProfilerStep#N`
//! spans in the order [`crate::trace::steps::step_windows`] gives them, and which of them
//! an event's interval touches.

use crate::trace::steps::{StepWindow, PROFILER_STEP_PREFIX};
use crate::trace::{Category, Event, Nanos, StringTable};

/// The steps, in time order, and what finds the ones an interval touches.
#[derive(Debug, Default)]
pub struct Windows {
    pub steps: Vec<StepWindow>,
    /// The latest end among `steps[..=i]`: where a search for the steps that end after a
    /// time may begin.
    latest_end: Vec<Nanos>,
}

/// Whether `event` is a step span, as [`crate::trace::steps::step_windows`] takes them.
pub fn is_step_span(event: &Event, strings: &StringTable) -> bool {
    event.category == Category::UserAnnotation
        && event.dur_ns > 0
        && strings.get(event.name).starts_with(PROFILER_STEP_PREFIX)
}

/// The window of the step span `event`.
pub fn window_of(event: &Event, strings: &StringTable) -> StepWindow {
    StepWindow {
        name: strings.get(event.name).to_owned(),
        start_ns: event.ts_ns,
        end_ns: event.end_ns(),
        thread: Some((event.pid, event.tid)),
    }
}

impl Windows {
    /// The step spans (in file order), sorted as the in-memory predict sorts them.
    pub fn new(mut steps: Vec<StepWindow>) -> Windows {
        steps.sort_by_key(|s| (s.start_ns, s.end_ns));
        let mut latest = Nanos::MIN;
        let latest_end = steps
            .iter()
            .map(|s| {
                latest = latest.max(s.end_ns);
                latest
            })
            .collect();
        Windows { steps, latest_end }
    }

    /// The steps whose span touches `[from, to]` (bounds included), by index.
    pub fn touching(&self, from: Nanos, to: Nanos) -> impl Iterator<Item = usize> + '_ {
        let (from, to) = (from.min(to), from.max(to));
        let first = self.latest_end.partition_point(|&end| end < from);
        let last = self.steps.partition_point(|s| s.start_ns <= to);
        (first..last.max(first)).filter(move |&i| {
            self.steps
                .get(i)
                .is_some_and(|s| s.start_ns <= to && from <= s.end_ns)
        })
    }

    /// The steps that hold a host event starting at `ts` ([`StepWindow::holds`]).
    pub fn holding(&self, ts: Nanos) -> impl Iterator<Item = usize> + '_ {
        self.touching(ts, ts)
            .filter(move |&i| self.steps.get(i).is_some_and(|s| s.holds(ts)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(start: Nanos, end: Nanos) -> StepWindow {
        StepWindow {
            name: format!("ProfilerStep#{start}"),
            start_ns: start,
            end_ns: end,
            thread: None,
        }
    }

    #[test]
    fn finds_every_step_an_interval_touches() {
        let windows = Windows::new(vec![window(20, 30), window(0, 10), window(5, 50)]);
        let starts = |found: Vec<usize>| -> Vec<Nanos> {
            found.iter().map(|&i| windows.steps[i].start_ns).collect()
        };
        assert_eq!(starts(windows.touching(12, 15).collect()), vec![5]);
        assert_eq!(starts(windows.touching(10, 20).collect()), vec![0, 5, 20]);
        assert_eq!(
            starts(windows.touching(60, 70).collect()),
            Vec::<Nanos>::new()
        );
        assert_eq!(starts(windows.holding(10).collect()), vec![5]);
        assert_eq!(starts(windows.holding(20).collect()), vec![5, 20]);
    }
}
