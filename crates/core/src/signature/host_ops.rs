//! Signatures of a CPU-only trace: the unit of work is a top-level op.
//!
//! Without GPU activity there are no kernels to fold. What a `--device cpu` replay runs
//! is each top-level op (an `aten::`/custom op with no enclosing op) from its recorded
//! inputs, so those are the signatures, keyed like kernels by (name, `Input Dims`,
//! `Input type`, `Input Strides`, `Concrete Inputs`) and timed inclusively. The host
//! time between consecutive top-level ops on a thread is framework overhead (Python,
//! dispatcher, allocator) that a replay will not reproduce; it is reported separately.

use std::fmt::Write as _;
use std::path::Path;

use crate::trace::link::Links;
use crate::trace::{
    Category, Event, ExecutionId, FxHashMap, Platform, RecordedInputs, StrId, Trace,
};

use super::call_site::CallSite;
use super::classify::{
    launching_op, mean_us, ns, parse_inputs, recorded_inputs, short_hash, sort_signatures,
    summarise, total_ns, us, Invocations,
};
use super::compiled_code::{regions_by_thread, split_gap};
use super::fusion_group::is_fusion_group_op;
use super::gemm::{gemm_from_op, GEMM_OPS};
use super::generated::{inductor_cpp_op, NO_CACHE_REASON};
use super::schema::{
    self, GemmKernelRole, HostOverhead, Label, Signature, SignatureFile, ThreadOverhead, Tier,
    Totals, Unit, WorkKind,
};
use super::source::{compiled_code_in_steps, source};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct HostOpKey {
    name: StrId,
    inputs: RecordedInputs,
}

impl HostOpKey {
    /// The key of one top-level op: the one place it is made (see [`super::ids`]).
    pub(crate) fn of(event: &Event) -> HostOpKey {
        HostOpKey {
            name: event.name,
            inputs: event.args.inputs,
        }
    }
}

/// The top-level ops of a trace, in file order: the units of work of a CPU-only trace.
pub(crate) fn top_level_ops(trace: &Trace, links: &Links) -> Vec<usize> {
    // An operator is a dispatcher op (`aten::add`, `quantized::linear`, `mylib::op`): its
    // name has a namespace. Frames such as a TorchScript method's `forward` are cpu_op events
    // too, but they are not replayable units: the ops inside them are the top level. A
    // kernel Inductor generated, recorded with kernel profiling on
    // (`graph_0_cpp_fused_gelu_view_1`), is a unit of work too (tier 4), and so is a
    // TorchScript fusion group's kernel (`fused_add_relu`), whose children (its outputs'
    // allocations) are inside it.
    let is_operator = |index: usize| {
        let name = trace.name(&trace.events[index]);
        name.contains("::") || inductor_cpp_op(name).is_some() || is_fusion_group_op(name)
    };
    trace
        .events
        .iter()
        .enumerate()
        .filter(|(index, event)| {
            event.category == Category::CpuOp
                && is_operator(*index)
                && !links.ancestors(*index).into_iter().any(is_operator)
        })
        .map(|(index, _)| index)
        .collect()
}

/// Classifies a trace without GPU activity.
pub(crate) fn classify_host_ops(trace: &Trace, links: &Links, source_path: &Path) -> SignatureFile {
    let top_level = top_level_ops(trace, links);

    let mut groups: FxHashMap<HostOpKey, Invocations> = FxHashMap::default();
    for &index in &top_level {
        let event = &trace.events[index];
        let key = HostOpKey::of(event);
        groups
            .entry(key)
            .or_insert_with(|| Invocations::new(index))
            .add(event.dur_ns, None);
    }

    let mut signatures: Vec<Signature> = groups
        .iter()
        .map(|(key, invocations)| host_op_signature(trace, links, key, invocations))
        .collect();
    sort_signatures(&mut signatures);

    SignatureFile {
        schema_version: schema::SCHEMA_VERSION,
        source: source(trace, links, source_path),
        summary: summarise(Unit::HostOp, &signatures, Totals::default()),
        signatures,
        unattributed: Vec::new(),
        host_overhead: Some(host_overhead(trace, &top_level)),
        compiled_code: compiled_code_in_steps(trace),
        ranks: Vec::new(),
    }
}

fn host_op_signature(
    trace: &Trace,
    links: &Links,
    key: &HostOpKey,
    invocations: &Invocations,
) -> Signature {
    let name = trace.text(key.name);
    let mut reasons = Vec::new();
    let op = launching_op(trace, links, invocations.first);
    // Inside compiled code an extern kernel's output buffer is recorded as an input (`out=`).
    let site = CallSite::of_ancestry(&op.ancestry);
    let parsed = parse_inputs(trace, &key.inputs).map(|inputs| inputs.at(site));
    // A generated kernel's arguments come from the capture's record of them, not from the
    // trace (Inductor records its kernels without inputs).
    let generated = inductor_cpp_op(name);
    match (&parsed, &generated) {
        (_, Some(_)) => reasons.push(NO_CACHE_REASON.to_owned()),
        (Some(inputs), None) => reasons.extend(inputs.unreplayable_reason()),
        (None, None) => reasons.push("op inputs not recorded (record_shapes=False)".to_owned()),
    }
    // A top-level GEMM op is tier 2 on the host too: it is replayed as the BLAS call
    // (torch mm/addmm/bmm with the recorded layouts), as its GPU kernel would be.
    let gemm = parsed
        .as_ref()
        .filter(|_| GEMM_OPS.contains(&name))
        .and_then(|inputs| gemm_from_op(name, inputs, GemmKernelRole::Main, None).ok());
    // A composite op that copies a strided operand before its GEMM is replayed whole.
    let composite = parsed
        .as_ref()
        .is_some_and(|inputs| copies_before_its_gemm(name, inputs));
    let mut labels = Vec::new();
    if trace.platform == Platform::Rocm {
        labels.push(Label::Rocm);
    }
    Signature {
        id: host_op_id(trace, key),
        tier: match (&gemm, &generated) {
            (_, Some(_)) => Tier::Generated,
            (Some(_), None) if !composite => Tier::Gemm,
            _ => Tier::Op,
        },
        unit: Unit::HostOp,
        kind: WorkKind::HostOp,
        name: name.to_owned(),
        op: Some(op),
        labels,
        streams: Vec::new(),
        count: invocations.count,
        trace_total_us: us(invocations.total_ns),
        trace_mean_us: mean_us(invocations.total_ns, invocations.count),
        trace_min_us: us(invocations.min_ns),
        trace_max_us: us(invocations.max_ns),
        inputs: recorded_inputs(trace, &key.inputs),
        grid: None,
        block: None,
        replayable: reasons.is_empty(),
        reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        memcpy: None,
        memset: None,
        gemm,
        generated,
        fusion: None,
        ranks: Vec::new(),
    }
}

/// Composite GEMM ops (CompositeImplicitAutograd: no kernel of their own) whose implementation
/// makes a contiguous copy of a strided operand before calling the GEMM: `matmul` folds its
/// batch dimensions with `reshape`, `linear` calls `matmul` on an input that is not a plain
/// matrix.
const COMPOSITE_GEMM_OPS: &[&str] = &["aten::matmul", "aten::linear"];

/// Whether the top-level op `name` with these inputs spends time beside its GEMM: a composite
/// GEMM op with a recorded non-contiguous tensor input (the permuted views of a fused qkv
/// projection that attention code hands to `matmul`). On a CPU trace a top-level op's time
/// includes everything it calls, so such an op is replayed whole through the dispatcher with
/// its recorded strides (tier 3), the copies in the time, and keeps its GEMM's shape for the
/// report. Measured in eager PyTorch on 2 threads: `matmul` of `[1,12,16,64]` by `[1,12,64,16]`
/// from permuted views took 53 µs, the `bmm` inside it 24-26 µs.
fn copies_before_its_gemm(name: &str, inputs: &super::op_inputs::OpInputs) -> bool {
    COMPOSITE_GEMM_OPS.contains(&name)
        && (0..inputs.dims.len())
            .filter_map(|i| inputs.present_tensor(i))
            .any(|t| t.is_contiguous() == Some(false))
}

/// A stable id: the first 16 hex digits of the SHA-256 of the key's text.
pub(crate) fn host_op_id(trace: &Trace, key: &HostOpKey) -> String {
    let text = |id: Option<StrId>| id.map(|id| trace.text(id)).unwrap_or("");
    let mut canonical = String::new();
    let _ = write!(
        canonical,
        "host_op\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}\u{1f}{}",
        trace.text(key.name),
        text(key.inputs.dims),
        text(key.inputs.types),
        text(key.inputs.strides),
        text(key.inputs.concrete),
    );
    short_hash(&canonical)
}

/// Per thread: the top-level ops' time and the gaps between them, the gaps' parts inside
/// compiled regions apart (uninstrumented compiled code, not framework overhead).
fn host_overhead(trace: &Trace, top_level: &[usize]) -> HostOverhead {
    let regions = regions_by_thread(trace);
    let mut by_thread: FxHashMap<(ExecutionId, ExecutionId), Vec<usize>> = FxHashMap::default();
    for &index in top_level {
        let event = &trace.events[index];
        by_thread
            .entry((event.pid, event.tid))
            .or_default()
            .push(index);
    }
    let mut threads: Vec<ThreadOverhead> = by_thread
        .into_iter()
        .map(|((pid, tid), mut ops)| {
            ops.sort_by_key(|&i| (trace.events[i].ts_ns, i));
            let mut ops_ns = 0i64;
            let mut gaps_ns = 0i64;
            let mut compiled_ns = 0i64;
            let mut covered_until: Option<i64> = None;
            let thread_regions = regions.get(&(pid, tid)).map_or(&[][..], Vec::as_slice);
            for &op in &ops {
                let event = &trace.events[op];
                ops_ns = ops_ns.saturating_add(event.dur_ns);
                if let Some(until) = covered_until.filter(|&u| u < event.ts_ns) {
                    let (outside, inside) = split_gap((until, event.ts_ns), thread_regions);
                    gaps_ns = gaps_ns.saturating_add(outside);
                    compiled_ns = compiled_ns.saturating_add(inside);
                }
                covered_until =
                    Some(covered_until.map_or(event.end_ns(), |u| u.max(event.end_ns())));
            }
            let span_ns = match (ops.first(), covered_until) {
                (Some(&first), Some(until)) => until.saturating_sub(trace.events[first].ts_ns),
                _ => 0,
            };
            ThreadOverhead {
                pid: execution_id_text(trace, pid),
                tid: execution_id_text(trace, tid),
                top_level_ops: ops.len() as u64,
                span_us: us(span_ns),
                ops_us: us(ops_ns),
                overhead_us: us(gaps_ns),
                uninstrumented_compiled_us: us(compiled_ns),
            }
        })
        .collect();
    threads.sort_by(|a, b| (&a.pid, &a.tid).cmp(&(&b.pid, &b.tid)));
    HostOverhead {
        overhead_us: us(total_ns(threads.iter().map(|t| ns(t.overhead_us)))),
        uninstrumented_compiled_us: us(total_ns(
            threads.iter().map(|t| ns(t.uninstrumented_compiled_us)),
        )),
        ops_us: us(total_ns(threads.iter().map(|t| ns(t.ops_us)))),
        threads,
    }
}

fn execution_id_text(trace: &Trace, id: ExecutionId) -> String {
    match id {
        ExecutionId::Number(n) => n.to_string(),
        ExecutionId::Label(label) => trace.text(label).to_owned(),
    }
}
