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
fn covers(category: Category, name: &str) -> bool {
    match category {
        Category::CpuOp => !is_compiled_region(name),
        Category::CudaRuntime | Category::CudaDriver => true,
        _ => false,
    }
}

type Interval = (Nanos, Nanos);

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
pub(crate) fn regions_by_thread(
    trace: &Trace,
) -> FxHashMap<(ExecutionId, ExecutionId), Vec<Interval>> {
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
    let windows = union(windows.to_vec());
    let regions = regions_by_thread(trace);
    if regions.is_empty() {
        return None;
    }
    let mut covered: FxHashMap<(ExecutionId, ExecutionId), Vec<Interval>> = FxHashMap::default();
    for event in &trace.events {
        let thread = (event.pid, event.tid);
        if regions.contains_key(&thread) && covers(event.category, trace.name(event)) {
            covered
                .entry(thread)
                .or_default()
                .push((event.ts_ns, event.end_ns()));
        }
    }
    let (mut count, mut region_ns, mut seen_ns) = (0u64, 0 as Nanos, 0 as Nanos);
    for (thread, spans) in &regions {
        let in_windows: Vec<Interval> = spans
            .iter()
            .filter(|span| overlap(&[**span], &windows) > 0)
            .copied()
            .collect();
        if in_windows.is_empty() {
            continue;
        }
        count += in_windows.len() as u64;
        // The regions' time inside the steps, and the covered part of it.
        let clipped = clip(&in_windows, &windows);
        region_ns = region_ns.saturating_add(length(&clipped));
        let work = union(covered.remove(thread).unwrap_or_default());
        seen_ns = seen_ns.saturating_add(overlap(&clipped, &work));
    }
    if count == 0 {
        return None;
    }
    let steps_ns = length(&windows);
    let uninstrumented_ns = region_ns.saturating_sub(seen_ns);
    Some(CompiledCode {
        regions: count,
        region_us: us(region_ns),
        uninstrumented_us: us(uninstrumented_ns),
        steps_us: us(steps_ns),
    })
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
}
