//! Tier 3: any aten operator the trace recorded, rebuilt from its name and recorded inputs and
//! called by name through libtorch's dispatcher ([`crate::torch::PreparedOp`]).
//!
//! Inputs are *valid*, not just random: index arguments hold in-range indices
//! ([`super::index_bounds`]), divisors and counts are positive ([`super::value_rules`]), other
//! integer tensors are zeros, boolean tensors are real masks, and scalar arguments (`dim`,
//! `eps`, ...) are the recorded values. Where an Execution Trace recorded an integer tensor's
//! values (`op.input_ranges`), they are drawn from that range instead, once it is checked
//! against what the op accepts.

use replay_core::sequence_plan::Role;
use replay_core::signature::InputRange;
use tch::{Kind, Tensor};

use super::index_bounds::{index_arguments, wrap_dim, Bound};
use super::overload::{
    resolve_exact, runs_on, ArgPlan, CallSite, ListTarget, OverloadSource, ScalarTarget,
};
use super::parameter_copies::{first_call, CopyBudget};
use super::recorded::{RecordedInput, ScalarValue};
use super::rotating_op::{is_parameter, RotatingOp};
use super::tier3_tensors::{
    is_integral, list_kind, make_tensor, make_tensor_as, storage_len, Fill,
};
use super::value_rules::value_rule;
use crate::device::Device;
use crate::measure::cuda_timing::CudaStreamHandle;
use crate::measure::{segment, MeasureError, Placement, Target, Timer};
use crate::torch::dtype::kind_of;
use crate::torch::work_target::libtorch_stream;
use crate::torch::{OpArg, PreparedOp};

/// Why a tier-3 call could not be set up.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Tier3Error {
    /// The inputs cannot be reconstructed or the operator cannot be called by name.
    #[error("{0}")]
    Unsupported(String),
    /// libtorch refused the call with the rebuilt inputs.
    #[error("{0}")]
    Failed(String),
}

fn scalar_arg(value: ScalarValue, target: ScalarTarget) -> OpArg {
    let as_i64 = match value {
        ScalarValue::Int(i) => i,
        ScalarValue::Float(f) => f as i64,
        ScalarValue::Bool(b) => b as i64,
    };
    match (target, value) {
        (ScalarTarget::Int, _) => OpArg::Int(as_i64),
        (ScalarTarget::Bool, _) => OpArg::Bool(as_i64 != 0),
        (ScalarTarget::Float, ScalarValue::Float(f)) => OpArg::Double(f),
        (ScalarTarget::Float, _) => OpArg::Double(as_i64 as f64),
        (ScalarTarget::Number, ScalarValue::Int(i)) => OpArg::Int(i),
        (ScalarTarget::Number, ScalarValue::Float(f)) => OpArg::Double(f),
        (ScalarTarget::Number, ScalarValue::Bool(b)) => OpArg::Bool(b),
    }
}

fn list_arg(values: &[ScalarValue], target: ListTarget) -> OpArg {
    let int = |v: &ScalarValue| match *v {
        ScalarValue::Int(i) => i,
        ScalarValue::Float(f) => f as i64,
        ScalarValue::Bool(b) => b as i64,
    };
    match target {
        ListTarget::Int => OpArg::IntList(values.iter().map(int).collect()),
        ListTarget::Bool => OpArg::BoolList(values.iter().map(|v| int(v) != 0).collect()),
        ListTarget::Float => OpArg::DoubleList(
            values
                .iter()
                .map(|v| match *v {
                    ScalarValue::Float(f) => f,
                    other => int(&other) as f64,
                })
                .collect(),
        ),
    }
}

fn sizes_at(inputs: &[RecordedInput], arg: usize) -> Option<&[i64]> {
    match inputs.get(arg) {
        Some(RecordedInput::Tensor { sizes, .. }) => Some(sizes),
        _ => None,
    }
}

fn int_at(inputs: &[RecordedInput], arg: usize) -> Option<i64> {
    match inputs.get(arg) {
        Some(RecordedInput::Scalar(Some(ScalarValue::Int(i)))) => Some(*i),
        _ => None,
    }
}

/// The exclusive upper bound of index argument `position`, or why it cannot be known.
fn index_high(op_name: &str, inputs: &[RecordedInput], bound: Bound) -> Result<Fill, String> {
    let size_of = |arg: usize, dim: i64| -> Result<i64, String> {
        let sizes = sizes_at(inputs, arg).ok_or_else(|| {
            format!("{op_name}: the indexed tensor (argument {arg}) has no recorded shape")
        })?;
        let axis = wrap_dim(dim, sizes.len())
            .ok_or_else(|| format!("{op_name}: dim {dim} out of range for shape {sizes:?}"))?;
        Ok(sizes.get(axis).copied().unwrap_or(1))
    };
    Ok(match bound {
        Bound::SizeOf { arg, dim } => Fill::Indices(size_of(arg, dim)?),
        Bound::SizeAlongArg { arg, dim_arg } => {
            let dim = int_at(inputs, dim_arg)
                .ok_or_else(|| format!("{op_name}: the dim argument was not recorded"))?;
            Fill::Indices(size_of(arg, dim)?)
        }
        Bound::NumelOf { arg } => Fill::Indices(
            sizes_at(inputs, arg)
                .map(|s| s.iter().product())
                .unwrap_or(1),
        ),
        Bound::Offsets { arg } => Fill::Offsets(
            sizes_at(inputs, arg)
                .map(|s| s.iter().product())
                .unwrap_or(0),
        ),
        Bound::PerListPosition { .. } => Fill::Data, // handled per list element
    })
}

/// The fill of integer tensor `what` (of kind `kind`) whose values an Execution Trace recorded
/// in `range`: uniform in it, once checked against what the op accepts (`derived`, the fill
/// the shapes alone give: an index must stay inside the indexed dimension, `[-high, high)`
/// where the op wraps negative indices). Offsets keep their derived order, and a divisor's or
/// count's range that reaches 0 keeps the positive fill.
fn recorded_fill(
    op_name: &str,
    what: &str,
    derived: Fill,
    range: Option<InputRange>,
    kind: Kind,
    negative_ok: bool,
) -> Result<Fill, String> {
    // A range as wide as the integers is no information (an `empty` tensor's garbage, read
    // by the `fill_` that overwrites it).
    let Some(InputRange { min, max, .. }) =
        range.filter(|r| is_integral(kind) && r.max.checked_sub(r.min).is_some())
    else {
        return Ok(derived);
    };
    match derived {
        Fill::Indices(high) => {
            let low = if negative_ok { -high } else { 0 };
            if min < low || max >= high {
                return Err(format!(
                    "{op_name}: the execution trace recorded values in [{min}, {max}] for {what}, \
                     outside the [{low}, {high}) its indexed dimension accepts"
                ));
            }
            Ok(Fill::Range(min, max))
        }
        Fill::Offsets(_) | Fill::Range(..) => Ok(derived),
        Fill::Positive if min < 1 => Ok(derived),
        Fill::Positive | Fill::Data => Ok(Fill::Range(min, max)),
    }
}

/// Rebuilds the recorded call of `op_name` on `device` and checks that libtorch accepts it.
/// On the CPU the call gets copies of its parameters to use in turn ([`RotatingOp`]).
pub fn prepare(
    op_name: &str,
    inputs: &[RecordedInput],
    device: &Device,
) -> Result<RotatingOp, Tier3Error> {
    prepare_at(op_name, inputs, device, CallSite::Eager)
}

/// [`prepare`] of a call made at `site`: in compiled code an `out=` overload may be the call
/// (Inductor's `extern_kernels.mm(a, b, out=buf)`), and is rebuilt with its output buffer.
pub fn prepare_at(
    op_name: &str,
    inputs: &[RecordedInput],
    device: &Device,
    site: CallSite,
) -> Result<RotatingOp, Tier3Error> {
    prepare_with(op_name, inputs, device, site, Some(CopyBudget::UNTIMED))
}

/// [`prepare_at`], the parameters' copies bounded by `copies`; with `None`, one set of
/// parameters only (see [`super::tier2_gemm::TorchGemmTarget::with_copies`]).
pub fn prepare_with(
    op_name: &str,
    inputs: &[RecordedInput],
    device: &Device,
    site: CallSite,
    copies: Option<CopyBudget>,
) -> Result<RotatingOp, Tier3Error> {
    prepare_exact(op_name, None, inputs, device, site, copies).map(|(op, _)| op)
}

/// [`prepare_with`] with the exact operator schema an Execution Trace recorded (`exact`): that
/// overload is called where libtorch has it and the inputs fit, else the matched one; the
/// second value says which.
pub fn prepare_exact(
    op_name: &str,
    exact: Option<&str>,
    inputs: &[RecordedInput],
    device: &Device,
    site: CallSite,
    copies: Option<CopyBudget>,
) -> Result<(RotatingOp, OverloadSource), Tier3Error> {
    prepare_ranged(op_name, exact, &[], inputs, device, site, copies).map(|(op, s, _)| (op, s))
}

/// Why `op_name`.`overload` is not called on `device`: libtorch has no kernel for it there.
pub fn no_kernel(op_name: &str, overload: &str, device: &Device) -> String {
    let name = match overload {
        "" => op_name.to_owned(),
        o => format!("{op_name}.{o}"),
    };
    let device = if device.is_cuda() { "CUDA" } else { "CPU" };
    format!("{name}: libtorch has no {device} kernel for it")
}

/// [`prepare_exact`] with the value ranges an Execution Trace recorded for the op's integer
/// tensors (`ranges`, by recorded input position): those tensors are drawn from them. The
/// third value is how many of the call's tensors were.
pub fn prepare_ranged(
    op_name: &str,
    exact: Option<&str>,
    ranges: &[InputRange],
    inputs: &[RecordedInput],
    device: &Device,
    site: CallSite,
    copies: Option<CopyBudget>,
) -> Result<(RotatingOp, OverloadSource, usize), Tier3Error> {
    let (choice, source) = resolve_exact(op_name, exact, inputs, site)
        .map_err(|e| Tier3Error::Unsupported(e.to_string()))?;
    // Known before any tensor is made: the caller falls back to an enclosing op.
    if runs_on(op_name, &choice.overload, device.is_cuda()) == Some(false) {
        return Err(Tier3Error::Unsupported(no_kernel(
            op_name,
            &choice.overload,
            device,
        )));
    }
    let inputs = &inputs[choice.skip..];
    let index_args = index_arguments(op_name);
    let list_kind = list_kind(inputs);

    let unsupported = Tier3Error::Unsupported;
    let mut ranges_used = 0;
    let mut args = Vec::with_capacity(choice.args.len());
    for (position, plan) in choice.args.iter().enumerate() {
        let arg = match plan {
            ArgPlan::Tensor => {
                let Some(RecordedInput::Tensor {
                    dtype,
                    sizes,
                    strides,
                }) = inputs.get(position)
                else {
                    return Err(unsupported(format!(
                        "{op_name}: argument {position} is not a recorded tensor"
                    )));
                };
                let fill = match index_args.iter().find(|(p, _)| *p == position) {
                    Some((_, bound)) => index_high(op_name, inputs, *bound).map_err(unsupported)?,
                    None if value_rule(op_name, position).is_some() => Fill::Positive,
                    None => Fill::Data,
                };
                if let Fill::Indices(0) = fill {
                    if sizes.iter().product::<i64>() > 0 {
                        return Err(unsupported(format!(
                            "{op_name}: indices into an empty dimension"
                        )));
                    }
                }
                let range = InputRange::find(ranges, position + choice.skip, None);
                let what = format!("argument {position}");
                let fill = recorded_fill(op_name, &what, fill, range, kind_of(*dtype), false)
                    .map_err(unsupported)?;
                ranges_used += usize::from(matches!(fill, Fill::Range(..)));
                let role = match choice.arg_names.get(position) {
                    Some(name) if is_parameter(name) => Role::Parameter,
                    _ => Role::Activation,
                };
                OpArg::Tensor(
                    make_tensor_as(
                        kind_of(*dtype),
                        sizes,
                        strides.as_deref(),
                        device,
                        fill,
                        Some(role),
                    )
                    .map_err(Tier3Error::Failed)?,
                )
            }
            ArgPlan::TensorList { optional_elements } => {
                let Some(RecordedInput::TensorList { tensors }) = inputs.get(position) else {
                    return Err(unsupported(format!(
                        "{op_name}: argument {position} is not a recorded tensor list"
                    )));
                };
                let per_position = index_args.iter().find_map(|(p, b)| match b {
                    Bound::PerListPosition { arg } if *p == position => Some(*arg),
                    _ => None,
                });
                if tensors.is_empty() {
                    return Err(unsupported(format!(
                        "{op_name}: the tensor list's shapes were not recorded"
                    )));
                }
                let mut list = Vec::with_capacity(tensors.len());
                for (j, (sizes, strides)) in tensors.iter().enumerate() {
                    let (kind, fill) = match per_position {
                        Some(arg) => {
                            let derived =
                                index_high(op_name, inputs, Bound::SizeOf { arg, dim: j as i64 })
                                    .map_err(unsupported)?;
                            let range = InputRange::find(ranges, position + choice.skip, Some(j));
                            let what = format!("element {j} of argument {position}");
                            let fill =
                                recorded_fill(op_name, &what, derived, range, Kind::Int64, true)
                                    .map_err(unsupported)?;
                            ranges_used += usize::from(matches!(fill, Fill::Range(..)));
                            (Kind::Int64, fill)
                        }
                        None => (list_kind, Fill::Data),
                    };
                    list.push(Some(
                        make_tensor_as(
                            kind,
                            sizes,
                            strides.as_deref(),
                            device,
                            fill,
                            Some(Role::Activation),
                        )
                        .map_err(Tier3Error::Failed)?,
                    ));
                }
                let _ = optional_elements;
                OpArg::TensorList(list)
            }
            ArgPlan::Scalar(value, target) => scalar_arg(*value, *target),
            ArgPlan::ScalarList(values, target) => list_arg(values, *target),
            ArgPlan::Default => OpArg::Default,
            ArgPlan::None => OpArg::None,
        };
        args.push(arg);
    }
    let parameters: Vec<usize> = (0..args.len())
        .filter(|&i| {
            matches!(args[i], OpArg::Tensor(_))
                && choice.arg_names.get(i).is_some_and(|n| is_parameter(n))
        })
        .collect();
    // The call as recorded, with the first copy of the parameters (the ones made above);
    // called once up front: a rebuilt call libtorch rejects is `failed`, reported with its
    // message. Its time bounds the other copies to the calls the measurement can make.
    let mut first = PreparedOp::new(op_name, &choice.overload, args.iter().map(shared).collect())
        .map_err(|e| Tier3Error::Failed(e.0))?;
    let ((), one_call) = first_call(|| first.run(1)).map_err(|e| Tier3Error::Failed(e.0))?;
    let copies = match (device, copies) {
        (Device::Cpu(_), Some(budget)) if !parameters.is_empty() => {
            let bytes: u64 = parameters
                .iter()
                .map(|&i| match &args[i] {
                    OpArg::Tensor(t) => {
                        storage_len(&t.size(), &t.stride()).max(0) as u64
                            * t.kind().elt_size_in_bytes() as u64
                    }
                    _ => 0,
                })
                .sum();
            budget.copies(bytes, one_call)
        }
        _ => 1,
    };
    // Every other copy shares the activations and has parameters of its own.
    let mut calls = Vec::with_capacity(copies);
    calls.push(first);
    for _ in 1..copies {
        let copy_args = args
            .iter()
            .enumerate()
            .map(|(i, arg)| match arg {
                OpArg::Tensor(t) if parameters.contains(&i) => {
                    make_tensor(t.kind(), &t.size(), Some(&t.stride()), device, Fill::Data)
                        .map(OpArg::Tensor)
                        .map_err(Tier3Error::Failed)
                }
                other => Ok(shared(other)),
            })
            .collect::<Result<Vec<OpArg>, Tier3Error>>()?;
        calls.push(
            PreparedOp::new(op_name, &choice.overload, copy_args)
                .map_err(|e| Tier3Error::Failed(e.0))?,
        );
    }
    let op = RotatingOp::new(calls).after_first_call();
    Ok((op, source, ranges_used))
}

/// The same argument, its tensors shared (not copied).
fn shared(arg: &OpArg) -> OpArg {
    match arg {
        OpArg::None => OpArg::None,
        OpArg::Default => OpArg::Default,
        OpArg::Tensor(t) => OpArg::Tensor(t.shallow_clone()),
        OpArg::TensorList(list) => OpArg::TensorList(
            list.iter()
                .map(|t| t.as_ref().map(Tensor::shallow_clone))
                .collect(),
        ),
        OpArg::Int(v) => OpArg::Int(*v),
        OpArg::Double(v) => OpArg::Double(*v),
        OpArg::Bool(v) => OpArg::Bool(*v),
        OpArg::IntList(v) => OpArg::IntList(v.clone()),
        OpArg::DoubleList(v) => OpArg::DoubleList(v.clone()),
        OpArg::BoolList(v) => OpArg::BoolList(v.clone()),
        OpArg::Str(v) => OpArg::Str(v.clone()),
    }
}

/// A prepared op as a target, placed where libtorch runs it: the host on the CPU (timed by the
/// monotonic clock); on CUDA, the stream libtorch really launches on (its current stream),
/// timed by events there with the host's issue time measured separately.
pub struct LibtorchOpTarget {
    op: RotatingOp,
    cuda: Option<CudaStreamHandle>,
}

impl LibtorchOpTarget {
    pub fn new(
        op: RotatingOp,
        device: &crate::device::Device,
    ) -> Result<LibtorchOpTarget, MeasureError> {
        let cuda = match device {
            crate::device::Device::Cpu(_) => None,
            crate::device::Device::Cuda(dev) => {
                dev.context
                    .bind_to_thread()
                    .map_err(|e| MeasureError::target(format!("cuCtxSetCurrent: {e}")))?;
                Some(libtorch_stream(dev)?.with_blocking_kernel(dev.blocking_kernel))
            }
        };
        Ok(LibtorchOpTarget { op, cuda })
    }
}

impl Target for LibtorchOpTarget {
    fn placement(&self) -> Placement<'_> {
        match &self.cuda {
            Some(stream) => Placement::Stream(stream),
            None => Placement::Host,
        }
    }

    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        let _guard = tch::no_grad_guard();
        self.issue(calls)
    }

    /// `no_grad` is entered before the timed part, so that it is not timed.
    fn run_timed(&mut self, calls: u64, timer: &mut dyn Timer) -> Result<(), MeasureError> {
        let _guard = tch::no_grad_guard();
        segment(timer, || self.issue(calls))
    }
}

impl LibtorchOpTarget {
    /// The first tensor the last call returned.
    pub fn last_output(&self) -> Option<Tensor> {
        self.op.last_output()
    }

    fn issue(&mut self, calls: u64) -> Result<(), MeasureError> {
        self.op.run(calls).map_err(|e| MeasureError::target(e.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::recorded::from_profiler_args;
    use serde_json::json;

    fn no_grad<T>(f: impl FnOnce() -> T) -> T {
        let _guard = tch::no_grad_guard();
        f()
    }

    #[test]
    fn embedding_from_the_h100_bert_trace_reads_only_valid_rows() {
        // aten::embedding exactly as h100_bert_small_infer recorded it, vocabulary scaled down
        // so an out-of-range index would be likely if indices were random.
        let inputs = from_profiler_args(
            &json!([[50, 512], [1, 141], [], [], []]),
            &json!(["c10::BFloat16", "long int", "Scalar", "Scalar", "Scalar"]),
            &json!([[512, 1], [141, 1], [], [], []]),
            &json!(["", "", "0", "False", "False"]),
        )
        .unwrap();
        no_grad(|| {
            let mut op = prepare("aten::embedding", &inputs, Device::host()).unwrap();
            op.run(5).unwrap();
            assert_eq!(op.last_output().unwrap().size(), [1, 141, 512]);
        });
        // The index generator itself: every index of a 30522-row table is in range.
        let idx = make_tensor(
            Kind::Int64,
            &[1, 4096],
            None,
            Device::host(),
            Fill::Indices(30522),
        )
        .unwrap();
        assert!(idx.min().int64_value(&[]) >= 0);
        assert!(idx.max().int64_value(&[]) < 30522);
        assert!(
            idx.max().int64_value(&[]) > 1000,
            "indices spread over the table, not all zero"
        );
    }

    /// bloom-tiny's step classified with its Execution Trace (recorded with value ranges).
    fn bloom_tiny_with_ranges() -> replay_core::signature::SignatureFile {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/core/tests/data/et");
        let kineto = dir.join("bloom_tiny_cpu.json.gz");
        let mut trace = replay_core::trace::load(&kineto).unwrap();
        let linked = replay_core::execution_trace::attach::link_file(
            &mut trace,
            &kineto,
            &dir.join("bloom_tiny_cpu.et.json.gz"),
        )
        .unwrap();
        let mut file = replay_core::inductor::classify_with_cache(&trace, &kineto, None).unwrap();
        replay_core::execution_trace::attach::attach(&mut file, &trace, &linked);
        file
    }

    #[test]
    fn embedding_indices_are_drawn_from_the_execution_traces_recorded_range() {
        let file = bloom_tiny_with_ranges();
        let signature = file
            .signatures
            .iter()
            .find(|s| s.op.as_ref().is_some_and(|op| op.name == "aten::embedding"))
            .unwrap();
        let op = signature.op.as_ref().unwrap();
        let inputs = crate::replay::registry::recorded_inputs(signature).unwrap();
        let rows = sizes_at(&inputs, 0).unwrap()[0];
        let range = InputRange::find(&op.input_ranges, 1, None).unwrap();
        assert!(
            0 <= range.min && range.max < rows && (range.min, range.max) != (0, rows - 1),
            "the token ids' range {range:?} is inside the {rows}-row table and narrower"
        );
        let (prepared, source, ranged) = no_grad(|| {
            prepare_ranged(
                &op.name,
                op.schema.as_deref(),
                &op.input_ranges,
                &inputs,
                Device::host(),
                CallSite::Eager,
                Some(CopyBudget::UNTIMED),
            )
        })
        .unwrap();
        assert_eq!((source, ranged), (OverloadSource::Exact, 1));
        // The rebuilt indices lie in the recorded range.
        let ids = prepared.bound_tensor(1, None).unwrap();
        assert_eq!(ids.size(), sizes_at(&inputs, 1).unwrap());
        assert!(ids.min().int64_value(&[]) >= range.min, "{ids}");
        assert!(ids.max().int64_value(&[]) <= range.max, "{ids}");
        // Drawn uniformly over it, both ends reached.
        let many = make_tensor(
            Kind::Int64,
            &[65536],
            None,
            Device::host(),
            Fill::Range(range.min, range.max),
        )
        .unwrap();
        assert_eq!(
            (many.min().int64_value(&[]), many.max().int64_value(&[])),
            (range.min, range.max)
        );
        // Without ranges (an ET recorded without them, an older signature file): the table.
        let (_, _, ranged) = no_grad(|| {
            prepare_ranged(
                &op.name,
                None,
                &[],
                &inputs,
                Device::host(),
                CallSite::Eager,
                Some(CopyBudget::UNTIMED),
            )
        })
        .unwrap();
        assert_eq!(ranged, 0);
        // A range the op cannot take is refused, saying so.
        let beyond = [InputRange { max: rows, ..range }];
        let error = no_grad(|| {
            prepare_ranged(
                &op.name,
                None,
                &beyond,
                &inputs,
                Device::host(),
                CallSite::Eager,
                Some(CopyBudget::UNTIMED),
            )
        })
        .unwrap_err();
        assert_eq!(
            error,
            Tier3Error::Unsupported(format!(
                "aten::embedding: the execution trace recorded values in [{}, {rows}] for \
                 argument 1, outside the [0, {rows}) its indexed dimension accepts",
                range.min
            ))
        );
    }

    #[test]
    fn index_select_uses_the_recorded_dim() {
        let inputs = from_profiler_args(
            &json!([[7, 16], [], [141]]),
            &json!(["float", "Scalar", "long int"]),
            &json!([[16, 1], [], [1]]),
            &json!(["", "0", ""]),
        )
        .unwrap();
        let op = no_grad(|| prepare("aten::index_select", &inputs, Device::host())).unwrap();
        assert_eq!(op.last_output().unwrap().size(), [141, 16]);
    }

    #[test]
    fn layer_norm_and_sdpa_from_the_h100_bert_trace() {
        let inputs = from_profiler_args(
            &json!([[1, 141, 512], [], [512], [512], [], []]),
            &json!([
                "c10::BFloat16",
                "ScalarList",
                "c10::BFloat16",
                "c10::BFloat16",
                "Scalar",
                "Scalar"
            ]),
            &json!([[72192, 512, 1], [], [1], [1], [], []]),
            &json!(["", "[512]", "", "", "9.9999999999999998e-13", "True"]),
        )
        .unwrap();
        let op = no_grad(|| prepare("aten::layer_norm", &inputs, Device::host())).unwrap();
        assert_eq!(op.last_output().unwrap().size(), [1, 141, 512]);

        let sdpa = from_profiler_args(
            &json!([
                [1, 8, 141, 64],
                [1, 8, 141, 64],
                [1, 8, 141, 64],
                [],
                [],
                [],
                [],
                []
            ]),
            &json!([
                "c10::BFloat16",
                "c10::BFloat16",
                "c10::BFloat16",
                "",
                "Scalar",
                "Scalar",
                "",
                "Scalar"
            ]),
            &json!([
                [72192, 64, 512, 1],
                [72192, 64, 512, 1],
                [72192, 64, 512, 1],
                [],
                [],
                [],
                [],
                []
            ]),
            &json!(["", "", "", "", "0.", "False", "", "False"]),
        )
        .unwrap();
        let op = no_grad(|| prepare("aten::scaled_dot_product_attention", &sdpa, Device::host()))
            .unwrap();
        assert_eq!(op.last_output().unwrap().size(), [1, 8, 141, 64]);
    }

    #[test]
    fn traced_size_arithmetic_never_divides_by_zero() {
        // gpt2-small's `h // n_head` as torch.jit.trace recorded it (CPU, seq-len 16): three
        // values left on TorchScript's stack, then floor_divide of two 0-dim long tensors.
        let inputs = from_profiler_args(
            &json!([[1, 16, 768], [], [], [], [], []]),
            &json!(["float", "Scalar", "Scalar", "Scalar", "long int", "long int"]),
            &json!([[36864, 2304, 1], [], [], [], [], []]),
            &json!(["", "1", "16", "12", "", ""]),
        )
        .unwrap();
        let op = no_grad(|| prepare("aten::floor_divide", &inputs, Device::host())).unwrap();
        assert_eq!(op.name(), "aten::floor_divide");
        assert_eq!(op.last_output().unwrap().size(), Vec::<i64>::new());
        // The same for the other integer divisions, elementwise.
        for name in ["aten::remainder", "aten::fmod", "aten::div"] {
            let inputs = from_profiler_args(
                &json!([[64], [64]]),
                &json!(["long int", "long int"]),
                &json!([[1], [1]]),
                &json!(["", ""]),
            )
            .unwrap();
            let op = no_grad(|| prepare(name, &inputs, Device::host()));
            assert!(op.is_ok(), "{name}: {:?}", op.err());
        }
        // The divisor generator itself: integers, never zero, not all one value.
        let d = make_tensor(Kind::Int64, &[4096], None, Device::host(), Fill::Positive).unwrap();
        assert!(d.min().int64_value(&[]) >= 1);
        assert!(d.max().int64_value(&[]) > 1);
    }

    #[test]
    fn parameters_are_copied_for_a_cold_replay_and_activations_shared() {
        // resnet50's strided 3x3 convolution of layer4 as its CPU trace recorded it: a 9.4 MB
        // weight, which a forward pass streams from memory.
        let conv = from_profiler_args(
            &json!([
                [1, 512, 14, 14],
                [512, 512, 3, 3],
                [],
                [],
                [],
                [],
                [],
                [],
                [],
                [],
                [],
                [],
                []
            ]),
            &json!([
                "float",
                "float",
                "",
                "ScalarList",
                "ScalarList",
                "ScalarList",
                "Scalar",
                "ScalarList",
                "Scalar",
                "Scalar",
                "Scalar",
                "Scalar",
                "Scalar"
            ]),
            &json!([
                [100352, 196, 14, 1],
                [4608, 9, 3, 1],
                [],
                [],
                [],
                [],
                [],
                [],
                [],
                [],
                [],
                [],
                []
            ]),
            &json!([
                "", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1", "False", "False",
                "True", "True"
            ]),
        )
        .unwrap();
        let mut op = no_grad(|| prepare("aten::_convolution", &conv, Device::host())).unwrap();
        let weight_bytes = 512 * 512 * 9 * 4;
        assert_eq!(
            op.copies(),
            crate::replay::parameter_copies::weight_copies(weight_bytes)
        );
        assert!(
            op.copies() > 1,
            "a 9.4 MB weight is replayed from several copies"
        );
        // A measurement that can make a call or two reads two copies at most: no more made.
        let tiny = CopyBudget {
            measurement: std::time::Duration::from_nanos(1),
            ..CopyBudget::UNTIMED
        };
        let bounded = no_grad(|| {
            prepare_with(
                "aten::_convolution",
                &conv,
                Device::host(),
                CallSite::Eager,
                Some(tiny),
            )
        })
        .unwrap();
        assert_eq!(bounded.copies(), 2);
        no_grad(|| op.run(op.copies() as u64 + 1)).unwrap();
        assert_eq!(op.last_output().unwrap().size(), [1, 512, 7, 7]);
        // An op without parameters is one call.
        let add = from_profiler_args(
            &json!([[1, 512, 14, 14], [1, 512, 14, 14], []]),
            &json!(["float", "float", "Scalar"]),
            &json!([[100352, 196, 14, 1], [100352, 196, 14, 1], []]),
            &json!(["", "", "1"]),
        )
        .unwrap();
        assert_eq!(
            no_grad(|| prepare("aten::add", &add, Device::host()))
                .unwrap()
                .copies(),
            1
        );
    }

    #[test]
    fn cat_of_a_broadcast_tensor_list() {
        let inputs = from_profiler_args(
            &json!([[[4, 1, 768], [4, 196, 768]], []]),
            &json!(["TensorList", "Scalar"]),
            &json!([[[0, 768, 1], [150528, 1, 196]], []]),
            &json!(["", "1"]),
        )
        .unwrap();
        let op = no_grad(|| prepare("aten::cat", &inputs, Device::host())).unwrap();
        assert_eq!(op.last_output().unwrap().size(), [4, 197, 768]);
    }

    #[test]
    fn unknown_ops_and_rejected_calls_are_reported() {
        let inputs = from_profiler_args(
            &json!([[2, 2]]),
            &json!(["float"]),
            &json!([[2, 1]]),
            &json!([""]),
        )
        .unwrap();
        let err = prepare("aten::definitely_not_an_op", &inputs, Device::host()).unwrap_err();
        assert!(matches!(err, Tier3Error::Unsupported(_)), "{err:?}");
        // Recorded shapes that libtorch rejects: failed, with libtorch's message.
        let mm = from_profiler_args(
            &json!([[2, 3], [4, 5]]),
            &json!(["float", "float"]),
            &json!([[3, 1], [5, 1]]),
            &json!(["", ""]),
        )
        .unwrap();
        let err = prepare("aten::mm", &mm, Device::host()).unwrap_err();
        assert!(
            matches!(&err, Tier3Error::Failed(m) if m.contains("cannot be multiplied")),
            "{err:?}"
        );
    }

    #[test]
    fn the_execution_traces_overload_is_called_and_an_unknown_one_is_matched() {
        // Inductor's `extern_kernels.mm(a, b, out=buf)`: three tensors recorded. Matched as an
        // eager call, the first would be taken for a leftover of the interpreter's stack.
        let three = from_profiler_args(
            &json!([[2, 3], [3, 4], [2, 4]]),
            &json!(["float", "float", "float"]),
            &json!([[3, 1], [4, 1], [4, 1]]),
            &json!(["", "", ""]),
        )
        .unwrap();
        let mm_out = "aten::mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)";
        let (op, source) = no_grad(|| {
            prepare_exact(
                "aten::mm",
                Some(mm_out),
                &three,
                Device::host(),
                CallSite::Eager,
                Some(CopyBudget::UNTIMED),
            )
        })
        .unwrap();
        assert_eq!(
            (op.name(), &source),
            ("aten::mm.out", &OverloadSource::Exact)
        );
        assert_eq!(op.last_output().unwrap().size(), [2, 4]);
        assert_eq!(
            source.note().as_deref(),
            Some("the execution trace's exact overload")
        );
        let two = from_profiler_args(
            &json!([[2, 3], [3, 4]]),
            &json!(["float", "float"]),
            &json!([[3, 1], [4, 1]]),
            &json!(["", ""]),
        )
        .unwrap();
        let bogus = "aten::mm.bogus(Tensor self, Tensor mat2) -> Tensor";
        let (op, source) = no_grad(|| {
            prepare_exact(
                "aten::mm",
                Some(bogus),
                &two,
                Device::host(),
                CallSite::Eager,
                Some(CopyBudget::UNTIMED),
            )
        })
        .unwrap();
        assert_eq!(op.name(), "aten::mm");
        assert_eq!(
            source.note().as_deref(),
            Some("the execution trace's overload aten::mm.bogus is not libtorch's: matched by schema")
        );
    }
}
