//! What each case times, by implementation and placement: the offload simulation's copies,
//! torch's stages, the fused CUDA Sinkhorn on the GPU and the fused CPU kernels. Every stage
//! is checked (`checks`) before it is timed, and leaves a note for its row.
//!
//! Each function returns `Err` when the case ends before it is timed (its row then has no
//! note) and `Ok` with the timing's own result otherwise (its note is kept, whether the
//! timing succeeded or not).

use replay_core::measure::{MeasureError, Measurement, Target};
use replay_core::suite::{CaseError, CaseStatus};

use super::checks;
use super::prepare::{FusedBuffers, Prepared};
use super::settings::MhcSettings;
use super::stages::{Placement, Stage};
use super::torch_stages as torch;
use super::MhcError;
use crate::device::Device;
use crate::torch::work_target::TorchWork;

/// How a suite times one target: the core runner's closure.
pub(super) type TimeFn<'t> = dyn FnMut(&mut dyn Target) -> Result<Measurement, CaseError> + 't;

/// The timing's own result: a measurement, or the row's status.
pub(super) type Timed = Result<Measurement, CaseError>;

fn tch_error(e: MhcError) -> tch::TchError {
    tch::TchError::Torch(e.to_string())
}

fn case_error(e: MhcError) -> CaseError {
    e.into_case_error()
}

fn measure_error(e: MeasureError) -> CaseError {
    CaseError::new(CaseStatus::Error, e.to_string())
}

pub(super) fn not_applicable(placement: Placement, stage: Stage) -> CaseError {
    CaseError::new(
        CaseStatus::Skipped,
        placement
            .not_applicable(stage)
            .unwrap_or("not applicable here"),
    )
}

/// Stages 0 and 4 of the offload simulation: x_streams from the GPU into pinned host
/// memory, the result back.
pub(super) fn time_copy(
    stage: Stage,
    settings: &MhcSettings,
    p: &mut Prepared,
    time: &mut TimeFn<'_>,
    note: &mut String,
) -> Result<Timed, CaseError> {
    let placement = settings.placement;
    let Prepared {
        x,
        x_gpu,
        result_host,
        result_gpu,
        ..
    } = p;
    match stage {
        Stage::D2hCopy => {
            let (Some(src), Placement::Offload { .. }) = (x_gpu.as_ref(), placement) else {
                return Err(not_applicable(placement, stage));
            };
            let gpu = settings.gpu().map_err(case_error)?;
            // libtorch's blocking copy_ waits for the stream, so it cannot be queued behind
            // the blocking kernel (it would wait for its timeout).
            let mut work = TorchWork::new(&gpu, || x.f_copy_(src))
                .map_err(measure_error)?
                .with_blocking_kernel(false);
            *note = format!("into pinned host memory; {}", work.timer());
            Ok(time(&mut work))
        }
        Stage::H2dCopy => {
            let (Some(src), Some(dst), Placement::Offload { .. }) =
                (result_host.as_ref(), result_gpu.as_mut(), placement)
            else {
                return Err(not_applicable(placement, stage));
            };
            let gpu = settings.gpu().map_err(case_error)?;
            let mut work = TorchWork::new(&gpu, || dst.f_copy_(src))
                .map_err(measure_error)?
                .with_blocking_kernel(false);
            *note = format!("from pinned host memory; {}", work.timer());
            Ok(time(&mut work))
        }
        _ => unreachable!("only the copies are timed here"),
    }
}

/// torch's stages 1–3 and their total (in the offload simulation with both copies).
pub(super) fn time_torch(
    stage: Stage,
    settings: &MhcSettings,
    p: &mut Prepared,
    time: &mut TimeFn<'_>,
    note: &mut String,
) -> Result<Timed, CaseError> {
    let shape = settings.shape;
    let placement = settings.placement;
    let device = settings.compute_device().map_err(case_error)?;
    let device = &device;
    let Prepared {
        weights,
        x,
        x_gpu,
        logits,
        mix,
        result_gpu,
        ..
    } = p;
    Ok(match stage {
        Stage::Linear => {
            let mut work = TorchWork::new(device, || {
                torch::linear(weights, x, &shape)
                    .map(drop)
                    .map_err(tch_error)
            })
            .map_err(measure_error)?;
            time(&mut work)
        }
        Stage::Sinkhorn => {
            *note = checks::sinkhorn(&shape, logits, mix).map_err(case_error)?;
            let mut work = TorchWork::new(device, || {
                torch::sinkhorn(logits, &shape).map(drop).map_err(tch_error)
            })
            .map_err(measure_error)?;
            time(&mut work)
        }
        Stage::Apply => {
            let mut work =
                TorchWork::new(device, || torch::apply(mix, x).map(drop).map_err(tch_error))
                    .map_err(measure_error)?;
            time(&mut work)
        }
        Stage::Total => {
            *note = placement.total_note().to_string();
            match (placement, x_gpu.as_ref(), result_gpu.as_mut()) {
                (Placement::Offload { .. }, Some(src), Some(dst)) => {
                    let mut work = TorchWork::new(Device::host(), || {
                        x.f_copy_(src)?;
                        let l = torch::linear(weights, x, &shape).map_err(tch_error)?;
                        let m = torch::sinkhorn(&l, &shape).map_err(tch_error)?;
                        let o = torch::apply(&m, x).map_err(tch_error)?;
                        dst.f_copy_(&o)
                    })
                    .map_err(measure_error)?;
                    time(&mut work)
                }
                _ => {
                    let mut work = TorchWork::new(device, || {
                        let l = torch::linear(weights, x, &shape).map_err(tch_error)?;
                        let m = torch::sinkhorn(&l, &shape).map_err(tch_error)?;
                        torch::apply(&m, x).map(drop).map_err(tch_error)
                    })
                    .map_err(measure_error)?;
                    time(&mut work)
                }
            }
        }
        Stage::D2hCopy | Stage::H2dCopy => unreachable!("copies are timed by time_copy"),
    })
}

/// The fused implementation on the GPU: the CUDA Sinkhorn alone, and in the total between
/// torch's stages 1 and 3.
pub(super) fn time_fused_cuda(
    stage: Stage,
    settings: &MhcSettings,
    p: &mut Prepared,
    time: &mut TimeFn<'_>,
    note: &mut String,
) -> Result<Timed, CaseError> {
    let shape = settings.shape;
    let gpu = settings.gpu().map_err(case_error)?;
    let Prepared {
        weights,
        x,
        logits,
        mix,
        cuda_sinkhorn,
        ..
    } = p;
    let Some((kernel, out)) = cuda_sinkhorn.as_mut() else {
        return Err(CaseError::new(
            CaseStatus::Error,
            "the CUDA Sinkhorn was not loaded",
        ));
    };
    Ok(match stage {
        Stage::Sinkhorn => {
            kernel.run(logits, out, &shape).map_err(case_error)?;
            *note = checks::sinkhorn(&shape, logits, out).map_err(case_error)?;
            let vs = checks::against_torch(&shape, "Sinkhorn", out, mix).map_err(case_error)?;
            *note = format!("{note}; {vs}; cuda/mhc_sinkhorn.cu");
            let mut work = TorchWork::new(&gpu, || {
                kernel.run(logits, out, &shape).map_err(tch_error)
            })
            .map_err(measure_error)?;
            time(&mut work)
        }
        Stage::Total => {
            *note = "torch's stages 1 and 3 with the fused CUDA Sinkhorn, timed as one (CUDA events)".into();
            let mut work = TorchWork::new(&gpu, || {
                let l = torch::linear(weights, x, &shape).map_err(tch_error)?;
                kernel.run(&l, out, &shape).map_err(tch_error)?;
                torch::apply(out, x).map(drop).map_err(tch_error)
            })
            .map_err(measure_error)?;
            time(&mut work)
        }
        other => {
            return Err(CaseError::new(
                CaseStatus::NotImplemented,
                format!(
                    "no CUDA fused kernel for stage {}: --impl fused on the GPU fuses the Sinkhorn only; the torch row times this stage",
                    other.number()
                ),
            ))
        }
    })
}

/// The fused CPU kernels: stages 1–3 and their total (in the offload simulation with both
/// copies, the result written straight into the pinned buffer stage 4 copies from).
pub(super) fn time_fused_cpu(
    stage: Stage,
    settings: &MhcSettings,
    p: &mut Prepared,
    time: &mut TimeFn<'_>,
    note: &mut String,
) -> Result<Timed, CaseError> {
    let shape = settings.shape;
    let placement = settings.placement;
    let Prepared {
        weights,
        x,
        x_gpu,
        logits,
        mix,
        fused,
        result_host,
        result_gpu,
        ..
    } = p;
    let Some(f) = fused.as_mut() else {
        return Err(CaseError::new(
            CaseStatus::Error,
            "the fused kernels were not prepared",
        ));
    };
    let FusedBuffers {
        stages,
        logits: f_logits,
        mix: f_mix,
        out: f_out,
    } = f;
    Ok(match stage {
        Stage::Linear => {
            stages.linear(x, f_logits).map_err(case_error)?;
            *note = checks::linear(&shape, weights, x, f_logits).map_err(case_error)?;
            let mut work = TorchWork::new(Device::host(), || {
                stages.linear(x, f_logits).map_err(tch_error)
            })
            .map_err(measure_error)?;
            time(&mut work)
        }
        Stage::Sinkhorn => {
            stages.sinkhorn(logits, f_mix).map_err(case_error)?;
            let reference = checks::sinkhorn(&shape, logits, f_mix).map_err(case_error)?;
            let vs = checks::against_torch(&shape, "Sinkhorn", f_mix, mix).map_err(case_error)?;
            *note = format!("{reference}; {vs}");
            let mut work = TorchWork::new(Device::host(), || {
                stages.sinkhorn(logits, f_mix).map_err(tch_error)
            })
            .map_err(measure_error)?;
            time(&mut work)
        }
        Stage::Apply => {
            stages.apply(mix, x, f_out).map_err(case_error)?;
            *note = checks::apply(&shape, mix, x, f_out).map_err(case_error)?;
            let mut work = TorchWork::new(Device::host(), || {
                stages.apply(mix, x, f_out).map_err(tch_error)
            })
            .map_err(measure_error)?;
            time(&mut work)
        }
        Stage::Total => {
            *note = placement.total_note().to_string();
            // In the offload simulation the result is written straight into the pinned
            // buffer stage 4 copies from.
            let out = result_host.as_mut().unwrap_or(f_out);
            let mut work = TorchWork::new(Device::host(), || {
                if let Some(src) = x_gpu.as_ref() {
                    x.f_copy_(src)?;
                }
                stages.linear(x, f_logits).map_err(tch_error)?;
                stages.sinkhorn(f_logits, f_mix).map_err(tch_error)?;
                stages.apply(f_mix, x, out).map_err(tch_error)?;
                if let Some(dst) = result_gpu.as_mut() {
                    dst.f_copy_(out)?;
                }
                Ok(())
            })
            .map_err(measure_error)?;
            time(&mut work)
        }
        Stage::D2hCopy | Stage::H2dCopy => unreachable!("copies are timed by time_copy"),
    })
}
