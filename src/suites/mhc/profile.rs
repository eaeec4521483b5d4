//! `--profiler`: a Kineto trace of the torch pipeline (stages 1–3), captured the way replay
//! captures every trace (`scripts/capture_trace.py`, one profiled step with shapes recorded),
//! so `replay classify` and `replay predict` read it like any other. The pipeline is the
//! seed's module as TorchScript (`scripts/mhc_model.py`, the composition of
//! `torch_stages`), profiled on the run's device at its first batch size.

use std::path::{Path, PathBuf};

use super::run::RunOptions;
use super::MhcError;
use crate::model::python::run_script;

/// Writes `dir/mhc_trace.json` (and the model it profiled, `dir/mhc_model.pt`).
pub fn write_trace(options: &RunOptions, dir: &Path) -> Result<PathBuf, MhcError> {
    let shape = options
        .shapes
        .first()
        .ok_or_else(|| MhcError::InvalidInput("no configuration to profile".into()))?;
    std::fs::create_dir_all(dir).map_err(|source| MhcError::Io {
        context: format!("cannot make {}", dir.display()),
        source,
    })?;
    let model = dir.join("mhc_model.pt");
    let trace = dir.join("mhc_trace.json");
    let script_error = |e: crate::Error| MhcError::Unavailable(format!("--profiler: {e}"));
    run_script(
        "mhc_model.py",
        &[
            "--n-streams".into(),
            shape.streams.to_string(),
            "--dim".into(),
            shape.dim.to_string(),
            "--dtype".into(),
            shape.dtype.name().into(),
            "--out".into(),
            model.display().to_string(),
        ],
    )
    .map_err(script_error)?;
    // The host's, or everything on the GPU's: the seed's `Device` column.
    let device = options.placement.device_name(options.gpu_spec);
    run_script(
        "capture_trace.py",
        &[
            "--model".into(),
            model.display().to_string(),
            "--out".into(),
            trace.display().to_string(),
            "--device".into(),
            device,
            "--warmup".into(),
            "1".into(),
            "--candidates".into(),
            "3".into(),
            "--input".into(),
            format!(
                "{}[{},{},{},{}]",
                shape.dtype.name(),
                shape.batch,
                shape.seq,
                shape.streams,
                shape.dim
            ),
        ],
    )
    .map_err(script_error)?;
    Ok(trace)
}
