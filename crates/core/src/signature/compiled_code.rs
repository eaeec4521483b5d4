//! Time inside torch.compile'd code that no recorded op covers: *uninstrumented compiled
//! code*.
//!
//! A compiled region is recorded as a span (`Torch-Compiled Region: 0/0` from Dynamo,
//! `CompiledFunction` and `CompiledFunctionBackward` from AOTAutograd). Inside it the profiler sees the extern kernels
//! (`aten::addmm`), the launch calls and, with `cpp.enable_kernel_profile`, Inductor's C++
//! kernels; without it the generated C++ kernels leave no event, and their time would pass
//! for framework time between ops. It is reported apart: replay could not see it.

use crate::trace::{Category, ExecutionId, FxHashMap, Nanos, Trace};

use super::schema::CompiledCode;

/// Prefix of Dynamo's span around a compiled frame's call.
pub const COMPILED_REGION_PREFIX: &str = "Torch-Compiled Region";
/// AOTAutograd's span around a compiled graph's forward.
pub const COMPILED_FUNCTION: &str = "CompiledFunction";
/// AOTAutograd's span around a compiled graph's backward.
pub const COMPILED_FUNCTION_BACKWARD: &str = "CompiledFunctionBackward";

/// Whether a host span is a compiled region.
pub fn is_compiled_region(name: &str) -> bool {
    name.starts_with(COMPILED_REGION_PREFIX)
        || name == COMPILED_FUNCTION
        || name == COMPILED_FUNCTION_BACKWARD
}

/// Whether a host event is recorded and covers time inside a compiled region: any op
/// (`aten::addmm`, a generated kernel's own event, the wrapper's `Pregraph bytecode`) other
/// than the regions themselves, or a CUDA runtime/driver call. A `record_function`
/// annotation (`## Call CompiledFxGraph … ##`) spans the whole graph and covers nothing.
pub(crate) fn covers(category: Category, name: &str) -> bool {
    match category {
        Category::CpuOp => !is_compiled_region(name),
        Category::CudaRuntime | Category::CudaDriver => true,
        _ => false,
    }
}

pub(crate) type Interval = (Nanos, Nanos);

/// Microseconds, as every time in the signature file (whole nanoseconds, at most three
/// decimals).
fn us(nanos: Nanos) -> f64 {
    nanos as f64 / 1000.0
}

/// Sorted, disjoint union of `intervals`.
pub(crate) fn union(mut intervals: Vec<Interval>) -> Vec<Interval> {
    intervals.retain(|(start, end)| start < end);
    intervals.sort_unstable();
    let mut merged: Vec<Interval> = Vec::with_capacity(intervals.len());
    for (start, end) in intervals {
        match merged.last_mut() {
            Some(last) if start <= last.1 => last.1 = last.1.max(end),
            _ => merged.push((start, end)),
        }
    }
    merged
}

/// Length of the overlap of two sorted, disjoint interval lists.
pub(crate) fn overlap(a: &[Interval], b: &[Interval]) -> Nanos {
    let (mut i, mut j, mut total) = (0, 0, 0 as Nanos);
    while i < a.len() && j < b.len() {
        let start = a[i].0.max(b[j].0);
        let end = a[i].1.min(b[j].1);
        if start < end {
            total = total.saturating_add(end.saturating_sub(start));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    total
}

fn length(intervals: &[Interval]) -> Nanos {
    intervals
        .iter()
        .map(|(s, e)| e.saturating_sub(*s))
        .fold(0, Nanos::saturating_add)
}

/// The compiled regions of each host thread, merged.
pub(crate) fn regions_by_thread(trace: &Trace) -> FxHashMap<Thread, Vec<Interval>> {
    let mut regions: FxHashMap<(ExecutionId, ExecutionId), Vec<Interval>> = FxHashMap::default();
    for event in &trace.events {
        if matches!(
            event.category,
            Category::CpuOp | Category::UserAnnotation | Category::PythonFunction
        ) && is_compiled_region(trace.name(event))
        {
            regions
                .entry((event.pid, event.tid))
                .or_default()
                .push((event.ts_ns, event.end_ns()));
        }
    }
    regions
        .into_iter()
        .map(|(thread, spans)| (thread, union(spans)))
        .collect()
}

/// Compiled code within `windows` (the steps, on the trace's time axis): how long the
/// compiled regions ran and how much of that no recorded op covers. `None` when no compiled
/// region lies in them.
pub fn compiled_code(trace: &Trace, windows: &[Interval]) -> Option<CompiledCode> {
    CompiledCodeIndex::new(trace).in_windows(windows)
}

/// A trace's compiled regions and the recorded work on their threads, each merged once, for
/// the compiled code of many windows (every step of a long trace: gathering them again for
/// each step made `predict` quadratic, 24 of its 31 s on a 1.5 GB trace of 1200 steps).
pub struct CompiledCodeIndex {
    regions: FxHashMap<Thread, Vec<Interval>>,
    /// The union of what covers time on each thread that has compiled regions.
    covered: FxHashMap<Thread, Vec<Interval>>,
}

impl CompiledCodeIndex {
    pub fn new(trace: &Trace) -> Self {
        let regions = regions_by_thread(trace);
        let mut covered: FxHashMap<Thread, Vec<Interval>> = FxHashMap::default();
        if !regions.is_empty() {
            for event in &trace.events {
                let thread = (event.pid, event.tid);
                if regions.contains_key(&thread) && covers(event.category, trace.name(event)) {
                    covered
                        .entry(thread)
                        .or_default()
                        .push((event.ts_ns, event.end_ns()));
                }
            }
        }
        let covered = covered
            .into_iter()
            .map(|(thread, spans)| (thread, union(spans)))
            .collect();
        CompiledCodeIndex { regions, covered }
    }

    /// [`compiled_code`] within `windows`.
    pub fn in_windows(&self, windows: &[Interval]) -> Option<CompiledCode> {
        let regions = RegionsInWindows::new(&self.regions, windows);
        if regions.is_empty() {
            return None;
        }
        regions.total(|thread, clipped| {
            let covered = self.covered.get(thread).map_or(&[][..], Vec::as_slice);
            overlap(clipped, within(covered, clipped))
        })
    }
}

/// The part of sorted, disjoint `intervals` that can overlap sorted, disjoint `span`'s
/// extent (found by bisection: both lists are sorted by start and by end).
fn within<'i>(intervals: &'i [Interval], span: &[Interval]) -> &'i [Interval] {
    let (Some(first), Some(last)) = (span.first(), span.last()) else {
        return &[];
    };
    let from = intervals.partition_point(|i| i.1 <= first.0);
    let to = intervals.partition_point(|i| i.0 < last.1).max(from);
    &intervals[from..to]
}

/// A host thread: (pid, tid).
pub(crate) type Thread = (ExecutionId, ExecutionId);

/// The compiled regions that lie in the steps, clipped to them, by thread: what the
/// covered time is measured against ([`compiled_code`], and the streamed classify, which
/// measures it as the thread's ranges pass).
pub(crate) struct RegionsInWindows {
    windows: Vec<Interval>,
    /// Per thread: how many regions lie in the windows, and their parts inside them.
    threads: Vec<(Thread, u64, Vec<Interval>)>,
    had_regions: bool,
}

impl RegionsInWindows {
    /// `regions`: each thread's, sorted and disjoint ([`union`]).
    pub(crate) fn new(regions: &FxHashMap<Thread, Vec<Interval>>, windows: &[Interval]) -> Self {
        let windows = union(windows.to_vec());
        let had_regions = !regions.is_empty();
        let threads = regions
            .iter()
            .filter_map(|(thread, spans)| {
                let in_windows: Vec<Interval> = within(spans, &windows)
                    .iter()
                    .filter(|span| overlap(&[**span], &windows) > 0)
                    .copied()
                    .collect();
                if in_windows.is_empty() {
                    return None;
                }
                let clipped = clip(&in_windows, &windows);
                Some((*thread, in_windows.len() as u64, clipped))
            })
            .collect();
        RegionsInWindows {
            windows,
            threads,
            had_regions,
        }
    }

    /// No compiled region at all in the trace.
    pub(crate) fn is_empty(&self) -> bool {
        !self.had_regions
    }

    /// `thread`'s clipped regions, when it has some in the windows.
    pub(crate) fn on(&self, thread: &Thread) -> Option<&[Interval]> {
        self.threads
            .iter()
            .find(|(t, _, _)| t == thread)
            .map(|(_, _, clipped)| clipped.as_slice())
    }

    /// The report, given how much of each thread's clipped regions recorded work covers.
    pub(crate) fn total(
        &self,
        mut seen: impl FnMut(&Thread, &[Interval]) -> Nanos,
    ) -> Option<CompiledCode> {
        let (mut count, mut region_ns, mut seen_ns) = (0u64, 0 as Nanos, 0 as Nanos);
        for (thread, regions, clipped) in &self.threads {
            count += regions;
            region_ns = region_ns.saturating_add(length(clipped));
            seen_ns = seen_ns.saturating_add(seen(thread, clipped));
        }
        if count == 0 {
            return None;
        }
        let steps_ns = length(&self.windows);
        let uninstrumented_ns = region_ns.saturating_sub(seen_ns);
        Some(CompiledCode {
            regions: count,
            region_us: us(region_ns),
            uninstrumented_us: us(uninstrumented_ns),
            steps_us: us(steps_ns),
            wrapper: None,
        })
    }
}

/// How much of sorted, disjoint `clipped` is covered by intervals given in order of their
/// start ([`Coverage::add`]): the overlap of `clipped` with their union, in constant memory.
pub(crate) struct Coverage<'c> {
    clipped: &'c [Interval],
    next: usize,
    current: Option<Interval>,
    seen: Nanos,
}

impl<'c> Coverage<'c> {
    pub(crate) fn new(clipped: &'c [Interval]) -> Self {
        Coverage {
            clipped,
            next: 0,
            current: None,
            seen: 0,
        }
    }

    /// One covered interval; its start is no earlier than the previous one's.
    pub(crate) fn add(&mut self, start: Nanos, end: Nanos) {
        if start >= end {
            return;
        }
        match &mut self.current {
            Some(current) if start <= current.1 => current.1 = current.1.max(end),
            _ => {
                self.flush();
                self.current = Some((start, end));
            }
        }
    }

    fn flush(&mut self) {
        let Some((start, end)) = self.current.take() else {
            return;
        };
        while self.clipped.get(self.next).is_some_and(|c| c.1 <= start) {
            self.next += 1;
        }
        for &(c_start, c_end) in &self.clipped[self.next..] {
            if c_start >= end {
                break;
            }
            let (from, to) = (c_start.max(start), c_end.min(end));
            if from < to {
                self.seen = self.seen.saturating_add(to - from);
            }
        }
    }

    /// The covered time.
    pub(crate) fn seen(mut self) -> Nanos {
        self.flush();
        self.seen
    }
}

/// The parts of sorted, disjoint `a` inside sorted, disjoint `b`.
fn clip(a: &[Interval], b: &[Interval]) -> Vec<Interval> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let start = a[i].0.max(b[j].0);
        let end = a[i].1.min(b[j].1);
        if start < end {
            out.push((start, end));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// `gap` less its parts inside `regions` (sorted, disjoint): (outside, inside).
pub(crate) fn split_gap(gap: Interval, regions: &[Interval]) -> (Nanos, Nanos) {
    let total = gap.1.saturating_sub(gap.0).max(0);
    let inside = overlap(&[gap], regions).min(total);
    (total - inside, inside)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unions_overlaps_and_clips() {
        assert_eq!(
            union(vec![(5, 8), (0, 2), (1, 3), (8, 9), (4, 4)]),
            vec![(0, 3), (5, 9)]
        );
        assert_eq!(overlap(&[(0, 10), (20, 30)], &[(5, 25)]), 10);
        assert_eq!(overlap(&[(0, 10)], &[]), 0);
        assert_eq!(
            clip(&[(0, 10), (20, 30)], &[(5, 25)]),
            vec![(5, 10), (20, 25)]
        );
        assert_eq!(split_gap((0, 10), &[(2, 4), (8, 20)]), (6, 4));
        assert_eq!(split_gap((0, 10), &[]), (10, 0));
    }

    #[test]
    fn region_names() {
        assert!(is_compiled_region("Torch-Compiled Region: 0/0"));
        assert!(is_compiled_region("CompiledFunction"));
        assert!(is_compiled_region("CompiledFunctionBackward"));
        assert!(!is_compiled_region(
            "autograd::engine::evaluate_function: CompiledFunctionBackward"
        ));
        assert!(!is_compiled_region("## Call CompiledFxGraph fabc ##"));
    }

    #[test]
    fn within_keeps_exactly_the_intervals_that_can_meet_the_span() {
        // 2000 random sorted, disjoint lists on a small grid, each against a random span:
        // what `within` keeps is exactly the run of intervals that overlap the span's extent.
        let mut state = 7u64;
        let mut next = |bound: i64| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 33) % bound as u64) as i64
        };
        // Up to `count - 1` intervals starting below 40, each 1 to `length` long, merged.
        let mut list = |count: i64, length: i64| {
            let n = next(count);
            union(
                (0..n)
                    .map(|_| {
                        let start = next(40);
                        (start, start + 1 + next(length))
                    })
                    .collect(),
            )
        };
        for _ in 0..2000 {
            let intervals = list(8, 6);
            let span = list(3, 10);
            let kept = within(&intervals, &span);
            let extent = match (span.first(), span.last()) {
                (Some(first), Some(last)) => (first.0, last.1),
                _ => {
                    assert!(kept.is_empty());
                    continue;
                }
            };
            let meeting: Vec<Interval> = intervals
                .iter()
                .filter(|i| i.0 < extent.1 && extent.0 < i.1)
                .copied()
                .collect();
            assert_eq!(kept, &meeting[..], "{intervals:?} within {span:?}");
            assert_eq!(overlap(kept, &span), overlap(&intervals, &span));
        }
    }
}
