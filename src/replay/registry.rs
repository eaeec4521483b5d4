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
use crate::signature::schema::{GemmKernelRole, Signature, SignatureFile, Tier, Unit};

use super::recorded::{from_profiler_args, RecordedInput};
use super::tier1_memory::{CpuMemoryTarget, MemoryWork};
use super::tier2_gemm::TorchGemmTarget;
use super::tier3_libtorch::{self, Tier3Error};

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
    fn failed(message: String) -> SetupError {
        let lower = message.to_ascii_lowercase();
        if lower.contains("out of memory") || lower.contains("cuda_error_out_of_memory") {
            SetupError::Oom(message)
        } else {
            SetupError::Failed(message)
        }
    }
}

impl From<MeasureError> for SetupError {
    fn from(e: MeasureError) -> Self {
        SetupError::failed(e.to_string())
    }
}

/// How a unit is replayed on a device, for reports.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Method(pub String);

fn group_key(sig: &Signature) -> Option<String> {
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
        let groupable = sig.unit == Unit::Kernel && sig.tier != Tier::Copy;
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

/// Sets up the replayer for `unit` on `device`.
pub fn target_for(
    file: &SignatureFile,
    unit: &ReplayUnit,
    device: &Device,
) -> Result<(Box<dyn Target>, Method), SetupError> {
    let sig = &file.signatures[unit.lead];
    if !sig.replayable && unit.tier != Tier::Op {
        return Err(SetupError::Unsupported(
            sig.reason
                .clone()
                .unwrap_or_else(|| "marked not replayable".into()),
        ));
    }
    match unit.tier {
        Tier::Copy => {
            let work = match (sig.memcpy, sig.memset) {
                (Some(p), _) => MemoryWork::Copy(p),
                (None, Some(p)) => MemoryWork::Set(p),
                _ => {
                    return Err(SetupError::Unsupported(
                        "a tier-1 signature without memcpy/memset parameters".into(),
                    ))
                }
            };
            match device {
                Device::Cpu(_) => {
                    let method = match work {
                        MemoryWork::Copy(_) => "host memcpy",
                        MemoryWork::Set(_) => "host memset",
                    };
                    Ok((Box::new(CpuMemoryTarget::new(work)), Method(method.into())))
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
                    let target =
                        TorchGemmTarget::new(gemm, tch::Device::Cpu).map_err(SetupError::failed)?;
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
        Tier::Op => {
            let (op_name, inputs) = match (&sig.op, sig.unit) {
                (Some(op), _) => (op.name.clone(), recorded_inputs(sig)),
                (None, Unit::HostOp) => (sig.name.clone(), recorded_inputs(sig)),
                (None, Unit::Kernel) => {
                    return Err(SetupError::Unsupported(
                        "no launching op was recorded for this kernel".into(),
                    ))
                }
            };
            let first = match inputs {
                Some(inputs) => prepare_op(&op_name, &inputs, device),
                None => Err(SetupError::Unsupported(format!(
                    "{op_name}: the trace recorded no input shapes"
                ))),
            };
            let (prepared, note) = match first {
                Ok(prepared) => (prepared, None),
                Err(first_error) => enclosing_op_fallback(sig, device).ok_or(first_error)?,
            };
            let mut method = format!("libtorch dispatcher {}", prepared.name());
            if let Some(note) = note {
                method.push_str(&format!(" ({note})"));
            }
            Ok((
                Box::new(tier3_libtorch::LibtorchOpTarget::new(prepared, device)?),
                Method(method),
            ))
        }
    }
}

fn prepare_op(
    op_name: &str,
    inputs: &[RecordedInput],
    device: &Device,
) -> Result<super::rotating_op::RotatingOp, SetupError> {
    tier3_libtorch::prepare(op_name, inputs, device.torch_device()).map_err(|e| match e {
        Tier3Error::Unsupported(m) => SetupError::Unsupported(m),
        Tier3Error::Failed(m) => SetupError::failed(m),
    })
}

/// When the launching op cannot run here (a CUDA-only kernel op replayed on the CPU, say),
/// the innermost enclosing op that can is replayed instead: it does the same work through
/// this device's own kernels.
fn enclosing_op_fallback(
    sig: &Signature,
    device: &Device,
) -> Option<(super::rotating_op::RotatingOp, Option<String>)> {
    let op = sig.op.as_ref()?;
    for (name, inputs) in op.ancestry.iter().zip(&op.ancestor_inputs).rev() {
        let Some(inputs) = inputs.as_ref().and_then(typed_inputs) else {
            continue;
        };
        if let Ok(prepared) = prepare_op(name, &inputs, device) {
            let note = format!("enclosing op: {} cannot run on {}", op.name, device.spec());
            return Some((prepared, Some(note)));
        }
    }
    None
}
