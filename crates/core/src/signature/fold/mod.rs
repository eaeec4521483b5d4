//! `classify` in one streaming pass whose memory does not grow with the trace (issue 33).
//!
//! The in-memory classify parses every event into a [`Trace`], links them
//! ([`crate::trace::link`]) and folds the GPU activities into signatures. Here the events
//! pass a block at a time ([`crate::trace::stream_events`]) and only compact records stay
//! ([`records`]): the host ranges and GPU activities go to external sorters, which keep a
//! bounded number in memory and write sorted segments to a temporary folder beyond it.
//! Then:
//! 1. the host ranges, merged back in order of thread and start, are swept once
//!    ([`sweep`]): each op's parent and module, each launch call's innermost op, what
//!    covers the compiled regions; ops become interned contexts ([`contexts`]);
//! 2. the GPU activities and the launch calls, both in order of correlation id, are merged
//!    ([`join`]) and every activity is folded into its signature as it passes;
//! 3. the signature file is written by the same code as the in-memory one
//!    ([`crate::signature::classify`]), from a small trace of each signature's first
//!    activity and its op's ancestry.
//!
//! Memory is the sorters' segments, the distinct strings and contexts, and the signatures.
//! The file is byte-identical to the in-memory classify's (tested on every shared trace).
//! A trace with no GPU activity (classified by its host ops) is not handled here.

pub(crate) mod ahead;
pub mod budget;
mod contexts;
mod join;
mod merge;
pub(crate) mod records;
pub(crate) mod sink;
pub(crate) mod sortable;
pub(crate) mod sorter;
mod sweep;

use std::path::{Path, PathBuf};

use crate::signature::classify::{gpu_signature_file, GpuGroups};
use crate::signature::compiled_code::{union, RegionsInWindows};
use crate::signature::schema::SignatureFile;
use crate::trace::event::{EventArgs, ExecutionId};
use crate::trace::link::{ActivityLink, ExternalIdCheck, Links};
use crate::trace::{Category, Event, FxHashMap, Platform, Trace, TraceError};

use contexts::Contexts;
use join::{Folded, Joined};
use sink::FoldSink;
use sweep::{link_order, LinkOrder};

/// Why a streamed classify failed.
#[derive(Debug, thiserror::Error)]
pub enum FoldError {
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("{path}: no GPU activity: a trace of host ops alone is classified in memory (run without --memory-budget, or with a larger one)")]
    NoGpuActivity { path: PathBuf },
    #[error(transparent)]
    Spill(#[from] crate::spill::SpillError),
}

/// How much a streamed classify may keep in memory.
#[derive(Debug, Clone)]
pub struct FoldOptions {
    /// Records each sorter keeps before it writes a segment (two sorters fill at once,
    /// then one more; a record takes at most [`records::LARGEST_RECORD_BYTES`] in memory).
    pub records_in_memory: usize,
    /// Where the segments go (a temporary folder inside it, removed at the end).
    pub spill_dir: PathBuf,
    /// JSON bytes the trace is read in at a time (`None`: the default).
    pub block_bytes: Option<usize>,
}

impl FoldOptions {
    /// Options for `budget`, the segments in the system's temporary folder (`TMPDIR`).
    pub fn for_budget(budget: &budget::MemoryBudget) -> FoldOptions {
        FoldOptions {
            records_in_memory: budget.records_in_memory(),
            spill_dir: std::env::temp_dir(),
            block_bytes: Some(budget.block_bytes()),
        }
    }
}

/// Classifies the trace at `path` (`-`: standard input) in one streaming pass.
pub fn classify_streamed(path: &Path, options: &FoldOptions) -> Result<SignatureFile, FoldError> {
    let work = tempfile::Builder::new()
        .prefix("replay-classify-")
        .tempdir_in(&options.spill_dir)
        .map_err(|e| spill_error(path, &options.spill_dir, e))?;
    let dir = work.path();
    let spill = |e: std::io::Error| spill_error(path, dir, e);
    let io = |e: std::io::Error| spill_error(path, dir, e);

    let mut sink = FoldSink::new(options.records_in_memory, dir);
    let trace = crate::trace::stream_events_in_blocks(
        path,
        options.block_bytes,
        &mut |events, strings| sink.take(events, strings),
    )?;
    if trace.platform == Platform::Cpu {
        return Err(FoldError::NoGpuActivity {
            path: path.to_path_buf(),
        });
    }
    let FoldSink {
        host,
        activities,
        threads,
        steps,
        regions,
        first_start,
        last_end,
        ..
    } = sink;

    // The steps (or the profiled window) and the compiled regions inside them.
    let mut windows: Vec<(i64, i64)> = steps.iter().map(|s| (s.start, s.end)).collect();
    windows.sort_unstable();
    if windows.is_empty() && first_start < last_end {
        windows.push((first_start, last_end));
    }
    let regions = RegionsInWindows::new(
        &regions
            .into_iter()
            .map(|(thread, spans)| (thread, union(spans)))
            .collect(),
        &windows,
    );

    let mut links =
        sorter::sorter(options.records_in_memory, dir, "links").pushed_by(link_order as LinkOrder);
    // Each merge is read on a thread of its own, beside the sweep or the join that takes it.
    let swept = std::thread::scope(|scope| {
        sweep::sweep(
            ahead::read_ahead(scope, host.done()?),
            &trace.strings,
            &threads,
            &regions,
            &mut links,
        )
    })
    .map_err(spill)?;
    let joined = std::thread::scope(|scope| {
        join::join(
            ahead::read_ahead(scope, activities.done()?),
            ahead::read_ahead(scope, links.done()?),
            &swept.contexts,
            &trace.strings,
        )
    })
    .map_err(io)?;
    let compiled_code = regions.total(|thread, _| swept.seen.get(thread).copied().unwrap_or(0));
    let file = describe(trace, joined, &swept.contexts, compiled_code, path);
    drop(work);
    Ok(file)
}

fn spill_error(path: &Path, dir: &Path, error: impl std::fmt::Display) -> FoldError {
    crate::spill::SpillError::new(path, dir, error).into()
}

/// The signature file, written by the in-memory classify's code from a trace of only the
/// events it reads: each signature's first activity, its op and the op's ancestors and
/// module (made from the contexts), and each unattributed group's first activity.
fn describe(
    mut trace: Trace,
    joined: Joined,
    contexts: &Contexts,
    compiled_code: Option<crate::signature::schema::CompiledCode>,
    path: &Path,
) -> SignatureFile {
    let mut mini = MiniTrace::default();
    let mut groups = FxHashMap::default();
    let mut first_link = FxHashMap::default();
    for (key, folded) in &joined.groups {
        let first = folded.first;
        let activity = mini.activity(&first.record);
        let op = first.op.map(|context| mini.op(context, contexts));
        groups.insert(*key, folded.invocations(activity));
        first_link.insert(
            *key,
            ActivityLink {
                activity,
                // The signature file is made without the launch call (its link counts
                // are `stats`); it has one.
                launch: None,
                op,
                external_id: ExternalIdCheck::NoOpToCheck,
                launched_by_graph: first.launched_by_graph,
                collective: first.collective,
            },
        );
    }
    let unattributed: FxHashMap<_, _> = joined
        .unattributed
        .iter()
        .map(|(key, folded): (_, &Folded)| {
            let activity = mini.activity(&folded.first.record);
            (*key, folded.invocations(activity))
        })
        .collect();
    trace.events = mini.events;
    let links = Links {
        activities: Vec::new(),
        op_parent: mini.op_parent,
        op_module: mini.op_module,
        stats: joined.stats,
    };
    let folded = GpuGroups {
        groups,
        first_link,
        unattributed,
    };
    let mut file = gpu_signature_file(&trace, &links, &folded, compiled_code, path);
    crate::signature::fusion_group::attach(&mut file, trace.metadata.fusion_groups.as_ref());
    file
}

/// The few events a signature file is described from, with their nesting.
#[derive(Default)]
struct MiniTrace {
    events: Vec<Event>,
    op_parent: Vec<Option<usize>>,
    op_module: Vec<Option<usize>>,
    /// Each context's op event.
    ops: FxHashMap<u32, usize>,
}

impl MiniTrace {
    fn push(&mut self, event: Event) -> usize {
        self.events.push(event);
        self.op_parent.push(None);
        self.op_module.push(None);
        self.events.len() - 1
    }

    fn activity(&mut self, record: &records::ActivityRecord) -> usize {
        self.push(Event {
            category: record.category,
            name: record.name,
            pid: ExecutionId::Number(0),
            tid: ExecutionId::Number(0),
            ts_ns: 0,
            dur_ns: record.dur,
            args: EventArgs {
                correlation: record.correlation,
                stream: record.stream,
                bytes: record.bytes,
                grid: record.grid,
                block: record.block,
                ..EventArgs::default()
            },
        })
    }

    /// The op event of `context`, with its ancestors' and module's, made once each.
    fn op(&mut self, context: u32, contexts: &Contexts) -> usize {
        if let Some(&index) = self.ops.get(&context) {
            return index;
        }
        let Some(&op) = contexts.get(context) else {
            return self.push(host_event(Category::CpuOp, None));
        };
        let parent = op.parent.map(|parent| self.op(parent, contexts));
        let module = op
            .module
            .map(|name| self.push(host_event(Category::PythonFunction, Some(name))));
        let mut event = host_event(Category::CpuOp, Some(op.name));
        event.args.inputs = op.inputs;
        let index = self.push(event);
        self.op_parent[index] = parent;
        self.op_module[index] = module;
        self.ops.insert(context, index);
        index
    }
}

fn host_event(category: Category, name: Option<crate::trace::StrId>) -> Event {
    Event {
        category,
        name: name.unwrap_or(crate::trace::StrId::from_index(0)),
        pid: ExecutionId::Number(0),
        tid: ExecutionId::Number(0),
        ts_ns: 0,
        dur_ns: 0,
        args: EventArgs::default(),
    }
}
