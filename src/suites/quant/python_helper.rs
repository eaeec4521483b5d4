//! What only the project's Python can do for a row: `torch.compile` of the same model and
//! recipe (the seed's users compare compiled times) and a Kineto profiler trace of it
//! (`torch.profiler`, which libtorch's C API that tch wraps does not expose). Both run
//! `scripts/quant_torch.py`, which builds the model with the same aten ops as
//! [`super::quantized_linear`], and reads the one JSON line it prints.

use std::path::Path;
use std::process::Command;

use serde::Deserialize;

use super::error::QuantError;

/// What the helper is asked for one row.
#[derive(Debug, Clone)]
pub struct HelperRequest<'a> {
    pub model_type: String,
    pub m: i64,
    pub k: i64,
    pub n: i64,
    pub dtype: &'a str,
    pub device: String,
    pub recipe: String,
    pub threads: usize,
    pub warmup: u64,
    pub runs: usize,
}

/// The compiled times (ms, mean of the timed calls) of the baseline and the quantized model.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct CompiledTimes {
    pub baseline_ms: f64,
    pub quantized_ms: f64,
}

#[derive(Debug, Deserialize)]
struct Reply {
    #[serde(default)]
    compiled: Option<CompiledTimes>,
    #[serde(default)]
    profile: Option<String>,
}

fn run(request: &HelperRequest<'_>, extra: &[String]) -> Result<Reply, QuantError> {
    let script = crate::model::python::scripts_dir().join("quant_torch.py");
    let mut command = Command::new(crate::model::python::interpreter());
    command.arg(&script).args([
        "--model-type",
        &request.model_type,
        "--m",
        &request.m.to_string(),
        "--k",
        &request.k.to_string(),
        "--n",
        &request.n.to_string(),
        "--dtype",
        request.dtype,
        "--device",
        &request.device,
        "--recipe",
        &request.recipe,
        "--threads",
        &request.threads.to_string(),
        "--warmup",
        &request.warmup.to_string(),
        "--runs",
        &request.runs.to_string(),
    ]);
    command.args(extra);
    let output = command
        .output()
        .map_err(|e| QuantError::Python(format!("cannot start {}: {e}", script.display())))?;
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        // The last line is the exception; the whole traceback is noise in a CSV cell.
        let last = stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(QuantError::Python(format!(
            "{} failed ({}): {last}",
            script.display(),
            output.status
        )));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .ok_or_else(|| {
            QuantError::Python(format!("{} printed no JSON result", script.display()))
        })?;
    serde_json::from_str(line)
        .map_err(|e| QuantError::Python(format!("unreadable reply {line:?}: {e}")))
}

/// Times the baseline and the quantized model under `torch.compile(mode=mode)`.
pub fn compiled_times(
    request: &HelperRequest<'_>,
    mode: &str,
) -> Result<CompiledTimes, QuantError> {
    run(request, &["--compile-mode".into(), mode.into()])?
        .compiled
        .ok_or_else(|| QuantError::Python("the helper returned no compiled times".into()))
}

/// Writes a Kineto (Chrome trace) profile of one eager call of the quantized model to `path`.
pub fn profile(request: &HelperRequest<'_>, path: &Path) -> Result<String, QuantError> {
    run(request, &["--profile".into(), path.display().to_string()])?
        .profile
        .ok_or_else(|| QuantError::Python("the helper wrote no profile".into()))
}
