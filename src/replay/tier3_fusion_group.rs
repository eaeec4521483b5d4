//! Tier 3, a TorchScript fusion group (`fused_*`): the group's kernel built from the subgraph
//! the capture read from the optimised graph TorchScript ran, as TorchScript's
//! `prim::TensorExprGroup` op builds it (NNC's `TensorExprKernel`, under the fuser settings
//! of the capture), and run on tensors of the recorded input types, on the CPU or a GPU alike.
//!
//! Before it is timed, its output on those inputs is checked against the same subgraph run
//! unfused by TorchScript's interpreter (each aten op in turn, as eager PyTorch runs them):
//! a group that does not compute what its ops compute is not replayed. The tolerance counts
//! the roundings of the ops (a compound op such as `batch_norm` takes six: ResNet-50's
//! `fused_batch_norm_add` groups differed from aten's by up to 44 units of float32 roundoff,
//! which one rounding per op refused, on a running variance drawn from a normal distribution;
//! on inputs that follow the ops' value rules, [`input_fills`], by 12-16 units). Where the two
//! differ by more, the subgraph is run again in float64 and the group still passes when it is no farther from that than twice the
//! unfused subgraph is. A float16 or bfloat16 group is held to one rounding of its dtype (NNC
//! computes in float32 and rounds at the store), not to the unfused ops' accumulated roundoff.

use tch::{Kind, Tensor};

use super::recorded::RecordedInput;
use super::tier3_tensors::{make_tensor, Fill};
use super::value_rules::value_rule;
use crate::device::Device;
use crate::measure::Target;
use crate::signature::schema::FusionGroupParams;
use crate::torch::dtype::kind_of;
use crate::torch::fusion_kernel::{llvm_available, reference_outputs, FusionKernel};
use crate::torch::work_target::TorchWork;

/// Why a fusion group could not be set up.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FusionGroupError {
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    Failed(String),
}

/// Unit roundoff of a floating kind (half its machine epsilon), `None` for other kinds.
fn unit_roundoff(kind: Kind) -> Option<f64> {
    let epsilon = match kind {
        Kind::Float => f32::EPSILON as f64,
        Kind::Double => f64::EPSILON,
        Kind::Half => 2f64.powi(-10),
        Kind::BFloat16 => 2f64.powi(-7),
        _ => return None,
    };
    Some(epsilon / 2.0)
}

/// How far a fused output may be from the unfused one, relative to the value (and absolute
/// below 1). In float32 and float64 each of the subgraph's `roundings` ([`roundings`]) happens
/// once in each computation, in another order: 4 units of roundoff per rounding and
/// computation. In float16 and bfloat16 the two computations differ in kind: NNC loads each
/// half-precision value into a float32, computes in float32 and rounds to the output's dtype
/// once, at the store (its `HalfRewriter`), where the ops run one by one round after each. So
/// the fused output is held to 4 units of its dtype's roundoff for its one rounding and to
/// float32's for the ops inside; the unfused ops' own accumulated roundoff is not granted to it
/// (a bfloat16 GELU of 11 roundings would otherwise pass a kernel wrong by a third). Where the
/// two differ by more, [`as_near_as_unfused`] judges against the float64 values.
pub fn tolerance(kind: Kind, roundings: usize) -> f64 {
    let roundings = roundings.max(1) as f64;
    match (kind, unit_roundoff(kind)) {
        (Kind::Half | Kind::BFloat16, Some(u)) => {
            4.0 * u + 2.0 * 4.0 * (f32::EPSILON as f64 / 2.0) * roundings
        }
        (_, Some(u)) => 2.0 * 4.0 * u * roundings,
        (_, None) => 0.0,
    }
}

/// The aten calls of a subgraph's IR text, each from its op's name on (`add(%x, %y, %1)`).
fn aten_calls(graph_ir: &str) -> impl Iterator<Item = &str> {
    graph_ir
        .lines()
        .filter_map(|line| line.split_once("= aten::").map(|(_, call)| call))
}

/// The aten ops of a subgraph's IR text (`aten::add`, ...).
pub fn aten_ops(graph_ir: &str) -> usize {
    aten_calls(graph_ir).count()
}

/// The roundings a subgraph's ops take: one per element-wise op, more for a compound one
/// (`batch_norm` in inference: the variance plus epsilon, its reciprocal square root, the
/// centring, the scale by it and by the weight, the shift; `gelu`'s five around an `erf`), and
/// a transcendental counts its implementation's few units in the last place.
pub fn roundings(graph_ir: &str) -> usize {
    aten_calls(graph_ir)
        .map(|call| match call.split('(').next().unwrap_or("") {
            "batch_norm" | "gelu" => 6,
            "exp" | "expm1" | "log" | "log1p" | "erf" | "erfc" | "tanh" | "sigmoid" | "silu"
            | "rsqrt" | "sqrt" | "pow" | "sin" | "cos" => 3,
            _ => 1,
        })
        .sum()
}

/// The names of a subgraph's inputs, in order (`%x` of `graph(%x : Float(...), ...)`).
fn input_names(graph_ir: &str) -> Vec<&str> {
    let header = graph_ir.split_once("):\n").map_or(graph_ir, |(h, _)| h);
    header
        .split('%')
        .skip(1)
        .filter_map(|rest| rest.split_once(" :").map(|(name, _)| name.trim()))
        .collect()
}

/// How each of the subgraph's inputs is filled: with values valid for every op that reads it
/// ([`super::value_rules`]: a `batch_norm`'s running variance positive), as data otherwise.
pub fn input_fills(graph_ir: &str) -> Vec<Fill> {
    let names = input_names(graph_ir);
    let mut fills = vec![Fill::Data; names.len()];
    for call in aten_calls(graph_ir) {
        let Some((op, args)) = call.split_once('(') else {
            continue;
        };
        let args = args.split(')').next().unwrap_or("");
        for (position, arg) in args.split(',').map(str::trim).enumerate() {
            let Some(input) = arg
                .strip_prefix('%')
                .and_then(|arg| names.iter().position(|name| *name == arg))
            else {
                continue;
            };
            if value_rule(op, position).is_some() {
                fills[input] = Fill::Positive;
            }
        }
    }
    fills
}

/// The group's inputs: a tensor of each recorded type, filled as its ops need.
fn inputs(
    recorded: &[RecordedInput],
    graph_ir: &str,
    device: &Device,
) -> Result<Vec<Tensor>, FusionGroupError> {
    let fills = input_fills(graph_ir);
    recorded
        .iter()
        .enumerate()
        .map(|(i, input)| match input {
            RecordedInput::Tensor {
                dtype,
                sizes,
                strides,
            } => {
                let fill = fills.get(i).copied().unwrap_or(Fill::Data);
                make_tensor(kind_of(*dtype), sizes, strides.as_deref(), device, fill)
                    .map_err(FusionGroupError::Failed)
            }
            other => Err(FusionGroupError::Unsupported(format!(
                "input {i} of the fusion group is {other:?}, not a tensor"
            ))),
        })
        .collect()
}

/// The largest difference of `got` from `want` beyond the tolerance, relative to
/// `max(1, |want|)`; 0 when every element is within it (NaN where `want` is NaN counts as equal).
fn excess(got: &Tensor, want: &Tensor) -> Result<f64, FusionGroupError> {
    let fail = |e: tch::TchError| FusionGroupError::Failed(e.to_string());
    if got.size() != want.size() {
        return Err(FusionGroupError::Failed(format!(
            "the fused output has sizes {:?}, the unfused {:?}",
            got.size(),
            want.size()
        )));
    }
    let got = got.f_to_kind(Kind::Double).map_err(fail)?;
    let want = want.f_to_kind(Kind::Double).map_err(fail)?;
    let both_nan = got
        .f_isnan()
        .map_err(fail)?
        .f_logical_and(&want.f_isnan().map_err(fail)?)
        .map_err(fail)?;
    let scale = want.f_abs().map_err(fail)?.f_clamp_min(1.0).map_err(fail)?;
    let relative = (&got - &want)
        .f_abs()
        .map_err(fail)?
        .f_div(&scale)
        .map_err(fail)?
        .f_nan_to_num(
            Some(f64::INFINITY),
            Some(f64::INFINITY),
            Some(f64::INFINITY),
        )
        .map_err(fail)?
        .f_masked_fill(&both_nan, 0.0)
        .map_err(fail)?;
    if relative.numel() == 0 {
        return Ok(0.0);
    }
    relative.f_max().map_err(fail).map(|m| m.double_value(&[]))
}

/// What the check against the unfused subgraph found: the largest relative difference and
/// the tolerance it was held to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Checked {
    pub largest: f64,
    pub tolerance: f64,
}

/// Runs `kernel` once on `inputs` and compares each output with the unfused subgraph's.
pub fn check_against_unfused(
    kernel: &mut FusionKernel,
    graph_ir: &str,
    inputs: &[Tensor],
) -> Result<Checked, FusionGroupError> {
    let failed = |e: crate::torch::ShimError| FusionGroupError::Failed(e.0);
    kernel.run(inputs, 1).map_err(failed)?;
    let fused = kernel.outputs();
    let unfused = reference_outputs(graph_ir, inputs).map_err(failed)?;
    if fused.len() != unfused.len() {
        return Err(FusionGroupError::Failed(format!(
            "the fused group returned {} outputs, the unfused subgraph {}",
            fused.len(),
            unfused.len()
        )));
    }
    let mut checked = Checked {
        largest: 0.0,
        tolerance: 0.0,
    };
    let mut exact: Option<Vec<Tensor>> = None;
    for (i, (got, want)) in fused.iter().zip(&unfused).enumerate() {
        let one = check_output(i, got, want, graph_ir, inputs, &mut exact)?;
        checked.largest = checked.largest.max(one.largest);
        checked.tolerance = checked.tolerance.max(one.tolerance);
    }
    Ok(checked)
}

/// Output `i` of the fused group, `got`, against the unfused subgraph's `want` (and, where they
/// differ by more than the tolerance, against the subgraph's outputs in float64, computed on
/// first need into `exact`).
fn check_output(
    i: usize,
    got: &Tensor,
    want: &Tensor,
    graph_ir: &str,
    inputs: &[Tensor],
    exact: &mut Option<Vec<Tensor>>,
) -> Result<Checked, FusionGroupError> {
    let rounded = roundings(graph_ir);
    let tol = tolerance(want.kind(), rounded);
    let largest = excess(got, want)?;
    if largest > tol {
        let exact = match exact {
            Some(outputs) => &outputs[i],
            slot @ None => &slot.insert(in_float64(graph_ir, inputs)?)[i],
        };
        let (fused_off, unfused_off) = (excess(got, exact)?, excess(want, exact)?);
        if !as_near_as_unfused(fused_off, unfused_off, tol) {
            return Err(FusionGroupError::Failed(format!(
                "output {i} of the fused group differs from the unfused subgraph by \
                 {largest:.3e} (relative), beyond the {tol:.3e} of {} ops ({rounded} \
                 roundings) in {:?}, and is {fused_off:.3e} from the subgraph in float64, \
                 where the unfused one is {unfused_off:.3e}",
                aten_ops(graph_ir),
                want.kind()
            )));
        }
    }
    Ok(Checked {
        largest,
        tolerance: tol,
    })
}

/// Whether a fused output `fused_off` from the float64 subgraph is as near it as the unfused
/// subgraph's `unfused_off` (in the same dtype): within twice that, or within `tol`.
fn as_near_as_unfused(fused_off: f64, unfused_off: f64, tol: f64) -> bool {
    fused_off <= tol.max(2.0 * unfused_off)
}

/// The subgraph's outputs with every floating input in float64: the values the float32
/// computations approximate.
fn in_float64(graph_ir: &str, inputs: &[Tensor]) -> Result<Vec<Tensor>, FusionGroupError> {
    let fail = |e: tch::TchError| FusionGroupError::Failed(e.to_string());
    let wide = inputs
        .iter()
        .map(|t| match t.kind() {
            Kind::Float | Kind::Half | Kind::BFloat16 => t.f_to_kind(Kind::Double).map_err(fail),
            _ => Ok(t.shallow_clone()),
        })
        .collect::<Result<Vec<_>, _>>()?;
    reference_outputs(graph_ir, &wide)
        .map_err(|e| FusionGroupError::Failed(format!("the subgraph in float64: {}", e.0)))
}

/// The fusion group `params`, on tensors of the `recorded` input types, as a measurement
/// target on `device`, checked against its unfused subgraph; with the method in words.
pub fn target(
    params: &FusionGroupParams,
    recorded: &[RecordedInput],
    device: &Device,
) -> Result<(Box<dyn Target>, String), FusionGroupError> {
    let _no_grad = tch::no_grad_guard();
    let mut kernel = FusionKernel::new(&params.graph, params.te_must_use_llvm_cpu)
        .map_err(|e| FusionGroupError::Failed(format!("building the group's kernel: {e}")))?;
    if kernel.inputs() != recorded.len() {
        return Err(FusionGroupError::Unsupported(format!(
            "the group's subgraph takes {} inputs, the signature records {}",
            kernel.inputs(),
            recorded.len()
        )));
    }
    let tensors = inputs(recorded, &params.graph, device)?;
    let checked = check_against_unfused(&mut kernel, &params.graph, &tensors)?;
    // On a CPU without LLVM the group runs in NNC's IR interpreter (as it did in a capture on
    // such a torch): said, so that a group's time far above its ops' is not taken for a GPU's.
    let interpreted = if device.is_cuda() || llvm_available() {
        ""
    } else {
        ", in NNC's IR interpreter: this libtorch has no LLVM"
    };
    let method = format!(
        "TorchScript fusion group {} ({} NNC kernel{interpreted}; output within {:.1e} of the \
         unfused subgraph, tolerance {:.1e})",
        kernel.name(),
        params.kind,
        checked.largest,
        checked.tolerance
    );
    let work = TorchWork::new(device, move || {
        kernel
            .run(&tensors, 1)
            .map_err(|e| tch::TchError::Torch(e.0))
    })
    .map_err(|e| FusionGroupError::Failed(e.to_string()))?;
    Ok((Box::new(work), method))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tolerance_grows_with_the_ops_and_the_dtype_roundoff() {
        assert_eq!(tolerance(Kind::Float, 1), 4.0 * f32::EPSILON as f64);
        assert_eq!(tolerance(Kind::Float, 3), 3.0 * tolerance(Kind::Float, 1));
        assert!(tolerance(Kind::BFloat16, 1) > tolerance(Kind::Half, 1));
        // Half precision: one rounding of the dtype at the store, float32's for the ops.
        assert!(tolerance(Kind::BFloat16, 11) < 2.0 * tolerance(Kind::BFloat16, 1));
        assert_eq!(tolerance(Kind::Int64, 5), 0.0);
    }

    #[test]
    fn a_group_as_near_the_exact_values_as_the_unfused_ops_passes() {
        let tol = tolerance(Kind::Float, 2);
        // ResNet-50's batch_norm + add: 1.43e-6 from aten's float32, both near float64.
        assert!(as_near_as_unfused(1.0e-6, 0.9e-6, tol));
        assert!(as_near_as_unfused(1.8e-6, 0.9e-6, tol));
        // Farther than twice the unfused float32's error, and beyond the roundoff: wrong.
        assert!(!as_near_as_unfused(2.0e-6, 0.9e-6, tol));
        assert!(!as_near_as_unfused(1.0e-3, 0.0, tol));
        // An exact unfused result leaves the roundoff bound.
        assert!(as_near_as_unfused(tol, 0.0, tol));
    }

    /// BLOOM's GELU as TorchScript's optimised graph spells it (tanh form), in bfloat16.
    const BF16_GELU: &str =
        "graph(%x : BFloat16(4096, strides=[1], requires_grad=0, device=cpu)):\n  \
        %one : int = prim::Constant[value=1]()\n  \
        %onef : float = prim::Constant[value=1.]()\n  \
        %half : float = prim::Constant[value=0.5]()\n  \
        %k1 : float = prim::Constant[value=0.79788456]()\n  \
        %k2 : float = prim::Constant[value=0.044714999999999998]()\n  \
        %a : BFloat16(4096) = aten::mul(%x, %x)\n  \
        %b : BFloat16(4096) = aten::mul(%a, %k2)\n  \
        %c : BFloat16(4096) = aten::add(%b, %onef, %one)\n  \
        %d : BFloat16(4096) = aten::mul(%x, %k1)\n  \
        %e : BFloat16(4096) = aten::mul(%d, %c)\n  \
        %f : BFloat16(4096) = aten::tanh(%e)\n  \
        %g : BFloat16(4096) = aten::add(%f, %onef, %one)\n  \
        %h : BFloat16(4096) = aten::mul(%x, %half)\n  \
        %y : BFloat16(4096) = aten::mul(%h, %g)\n  \
        return (%y)\n";

    #[test]
    fn a_bfloat16_group_is_held_to_one_rounding_not_to_the_unfused_ops_roundoff() {
        let _no_grad = tch::no_grad_guard();
        tch::manual_seed(7);
        let x = (Tensor::randn([4096], (Kind::Float, Device::host().torch())) * 3.0)
            .to_kind(Kind::BFloat16);
        let inputs = [x.shallow_clone()];
        assert_eq!(roundings(BF16_GELU), 11);
        // The ops one by one in bfloat16, as eager PyTorch and TorchScript's interpreter run them.
        let unfused = reference_outputs(BF16_GELU, &inputs).unwrap().remove(0);
        assert_eq!(unfused.kind(), Kind::BFloat16);
        // NNC's kernel: each load widened to float32, float32 inside, one rounding at the store.
        let as_nnc = reference_outputs(BF16_GELU, &[x.to_kind(Kind::Float)])
            .unwrap()
            .remove(0)
            .to_kind(Kind::BFloat16);
        let checked = check_output(0, &as_nnc, &unfused, BF16_GELU, &inputs, &mut None).unwrap();
        assert_eq!(checked.tolerance, tolerance(Kind::BFloat16, 11));
        assert!(checked.tolerance < 0.02, "{}", checked.tolerance);
        // A kernel 5 % off: within the 11 roundings' 0.34 of the bound before, refused now.
        let wrong = (as_nnc.to_kind(Kind::Float) * 1.05).to_kind(Kind::BFloat16);
        let off = excess(&wrong, &unfused).unwrap();
        assert!(
            off > 0.02 && off < 2.0 * 4.0 * 2f64.powi(-8) * 11.0,
            "{off}"
        );
        let refused = check_output(0, &wrong, &unfused, BF16_GELU, &inputs, &mut None);
        assert!(
            matches!(&refused, Err(FusionGroupError::Failed(m)) if m.contains("in float64")),
            "{refused:?}"
        );
    }

    #[test]
    fn counts_the_aten_ops_of_a_subgraph() {
        let ir = "graph(%x : Float(2, strides=[1], requires_grad=0, device=cpu)):\n  \
                  %1 : int = prim::Constant[value=1]()\n  \
                  %2 : Float(2, strides=[1], requires_grad=0, device=cpu) = aten::add(%x, %x, %1)\n  \
                  %3 : Float(2, strides=[1], requires_grad=0, device=cpu) = aten::relu(%2)\n  \
                  return (%3)\n";
        assert_eq!(aten_ops(ir), 2);
        assert_eq!(roundings(ir), 2);
        let bn_add = "  %y : Float(1) = aten::batch_norm(%x, %w, %b, %m, %v, %f, %p, %e, %c)\n  \
                      %z : Float(1) = aten::add(%y, %r, %one)\n  \
                      %t : Float(1) = aten::tanh(%z)\n";
        assert_eq!(aten_ops(bn_add), 3);
        assert_eq!(roundings(bn_add), 6 + 1 + 3);
    }

    #[test]
    fn a_batch_norm_group_gets_a_positive_running_variance() {
        // ResNet-50's `fused_batch_norm_add` as the capture read it (types shortened).
        let ir =
            "graph(%1 : Float(8, 1024, 14, 14, strides=[200704, 196, 14, 1], device=cpu),\n      \
            %input.132 : Float(8, 1024, 14, 14, strides=[200704, 196, 14, 1], device=cpu),\n      \
            %weight.137 : Float(1024, strides=[1], device=cpu),\n      \
            %bias.68 : Float(1024, strides=[1], device=cpu),\n      \
            %running_mean.68 : Float(1024, strides=[1], device=cpu),\n      \
            %running_var.68 : Float(1024, strides=[1], device=cpu)):\n  \
            %2 : int = prim::Constant[value=1]()\n  \
            %out.40 : Float(8, 1024, 14, 14) = aten::batch_norm(%input.132, %weight.137, \
            %bias.68, %running_mean.68, %running_var.68, %9, %10, %11, %12)\n  \
            %input.163 : Float(8, 1024, 14, 14) = aten::add(%out.40, %1, %2)\n  \
            return (%input.163)\n";
        assert_eq!(
            input_names(ir),
            [
                "1",
                "input.132",
                "weight.137",
                "bias.68",
                "running_mean.68",
                "running_var.68"
            ]
        );
        let fills = input_fills(ir);
        assert_eq!(fills.len(), 6);
        assert!(matches!(fills[5], Fill::Positive), "{fills:?}");
        assert!(
            fills[..5].iter().all(|f| matches!(f, Fill::Data)),
            "{fills:?}"
        );
        let recorded: Vec<RecordedInput> = [vec![2, 3, 2, 2], vec![2, 3, 2, 2]]
            .into_iter()
            .chain(std::iter::repeat_n(vec![3], 4))
            .map(|sizes| RecordedInput::Tensor {
                dtype: replay_core::signature::dtype::Dtype::Float32,
                sizes,
                strides: None,
            })
            .collect();
        let tensors = inputs(&recorded, ir, Device::host()).unwrap();
        assert!(tensors[5].min().double_value(&[]) >= 0.5);
    }
}
