//! The host side of a streamed classify: one pass over every thread's ranges in order of
//! start (modules, ops and launch calls merged, [`HostRecord::sweep_key`]) finds what the
//! in-memory linker finds with its per-thread sorts ([`crate::trace::link`]): each op's
//! parent op and `nn.Module`, and each launch call's innermost op. Three stacks, one per
//! question, hold only the ranges open at that moment; the launches leave as
//! [`LaunchLink`]s, the ops as interned [`OpContext`]s.

use std::cmp::Ordering;

use super::sorter::PushSorter;

use crate::signature::compiled_code::{is_compiled_region, Coverage, RegionsInWindows, Thread};
use crate::trace::{FxHashMap, Nanos, StrId, StringTable};

use super::contexts::{Contexts, OpContext};
use super::records::{HostKind, HostRecord, LaunchLink};

/// Launch calls that replay a whole captured graph (as [`crate::trace::link`] knows them).
const GRAPH_LAUNCH_PREFIXES: [&str; 3] = ["cudaGraphLaunch", "cuGraphLaunch", "hipGraphLaunch"];

pub type LinkOrder = fn(&LaunchLink, &LaunchLink) -> Ordering;

pub fn link_order(a: &LaunchLink, b: &LaunchLink) -> Ordering {
    (a.correlation, a.index).cmp(&(b.correlation, b.index))
}

/// An op open on the launch stack.
struct OpenOp {
    ts: Nanos,
    end: Nanos,
    context: u32,
    external_id: Option<i64>,
}

/// One thread's open ranges.
#[derive(Default)]
struct ThreadState {
    /// (end, context) of the ops enclosing the next op (parents).
    parents: Vec<(Nanos, u32)>,
    /// Ops that may enclose the next launch call.
    ops: Vec<OpenOp>,
    /// (start, end, name) of the modules that may enclose the next op.
    modules: Vec<(Nanos, Nanos, StrId)>,
}

/// What the sweep found besides the launches.
pub struct SweepResult {
    pub contexts: Contexts,
    /// Covered time inside each thread's compiled regions.
    pub seen: FxHashMap<Thread, Nanos>,
}

/// Sweeps `host` (sorted by [`HostRecord::sweep_key`]), pushing a [`LaunchLink`] for every
/// launch call with a correlation id into `links`.
pub fn sweep(
    host: impl Iterator<Item = std::io::Result<HostRecord>>,
    strings: &StringTable,
    threads: &[Thread],
    regions: &RegionsInWindows,
    links: &mut PushSorter<LaunchLink, LinkOrder>,
) -> Result<SweepResult, std::io::Error> {
    let mut contexts = Contexts::default();
    let mut seen: FxHashMap<Thread, Nanos> = FxHashMap::default();
    let mut state = ThreadState::default();
    let mut current: Option<u32> = None;
    let mut coverage: Option<(Thread, Coverage<'_>)> = None;
    // Names tested once each: is it a compiled region, a graph launch.
    let mut region_names: FxHashMap<StrId, bool> = FxHashMap::default();
    let mut graph_names: FxHashMap<StrId, bool> = FxHashMap::default();
    for record in host {
        let record = record?;
        if current != Some(record.thread) {
            current = Some(record.thread);
            state = ThreadState::default();
            if let Some((thread, done)) = coverage.take() {
                seen.insert(thread, done.seen());
            }
            if let Some(&thread) = threads.get(record.thread as usize) {
                coverage = regions.on(&thread).map(|c| (thread, Coverage::new(c)));
            }
        }
        let end = record.end();
        match record.kind {
            HostKind::Module => {
                pop_while(&mut state.modules, |m| m.1 < end);
                state.modules.push((record.ts, end, record.name));
            }
            HostKind::Op => {
                pop_while(&mut state.modules, |m| m.1 < record.ts);
                let module = state
                    .modules
                    .iter()
                    .rev()
                    .find(|m| m.0 <= record.ts && end <= m.1)
                    .map(|m| m.2);
                pop_while(&mut state.parents, |p| p.0 < end);
                let context = contexts.intern(OpContext {
                    name: record.name,
                    inputs: record.inputs,
                    parent: state.parents.last().map(|p| p.1),
                    module,
                });
                state.parents.push((end, context));
                pop_while(&mut state.ops, |o| o.end < end);
                state.ops.push(OpenOp {
                    ts: record.ts,
                    end,
                    context,
                    external_id: record.id,
                });
                if let Some((_, coverage)) = &mut coverage {
                    let region = *region_names
                        .entry(record.name)
                        .or_insert_with(|| is_compiled_region(strings.get(record.name)));
                    if !region {
                        coverage.add(record.ts, end);
                    }
                }
            }
            HostKind::Launch => {
                if let Some((_, coverage)) = &mut coverage {
                    coverage.add(record.ts, end);
                }
                pop_while(&mut state.ops, |o| o.end < record.ts);
                let Some(correlation) = record.id else {
                    continue;
                };
                let op = state
                    .ops
                    .iter()
                    .rev()
                    .find(|o| o.ts <= record.ts && end <= o.end);
                let launched_by_graph = *graph_names.entry(record.name).or_insert_with(|| {
                    let name = strings.get(record.name);
                    GRAPH_LAUNCH_PREFIXES.iter().any(|p| name.starts_with(p))
                });
                links.push(LaunchLink {
                    correlation,
                    index: record.index,
                    launched_by_graph,
                    bytes: record.bytes,
                    op: op.map(|o| o.context),
                    op_external_id: op.and_then(|o| o.external_id),
                })?;
            }
        }
    }
    if let Some((thread, done)) = coverage.take() {
        seen.insert(thread, done.seen());
    }
    Ok(SweepResult { contexts, seen })
}

fn pop_while<T>(stack: &mut Vec<T>, pop: impl Fn(&T) -> bool) {
    while stack.last().is_some_and(&pop) {
        stack.pop();
    }
}
