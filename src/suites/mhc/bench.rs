//! The mHC benchmark as a core [`Suite`]: one case per (implementation, stage), in the
//! seed's order, each checked against torch's stage on the same input before it is timed.
//!
//! The inputs are made once, on first use, and shared by every case: x_streams, the module's
//! parameters, and torch's outputs of stages 1 and 2, which are the inputs of stages 2 and 3
//! for both implementations (so the two are timed on, and checked against, the same values).
//! A configuration that does not fit, or fails to allocate, makes every case a status row.

use std::cell::RefCell;

use replay_core::export::rows::Row;
use replay_core::measure::{Measurement, Target};
use replay_core::suite::{CaseError, CaseOutcome, CaseStatus, Suite};
use tch::{Device, Kind, Tensor};

use super::cuda_sinkhorn::CudaSinkhorn;
use super::fused_sinkhorn::{marginal_error, sinkhorn_reference};
use super::fused_stages::{relative_difference, FusedStages};
use super::rows::{self, MhcCase, COLUMNS};
use super::shape::{check_fits, host_memory_available, MhcShape, SINKHORN_ITERS};
use super::stages::{Impl, Placement, Stage};
use super::torch_stages::{self as torch, make_x_streams, MhcWeights};
use super::MhcError;
use crate::torch::work_target::TorchWork;

/// Matrices of stage 2 checked against the float64 reference (all of them at small sizes).
const REFERENCE_MATRICES: i64 = 4096;
/// Tokens of stage 3 checked against torch's einsum (at each end of the sequence).
const APPLY_CHECK_TOKENS: i64 = 64;

/// What a run is: sizes, placement, implementations, worker threads.
#[derive(Debug, Clone)]
pub struct MhcSettings {
    pub shape: MhcShape,
    pub placement: Placement,
    pub impls: Vec<Impl>,
    /// Worker threads of the fused CPU kernels.
    pub threads: usize,
}

/// Everything the cases share, made on first use.
struct Prepared {
    weights: MhcWeights,
    /// x_streams where stages 1–3 read it: host memory (pinned in the offload simulation),
    /// or the GPU with `--device cuda`.
    x: Tensor,
    /// The offload simulation's inputs on the GPU (stage 0's source).
    x_gpu: Option<Tensor>,
    /// torch's stage-1 and stage-2 outputs: the inputs of stages 2 and 3.
    logits: Tensor,
    mix: Tensor,
    fused: Option<FusedBuffers>,
    cuda_sinkhorn: Option<(CudaSinkhorn, Tensor)>,
    /// The offload simulation's pinned host result (stage 4's source) and its GPU copy.
    result_host: Option<Tensor>,
    result_gpu: Option<Tensor>,
}

/// The fused CPU kernels with their output tensors.
struct FusedBuffers {
    stages: FusedStages,
    logits: Tensor,
    mix: Tensor,
    out: Tensor,
}

pub struct MhcSuite {
    settings: MhcSettings,
    prepared: RefCell<Option<Result<Prepared, CaseError>>>,
    /// The last case's check, for its row's note.
    note: RefCell<String>,
    /// Why torch's stage 1 does not run here (it would not fit in memory).
    torch_linear_refusal: RefCell<Option<String>>,
}

fn tch_error(e: MhcError) -> tch::TchError {
    tch::TchError::Torch(e.to_string())
}

fn case_error(e: MhcError) -> CaseError {
    e.into_case_error()
}

impl MhcSuite {
    pub fn new(settings: MhcSettings) -> MhcSuite {
        MhcSuite {
            settings,
            prepared: RefCell::new(None),
            note: RefCell::new(String::new()),
            torch_linear_refusal: RefCell::new(None),
        }
    }

    pub fn settings(&self) -> &MhcSettings {
        &self.settings
    }

    /// The note of the case that just ended (what its check found).
    pub fn last_note(&self) -> String {
        self.note.borrow().clone()
    }

    fn compute_device(&self) -> Device {
        match self.settings.placement {
            Placement::Gpu { gpu } => Device::Cuda(gpu),
            _ => Device::Cpu,
        }
    }

    fn prepare(&self) -> Result<Prepared, MhcError> {
        let s = &self.settings;
        let shape = s.shape;
        let offload = matches!(s.placement, Placement::Offload { .. });
        let on_host = !matches!(s.placement, Placement::Gpu { .. });
        let mut torch_linear_fits = true;
        if on_host {
            let available = host_memory_available();
            check_fits(shape.host_bytes_needed(offload), available, &shape)?;
            let with_torch = shape.host_bytes_needed(offload) + shape.torch_linear_extra_bytes();
            if let Err(e) = check_fits(with_torch, available, &shape) {
                torch_linear_fits = false;
                *self.torch_linear_refusal.borrow_mut() = Some(format!(
                    "torch's RMSNorm upcasts x_streams to float32 (about {:.1} GiB more): {e}; the fused rows run",
                    super::shape::gib(shape.torch_linear_extra_bytes())
                ));
            }
        }
        let dims = [
            shape.batch as i64,
            shape.seq as i64,
            shape.streams as i64,
            shape.dim as i64,
        ];
        let kind = shape.dtype.kind();
        let device = self.compute_device();
        let (x, x_gpu, result_host, result_gpu) = match s.placement {
            Placement::Offload { gpu } => {
                let on_gpu = make_x_streams(&shape, Device::Cuda(gpu))?;
                let pinned = |_: ()| -> Result<Tensor, MhcError> {
                    Ok(Tensor::f_empty(dims, (kind, Device::Cpu))?
                        .f_pin_memory(Device::Cuda(gpu))?)
                };
                let mut x = pinned(())?;
                x.f_copy_(&on_gpu)?;
                let result_gpu = Tensor::f_empty(dims, (kind, Device::Cuda(gpu)))?;
                (x, Some(on_gpu), Some(pinned(())?), Some(result_gpu))
            }
            _ => (make_x_streams(&shape, device)?, None, None, None),
        };
        let weights = MhcWeights::new(&shape, device)?;
        let (b, t, n) = (dims[0], dims[1], dims[2]);
        // Stage 2's input is torch's stage-1 output; where torch's RMSNorm would not fit in
        // memory, the fused stage 1's (checked against torch on slices of the sequence).
        let host_stages = if on_host {
            Some(FusedStages::new(shape, &weights, s.threads)?)
        } else {
            None
        };
        let logits = match (&host_stages, torch_linear_fits) {
            (Some(stages), false) => {
                let mut logits = stages.empty(&[b, t, n * n])?;
                stages.linear(&x, &mut logits)?;
                logits
            }
            _ => torch::linear(&weights, &x, &shape)?,
        };
        let mix = torch::sinkhorn(&logits, &shape)?;
        let fused = match (s.impls.contains(&Impl::Fused), host_stages) {
            (true, Some(stages)) => Some(FusedBuffers {
                logits: stages.empty(&[b, t, n * n])?,
                mix: stages.empty(&[b, t, n, n])?,
                out: stages.empty(&dims)?,
                stages,
            }),
            _ => None,
        };
        let cuda_sinkhorn = match (s.impls.contains(&Impl::Fused), s.placement) {
            (true, Placement::Gpu { gpu }) => Some((
                CudaSinkhorn::new(gpu, shape.dtype)?,
                Tensor::f_empty_like(&mix)?,
            )),
            _ => None,
        };
        Ok(Prepared {
            weights,
            x,
            x_gpu,
            logits,
            mix,
            fused,
            cuda_sinkhorn,
            result_host,
            result_gpu,
        })
    }

    /// Stage 2 of either implementation against the float64 reference on the first
    /// REFERENCE_MATRICES matrices, and its rows and columns summing to 1.
    fn check_sinkhorn(&self, logits: &Tensor, mix: &Tensor) -> Result<String, MhcError> {
        let shape = &self.settings.shape;
        let n = shape.streams;
        let nn = (n * n) as i64;
        let count = (shape.tokens() as i64).min(REFERENCE_MATRICES);
        let flat = |t: &Tensor| -> Result<Vec<f64>, MhcError> {
            let t = t
                .f_reshape([-1])?
                .f_narrow(0, 0, count * nn)?
                .f_to_device_(Device::Cpu, Kind::Double, false, false)?;
            Ok(Vec::<f64>::try_from(&t)?)
        };
        let want = sinkhorn_reference(&flat(logits)?, n, SINKHORN_ITERS);
        let got = flat(mix)?;
        let worst = got
            .iter()
            .zip(&want)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        let tolerance = shape.dtype.tolerance();
        if worst > tolerance {
            return Err(MhcError::Measure(format!(
                "wrong result: Sinkhorn differs from the float64 reference by {worst:.3e} (tolerance {tolerance:.0e})"
            )));
        }
        // Each of n entries rounded to the dtype moves a sum by up to n half-ulps.
        let marginal_limit = 1e-3f64.max(n as f64 * half_ulp_at_one(shape));
        let marginal = marginal_error(&got, n);
        if marginal > marginal_limit {
            return Err(MhcError::Measure(format!(
                "wrong result: a row or column of H_res sums to 1 ± {marginal:.3e} (limit {marginal_limit:.1e})"
            )));
        }
        Ok(format!(
            "checked {count} matrices: max diff vs float64 reference {worst:.1e}; rows/columns sum to 1 ± {marginal:.1e}"
        ))
    }

    /// A fused output against torch's on the same input.
    fn check_against_torch(
        &self,
        what: &str,
        fused: &Tensor,
        torch: &Tensor,
    ) -> Result<String, MhcError> {
        let diff = relative_difference(fused, torch)?;
        let tolerance = self.settings.shape.dtype.tolerance();
        if diff > tolerance {
            return Err(MhcError::Measure(format!(
                "wrong result: fused {what} differs from torch's by {diff:.3e} of its largest value (tolerance {tolerance:.0e})"
            )));
        }
        Ok(format!(
            "checked vs torch: max diff {diff:.1e} of the largest value"
        ))
    }

    fn time_case(
        &self,
        case: &MhcCase,
        p: &mut Prepared,
        time: &mut dyn FnMut(&mut dyn Target) -> Result<Measurement, CaseError>,
    ) -> Result<Measurement, CaseError> {
        let shape = self.settings.shape;
        let device = self.compute_device();
        let placement = self.settings.placement;
        let gpu_only = |stage: Stage| {
            CaseError::new(
                CaseStatus::NotImplemented,
                format!(
                    "no CUDA fused kernel for stage {}: --impl fused on the GPU fuses the Sinkhorn only; the torch row times this stage",
                    stage.number()
                ),
            )
        };
        let measure_error = |e: replay_core::measure::MeasureError| {
            CaseError::new(CaseStatus::Error, e.to_string())
        };
        let Prepared {
            weights,
            x,
            x_gpu,
            logits,
            mix,
            fused,
            cuda_sinkhorn,
            result_host,
            result_gpu,
        } = p;
        let mut note = String::new();
        if case.imp == Impl::Torch && matches!(case.stage, Stage::Linear | Stage::Total) {
            if let Some(why) = self.torch_linear_refusal.borrow().clone() {
                return Err(CaseError::new(CaseStatus::Oom, why));
            }
        }
        let result = match (case.imp, case.stage) {
            (_, Stage::D2hCopy) => {
                let (Some(src), Placement::Offload { gpu }) = (x_gpu.as_ref(), placement) else {
                    return Err(not_applicable(placement, case.stage));
                };
                let mut work =
                    TorchWork::new(Device::Cuda(gpu), || x.f_copy_(src)).map_err(measure_error)?;
                note = format!("into pinned host memory; {}", work.timer());
                time(&mut work)
            }
            (_, Stage::H2dCopy) => {
                let (Some(src), Some(dst), Placement::Offload { gpu }) =
                    (result_host.as_ref(), result_gpu.as_mut(), placement)
                else {
                    return Err(not_applicable(placement, case.stage));
                };
                let mut work = TorchWork::new(Device::Cuda(gpu), || dst.f_copy_(src))
                    .map_err(measure_error)?;
                note = format!("from pinned host memory; {}", work.timer());
                time(&mut work)
            }
            (Impl::Torch, Stage::Linear) => {
                let mut work = TorchWork::new(device, || {
                    torch::linear(weights, x, &shape)
                        .map(drop)
                        .map_err(tch_error)
                })
                .map_err(measure_error)?;
                time(&mut work)
            }
            (Impl::Torch, Stage::Sinkhorn) => {
                note = self.check_sinkhorn(logits, mix).map_err(case_error)?;
                let mut work = TorchWork::new(device, || {
                    torch::sinkhorn(logits, &shape).map(drop).map_err(tch_error)
                })
                .map_err(measure_error)?;
                time(&mut work)
            }
            (Impl::Torch, Stage::Apply) => {
                let mut work =
                    TorchWork::new(device, || torch::apply(mix, x).map(drop).map_err(tch_error))
                        .map_err(measure_error)?;
                time(&mut work)
            }
            (Impl::Torch, Stage::Total) => {
                note = placement.total_note().to_string();
                match (placement, x_gpu.as_ref(), result_gpu.as_mut()) {
                    (Placement::Offload { .. }, Some(src), Some(dst)) => {
                        let mut work = TorchWork::new(Device::Cpu, || {
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
            (Impl::Fused, stage) => {
                if let Placement::Gpu { gpu } = placement {
                    let Some((kernel, out)) = cuda_sinkhorn.as_mut() else {
                        return Err(CaseError::new(
                            CaseStatus::Error,
                            "the CUDA Sinkhorn was not loaded",
                        ));
                    };
                    match stage {
                        Stage::Sinkhorn => {
                            kernel.run(logits, out, &shape).map_err(case_error)?;
                            note = self.check_sinkhorn(logits, out).map_err(case_error)?;
                            let vs = self
                                .check_against_torch("Sinkhorn", out, mix)
                                .map_err(case_error)?;
                            note = format!("{note}; {vs}; cuda/mhc_sinkhorn.cu");
                            let mut work = TorchWork::new(Device::Cuda(gpu), || {
                                kernel.run(logits, out, &shape).map_err(tch_error)
                            })
                            .map_err(measure_error)?;
                            time(&mut work)
                        }
                        Stage::Total => {
                            note = "torch's stages 1 and 3 with the fused CUDA Sinkhorn, timed as one (CUDA events)".into();
                            let mut work = TorchWork::new(Device::Cuda(gpu), || {
                                let l = torch::linear(weights, x, &shape).map_err(tch_error)?;
                                kernel.run(&l, out, &shape).map_err(tch_error)?;
                                torch::apply(out, x).map(drop).map_err(tch_error)
                            })
                            .map_err(measure_error)?;
                            time(&mut work)
                        }
                        other => return Err(gpu_only(other)),
                    }
                } else {
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
                    match stage {
                        Stage::Linear => {
                            stages.linear(x, f_logits).map_err(case_error)?;
                            note = self
                                .check_linear(weights, x, f_logits)
                                .map_err(case_error)?;
                            let mut work = TorchWork::new(Device::Cpu, || {
                                stages.linear(x, f_logits).map_err(tch_error)
                            })
                            .map_err(measure_error)?;
                            time(&mut work)
                        }
                        Stage::Sinkhorn => {
                            stages.sinkhorn(logits, f_mix).map_err(case_error)?;
                            let reference =
                                self.check_sinkhorn(logits, f_mix).map_err(case_error)?;
                            let vs = self
                                .check_against_torch("Sinkhorn", f_mix, mix)
                                .map_err(case_error)?;
                            note = format!("{reference}; {vs}");
                            let mut work = TorchWork::new(Device::Cpu, || {
                                stages.sinkhorn(logits, f_mix).map_err(tch_error)
                            })
                            .map_err(measure_error)?;
                            time(&mut work)
                        }
                        Stage::Apply => {
                            stages.apply(mix, x, f_out).map_err(case_error)?;
                            note = self.check_apply(mix, x, f_out).map_err(case_error)?;
                            let mut work = TorchWork::new(Device::Cpu, || {
                                stages.apply(mix, x, f_out).map_err(tch_error)
                            })
                            .map_err(measure_error)?;
                            time(&mut work)
                        }
                        Stage::Total => {
                            note = placement.total_note().to_string();
                            // In the offload simulation the result is written straight into
                            // the pinned buffer stage 4 copies from.
                            let out = result_host.as_mut().unwrap_or(f_out);
                            let mut work = TorchWork::new(Device::Cpu, || {
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
                        Stage::D2hCopy | Stage::H2dCopy => unreachable!("copies are matched above"),
                    }
                }
            }
        };
        *self.note.borrow_mut() = note;
        result
    }

    /// Stage 1 fused against torch's RMSNorm+Linear on the first and last
    /// APPLY_CHECK_TOKENS positions of the sequence (torch's whole stage 1 may not fit).
    fn check_linear(
        &self,
        weights: &MhcWeights,
        x: &Tensor,
        fused: &Tensor,
    ) -> Result<String, MhcError> {
        let shape = self.settings.shape;
        let seq = shape.seq as i64;
        let k = seq.min(APPLY_CHECK_TOKENS);
        let part_shape = MhcShape {
            seq: k as usize,
            ..shape
        };
        let mut worst = 0.0f64;
        for start in [0, seq - k] {
            let xs = x.f_narrow(1, start, k)?.f_contiguous()?;
            let want = torch::linear(weights, &xs, &part_shape)?;
            worst = worst.max(relative_difference(&fused.f_narrow(1, start, k)?, &want)?);
        }
        let tolerance = shape.dtype.tolerance();
        if worst > tolerance {
            return Err(MhcError::Measure(format!(
                "wrong result: fused RMSNorm+Linear differs from torch's by {worst:.3e} of its largest value (tolerance {tolerance:.0e})"
            )));
        }
        Ok(format!(
            "checked vs torch on {} positions: max diff {worst:.1e} of the largest value",
            2 * k * shape.batch as i64
        ))
    }

    /// Stage 3 fused against torch's einsum on the first and last APPLY_CHECK_TOKENS
    /// positions of the sequence (the whole result of torch would double the memory).
    fn check_apply(&self, mix: &Tensor, x: &Tensor, fused: &Tensor) -> Result<String, MhcError> {
        let seq = self.settings.shape.seq as i64;
        let k = seq.min(APPLY_CHECK_TOKENS);
        let mut worst = 0.0f64;
        for start in [0, seq - k] {
            let part = |t: &Tensor| t.f_narrow(1, start, k);
            let want = torch::apply(&part(mix)?, &part(x)?)?;
            worst = worst.max(relative_difference(&part(fused)?, &want)?);
        }
        let tolerance = self.settings.shape.dtype.tolerance();
        if worst > tolerance {
            return Err(MhcError::Measure(format!(
                "wrong result: fused apply differs from torch's einsum by {worst:.3e} of its largest value (tolerance {tolerance:.0e})"
            )));
        }
        Ok(format!(
            "checked vs torch's einsum on {} positions: max diff {worst:.1e} of the largest value",
            2 * k * self.settings.shape.batch as i64
        ))
    }
}

fn half_ulp_at_one(shape: &MhcShape) -> f64 {
    match shape.dtype {
        super::MhcDtype::Float32 => f32::EPSILON as f64 / 2.0,
        super::MhcDtype::Bfloat16 => 2f64.powi(-9),
        super::MhcDtype::Float16 => 2f64.powi(-12),
    }
}

fn not_applicable(placement: Placement, stage: Stage) -> CaseError {
    CaseError::new(
        CaseStatus::Skipped,
        placement
            .not_applicable(stage)
            .unwrap_or("not applicable here"),
    )
}

/// The cases of one configuration in the order they run and their rows are written: every
/// stage of the first implementation, then of the next (what `replay merge` reads rows back by).
pub fn case_order(impls: &[Impl]) -> Vec<MhcCase> {
    impls
        .iter()
        .flat_map(|&imp| Stage::ALL.iter().map(move |&stage| MhcCase { imp, stage }))
        .collect()
}

impl Suite for MhcSuite {
    type Case = MhcCase;
    type Device = ();

    fn columns(&self) -> Vec<&'static str> {
        COLUMNS.to_vec()
    }

    fn cases(&self) -> Vec<MhcCase> {
        case_order(&self.settings.impls)
    }

    fn skip(&self, case: &MhcCase, _done: &[(MhcCase, CaseStatus)]) -> Option<String> {
        self.note.borrow_mut().clear();
        // A stage that does not apply never allocates the inputs.
        self.settings
            .placement
            .not_applicable(case.stage)
            .map(str::to_string)
    }

    fn measure_case(
        &self,
        case: &MhcCase,
        _device: &(),
        time: &mut dyn FnMut(&mut dyn Target) -> Result<Measurement, CaseError>,
    ) -> Result<Measurement, CaseError> {
        let mut slot = self.prepared.borrow_mut();
        if slot.is_none() {
            *slot = Some(self.prepare().map_err(case_error));
        }
        match slot.as_mut() {
            Some(Ok(p)) => self.time_case(case, p, time),
            Some(Err(e)) => Err(e.clone()),
            None => Err(CaseError::new(
                CaseStatus::Error,
                "inputs were not prepared",
            )),
        }
    }

    fn row(&self, case: &MhcCase, outcome: &CaseOutcome) -> Row {
        rows::row(
            &self.settings.shape,
            self.settings.placement,
            case,
            outcome,
            &self.note.borrow(),
        )
    }
}
