//! The registry: loads a signature file's signatures into their tiers and hands each replay
//! unit to its tier's replayer.
//!
//! Kernels launched by one op call are not independent: replaying `aten::layer_norm` runs
//! every kernel it launches, and replaying a cuBLAS call runs its split-K reduction too. So
//! signatures are grouped into *replay units* — one per (launching op, recorded inputs) —
//! and each unit is replayed once. A tier-2 unit's main GEMM kernel carries the call's time
//! and its auxiliary kernels are `included`; a tier-3 unit's op time is shared among its
//! kernels in proportion to their trace times, so nothing is counted twice.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::device::Device;
use crate::measure::{MeasureError, Target};
use crate::signature::fusion_group::{is_fusion_group_op, trace_alone_reason};
use crate::signature::schema::{GemmKernelRole, Signature, SignatureFile, Tier, Unit};
use crate::signature::InputRange;

use super::overload::CallSite;
use super::parameter_copies::CopyBudget;
use super::recorded::{from_profiler_args, RecordedInput};
use super::tier1_memory::{CpuMemoryTarget, MemoryWork};
use super::tier2_gemm::TorchGemmTarget;
use super::tier3_fusion_group::FusionGroupError;
use super::tier3_libtorch::{self, Tier3Error};
use super::tier4_generated::Tier4Error;
use replay_core::inductor::InductorKernels;

/// One thing to replay and time, standing for one or more signatures.
#[derive(Debug, Clone)]
pub struct ReplayUnit {
    /// The signature whose parameters are replayed.
    pub lead: usize,
    pub tier: Tier,
    /// Every signature this unit's time is attributed to, with its share (summing to 1).
    pub members: Vec<(usize, f64)>,
    /// Signatures whose work runs inside this unit's replay and get no time of their own.
    pub included: Vec<usize>,
}

/// Why a unit could not be set up.
#[derive(Debug, Clone, PartialEq)]
pub enum SetupError {
    Unsupported(String),
    Failed(String),
    Oom(String),
}

impl SetupError {
    /// A libtorch failure: out of memory when libtorch says so. tch hands libtorch's
    /// exceptions over as text only, so `c10::OutOfMemoryError`'s own words are what there is.
    fn failed(message: String) -> SetupError {
        if message.contains("CUDA out of memory")
            || message.contains("DefaultCPUAllocator: can't allocate")
            || message.contains(super::memory_limit::OVER_LIMIT)
        {
            SetupError::Oom(message)
        } else {
            SetupError::Failed(message)
        }
    }
}

/// Whether an error, or any error it was caused by, is a device allocation failing: the
/// driver's `CUDA_ERROR_OUT_OF_MEMORY` or cuBLAS's `CUBLAS_STATUS_ALLOC_FAILED`, read from
/// their codes.
pub fn is_out_of_memory(error: &(dyn std::error::Error + 'static)) -> bool {
    use cudarc::cublas::result::CublasError;
    use cudarc::cublas::sys::cublasStatus_t;
    use cudarc::driver::sys::CUresult;
    use cudarc::driver::DriverError;
    let mut next = Some(error);
    while let Some(e) = next {
        if e.downcast_ref::<DriverError>()
            .is_some_and(|d| d.0 == CUresult::CUDA_ERROR_OUT_OF_MEMORY)
            || e.downcast_ref::<CublasError>()
                .is_some_and(|c| c.0 == cublasStatus_t::CUBLAS_STATUS_ALLOC_FAILED)
        {
            return true;
        }
        next = e.source();
    }
    false
}

impl From<MeasureError> for SetupError {
    fn from(e: MeasureError) -> Self {
        match &e {
            MeasureError::Target(target) if is_out_of_memory(target.as_ref()) => {
                SetupError::Oom(e.to_string())
            }
            _ => SetupError::failed(e.to_string()),
        }
    }
}

/// Why a tier-4 signature is not replayed (yet): its code is Inductor's, not libtorch's.
pub const GENERATED_UNSUPPORTED: &str = "generated kernels are replayed from the kept Inductor \
     cache (capture with `replay capture --compile`, or give --inductor-cache DIR)";

/// How a unit is replayed on a device, for reports.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Method(pub String);

/// The op call a signature's work came from: its launching op and that op's recorded inputs.
/// Signatures of one call are grouped into replay units; a call may still give several units
/// (a GEMM's main kernel and the op's other kernels), which replay one call between them.
pub fn group_key(sig: &Signature) -> Option<String> {
    let op = sig.op.as_ref()?;
    let inputs = serde_json::to_string(&sig.inputs).unwrap_or_default();
    Some(format!("{}\u{1}{}", op.name, inputs))
}

/// Groups a file's signatures into replay units (in signature order of the lead).
pub fn replay_units(file: &SignatureFile) -> Vec<ReplayUnit> {
    let sigs = &file.signatures;
    let mut units: Vec<ReplayUnit> = Vec::new();
    let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for (i, sig) in sigs.iter().enumerate() {
        // A generated kernel is replayed alone: the op around it (its launcher, or the
        // compiled region) is no libtorch op that would replay it.
        let groupable =
            sig.unit == Unit::Kernel && !matches!(sig.tier, Tier::Copy | Tier::Generated);
        match group_key(sig).filter(|_| groupable) {
            Some(key) => {
                if !groups.contains_key(&key) {
                    order.push(key.clone());
                }
                groups.entry(key).or_default().push(i);
            }
            None => units.push(ReplayUnit {
                lead: i,
                tier: sig.tier,
                members: vec![(i, 1.0)],
                included: vec![],
            }),
        }
    }
    for key in order {
        let members = &groups[&key];
        // GEMM calls: the main kernel stands for the call; the helpers are inside it.
        let gemm_main: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&i| {
                sigs[i].tier == Tier::Gemm
                    && sigs[i]
                        .gemm
                        .as_ref()
                        .is_some_and(|g| g.role == GemmKernelRole::Main)
            })
            .collect();
        for &main in &gemm_main {
            let included: Vec<usize> = members
                .iter()
                .copied()
                .filter(|&i| {
                    sigs[i].tier == Tier::Gemm
                        && !gemm_main.contains(&i)
                        && gemm_main.first() == Some(&main)
                })
                .collect();
            units.push(ReplayUnit {
                lead: main,
                tier: Tier::Gemm,
                members: vec![(main, 1.0)],
                included,
            });
        }
        // Everything else of the op (tier 3, and tier-2 kernels with no main to stand in for
        // them) is one libtorch replay of the op, shared by trace time among all its kernels.
        let rest: Vec<usize> = members
            .iter()
            .copied()
            .filter(|&i| {
                !gemm_main.contains(&i) && (sigs[i].tier != Tier::Gemm || gemm_main.is_empty())
            })
            .collect();
        if rest.is_empty() {
            continue;
        }
        let total: f64 = members.iter().map(|&i| sigs[i].trace_mean_us).sum();
        let shares = rest
            .iter()
            .map(|&i| {
                (
                    i,
                    if total > 0.0 {
                        sigs[i].trace_mean_us / total
                    } else {
                        1.0 / members.len() as f64
                    },
                )
            })
            .collect();
        units.push(ReplayUnit {
            lead: rest[0],
            tier: Tier::Op,
            members: shares,
            included: vec![],
        });
    }
    units.sort_by_key(|u| u.lead);
    units
}

/// What the signature's op says of how to call it: where it was called from (inside compiled
/// code an extern kernel's output buffer is recorded as an input), the exact overload an
/// Execution Trace linked at classification names, and its integer tensors' value ranges
/// where the ET recorded them. Tier 3 and the sequence's memory plan read them alike.
pub fn op_context(sig: &Signature) -> (CallSite, Option<&str>, &[InputRange]) {
    let op = sig.op.as_ref();
    (
        op.map_or(CallSite::Eager, |op| CallSite::of_ancestry(&op.ancestry)),
        op.and_then(|op| op.schema.as_deref()),
        op.map_or(&[][..], |op| &op.input_ranges[..]),
    )
}

/// The recorded inputs of a signature, typed.
pub fn recorded_inputs(sig: &Signature) -> Option<Vec<RecordedInput>> {
    typed_inputs(sig.inputs.as_ref()?)
}

/// A signature file's recorded op inputs (launching op or ancestor), typed.
fn typed_inputs(inputs: &crate::signature::schema::RecordedInputs) -> Option<Vec<RecordedInput>> {
    let null = serde_json::Value::Null;
    from_profiler_args(
        inputs.dims.as_ref().unwrap_or(&null),
        inputs.types.as_ref().unwrap_or(&null),
        inputs.strides.as_ref().unwrap_or(&null),
        inputs.concrete.as_ref().unwrap_or(&null),
    )
}

/// The parameters (weights, biases) a replay reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parameters {
    /// Copies used in turn, so that they come from memory as in a forward pass: a call
    /// replayed alone over and over (`isolated`); never more than its measurement reads
    /// ([`super::parameter_copies`]).
    Rotating(CopyBudget),
    /// One set: a call in its place in the re-run step (`sequence`), where every op instance
    /// has parameters of its own and the working set is the model's.
    OneSet,
}

/// Sets up the replayer for `unit` on `device`, its parameters' copies bounded by `copies`.
pub fn target_for(
    file: &SignatureFile,
    unit: &ReplayUnit,
    device: &Device,
    generated: Option<&InductorKernels>,
    copies: CopyBudget,
) -> Result<(Box<dyn Target>, Method), SetupError> {
    target_with(file, unit, device, generated, Parameters::Rotating(copies))
}

/// [`target_for`] with the given parameter working set.
pub fn target_with(
    file: &SignatureFile,
    unit: &ReplayUnit,
    device: &Device,
    generated: Option<&InductorKernels>,
    parameters: Parameters,
) -> Result<(Box<dyn Target>, Method), SetupError> {
    let copies = match parameters {
        Parameters::Rotating(budget) => Some(budget),
        Parameters::OneSet => None,
    };
    let sig = &file.signatures[unit.lead];
    // Tier 4 says how its kernels are replayed, whether or not the cache was at hand.
    if !sig.replayable && !matches!(unit.tier, Tier::Op | Tier::Generated) {
        return Err(SetupError::Unsupported(
            sig.reason
                .clone()
                .unwrap_or_else(|| "marked not replayable".into()),
        ));
    }
    match unit.tier {
        Tier::Copy => {
            let work = memory_work(sig)?;
            match device {
                Device::Cpu(_) => {
                    let method = match work {
                        MemoryWork::Copy(_) => "host memcpy",
                        MemoryWork::Set(_) => "host memset",
                    };
                    let target = CpuMemoryTarget::new(work)
                        .map_err(|e| SetupError::failed(e.to_string()))?;
                    Ok((Box::new(target), Method(method.into())))
                }
                Device::Cuda(dev) => {
                    let method = match work {
                        MemoryWork::Copy(p) => format!("cudaMemcpyAsync {:?}", p.kind),
                        MemoryWork::Set(_) => "cudaMemsetAsync".into(),
                    };
                    let target = super::tier1_memory::cuda::CudaMemoryTarget::new(dev, work)?;
                    Ok((Box::new(target), Method(method)))
                }
            }
        }
        Tier::Gemm => {
            let Some(gemm) = sig.gemm.as_ref() else {
                return Err(SetupError::Unsupported(
                    "a tier-2 signature without GEMM parameters".into(),
                ));
            };
            match device {
                Device::Cpu(_) => {
                    let target = TorchGemmTarget::with_copies(gemm, device, copies).map_err(
                        |e| match e {
                            super::tier2_gemm::TorchGemmError::Unsupported(why) => {
                                SetupError::Unsupported(why)
                            }
                            other => SetupError::failed(other.to_string()),
                        },
                    )?;
                    let op = match (gemm.batch > 1, gemm.bias) {
                        (false, false) => "torch mm",
                        (false, true) => "torch addmm",
                        (true, false) => "torch bmm",
                        (true, true) => "torch baddbmm",
                    };
                    Ok((Box::new(target), Method(op.into())))
                }
                Device::Cuda(dev) => {
                    // A shape beyond cublasGemmEx's 32-bit arguments is one this replay
                    // cannot issue, not a failure of the device.
                    super::tier2_gemm::CublasDims::of(&gemm.cublas)
                        .map_err(SetupError::Unsupported)?;
                    let target = super::tier2_gemm::cuda::CublasGemmTarget::new(dev, gemm)?;
                    let call = if gemm.batch > 1 {
                        "cublasGemmStridedBatchedEx"
                    } else {
                        "cublasGemmEx"
                    };
                    Ok((Box::new(target), Method(call.into())))
                }
            }
        }
        Tier::Generated => {
            let kernels =
                generated.ok_or_else(|| SetupError::Unsupported(GENERATED_UNSUPPORTED.into()))?;
            let (target, method) =
                super::tier4_generated::target(sig, kernels, device).map_err(|e| match e {
                    Tier4Error::Unsupported(m) => SetupError::Unsupported(m),
                    Tier4Error::Failed(m) => SetupError::Failed(m),
                })?;
            Ok((target, Method(method.into())))
        }
        Tier::Op => {
            if let Some(fused) = fusion_group_target(sig, device)? {
                return Ok(fused);
            }
            let (prepared, method) = dispatcher_call(sig, device, copies)?;
            // Nothing reads a replayed op's output: it is freed as each run ends, as the model
            // frees a tensor once its readers are done, so the next call writes where the last
            // one did. Kept until each copy of the parameters ran again, 64 copies held 64
            // outputs (a ResNet-50 batch-8 batch norm's 25.7 MB each) and every call wrote cold
            // memory: that batch norm replayed 5.5x slower, the whole step's sum 1.44x.
            let prepared = prepared.keep_output(false);
            Ok((
                Box::new(tier3_libtorch::LibtorchOpTarget::new(prepared, device)?),
                method,
            ))
        }
    }
}

/// A unit's target and how it replays, as [`target_for`] returns them.
type Replayer = (Box<dyn Target>, Method);

/// A TorchScript fusion group's kernel (`fused_*`) built from the subgraph its signature
/// carries; `None` for any other op. A fused op without its group says why it has none.
fn fusion_group_target(sig: &Signature, device: &Device) -> Result<Option<Replayer>, SetupError> {
    let name = sig.op.as_ref().map_or(&sig.name, |op| &op.name);
    if !is_fusion_group_op(name) {
        return Ok(None);
    }
    let (Some(params), true) = (&sig.fusion, sig.replayable) else {
        return Err(SetupError::Unsupported(
            sig.reason
                .clone()
                .unwrap_or_else(|| trace_alone_reason(name)),
        ));
    };
    let recorded = recorded_inputs(sig).ok_or_else(|| {
        SetupError::Unsupported(format!("{name}: the capture recorded no input types"))
    })?;
    let (target, method) =
        super::tier3_fusion_group::target(params, &recorded, device).map_err(|e| match e {
            FusionGroupError::Unsupported(m) => SetupError::Unsupported(m),
            FusionGroupError::Failed(m) => SetupError::failed(m),
        })?;
    Ok(Some((target, Method(method))))
}

/// What a tier-1 signature copies or sets.
pub fn memory_work(sig: &Signature) -> Result<MemoryWork, SetupError> {
    match (sig.memcpy, sig.memset) {
        (Some(p), _) => Ok(MemoryWork::Copy(p)),
        (None, Some(p)) => Ok(MemoryWork::Set(p)),
        _ => Err(SetupError::Unsupported(
            "a tier-1 signature without memcpy/memset parameters".into(),
        )),
    }
}

/// The call of `sig`'s op through libtorch's dispatcher (tier 3's replay), prepared and run
/// once: for a tier-3 signature, and in a sequence for any op that libtorch must run (a
/// GEMM on libtorch's stream, or taking and giving flowing tensors).
pub fn dispatcher_call(
    sig: &Signature,
    device: &Device,
    copies: Option<CopyBudget>,
) -> Result<(super::rotating_op::RotatingOp, Method), SetupError> {
    let (op_name, inputs) = match (&sig.op, sig.unit) {
        (Some(op), _) => (op.name.clone(), recorded_inputs(sig)),
        (None, Unit::HostOp) => (sig.name.clone(), recorded_inputs(sig)),
        (None, Unit::Kernel) => {
            return Err(SetupError::Unsupported(
                "no launching op was recorded for this kernel".into(),
            ))
        }
    };
    let (site, exact, ranges) = op_context(sig);
    let first = match inputs {
        Some(inputs) => prepare_exact(&op_name, exact, ranges, &inputs, device, site, copies),
        None => Err(SetupError::Unsupported(format!(
            "{op_name}: the trace recorded no input shapes"
        ))),
    };
    let (prepared, note) = match first {
        Ok((prepared, source, 0)) => (prepared, source.note()),
        Ok((prepared, source, ranged)) => {
            let ranges = format!("{ranged} tensors drawn from the recorded value ranges");
            let note = match source.note() {
                Some(note) => format!("{note}; {ranges}"),
                None => ranges,
            };
            (prepared, Some(note))
        }
        Err(first_error) => enclosing_op_fallback(sig, device, copies).ok_or(first_error)?,
    };
    let mut method = format!("libtorch dispatcher {}", prepared.name());
    if let Some(note) = note {
        method.push_str(&format!(" ({note})"));
    }
    Ok((prepared, Method(method)))
}

fn prepare_op(
    op_name: &str,
    inputs: &[RecordedInput],
    device: &Device,
    site: CallSite,
    copies: Option<CopyBudget>,
) -> Result<super::rotating_op::RotatingOp, SetupError> {
    prepare_exact(op_name, None, &[], inputs, device, site, copies).map(|(op, _, _)| op)
}

/// [`prepare_op`] with the Execution Trace's exact schema and recorded value ranges, where
/// the signature has them; the last value counts the tensors drawn from a recorded range.
fn prepare_exact(
    op_name: &str,
    exact: Option<&str>,
    ranges: &[crate::signature::schema::InputRange],
    inputs: &[RecordedInput],
    device: &Device,
    site: CallSite,
    copies: Option<CopyBudget>,
) -> Result<
    (
        super::rotating_op::RotatingOp,
        super::overload::OverloadSource,
        usize,
    ),
    SetupError,
> {
    tier3_libtorch::prepare_ranged(op_name, exact, ranges, inputs, device, site, copies).map_err(
        |e| match e {
            Tier3Error::Unsupported(m) => SetupError::Unsupported(m),
            Tier3Error::Failed(m) => SetupError::failed(m),
        },
    )
}

/// When the launching op cannot run here (a CUDA-only kernel op replayed on the CPU, say),
/// the innermost enclosing op that can is replayed instead: it does the same work through
/// this device's own kernels.
fn enclosing_op_fallback(
    sig: &Signature,
    device: &Device,
    copies: Option<CopyBudget>,
) -> Option<(super::rotating_op::RotatingOp, Option<String>)> {
    let op = sig.op.as_ref()?;
    enclosing_ops(sig)
        .into_iter()
        .find_map(|(name, inputs, site)| {
            let prepared = prepare_op(name, &inputs, device, site, copies).ok()?;
            let note = format!("enclosing op: {} cannot run on {}", op.name, device.spec());
            Some((prepared, Some(note)))
        })
}

/// The ops enclosing `sig`'s launching op whose inputs were recorded, innermost first, each
/// with its inputs and call site: what [`enclosing_op_fallback`] tries in turn.
pub fn enclosing_ops(sig: &Signature) -> Vec<(&str, Vec<RecordedInput>, CallSite)> {
    let Some(op) = sig.op.as_ref() else {
        return Vec::new();
    };
    op.ancestry
        .iter()
        .zip(&op.ancestor_inputs)
        .enumerate()
        .rev()
        .filter_map(|(depth, (name, inputs))| {
            let inputs = inputs.as_ref().and_then(typed_inputs)?;
            Some((
                name.as_str(),
                inputs,
                CallSite::of_ancestry(&op.ancestry[..depth]),
            ))
        })
        .collect()
}

#[cfg(test)]
mod oom_tests {
    use super::*;
    use crate::device::cuda::CudaCallError;
    use cudarc::cublas::result::CublasError;
    use cudarc::cublas::sys::cublasStatus_t;
    use cudarc::driver::sys::CUresult;
    use cudarc::driver::DriverError;

    // The driver's and cuBLAS's errors are classified without being formatted: their Display
    // asks the driver library for the text, which does not exist on a machine without a GPU.
    #[test]
    fn out_of_memory_is_read_from_the_driver_and_cublas_codes() {
        let oom = CudaCallError {
            call: "cuMemAlloc",
            source: DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY),
        };
        assert!(is_out_of_memory(&oom));
        let boxed: Box<dyn std::error::Error + Send + Sync> = Box::new(oom);
        assert!(is_out_of_memory(boxed.as_ref()));
        let invalid = CudaCallError {
            call: "cuMemAlloc",
            source: DriverError(CUresult::CUDA_ERROR_INVALID_VALUE),
        };
        assert!(!is_out_of_memory(&invalid));
        assert!(is_out_of_memory(&CublasError(
            cublasStatus_t::CUBLAS_STATUS_ALLOC_FAILED
        )));
        assert!(!is_out_of_memory(&CublasError(
            cublasStatus_t::CUBLAS_STATUS_INVALID_VALUE
        )));
        // A message that merely mentions memory is not an allocation failure.
        let text = MeasureError::target("the kernel read out of memory bounds");
        assert!(matches!(SetupError::from(text), SetupError::Failed(_)));
        // libtorch's own out-of-memory exception, which reaches us as text only.
        let torch = MeasureError::target("CUDA out of memory. Tried to allocate 2.00 GiB");
        assert!(matches!(SetupError::from(torch), SetupError::Oom(_)));
    }
}
