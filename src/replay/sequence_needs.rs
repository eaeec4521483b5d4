//! What each op of a re-run step will allocate (`replay sequence`), read from its signature
//! before anything is allocated: the requests the memory plan
//! ([`replay_core::sequence_plan`]) gives buffers to. The roles follow the replayers: a
//! tier-3 call's tensor is a parameter when its schema argument names one
//! ([`super::rotating_op::is_parameter`]), private when its values matter (indices, counts,
//! recorded ranges), an activation otherwise; a CPU GEMM's weight operand is a parameter; a
//! host copy's buffers are private. A replayer asking for something else (an enclosing op
//! tried when the launching one cannot run) is served outside the plan and counted so. Each
//! request of the op's own call names its recorded input (what an Execution Trace's node
//! numbers), so that the plan can follow the data flow ([`replay_core::sequence_liveness`]).

use replay_core::sequence_plan::{OpNeeds, Request, Role};
use replay_core::signature::InputRange;
use tch::Kind;

use super::index_bounds::{index_arguments, Bound};
use super::overload::{resolve_exact, runs_on, ArgPlan, CallSite};
use super::recorded::RecordedInput;
use super::registry::{enclosing_ops, memory_work, op_context, recorded_inputs, ReplayUnit};
use super::rotating_op::is_parameter;
use super::sequence::ProgramEntry;
use super::sequence_buffers::dtype_name;
use super::sequence_route::{route, Placing, Route};
use super::tier1_memory::MemoryWork;
use super::tier2_gemm::libtorch::operand_spans;
use super::tier3_tensors::{list_kind, storage_len};
use super::value_rules::value_rule;
use crate::signature::fusion_group::is_fusion_group_op;
use crate::signature::schema::{Signature, SignatureFile, Tier, Unit};
use crate::torch::dtype::{kind_from_name, kind_of};

/// `elements` of `kind` as a request (`None`: more than 2^64 bytes).
fn request(elements: i64, kind: Kind, role: Role) -> Request {
    let bytes = u64::try_from(elements.max(0))
        .ok()
        .and_then(|n| n.checked_mul(kind.elt_size_in_bytes() as u64))
        .unwrap_or(u64::MAX);
    Request::new(bytes, &dtype_name(kind), role)
}

/// The storage elements of a tensor of `sizes` and recorded `strides` (contiguous when
/// none), in checked arithmetic: `i64::MAX` past it.
fn elements(sizes: &[i64], strides: Option<&[i64]>) -> i64 {
    if sizes.iter().any(|&s| s < 0) {
        return 0;
    }
    let contiguous: Vec<i64>;
    let strides = match strides {
        Some(s) if s.len() == sizes.len() => s,
        _ => {
            let mut c = vec![1i64; sizes.len()];
            for i in (0..sizes.len().saturating_sub(1)).rev() {
                c[i] = c[i + 1].saturating_mul(sizes[i + 1].max(1));
            }
            contiguous = c;
            &contiguous
        }
    };
    let fits = sizes.iter().zip(strides).try_fold(1i64, |acc, (&n, &s)| {
        (n.max(1) - 1)
            .checked_mul(s.max(0))
            .and_then(|r| acc.checked_add(r))
    });
    match fits {
        Some(_) => storage_len(sizes, strides).max(0),
        None => i64::MAX,
    }
}

/// What the op instance `entry` will allocate when built on a device of `placing`; nothing
/// for an op with no replay unit or a tier whose replayer allocates outside libtorch's
/// tensor makers (generated kernels).
pub fn needs(
    entry: &ProgramEntry,
    file: &SignatureFile,
    units: &[ReplayUnit],
    placing: Placing,
) -> OpNeeds {
    let Some(unit) = entry.unit.and_then(|u| units.get(u)) else {
        return OpNeeds::default();
    };
    let sig = &file.signatures[unit.lead];
    let op_name = sig.op.as_ref().map_or(&sig.name, |op| &op.name);
    let requests = match (
        route(unit.tier, is_fusion_group_op(op_name), placing),
        unit.tier,
    ) {
        (Route::Native, Tier::Copy) | (Route::LibtorchMemory, _) => match memory_work(sig) {
            Ok(MemoryWork::Copy(p)) => vec![
                Request::new(p.bytes, "bytes", Role::Private),
                Request::new(p.bytes, "bytes", Role::Private),
            ],
            Ok(MemoryWork::Set(p)) => vec![Request::new(p.bytes, "bytes", Role::Private)],
            Err(_) => Vec::new(),
        },
        (Route::Native, Tier::Gemm) if !placing.cuda => gemm(sig),
        (Route::Native, Tier::Generated) => Vec::new(),
        _ => call(sig, placing.cuda),
    };
    OpNeeds { requests }
}

/// A CPU GEMM's operands: A, B (the weight unless batched) and the bias.
fn gemm(sig: &Signature) -> Vec<Request> {
    let Some(p) = sig.gemm.as_ref() else {
        return Vec::new();
    };
    let (Some(kind_a), Some(kind_b)) = (kind_from_name(&p.dtype_a), kind_from_name(&p.dtype_b))
    else {
        return Vec::new();
    };
    let [a, b] = operand_spans(p);
    let b_role = if p.batch > 1 {
        Role::Activation
    } else {
        Role::Parameter
    };
    let mut out = vec![
        request(a, kind_a, Role::Activation),
        request(b, kind_b, b_role),
    ];
    if p.bias {
        let kind_out = kind_from_name(&p.dtype_out).unwrap_or(kind_a);
        out.push(request(p.n as i64, kind_out, Role::Private));
    }
    out
}

/// A tier-3 call's tensors, as [`super::tier3_tensors`] makes them: the op's own, or where
/// libtorch cannot run it on this device (or its inputs fit no overload) those of the
/// innermost enclosing op that it can, which the replay calls instead
/// ([`super::registry::enclosing_ops`]).
fn call(sig: &Signature, cuda: bool) -> Vec<Request> {
    let (op_name, inputs) = match (&sig.op, sig.unit) {
        (Some(op), _) => (op.name.as_str(), recorded_inputs(sig)),
        (None, Unit::HostOp) => (sig.name.as_str(), recorded_inputs(sig)),
        (None, Unit::Kernel) => return Vec::new(),
    };
    let Some(inputs) = inputs else {
        return Vec::new();
    };
    let (site, exact, ranges) = op_context(sig);
    op_requests(op_name, exact, ranges, &inputs, site, cuda)
        .or_else(|| {
            // The enclosing op's inputs are not the recorded op's: no input slot.
            enclosing_ops(sig)
                .into_iter()
                .find_map(|(name, inputs, site)| {
                    let requests = op_requests(name, None, &[], &inputs, site, cuda)?;
                    Some(
                        requests
                            .into_iter()
                            .map(|r| Request { input: None, ..r })
                            .collect(),
                    )
                })
        })
        .unwrap_or_default()
}

/// The tensors of `op_name`'s call on the recorded `inputs`; `None` when no overload takes
/// them or libtorch has no kernel for it on this device.
fn op_requests(
    op_name: &str,
    exact: Option<&str>,
    ranges: &[InputRange],
    inputs: &[RecordedInput],
    site: CallSite,
    cuda: bool,
) -> Option<Vec<Request>> {
    let (choice, _) = resolve_exact(op_name, exact, inputs, site).ok()?;
    if runs_on(op_name, &choice.overload, cuda) == Some(false) {
        return None;
    }
    let inputs = &inputs[choice.skip..];
    let index_args = index_arguments(op_name);
    let list_kind = list_kind(inputs);
    let mut out = Vec::new();
    for (position, plan) in choice.args.iter().enumerate() {
        match (plan, inputs.get(position)) {
            (
                ArgPlan::Tensor,
                Some(RecordedInput::Tensor {
                    dtype,
                    sizes,
                    strides,
                }),
            ) => {
                let valued = index_args.iter().any(|(p, _)| *p == position)
                    || value_rule(op_name, position).is_some()
                    || InputRange::find(ranges, position + choice.skip, None).is_some();
                let role = match choice.arg_names.get(position) {
                    _ if valued => Role::Private,
                    Some(name) if is_parameter(name) => Role::Parameter,
                    _ => Role::Activation,
                };
                let kind = kind_of(*dtype);
                out.push(
                    request(elements(sizes, strides.as_deref()), kind, role)
                        .of_input(choice.skip + position, None),
                );
            }
            (ArgPlan::TensorList { .. }, Some(RecordedInput::TensorList { tensors })) => {
                let indices = index_args
                    .iter()
                    .any(|(p, b)| *p == position && matches!(b, Bound::PerListPosition { .. }));
                for (element, (sizes, strides)) in tensors.iter().enumerate() {
                    let (kind, role) = if indices {
                        (Kind::Int64, Role::Private)
                    } else {
                        (list_kind, Role::Activation)
                    };
                    out.push(
                        request(elements(sizes, strides.as_deref()), kind, role)
                            .of_input(choice.skip + position, Some(element)),
                    );
                }
            }
            _ => {}
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_elements_follow_the_recorded_strides_and_refuse_to_overflow() {
        assert_eq!(elements(&[2, 3], None), 6);
        // A transposed view of a 4x3 storage, and a broadcast row.
        assert_eq!(elements(&[3, 4], Some(&[1, 3])), 12);
        assert_eq!(elements(&[5, 7], Some(&[0, 1])), 7);
        assert_eq!(elements(&[0, 7], None), 0);
        assert_eq!(elements(&[i64::MAX, 4], None), i64::MAX);
        let r = request(i64::MAX, Kind::Float, Role::Activation);
        assert_eq!(r.bytes, u64::MAX);
    }
}
