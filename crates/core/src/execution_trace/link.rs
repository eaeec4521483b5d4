//! Tying an Execution Trace to the Kineto trace of the same profiled step.
//!
//! While an `ExecutionTraceObserver` runs, every RecordFunction gets an id: the ET node
//! records it as `rf_id`, the Kineto op as `args."Record function id"` (the profiler writes 0
//! when no observer asked for ids, which the trace reader drops). An op and a node with the
//! same id are the same call, and their names must agree; a link whose names differ is
//! dropped and counted. An ET with no id in common with the Kineto trace, or whose common ids
//! mostly name other ops, was recorded in another step or another run: it is refused.

use std::path::Path;

use crate::trace::{Category, FxHashMap, Trace};

use super::error::EtError;
use super::node::{EtNode, ExecutionTrace};

/// The Kineto ops of a trace tied to the nodes of its Execution Trace.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EtLinks {
    /// Index into [`ExecutionTrace::nodes`] by index into [`Trace::events`].
    pub node_of_event: FxHashMap<usize, usize>,
    /// The Kineto trace's ops (`cpu_op` and `user_annotation` events).
    pub kineto_ops: u64,
    /// Those of them that carry a record-function id.
    pub kineto_ops_with_id: u64,
    /// Ops linked to a node of the same name.
    pub linked: u64,
    /// Ops whose id names a node of another name (not linked).
    pub name_mismatches: u64,
    /// Ops whose id no node has (recorded outside the ET's window).
    pub unknown_ids: u64,
}

impl EtLinks {
    /// The ET node linked to Kineto event `event`.
    pub fn node<'a>(&self, et: &'a ExecutionTrace, event: usize) -> Option<&'a EtNode> {
        self.node_of_event
            .get(&event)
            .and_then(|&n| et.nodes.get(n))
    }
}

/// Links the ops of `trace` (read from `trace_path`) to the nodes of `et`.
pub fn link(et: &ExecutionTrace, trace: &Trace, trace_path: &Path) -> Result<EtLinks, EtError> {
    let mut by_rf_id: FxHashMap<u64, usize> = FxHashMap::default();
    for (index, node) in et.nodes.iter().enumerate() {
        if let Some(rf_id) = node.rf_id.filter(|&id| id > 0) {
            by_rf_id.entry(rf_id).or_insert(index);
        }
    }
    let mut links = EtLinks::default();
    for (event_index, event) in trace.events.iter().enumerate() {
        if !matches!(event.category, Category::CpuOp | Category::UserAnnotation) {
            continue;
        }
        links.kineto_ops += 1;
        let Some(rf_id) = event.args.record_function_id else {
            continue;
        };
        links.kineto_ops_with_id += 1;
        let node = u64::try_from(rf_id)
            .ok()
            .and_then(|id| by_rf_id.get(&id).copied());
        match node {
            None => links.unknown_ids += 1,
            Some(node) if et.nodes[node].name == trace.name(event) => {
                links.linked += 1;
                links.node_of_event.insert(event_index, node);
            }
            Some(_) => links.name_mismatches += 1,
        }
    }
    let refuse = |message: String| EtError::NotThisTrace {
        et: et.path.clone(),
        trace: trace_path.to_path_buf(),
        message,
    };
    if links.kineto_ops_with_id == 0 {
        return Err(refuse(format!(
            "none of the Kineto trace's {} ops records a record-function id (it was not \
             profiled with an ExecutionTraceObserver running; `replay capture \
             --execution-trace` records both)",
            links.kineto_ops
        )));
    }
    if links.linked == 0 || links.name_mismatches > links.linked {
        return Err(refuse(format!(
            "of the Kineto trace's {} ops with a record-function id, {} name the same op in \
             the Execution Trace, {} another op and {} no node: they were recorded in \
             different steps or runs",
            links.kineto_ops_with_id, links.linked, links.name_mismatches, links.unknown_ids
        )));
    }
    Ok(links)
}
