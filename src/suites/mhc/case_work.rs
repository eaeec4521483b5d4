//! What each case times, by implementation and placement: the offload simulation's copies,
//! torch's stages, the fused CUDA Sinkhorn on the GPU and the fused CPU kernels. Every stage
//! is checked (`checks`) before its work is made, and leaves a note for its row.
//!
//! Each function makes the stage's work, ready to be timed, borrowing the shared inputs, so
//! that an implementation's stages can all be held at once and timed in interleaved rounds
//! (`bench.rs`); the tensors a stage writes into are its own handles on the shared buffers
//! (`shallow_clone`: the same storage). `Err` when the case ends before it is timed (its row
//! then has no note).

use replay_core::measure::{MeasureError, Target};
use replay_core::suite::{CaseError, CaseStatus};
use tch::Tensor;

use super::checks;
use super::prepare::{FusedBuffers, Prepared};
use super::settings::MhcSettings;
use super::stages::{Placement, Stage};
use super::torch_stages as torch;
use super::MhcError;
use crate::device::Device;
use crate::torch::work_target::TorchWork;

/// One stage's work, borrowing the configuration's inputs.
pub(super) type Work<'p> = Box<dyn Target + 'p>;

fn tch_error(e: MhcError) -> tch::TchError {
    tch::TchError::Torch(e.to_string())
}

fn case_error(e: MhcError) -> CaseError {
    e.into_case_error()
}

pub(super) fn measure_error(e: MeasureError) -> CaseError {
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

/// `work` on `device`, boxed.
fn work<'p, F>(device: &Device, work: F) -> Result<Work<'p>, CaseError>
where
    F: FnMut() -> Result<(), tch::TchError> + 'p,
{
    Ok(Box::new(
        TorchWork::new(device, work).map_err(measure_error)?,
    ))
}

/// Stages 0 and 4 of the offload simulation: x_streams from the GPU into pinned host
/// memory, the result back.
pub(super) fn copy_work<'p>(
    stage: Stage,
    settings: &MhcSettings,
    p: &'p Prepared,
    note: &mut String,
) -> Result<Work<'p>, CaseError> {
    let placement = settings.placement;
    let copy = |src: &'p Tensor, dst: &Tensor, words: &str, note: &mut String| {
        let gpu = settings.gpu().map_err(case_error)?;
        let mut dst = dst.shallow_clone();
        // libtorch's blocking copy_ waits for the stream, so it cannot be queued behind
        // the blocking kernel (it would wait for its timeout).
        let work = TorchWork::new(&gpu, move || dst.f_copy_(src))
            .map_err(measure_error)?
            .with_blocking_kernel(false);
        *note = format!("{words}; {}", work.timer());
        Ok::<Work<'p>, CaseError>(Box::new(work))
    };
    match (stage, placement) {
        (Stage::D2hCopy, Placement::Offload) => match p.x_gpu.as_ref() {
            Some(src) => copy(src, &p.x, "into pinned host memory", note),
            None => Err(not_applicable(placement, stage)),
        },
        (Stage::H2dCopy, Placement::Offload) => {
            match (p.result_host.as_ref(), p.result_gpu.as_ref()) {
                (Some(src), Some(dst)) => copy(src, dst, "from pinned host memory", note),
                _ => Err(not_applicable(placement, stage)),
            }
        }
        (Stage::D2hCopy | Stage::H2dCopy, _) => Err(not_applicable(placement, stage)),
        _ => unreachable!("only the copies are made here"),
    }
}

/// torch's stages 1–3 and their total (in the offload simulation with both copies).
pub(super) fn torch_work<'p>(
    stage: Stage,
    settings: &MhcSettings,
    p: &'p Prepared,
    note: &mut String,
) -> Result<Work<'p>, CaseError> {
    let shape = settings.shape;
    let placement = settings.placement;
    let device = settings.compute_device().map_err(case_error)?;
    let Prepared {
        weights,
        x,
        x_gpu,
        logits,
        mix,
        result_gpu,
        ..
    } = p;
    match stage {
        Stage::Linear => work(&device, move || {
            torch::linear(weights, x, &shape)
                .map(drop)
                .map_err(tch_error)
        }),
        Stage::Sinkhorn => {
            *note = checks::sinkhorn(&shape, logits, mix).map_err(case_error)?;
            work(&device, move || {
                torch::sinkhorn(logits, &shape).map(drop).map_err(tch_error)
            })
        }
        Stage::Apply => work(&device, move || {
            torch::apply(mix, x).map(drop).map_err(tch_error)
        }),
        Stage::Total => {
            *note = placement.total_note().to_string();
            match (placement, x_gpu.as_ref(), result_gpu.as_ref()) {
                (Placement::Offload, Some(src), Some(dst)) => {
                    let (mut x, mut dst) = (x.shallow_clone(), dst.shallow_clone());
                    work(Device::host(), move || {
                        x.f_copy_(src)?;
                        let l = torch::linear(weights, &x, &shape).map_err(tch_error)?;
                        let m = torch::sinkhorn(&l, &shape).map_err(tch_error)?;
                        let o = torch::apply(&m, &x).map_err(tch_error)?;
                        dst.f_copy_(&o)
                    })
                }
                _ => work(&device, move || {
                    let l = torch::linear(weights, x, &shape).map_err(tch_error)?;
                    let m = torch::sinkhorn(&l, &shape).map_err(tch_error)?;
                    torch::apply(&m, x).map(drop).map_err(tch_error)
                }),
            }
        }
        Stage::D2hCopy | Stage::H2dCopy => unreachable!("copies are made by copy_work"),
    }
}

/// The fused implementation on the GPU: the CUDA Sinkhorn alone, and in the total between
/// torch's stages 1 and 3.
pub(super) fn fused_cuda_work<'p>(
    stage: Stage,
    settings: &MhcSettings,
    p: &'p Prepared,
    note: &mut String,
) -> Result<Work<'p>, CaseError> {
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
    let Some((kernel, out)) = cuda_sinkhorn.as_ref() else {
        return Err(CaseError::new(
            CaseStatus::Error,
            "the CUDA Sinkhorn was not loaded",
        ));
    };
    let mut out = out.shallow_clone();
    match stage {
        Stage::Sinkhorn => {
            kernel.run(logits, &mut out, &shape).map_err(case_error)?;
            *note = checks::sinkhorn(&shape, logits, &out).map_err(case_error)?;
            let vs = checks::against_torch(&shape, "Sinkhorn", &out, mix).map_err(case_error)?;
            *note = format!("{note}; {vs}; cuda/mhc_sinkhorn.cu");
            work(&gpu, move || {
                kernel.run(logits, &mut out, &shape).map_err(tch_error)
            })
        }
        Stage::Total => {
            *note = "torch's stages 1 and 3 with the fused CUDA Sinkhorn, timed as one (CUDA events)".into();
            work(&gpu, move || {
                let l = torch::linear(weights, x, &shape).map_err(tch_error)?;
                kernel.run(&l, &mut out, &shape).map_err(tch_error)?;
                torch::apply(&out, x).map(drop).map_err(tch_error)
            })
        }
        other => Err(CaseError::new(
            CaseStatus::NotImplemented,
            format!(
                "no CUDA fused kernel for stage {}: --impl fused on the GPU fuses the Sinkhorn only; the torch row times this stage",
                other.number()
            ),
        )),
    }
}

/// The fused CPU kernels: stages 1–3 and their total (in the offload simulation with both
/// copies, the result written straight into the pinned buffer stage 4 copies from).
pub(super) fn fused_cpu_work<'p>(
    stage: Stage,
    settings: &MhcSettings,
    p: &'p Prepared,
    note: &mut String,
) -> Result<Work<'p>, CaseError> {
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
    let Some(f) = fused.as_ref() else {
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
    let (mut f_logits, mut f_mix) = (f_logits.shallow_clone(), f_mix.shallow_clone());
    match stage {
        Stage::Linear => {
            stages.linear(x, &mut f_logits).map_err(case_error)?;
            *note = checks::linear(&shape, weights, x, &f_logits).map_err(case_error)?;
            work(Device::host(), move || {
                stages.linear(x, &mut f_logits).map_err(tch_error)
            })
        }
        Stage::Sinkhorn => {
            stages.sinkhorn(logits, &mut f_mix).map_err(case_error)?;
            let reference = checks::sinkhorn(&shape, logits, &f_mix).map_err(case_error)?;
            let vs = checks::against_torch(&shape, "Sinkhorn", &f_mix, mix).map_err(case_error)?;
            *note = format!("{reference}; {vs}");
            work(Device::host(), move || {
                stages.sinkhorn(logits, &mut f_mix).map_err(tch_error)
            })
        }
        Stage::Apply => {
            let mut out = f_out.shallow_clone();
            stages.apply(mix, x, &mut out).map_err(case_error)?;
            *note = checks::apply(&shape, mix, x, &out).map_err(case_error)?;
            work(Device::host(), move || {
                stages.apply(mix, x, &mut out).map_err(tch_error)
            })
        }
        Stage::Total => {
            *note = placement.total_note().to_string();
            // In the offload simulation the result is written straight into the pinned
            // buffer stage 4 copies from.
            let mut out = result_host.as_ref().unwrap_or(f_out).shallow_clone();
            let mut x = x.shallow_clone();
            let mut result_gpu = result_gpu.as_ref().map(Tensor::shallow_clone);
            work(Device::host(), move || {
                if let Some(src) = x_gpu.as_ref() {
                    x.f_copy_(src)?;
                }
                stages.linear(&x, &mut f_logits).map_err(tch_error)?;
                stages.sinkhorn(&f_logits, &mut f_mix).map_err(tch_error)?;
                stages.apply(&f_mix, &x, &mut out).map_err(tch_error)?;
                if let Some(dst) = result_gpu.as_mut() {
                    dst.f_copy_(&out)?;
                }
                Ok(())
            })
        }
        Stage::D2hCopy | Stage::H2dCopy => unreachable!("copies are made by copy_work"),
    }
}
