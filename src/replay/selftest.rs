//! `replay selftest`: runs one replay of each tier on a device and checks the numbers against
//! the same work done by libtorch on the CPU. On a GPU this is the end-to-end proof that the
//! CUDA paths (cudarc copies, cuBLAS with the row-major to column-major swap, libtorch on the
//! GPU, the embedded flush kernel) compute what they claim; on the CPU it checks the host paths.
//!
//! With a model (`--model`), a second stage checks the whole model: its output on the device
//! against the same model on the CPU, its timing, and (driven from the command line, which owns
//! the pipeline) the invariants of a `replay compare` report.

use std::path::{Path, PathBuf};

use serde::Serialize;
use tch::{Device as TorchDevice, Kind, Tensor};

use crate::device::Device;
use crate::model::full::{time_model, FullModelTiming};
use crate::model::torchscript::TorchScriptModel;
use crate::report::comparison::ComparisonReport;
use crate::signature::gemm::gemm_from_op;
use crate::signature::op_inputs::OpInputs;
use crate::signature::schema::{
    GemmKernelRole, GemmOperand, GemmParams, MemcpyKind, MemcpyParams, MemoryKind, MemsetParams,
};

use super::libtorch_shim::{OpArg, PreparedOp};
use super::tier1_memory::{CpuMemoryTarget, MemoryWork};
use super::tier2_gemm::TorchGemmTarget;

/// The part of the selftest a check belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// One replay of a tier (or the device's own kernels, tier 0).
    Replay,
    /// The whole model (`--model`): tier 0.
    Model,
}

/// One check's outcome.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub stage: Stage,
    pub tier: u8,
    pub name: String,
    pub passed: bool,
    pub detail: String,
}

fn check(tier: u8, name: &str, result: Result<String, String>) -> Check {
    let (passed, detail) = match result {
        Ok(detail) => (true, detail),
        Err(detail) => (false, detail),
    };
    Check {
        stage: Stage::Replay,
        tier,
        name: name.into(),
        passed,
        detail,
    }
}

/// A check of the whole-model stage (tier 0, stage `model`).
pub fn model_check(name: &str, result: Result<String, String>) -> Check {
    Check {
        stage: Stage::Model,
        ..check(0, name, result)
    }
}

/// A `linear`-shaped GEMM as the profiler records `aten::mm(x, weight.t())`: A by rows,
/// B a transposed view, so the cuBLAS call is `T, N` with swapped operands.
pub const M: i64 = 96;
pub const N: i64 = 48;
pub const K: i64 = 64;

pub fn test_gemm_params() -> Result<GemmParams, String> {
    let dims = format!("[[{M}, {K}], [{K}, {N}]]");
    let strides = format!("[[{K}, 1], [1, {K}]]");
    let inputs = OpInputs::parse(
        Some(&dims),
        Some(r#"["float", "float"]"#),
        Some(&strides),
        Some(r#"["", ""]"#),
    )
    .ok_or("could not build the test op inputs")?;
    gemm_from_op("aten::mm", &inputs, GemmKernelRole::Main, None)
}

pub(crate) fn max_relative_error(got: &Tensor, want: &Tensor) -> Result<f64, String> {
    let diff = (got.to_kind(Kind::Double) - want.to_kind(Kind::Double))
        .abs()
        .max()
        .double_value(&[]);
    let scale = want
        .to_kind(Kind::Double)
        .abs()
        .max()
        .double_value(&[])
        .max(1e-12);
    Ok(diff / scale)
}

fn f32_bytes(t: &Tensor) -> Result<Vec<u8>, String> {
    let flat = t.to_kind(Kind::Float).contiguous().view([-1]);
    let values = Vec::<f32>::try_from(&flat).map_err(|e| e.to_string())?;
    Ok(values.iter().flat_map(|v| v.to_le_bytes()).collect())
}

fn tier3_layer_norm(device: TorchDevice) -> Result<String, String> {
    let _guard = tch::no_grad_guard();
    tch::manual_seed(7);
    let x = Tensor::randn([4, 128], (Kind::Float, TorchDevice::Cpu));
    let w = Tensor::randn([128], (Kind::Float, TorchDevice::Cpu));
    let b = Tensor::randn([128], (Kind::Float, TorchDevice::Cpu));
    let want = x.layer_norm([128], Some(&w), Some(&b), 1e-5, false);
    let args = vec![
        OpArg::Tensor(x.to_device(device)),
        OpArg::IntList(vec![128]),
        OpArg::Tensor(w.to_device(device)),
        OpArg::Tensor(b.to_device(device)),
        OpArg::Double(1e-5),
        OpArg::Bool(false),
    ];
    let mut op = PreparedOp::new("aten::layer_norm", "", args).map_err(|e| e.0)?;
    op.run(1).map_err(|e| e.0)?;
    let got = op
        .last_output()
        .ok_or("aten::layer_norm returned no tensor")?
        .to_device(TorchDevice::Cpu);
    let err = max_relative_error(&got, &want)?;
    if err < 1e-4 {
        Ok(format!(
            "aten::layer_norm through the dispatcher on {device:?}: max relative error {err:.1e}"
        ))
    } else {
        Err(format!(
            "aten::layer_norm on {device:?} differs from the CPU by {err:.3e}"
        ))
    }
}

fn cpu_checks() -> Vec<Check> {
    let mut checks = Vec::new();
    checks.push(check(1, "host memcpy 1 MiB", {
        let p = MemcpyParams {
            kind: MemcpyKind::HtoD,
            src: MemoryKind::Pageable,
            dst: MemoryKind::Device,
            bytes: 1 << 20,
        };
        let mut t = CpuMemoryTarget::new(MemoryWork::Copy(p));
        crate::measure::Target::run_batch(&mut t, 1)
            .map_err(|e| e.to_string())
            .and_then(|_| {
                (t.output() == t.input())
                    .then(|| "every byte copied".to_string())
                    .ok_or_else(|| "bytes differ".to_string())
            })
    }));
    checks.push(check(1, "host memset 64 KiB", {
        let mut t = CpuMemoryTarget::new(MemoryWork::Set(MemsetParams { bytes: 64 << 10 }));
        crate::measure::Target::run_batch(&mut t, 3)
            .map_err(|e| e.to_string())
            .and_then(|_| {
                t.output()
                    .iter()
                    .all(|&b| b == 2)
                    .then(|| "every byte set".to_string())
                    .ok_or_else(|| "bytes not set".to_string())
            })
    }));
    checks.push(check(
        2,
        "torch mm with the recorded layouts",
        (|| {
            let params = test_gemm_params()?;
            let mut target =
                TorchGemmTarget::new(&params, TorchDevice::Cpu).map_err(|e| e.to_string())?;
            let (a, b, out) = target.operands_and_result().map_err(|e| e.to_string())?;
            if a.stride() != [K, 1] || b.stride() != [1, K] {
                return Err(format!(
                    "operand layouts {:?} / {:?} are not the recorded [{K}, 1] / [1, {K}]",
                    a.stride(),
                    b.stride()
                ));
            }
            let want = a.to_kind(Kind::Double).mm(&b.to_kind(Kind::Double));
            let err = max_relative_error(&out, &want)?;
            (err < 1e-4)
                .then(|| format!("{M}x{N}x{K} fp32, max relative error {err:.1e} against fp64"))
                .ok_or(format!("error {err:.3e}"))
        })(),
    ));
    checks.push(check(
        3,
        "libtorch dispatcher",
        tier3_layer_norm(TorchDevice::Cpu),
    ));
    checks
}

fn cuda_checks(dev: &crate::device::CudaDevice) -> Vec<Check> {
    use super::tier1_memory::cuda::CudaMemoryTarget;
    use super::tier2_gemm::cuda::CublasGemmTarget;
    let mut checks = Vec::new();
    for (name, kind, src, dst) in [
        (
            "cudaMemcpy HtoD pageable",
            MemcpyKind::HtoD,
            MemoryKind::Pageable,
            MemoryKind::Device,
        ),
        (
            "cudaMemcpy HtoD pinned",
            MemcpyKind::HtoD,
            MemoryKind::Pinned,
            MemoryKind::Device,
        ),
        (
            "cudaMemcpy DtoH pinned",
            MemcpyKind::DtoH,
            MemoryKind::Device,
            MemoryKind::Pinned,
        ),
        (
            "cudaMemcpy DtoD",
            MemcpyKind::DtoD,
            MemoryKind::Device,
            MemoryKind::Device,
        ),
    ] {
        let p = MemcpyParams {
            kind,
            src,
            dst,
            bytes: 4 << 20,
        };
        checks.push(check(
            1,
            name,
            CudaMemoryTarget::new(dev, MemoryWork::Copy(p))
                .map_err(|e| e.to_string())
                .and_then(|mut t| t.verify())
                .map(|_| "4 MiB, every byte checked".into()),
        ));
    }
    checks.push(check(
        1,
        "cudaMemset",
        CudaMemoryTarget::new(dev, MemoryWork::Set(MemsetParams { bytes: 1 << 20 }))
            .map_err(|e| e.to_string())
            .and_then(|mut t| t.verify())
            .map(|_| "1 MiB zeroed".into()),
    ));
    checks.push(check(2, "cublasGemmEx row-major via column-major swap", (|| {
        let params = test_gemm_params()?;
        let _guard = tch::no_grad_guard();
        tch::manual_seed(3);
        let a = Tensor::randn([M, K], (Kind::Float, TorchDevice::Cpu));
        let w = Tensor::randn([N, K], (Kind::Float, TorchDevice::Cpu));
        let want = a.mm(&w.tr());
        // cuBLAS's operands are PyTorch's swapped: each is uploaded in its storage order.
        let bytes_of = |op: GemmOperand| match op {
            GemmOperand::RowMajorA => f32_bytes(&a),
            GemmOperand::RowMajorB => f32_bytes(&w),
        };
        let mut target = CublasGemmTarget::new(dev, &params).map_err(|e| e.to_string())?;
        let out = target.run_on(&bytes_of(params.cublas.operand_a)?, &bytes_of(params.cublas.operand_b)?)?;
        let values: Vec<f32> = out.chunks_exact(4).take((M * N) as usize).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
        let got = Tensor::from_slice(&values).view([M, N]);
        let err = max_relative_error(&got, &want)?;
        (err < 1e-4).then(|| format!("{M}x{N}x{K} fp32 (TF32 off), max relative error {err:.1e} against libtorch CPU")).ok_or(format!("cuBLAS result differs from libtorch CPU by {err:.3e}"))
    })()));
    checks.push(check(
        3,
        "libtorch dispatcher on the GPU",
        tier3_layer_norm(TorchDevice::Cuda(dev.info.index)),
    ));
    checks.push(check(
        0,
        "l2_flush kernel (embedded fatbin)",
        (|| {
            let cache = crate::kernels::KernelCache::default();
            let mut flusher = crate::device::cache_flush::CudaL2Flusher::new(dev, &cache)
                .map_err(|e| e.to_string())?;
            flusher.flush().map_err(|e| e.to_string())?;
            Ok(format!("loaded and ran on {}", dev.info.name))
        })(),
    ));
    // The GPU side of the tests that return early on a machine with a driver.
    for (tier, name, run) in super::selftest_counterparts::CHECKS {
        checks.push(check(tier, name, run(dev)));
    }
    checks
}

/// The model stage's check of the output on the device against the CPU.
pub const MODEL_OUTPUT_CHECK: &str = "whole model output vs the CPU";

/// Untimed and timed forward passes of the model stage: enough for TorchScript's profiling
/// executor to optimise the graph (the output is checked after that) and for a spread.
pub const MODEL_WARMUP: u32 = 3;
pub const MODEL_RUNS: u32 = 10;

/// The whole-model reference: the model loaded on the CPU and run once on the selftest's input
/// (batch 1, `seq_len` token ids seeded as `replay full` and `scripts/capture_trace.py` seed them).
pub struct ModelReference {
    pub path: PathBuf,
    pub seq_len: i64,
    output: Tensor,
}

impl ModelReference {
    /// Loads `path` on the CPU and runs it once. A file that is missing, is not TorchScript, or
    /// does not take token ids is the user's to fix: a usage error naming the file.
    pub fn load(path: &Path, seq_len: i64) -> crate::Result<ModelReference> {
        if seq_len < 1 {
            return Err(crate::Error::BadInput {
                path: "--seq-len".into(),
                message: "must be at least 1".into(),
            });
        }
        let model = TorchScriptModel::load(path, TorchDevice::Cpu)?;
        let _guard = tch::no_grad_guard();
        let output = model
            .forward(&model.input_ids(1, seq_len, 0))
            .map_err(|e| model.does_not_run_on_token_ids(1, seq_len, e))?;
        Ok(ModelReference {
            path: path.to_path_buf(),
            seq_len,
            output,
        })
    }

    /// The model's floating-point type, as its output says.
    pub fn kind(&self) -> Kind {
        self.output.kind()
    }
}

/// Largest relative error (max |got − want| / max |want|) accepted between the model's output
/// on the device and on the CPU. The device may sum in another order and fuse elementwise ops;
/// over a deep model that costs fp32 up to ~1e-4, the 16-bit types far more. A wrong kernel is
/// off by order one.
pub fn model_tolerance(kind: Kind) -> f64 {
    match kind {
        Kind::Double => 1e-8,
        Kind::Half => 2e-2,
        Kind::BFloat16 => 6e-2,
        _ => 1e-3,
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Double => "fp64",
        Kind::Float => "fp32",
        Kind::Half => "fp16",
        Kind::BFloat16 => "bf16",
        _ => "non-float",
    }
}

/// The output on the device (after the timed runs) against the CPU reference.
fn compare_outputs(got: &Tensor, reference: &ModelReference) -> Result<String, String> {
    let want = &reference.output;
    if got.size() != want.size() {
        return Err(format!(
            "output shape {:?} on the device, {:?} on the CPU",
            got.size(),
            want.size()
        ));
    }
    let finite = |t: &Tensor| t.isfinite().all().int64_value(&[]) != 0;
    if !finite(got) {
        return Err("the output on the device has NaN or infinite values".into());
    }
    if !finite(want) {
        return Err("the output on the CPU has NaN or infinite values".into());
    }
    let err = max_relative_error(got, want)?;
    let bound = model_tolerance(reference.kind());
    let what = format!(
        "output {:?} {}, max relative error {err:.1e} against the CPU (bound {bound:.0e})",
        want.size(),
        kind_name(reference.kind())
    );
    if err <= bound {
        Ok(what)
    } else {
        Err(format!("{what}: too large"))
    }
}

fn describe_timing(t: &FullModelTiming) -> Result<String, String> {
    let what = format!(
        "median {:.1} us (p10 {:.1}, p90 {:.1}, std {:.1}) over {} runs after {} warm-ups, {}",
        t.median_us, t.p10_us, t.p90_us, t.std_us, t.runs, t.warmup, t.timer
    );
    let sane = t.samples_us.len() == t.runs as usize
        && t.samples_us.iter().all(|s| s.is_finite() && *s > 0.0)
        && t.p10_us <= t.median_us
        && t.median_us <= t.p90_us;
    if sane {
        Ok(what)
    } else {
        Err(format!("{what}: samples not finite, positive and ordered"))
    }
}

/// The whole model on `device` through `replay full`'s loading and timing: its output after
/// the warm-ups and timed runs against the CPU reference, and the timing with its spread.
pub fn model_checks(device: &Device, reference: &ModelReference) -> Vec<Check> {
    let name = reference.path.display().to_string();
    let ran = (|| -> crate::Result<(FullModelTiming, Tensor)> {
        let model = TorchScriptModel::load(&reference.path, device.torch_device())?;
        let timing = time_model(
            &model,
            &name,
            &device.describe(),
            reference.seq_len,
            1,
            &[],
            MODEL_WARMUP,
            MODEL_RUNS,
        )?;
        let _guard = tch::no_grad_guard();
        let output = model
            .forward(&model.input_ids(1, reference.seq_len, 0))?
            .to_device(TorchDevice::Cpu);
        Ok((timing, output))
    })();
    match ran {
        Ok((timing, output)) => vec![
            model_check(MODEL_OUTPUT_CHECK, compare_outputs(&output, reference)),
            model_check("whole model timing", describe_timing(&timing)),
        ],
        Err(e) => vec![
            model_check(MODEL_OUTPUT_CHECK, Err(e.to_string())),
            model_check("whole model timing", Err(e.to_string())),
        ],
    }
}

/// The invariants every `replay compare` report must hold: the tiers add up to the kernel-sum
/// prediction, each share and the coverage lie in [0, 1], the predictions and the measured time
/// are finite and positive, and the trace self-check is there.
pub fn report_invariants(r: &ComparisonReport) -> Result<String, String> {
    let mut problems = Vec::new();
    let positive = |x: f64| x.is_finite() && x > 0.0;
    let measured = r.full_model_inference_us;
    if !positive(measured) {
        problems.push(format!(
            "measured time {measured} us is not finite and positive"
        ));
    }
    let sum = r.predicted_from_kernels_us;
    if !positive(sum) {
        problems.push(format!(
            "kernel-sum prediction {sum} us is not finite and positive"
        ));
    }
    if r.predictions.sum.predicted_us != sum {
        problems.push(format!(
            "predictions.sum {} us is not predicted_from_kernels_us {sum} us",
            r.predictions.sum.predicted_us
        ));
    }
    let tiers = [
        &r.tier_breakdown.tier1_cuda_runtime,
        &r.tier_breakdown.tier2_cublas,
        &r.tier_breakdown.tier3_libtorch,
    ];
    let tier_sum: f64 = tiers.iter().map(|t| t.total_us).sum();
    // NaN anywhere fails this too.
    let tiers_agree = (tier_sum - sum).abs() <= 1e-6 * sum.abs().max(1e-9);
    if !tiers_agree {
        problems.push(format!(
            "the tiers add up to {tier_sum} us, not the prediction {sum} us"
        ));
    }
    for (i, t) in tiers.iter().enumerate() {
        if !(0.0..=1.0).contains(&t.share) {
            problems.push(format!(
                "tier {} share {} is outside [0, 1]",
                i + 1,
                t.share
            ));
        }
        if !(t.total_us.is_finite() && t.total_us >= 0.0) {
            problems.push(format!(
                "tier {} total {} us is negative",
                i + 1,
                t.total_us
            ));
        }
    }
    let coverage = r.coverage.replayed_share_of_trace_time;
    if !(0.0..=1.0).contains(&coverage) {
        problems.push(format!("coverage share {coverage} is outside [0, 1]"));
    }
    let timeline = r.predictions.timeline.as_ref().map(|t| t.predicted_us);
    match timeline {
        Some(t) if !positive(t) => problems.push(format!(
            "timeline prediction {t} us is not finite and positive"
        )),
        Some(_) => {}
        None => problems.push("no timeline prediction".into()),
    }
    match &r.trace_self_check {
        None => problems.push("no trace self-check".into()),
        Some(c) if !(positive(c.predicted_us) && positive(c.measured_us)) => {
            problems.push(format!(
                "trace self-check {} us vs {} us is not finite and positive",
                c.predicted_us, c.measured_us
            ))
        }
        Some(_) => {}
    }
    if !problems.is_empty() {
        return Err(problems.join("; "));
    }
    let [t1, t2, t3] = tiers.map(|t| t.total_us);
    Ok(format!(
        "measured {measured:.1} us; kernel sum {sum:.1} us = tiers {t1:.1} + {t2:.1} + {t3:.1}; \
         timeline {:.1} us; coverage {:.1}%; trace self-check {:+.1}%",
        timeline.unwrap_or_default(),
        100.0 * coverage,
        r.trace_self_check.as_ref().map_or(0.0, |c| c.error_percent)
    ))
}

/// Every check for `device`.
pub fn run(device: &Device) -> Vec<Check> {
    match device {
        Device::Cpu(_) => cpu_checks(),
        Device::Cuda(dev) => cuda_checks(dev),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::schema::BlasOp;

    #[test]
    fn the_test_gemm_is_a_swapped_tn_call() {
        let p = test_gemm_params().unwrap();
        assert_eq!((p.m, p.n, p.k), (M as u64, N as u64, K as u64));
        assert!(!p.trans_a && p.trans_b);
        // C^T[n, m] = B^T A^T: cuBLAS m is PyTorch's n, and its A is PyTorch's B (weight, by rows -> T).
        assert_eq!(
            (p.cublas.m, p.cublas.n, p.cublas.k),
            (N as u64, M as u64, K as u64)
        );
        assert_eq!((p.cublas.transa, p.cublas.transb), (BlasOp::T, BlasOp::N));
        assert_eq!(p.cublas.operand_a, GemmOperand::RowMajorB);
        assert_eq!(
            (p.cublas.lda, p.cublas.ldb, p.cublas.ldc),
            (K as u64, K as u64, N as u64)
        );
    }

    /// A report as `replay compare` writes it, holding every invariant.
    fn valid_report() -> ComparisonReport {
        let tier = |total: f64, share: f64| {
            serde_json::json!({"method": "m", "unique_kernels": 1, "invocations": 2,
                "total_us": total, "share": share, "trace_total_us": total})
        };
        serde_json::from_value(serde_json::json!({
            "model": "m.pt", "device": "cpu", "seq_len": 5, "trace": "t.json",
            "signatures": "s.json", "full_model_inference_us": 200.0,
            "full_model": {"model": "m.pt", "device": "cpu", "seq_len": 5, "batch": 1,
                "warmup": 3, "runs": 2, "threads": 1, "timer": "monotonic clock",
                "mean_us": 200.0, "median_us": 200.0, "min_us": 190.0, "max_us": 210.0,
                "std_us": 10.0, "p10_us": 190.0, "p90_us": 210.0, "rse_median": null,
                "samples_us": [190.0, 210.0]},
            "predicted_from_kernels_us": 100.0, "error_percent": -50.0,
            "predictions": {"sum": {"predicted_us": 100.0, "error_percent": -50.0},
                "timeline": {"predicted_us": 180.0, "error_percent": -10.0}, "best": "timeline"},
            "invocations": 6,
            "tier_breakdown": {"tier1_cuda_runtime": tier(0.0, 0.0),
                "tier2_cublas": tier(60.0, 0.6), "tier3_libtorch": tier(40.0, 0.4)},
            "top_signatures": [],
            "coverage": {"replayed_share_of_trace_time": 1.0, "accounting": "a", "unreplayed": []},
            "trace_self_check": {"predicted_us": 300.0, "measured_us": 300.0, "error_percent": 0.0}
        }))
        .unwrap()
    }

    #[test]
    fn a_consistent_report_passes_its_invariants() {
        let detail = report_invariants(&valid_report()).unwrap();
        assert!(
            detail.contains("kernel sum 100.0 us = tiers 0.0 + 60.0 + 40.0"),
            "{detail}"
        );
        assert!(detail.contains("coverage 100.0%"), "{detail}");
    }

    #[test]
    fn each_broken_invariant_is_named() {
        type Break = fn(&mut ComparisonReport);
        let cases: [(&str, Break); 7] = [
            ("tiers add up", |r| {
                r.tier_breakdown.tier2_cublas.total_us = 70.0
            }),
            ("coverage share", |r| {
                r.coverage.replayed_share_of_trace_time = 1.5
            }),
            ("kernel-sum prediction", |r| {
                r.predicted_from_kernels_us = f64::NAN;
                r.predictions.sum.predicted_us = f64::NAN;
            }),
            ("timeline prediction", |r| {
                r.predictions.timeline.as_mut().unwrap().predicted_us = -1.0
            }),
            ("no trace self-check", |r| r.trace_self_check = None),
            ("measured time", |r| r.full_model_inference_us = 0.0),
            ("tier 3 share", |r| {
                r.tier_breakdown.tier3_libtorch.share = -0.1
            }),
        ];
        for (expected, breaks) in cases {
            let mut report = valid_report();
            breaks(&mut report);
            let err = report_invariants(&report).unwrap_err();
            assert!(err.contains(expected), "{expected}: {err}");
        }
    }

    /// The output check with each dtype's bound, on a model's last layers (GEMM, GELU, layer
    /// norm, GEMM to 1000 logits) computed twice on the CPU in that dtype: once as libtorch
    /// does, once with every GEMM summed in K-chunks as a device's split-K kernel orders it.
    /// The second must pass (a bound tighter than the dtype's rounding would fail a correct
    /// device); the same with a GEMM reading its weight transposed, a wrong kernel, must fail
    /// (a bound too loose to catch it would pass).
    #[test]
    fn the_model_bound_accepts_another_summation_order_and_rejects_a_wrong_kernel() {
        let _guard = tch::no_grad_guard();
        tch::manual_seed(5);
        let cpu = (Kind::Float, TorchDevice::Cpu);
        let x = Tensor::randn([5, 64], cpu);
        let w1 = Tensor::randn([64, 64], cpu) / 8.0;
        let w2 = Tensor::randn([64, 1000], cpu) / 8.0;
        let split_k_mm = |a: &Tensor, b: &Tensor| {
            (0..a.size()[1] / 16)
                .map(|i| a.narrow(1, i * 16, 16).mm(&b.narrow(0, i * 16, 16)))
                .reduce(|sum, part| sum + part)
                .unwrap()
        };
        let head = |kind: Kind, split_k: bool, w1_transposed: bool| {
            let mm = |a: &Tensor, b: &Tensor| {
                if split_k {
                    split_k_mm(a, b)
                } else {
                    a.mm(b)
                }
            };
            let w1 = w1.to_kind(kind);
            let w1 = if w1_transposed { w1.tr() } else { w1 };
            let h = mm(&x.to_kind(kind), &w1).gelu("tanh").layer_norm(
                [64],
                None::<&Tensor>,
                None::<&Tensor>,
                1e-5,
                false,
            );
            mm(&h, &w2.to_kind(kind)).view([1, 5, 1000])
        };
        for kind in [Kind::Double, Kind::Float, Kind::Half, Kind::BFloat16] {
            let reference = ModelReference {
                path: "head.pt".into(),
                seq_len: 5,
                output: head(kind, false, false),
            };
            let reordered = compare_outputs(&head(kind, true, false), &reference);
            assert!(reordered.is_ok(), "{kind:?}: {reordered:?}");
            let wrong = compare_outputs(&head(kind, true, true), &reference).unwrap_err();
            assert!(wrong.contains("too large"), "{kind:?}: {wrong}");
        }
    }

    #[test]
    fn a_missing_model_or_a_bad_seq_len_is_a_usage_error_naming_it() {
        let missing = ModelReference::load(Path::new("/nonexistent/model.pt"), 5)
            .err()
            .unwrap();
        assert!(missing.is_usage_error());
        assert!(missing.to_string().contains("/nonexistent/model.pt"));
        let seq = ModelReference::load(Path::new("/nonexistent/model.pt"), 0)
            .err()
            .unwrap();
        assert!(seq.is_usage_error() && seq.to_string().contains("--seq-len"));
    }

    #[test]
    fn every_cpu_check_passes() {
        let checks = cpu_checks();
        assert_eq!(
            checks.iter().map(|c| c.tier).collect::<Vec<_>>(),
            vec![1, 1, 2, 3]
        );
        for c in &checks {
            assert!(c.passed, "{}: {}", c.name, c.detail);
        }
    }
}
