//! Tying an Execution Trace to the Kineto trace of the same profiled step.
//!
//! While an `ExecutionTraceObserver` runs, every RecordFunction gets an id: the ET node
//! records it as `rf_id`, the Kineto op as `args."Record function id"` (the profiler writes 0
//! when no observer asked for ids, which the trace reader drops). An op and a node with the
//! same id are the same call, and their names must agree; a link whose names differ is
//! dropped and counted. An ET with no id in common with the Kineto trace, or whose common ids
//! mostly name other ops, was recorded in another step or another run: it is refused.
//!
//! A Kineto trace with no record-function id at all (profiled without the observer) is linked
//! by op order and shapes instead ([`super::link_order`]), and refused when that match is too
//! poor to trust.

use std::path::Path;

use crate::trace::steps::{step_windows, StepSource, StepWindow};
use crate::trace::{Category, FxHashMap, Trace};

use super::error::EtError;
use super::link_order::{link_by_order, OrderMatch, MIN_MATCHED_SHARE};
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
    /// How the ops were linked by order and shapes, where the Kineto trace records no
    /// record-function id (`None`: linked by record-function id).
    pub by_order: Option<OrderMatch>,
}

impl EtLinks {
    /// The ET node linked to Kineto event `event`.
    pub fn node<'a>(&self, et: &'a ExecutionTrace, event: usize) -> Option<&'a EtNode> {
        self.node_of_event
            .get(&event)
            .and_then(|&n| et.nodes.get(n))
    }

    /// The step the linked ops stand in: the `ProfilerStep#N` span that holds most of them,
    /// or, in a trace without step spans, from the first linked op's start to the last one's
    /// end (the iteration the ET recorded, where the profiled window may hold many). `None`
    /// when nothing linked.
    pub fn step_window(&self, trace: &Trace) -> Option<(StepSource, StepWindow)> {
        let linked = || self.node_of_event.keys().map(|&e| &trace.events[e]);
        let start_ns = linked().map(|e| e.ts_ns).min()?;
        let end_ns = linked().map(|e| e.end_ns()).max()?;
        let (source, windows) = step_windows(trace);
        if source == StepSource::ProfilerStep {
            let holding = |w: &StepWindow| linked().filter(|e| w.holds(e.ts_ns)).count();
            let best = windows.iter().max_by_key(|w| (holding(w), w.start_ns))?;
            return (holding(best) > 0).then(|| (source, best.clone()));
        }
        let window = StepWindow {
            name: "the Execution Trace's iteration".into(),
            start_ns,
            end_ns,
            thread: None,
        };
        Some((source, window))
    }

    /// How the ops were linked, in a line: by record-function id, or by op order and shapes
    /// with where and how well.
    pub fn describe(&self) -> String {
        match &self.by_order {
            None => format!(
                "{} of {} ops linked by record-function id",
                self.linked, self.kineto_ops
            ),
            Some(order) => format!(
                "{} of {} ops linked by op order and shapes (the Kineto trace records no \
                 record-function id): {}",
                self.linked,
                self.kineto_ops,
                order.describe()
            ),
        }
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
        let (node_of_event, order) = link_by_order(et, trace);
        if !order.trusted() {
            return Err(refuse(poor_order_match(links.kineto_ops, &order)));
        }
        links.linked = order.matched;
        links.node_of_event = node_of_event;
        links.by_order = Some(order);
        return Ok(links);
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

/// Why a match by op order and shapes is refused.
fn poor_order_match(kineto_ops: u64, order: &OrderMatch) -> String {
    let percent = |part: u64, whole: u64| {
        if whole == 0 {
            0.0
        } else {
            100.0 * part as f64 / whole as f64
        }
    };
    let threshold = MIN_MATCHED_SHARE * 100.0;
    if order.matched == 0 {
        return format!(
            "none of the Kineto trace's {kineto_ops} ops records a record-function id, and \
             matched by op order and shapes none of the Execution Trace's {} operators has an \
             op of its name{}: they were recorded in different runs or models",
            order.et_operators,
            if order.et_operators == 0 {
                " (it records no operator)"
            } else {
                ""
            }
        );
    }
    format!(
        "none of the Kineto trace's {kineto_ops} ops records a record-function id, and matched \
         by op order and shapes (best of {} places) {} of the Execution Trace's {} operators \
         ({:.0} %) matched, and {} of the {} Kineto ops between the first and the last match \
         ({:.0} %), in step {}: at least {threshold:.0} % of both must (a pair recorded \
         together matches all but the ops at the edges of its recording window): they were \
         recorded in different steps, runs or models",
        order.places_tried,
        order.matched,
        order.et_operators,
        percent(order.matched, order.et_operators),
        order.matched,
        order.kineto_span_ops,
        percent(order.matched, order.kineto_span_ops),
        order.step
    )
}
