//! The model stage (`--model`): the whole model on the device against the same model on the
//! CPU, and its timing with the spread.

use std::path::{Path, PathBuf};

use tch::{Kind, Tensor};

use crate::device::Device;
use crate::model::full::{time_model, FullModelTiming};
use crate::model::torchscript::TorchScriptModel;

use super::outcome::{model_check, Check};
use super::tensor_error::max_relative_error;

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
    pub(super) output: Tensor,
}

impl ModelReference {
    /// Loads `path` on the CPU and runs it once. A file that is missing, is not TorchScript, or
    /// does not take token ids is the user's to fix: a usage error naming the file.
    pub fn load(path: &Path, seq_len: i64) -> crate::Result<ModelReference> {
        if seq_len < 1 {
            return Err(crate::Error::from(replay_core::Error::BadInput {
                path: "--seq-len".into(),
                message: "must be at least 1".into(),
            }));
        }
        let model = TorchScriptModel::load(path, Device::host())?;
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
pub(super) fn compare_outputs(got: &Tensor, reference: &ModelReference) -> Result<String, String> {
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
        let model = TorchScriptModel::load(&reference.path, device)?;
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
            .to_device(Device::host().torch());
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
