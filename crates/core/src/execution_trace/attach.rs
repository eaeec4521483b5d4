//! Writing what a linked Execution Trace knows into a signature file: each signature whose
//! launching op linked to an ET node gets the node's exact operator schema and argument
//! values (`op.schema`, `op.exact_inputs`) and the value ranges of its integral tensors
//! (`op.input_ranges`), and the file's source says how the ET linked.
//!
//! A signature folds many invocations; the first invocation (in trace order) whose launching
//! op linked describes it, as the first invocation describes the rest of the signature. The
//! ranges are the union over every linked invocation: each of them read values in it.

use std::path::Path;

use crate::signature::{
    signature_ids, ExactInput, ExecutionTraceSource, InputRange, SignatureFile,
};
use crate::trace::{link, FxHashMap, Platform, Trace};

use super::error::EtError;
use super::fill::{fill_inputs, Filled};
use super::link::EtLinks;
use super::node::{EtNode, ExecutionTrace};

/// An Execution Trace read and linked to its Kineto trace, and what it gave that trace.
#[derive(Debug, Clone)]
pub struct LinkedEt {
    pub et: ExecutionTrace,
    pub links: EtLinks,
    /// The ops given the linked nodes' inputs ([`super::fill`]).
    pub filled: Filled,
}

/// Loads the Execution Trace at `et_path`, links it to `trace` (read from `trace_path`) and
/// gives the trace's ops the inputs it did not record ([`fill_inputs`]): what `classify`,
/// `isolated`, `compare` and `sequence` do with `--execution-trace` before classifying. An ET
/// that cannot be read or is not the trace's is refused.
pub fn link_file(
    trace: &mut Trace,
    trace_path: &Path,
    et_path: &Path,
) -> Result<LinkedEt, EtError> {
    let et = super::read::load(et_path)?;
    let links = super::link::link(&et, trace, trace_path)?;
    let filled = fill_inputs(trace, &et, &links).map_err(|_| EtError::TooManyStrings {
        et: et_path.to_path_buf(),
        trace: trace_path.to_path_buf(),
    })?;
    Ok(LinkedEt { et, links, filled })
}

/// Records the linked ET's schemas and values on the signatures of `file` (classified from
/// `trace`, after [`link_file`]) and returns how many linked, as also written to
/// `file.source.execution_trace`.
pub fn attach(file: &mut SignatureFile, trace: &Trace, linked: &LinkedEt) -> ExecutionTraceSource {
    let (et, links) = (&linked.et, &linked.links);
    let trace_links = link::link(trace);
    let ids = signature_ids(trace, &trace_links);
    // The launching op of each unit of work: a GPU activity's op, or the top-level op itself.
    let op_of: FxHashMap<usize, usize> = match trace.platform {
        Platform::Cpu => ids.events().map(|e| (e, e)).collect(),
        Platform::Cuda | Platform::Rocm => trace_links
            .activities
            .iter()
            .filter_map(|l| Some((l.activity, l.op?)))
            .collect(),
    };
    let mut events: Vec<usize> = ids.events().collect();
    events.sort_unstable();
    // Per signature: the first linked node, and its invocations with and without a link.
    let mut first: FxHashMap<&str, &EtNode> = FxHashMap::default();
    let mut counts: FxHashMap<&str, (u64, u64)> = FxHashMap::default();
    let mut ranges: FxHashMap<&str, Vec<InputRange>> = FxHashMap::default();
    for event in events {
        let Some(id) = ids.of_event(event) else {
            continue;
        };
        let node = op_of.get(&event).and_then(|&op| links.node(et, op));
        let count = counts.entry(id).or_default();
        count.0 += 1;
        if let Some(node) = node {
            count.1 += 1;
            first.entry(id).or_insert(node);
            InputRange::union_into(ranges.entry(id).or_default(), &node.input_ranges);
        }
    }
    let mut source = ExecutionTraceSource {
        path: et.path.display().to_string(),
        schema: et.schema.clone(),
        kineto_ops: links.kineto_ops,
        kineto_ops_with_id: links.kineto_ops_with_id,
        linked_ops: links.linked,
        signatures_with_op: 0,
        signatures_linked: 0,
        signatures_with_schema: 0,
        invocations: 0,
        invocations_linked: 0,
        signatures_with_ranges: 0,
        linked_by_order: links.by_order.as_ref().map(|order| order.describe()),
        inputs_filled: linked.filled.describe(),
    };
    for signature in &mut file.signatures {
        let Some(op) = signature.op.as_mut() else {
            continue;
        };
        source.signatures_with_op += 1;
        let (invocations, linked) = counts
            .get(signature.id.as_str())
            .copied()
            .unwrap_or_default();
        source.invocations += invocations;
        source.invocations_linked += linked;
        let Some(node) = first.get(signature.id.as_str()) else {
            continue;
        };
        source.signatures_linked += 1;
        op.schema = node.op_schema.clone();
        source.signatures_with_schema += u64::from(op.schema.is_some());
        op.exact_inputs = node
            .inputs
            .iter()
            .map(|arg| ExactInput {
                ty: arg.ty.clone(),
                value: (!arg.is_tensor() && arg.tensors.is_empty()).then(|| arg.value.clone()),
            })
            .collect();
        op.input_ranges = ranges
            .get(signature.id.as_str())
            .cloned()
            .unwrap_or_default();
        source.signatures_with_ranges += u64::from(!op.input_ranges.is_empty());
    }
    file.source.execution_trace = Some(source.clone());
    source
}
