//! Linking every GPU activity to the host call that launched it and the operator that
//! made that call.
//!
//! 1. GPU activity -> launch call: the `cuda_runtime`/`cuda_driver` event with the same
//!    `args.correlation`. CUPTI and roctracer have written this in every profiler era.
//! 2. Launch call -> op: the innermost `cpu_op` on the same (pid, tid) whose
//!    `[ts, ts + dur]` contains the call's interval, bounds included (a parent and its
//!    first child may start on the same microsecond).
//! 3. The `External id` (PyTorch 1.8-1.10: `external id`) is only used to *confirm* the
//!    result. From about PyTorch 1.11 to 2.2 the GPU side's External id is really the
//!    correlation id and equals some unrelated op's External id by accident (17 of 98
//!    GPU events in `a100_alexnet_fwd`), so trusting it would misattribute work.

use super::contents::Trace;
use super::event::{Category, Event, ExecutionId};
use super::id_index::IdIndex;
use super::strings::{FxHashMap, StrId};

/// Launch calls that replay a whole captured CUDA/HIP graph: one correlation id is shared
/// by every kernel of the graph, and the kernels' inputs are not recorded.
const GRAPH_LAUNCH_PREFIXES: [&str; 3] = ["cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"];

/// How the External id recorded on a GPU activity compares with the linked op's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExternalIdCheck {
    /// Same External id on the activity and on the op found by correlation + containment.
    Confirmed,
    /// Different. `external_id_op` is the op the External id alone would have picked
    /// (if any op carries that id): following it would have misattributed the activity.
    Contradicted { external_id_op: Option<usize> },
    /// The activity records no External id.
    NotRecorded,
    /// No op was found for the activity, so there is nothing to confirm.
    NoOpToCheck,
}

/// Where one GPU activity came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActivityLink {
    /// Index of the activity in [`Trace::events`].
    pub activity: usize,
    /// The runtime/driver call with the same correlation id. `None` when the call is not
    /// in the trace (launched before the profiling window, or from an untraced thread):
    /// such an activity is *unattributed*.
    pub launch: Option<usize>,
    /// The innermost `cpu_op` around the launch call.
    pub op: Option<usize>,
    pub external_id: ExternalIdCheck,
    /// The launch call is a graph launch (`cudaGraphLaunch`...).
    pub launched_by_graph: bool,
    /// A collective communication kernel (NCCL/RCCL).
    pub collective: bool,
}

/// Counts describing how well a trace linked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkStats {
    pub activities: u64,
    pub with_launch: u64,
    pub with_op: u64,
    /// No launch call with the activity's correlation id.
    pub unattributed: u64,
    /// A launch call was found but no op encloses it.
    pub launch_without_op: u64,
    pub launched_by_graph: u64,
    pub collective: u64,
    pub external_id_confirmed: u64,
    pub external_id_contradicted: u64,
    pub external_id_not_recorded: u64,
}

/// The result of linking a trace.
#[derive(Debug, Clone)]
pub struct Links {
    /// One entry per GPU activity, in file order.
    pub activities: Vec<ActivityLink>,
    /// For each event that is a `cpu_op`: the innermost enclosing `cpu_op` on its thread.
    /// `None` for top-level ops and for events that are not ops. Indexed like
    /// [`Trace::events`].
    pub op_parent: Vec<Option<usize>>,
    /// For each `cpu_op`: the innermost `nn.Module` range (`python_function`) around it.
    pub op_module: Vec<Option<usize>>,
    pub stats: LinkStats,
}

impl Links {
    /// The ops enclosing `op`, outermost first, not including `op` itself.
    pub fn ancestors(&self, op: usize) -> Vec<usize> {
        let mut chain = Vec::new();
        let mut current = self.op_parent.get(op).copied().flatten();
        // A well-formed parent chain is acyclic; the bound only guards against a bug.
        while let Some(parent) = current {
            if chain.len() > self.op_parent.len() {
                break;
            }
            chain.push(parent);
            current = self.op_parent.get(parent).copied().flatten();
        }
        chain.reverse();
        chain
    }
}

/// Links every GPU activity of `trace`.
pub fn link(trace: &Trace) -> Links {
    let events = &trace.events;
    // The correlation index is independent of the nesting of ranges: it is built on a
    // second core meanwhile.
    let (launch_by_correlation, nesting) = std::thread::scope(|scope| {
        let index = scope.spawn(|| launch_calls_by_correlation(events));
        let nesting = nest_host_ranges(events);
        let index = index
            .join()
            .unwrap_or_else(|_| launch_calls_by_correlation(events));
        (index, nesting)
    });
    let HostNesting {
        op_parent,
        op_module,
        launch_op,
    } = nesting;
    // Only a contradicted External id asks which op carries it: rare, so built on demand.
    let mut op_by_external_id: Option<IdIndex> = None;

    // Kernel names are long and repeat: test each distinct name once.
    let mut collective_names: FxHashMap<StrId, bool> = FxHashMap::default();
    let mut stats = LinkStats::default();
    let mut activities = Vec::new();
    for (index, event) in events.iter().enumerate() {
        if !event.category.is_gpu_activity() {
            continue;
        }
        let launch = event
            .args
            .correlation
            .and_then(|c| launch_by_correlation.get(c));
        let op = launch.and_then(|l| launch_op[l]);
        let external_id = check_external_id(event, op, events, &mut op_by_external_id);
        let launched_by_graph = launch.is_some_and(|l| {
            let name = trace.name(&events[l]);
            GRAPH_LAUNCH_PREFIXES.iter().any(|p| name.starts_with(p))
        });
        let collective = *collective_names
            .entry(event.name)
            .or_insert_with(|| is_collective_kernel(trace.name(event)));

        stats.activities += 1;
        stats.with_launch += u64::from(launch.is_some());
        stats.with_op += u64::from(op.is_some());
        stats.unattributed += u64::from(launch.is_none());
        stats.launch_without_op += u64::from(launch.is_some() && op.is_none());
        stats.launched_by_graph += u64::from(launched_by_graph);
        stats.collective += u64::from(collective);
        match external_id {
            ExternalIdCheck::Confirmed => stats.external_id_confirmed += 1,
            ExternalIdCheck::Contradicted { .. } => stats.external_id_contradicted += 1,
            ExternalIdCheck::NotRecorded => stats.external_id_not_recorded += 1,
            ExternalIdCheck::NoOpToCheck => {}
        }
        activities.push(ActivityLink {
            activity: index,
            launch,
            op,
            external_id,
            launched_by_graph,
            collective,
        });
    }
    Links {
        activities,
        op_parent,
        op_module,
        stats,
    }
}

/// How the host ranges of every thread nest: each op's parent op and `nn.Module`, and each
/// launch call's innermost op (all three indexed like the events).
struct HostNesting {
    op_parent: Vec<Option<usize>>,
    op_module: Vec<Option<usize>>,
    launch_op: Vec<Option<usize>>,
}

fn nest_host_ranges(events: &[Event]) -> HostNesting {
    let threads = host_ranges_by_thread(events);
    let mut op_parent = vec![None; events.len()];
    let mut op_module = vec![None; events.len()];
    let mut launch_op = vec![None; events.len()];
    for ranges in threads.into_values() {
        let HostRanges {
            mut ops,
            mut launches,
            mut modules,
        } = ranges;
        sort_outer_first(events, &mut ops);
        sort_outer_first(events, &mut modules);
        launches.sort_by_key(|&i| (events[i].ts_ns, i));
        assign_parents(events, &ops, &mut op_parent);
        for (launch, op) in launches
            .iter()
            .zip(innermost_enclosing(events, &ops, &launches))
        {
            launch_op[*launch] = op;
        }
        let mut ops_by_start = ops.clone();
        ops_by_start.sort_by_key(|&i| (events[i].ts_ns, i));
        for (op, module) in
            ops_by_start
                .iter()
                .zip(innermost_enclosing(events, &modules, &ops_by_start))
        {
            op_module[*op] = module;
        }
    }

    HostNesting {
        op_parent,
        op_module,
        launch_op,
    }
}

/// NCCL (CUDA) and RCCL (ROCm) kernels: `ncclKernel_*`, `ncclDevKernel_*`, ...
pub fn is_collective_kernel(name: &str) -> bool {
    contains_ignoring_ascii_case(name, "nccl") || contains_ignoring_ascii_case(name, "rccl")
}

fn contains_ignoring_ascii_case(haystack: &str, needle: &str) -> bool {
    haystack
        .as_bytes()
        .windows(needle.len())
        .any(|window| window.eq_ignore_ascii_case(needle.as_bytes()))
}

fn launch_calls_by_correlation(events: &[Event]) -> IdIndex {
    // First call wins: correlation ids are unique per process in real traces.
    IdIndex::build(events.iter().enumerate().filter_map(|(index, event)| {
        match (event.category.is_launch_call(), event.args.correlation) {
            (true, Some(correlation)) => Some((correlation, index)),
            _ => None,
        }
    }))
}

fn ops_by_external_id(events: &[Event]) -> IdIndex {
    IdIndex::build(events.iter().enumerate().filter_map(|(index, event)| {
        match (event.category, event.args.external_id) {
            (Category::CpuOp, Some(id)) => Some((id.value, index)),
            _ => None,
        }
    }))
}

fn check_external_id(
    activity: &Event,
    op: Option<usize>,
    events: &[Event],
    op_by_external_id: &mut Option<IdIndex>,
) -> ExternalIdCheck {
    let Some(recorded) = activity.args.external_id else {
        return ExternalIdCheck::NotRecorded;
    };
    let Some(op) = op else {
        return ExternalIdCheck::NoOpToCheck;
    };
    if events[op].args.external_id.map(|id| id.value) == Some(recorded.value) {
        ExternalIdCheck::Confirmed
    } else {
        let by_id = op_by_external_id.get_or_insert_with(|| ops_by_external_id(events));
        ExternalIdCheck::Contradicted {
            external_id_op: by_id.get(recorded.value),
        }
    }
}

/// The host-side ranges of one (pid, tid).
#[derive(Default)]
struct HostRanges {
    ops: Vec<usize>,
    launches: Vec<usize>,
    modules: Vec<usize>,
}

fn host_ranges_by_thread(events: &[Event]) -> FxHashMap<(ExecutionId, ExecutionId), HostRanges> {
    let mut threads: FxHashMap<(ExecutionId, ExecutionId), HostRanges> = FxHashMap::default();
    for (index, event) in events.iter().enumerate() {
        let thread = (event.pid, event.tid);
        match event.category {
            Category::CpuOp => threads.entry(thread).or_default().ops.push(index),
            Category::CudaRuntime | Category::CudaDriver => {
                threads.entry(thread).or_default().launches.push(index)
            }
            // Only `nn.Module` frames are kept among python_function events.
            Category::PythonFunction => threads.entry(thread).or_default().modules.push(index),
            _ => {}
        }
    }
    threads
}

/// Sorts ranges so that a parent comes before its children: by start, then longest
/// first, then file order.
fn sort_outer_first(events: &[Event], ranges: &mut [usize]) {
    ranges.sort_by_key(|&i| (events[i].ts_ns, std::cmp::Reverse(events[i].dur_ns), i));
}

/// Sets `parent[op]` to the innermost op containing it, for ops sorted outer-first.
fn assign_parents(events: &[Event], ops: &[usize], parent: &mut [Option<usize>]) {
    let mut stack: Vec<usize> = Vec::new();
    for &op in ops {
        let end = events[op].end_ns();
        while stack.last().is_some_and(|&top| events[top].end_ns() < end) {
            stack.pop();
        }
        parent[op] = stack.last().copied();
        stack.push(op);
    }
}

/// For each item (sorted by start), the innermost container (sorted outer-first) whose
/// interval contains the item's whole interval, bounds included.
fn innermost_enclosing(
    events: &[Event],
    containers: &[usize],
    items: &[usize],
) -> Vec<Option<usize>> {
    let mut result = Vec::with_capacity(items.len());
    let mut stack: Vec<usize> = Vec::new();
    let mut next = 0;
    for &item in items {
        let item_event = &events[item];
        while let Some(&container) = containers.get(next) {
            if events[container].ts_ns > item_event.ts_ns {
                break;
            }
            // A container that ends before this one ends cannot hold any later item
            // that this one does not also hold (later items start after this one).
            let end = events[container].end_ns();
            while stack.last().is_some_and(|&top| events[top].end_ns() < end) {
                stack.pop();
            }
            stack.push(container);
            next += 1;
        }
        while stack
            .last()
            .is_some_and(|&top| events[top].end_ns() < item_event.ts_ns)
        {
            stack.pop();
        }
        let found = stack
            .iter()
            .rev()
            .find(|&&container| container != item && events[container].contains(item_event))
            .copied();
        result.push(found);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::EventArgs;
    use crate::trace::strings::StringTable;

    fn range(category: Category, ts: i64, dur: i64) -> Event {
        let mut strings = StringTable::default();
        Event {
            category,
            name: strings.intern("x").unwrap_or_else(|_| unreachable!()),
            pid: ExecutionId::Number(1),
            tid: ExecutionId::Number(1),
            ts_ns: ts,
            dur_ns: dur,
            args: EventArgs::default(),
        }
    }

    #[test]
    fn innermost_enclosing_picks_the_deepest_op_with_inclusive_bounds() {
        let events = vec![
            range(Category::CpuOp, 0, 100),       // 0: outer
            range(Category::CpuOp, 10, 20),       // 1: child, ends at 30
            range(Category::CpuOp, 40, 10),       // 2: second child, 40..50
            range(Category::CudaRuntime, 10, 5),  // 3: launch at the child's start
            range(Category::CudaRuntime, 45, 5),  // 4: launch ending exactly at 50
            range(Category::CudaRuntime, 60, 5),  // 5: launch in the outer op only
            range(Category::CudaRuntime, 200, 1), // 6: launch outside every op
        ];
        let ops = vec![0, 1, 2];
        let launches = vec![3, 4, 5, 6];
        let found = innermost_enclosing(&events, &ops, &launches);
        assert_eq!(found, vec![Some(1), Some(2), Some(0), None]);

        let mut parent = vec![None; events.len()];
        assign_parents(&events, &ops, &mut parent);
        assert_eq!(&parent[..3], &[None, Some(0), Some(0)]);
    }
}
