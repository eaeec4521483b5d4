//! `replay scan`: the kernel as a tool, on a user's own potentials. Reads the `.npy` inputs,
//! runs one phase on one backend, optionally times it with the measurement core, writes the
//! gradient, and returns a report that the command prints as JSON.

use std::path::PathBuf;

use replay_core::measure::{measure_detailed, MeasureConfig, MonotonicClock};
use serde::Serialize;

use super::bench::rows::seed_quartiles;
use super::target::ScanTarget;
use super::{npy_io, Phase, ScanBackend, ScanDims, ScanError, ScanProblem, Semiring};

/// What to run.
#[derive(Debug, Clone)]
pub struct ToolRequest {
    pub edge: PathBuf,
    pub lengths: Option<PathBuf>,
    pub semiring: Semiring,
    /// `forward` gives the values only; `backward`/`both` the gradient too.
    pub phase: Phase,
    pub grad_out: Option<PathBuf>,
    /// Time `phase` with the measurement core, so configured (`--time`).
    pub timing: Option<MeasureConfig>,
}

/// The phase's time per call, in milliseconds.
#[derive(Debug, Clone, Serialize)]
pub struct TimingReport {
    pub phase: &'static str,
    pub median_ms: f64,
    /// The seed's quartiles of the per-call samples (`sorted[n/4]`, `sorted[3n/4]`).
    pub q1_ms: f64,
    pub q3_ms: f64,
    pub min_ms: f64,
    pub samples: usize,
    pub calls_per_sample: u64,
    pub stopped_by: String,
    pub rse_median: Option<f64>,
}

/// What `replay scan` prints.
#[derive(Debug, Clone, Serialize)]
pub struct ToolReport {
    pub edge: PathBuf,
    pub semiring: &'static str,
    pub backend: &'static str,
    pub device: String,
    pub dims: ScanDims,
    pub lengths: Vec<usize>,
    /// Per sequence: log Z (Log), the Viterbi score (Max) or the entropy H (Entropy).
    pub values: Vec<f32>,
    /// Where the gradient of Σ values with respect to the edge was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grad: Option<PathBuf>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing: Option<TimingReport>,
}

/// Runs `request` on `backend` (described as `device` in the report).
pub fn run(
    request: &ToolRequest,
    backend: &dyn ScanBackend,
    device: String,
) -> Result<ToolReport, ScanError> {
    let (dims, edge) = npy_io::read_edge(&request.edge)?;
    let lengths = match &request.lengths {
        Some(path) => Some(npy_io::read_lengths(path, dims)?),
        None => None,
    };
    let problem = ScanProblem::new(dims, &edge, lengths.as_deref())?;
    // The gradient needs a backward; asking for it with the forward phase is a mistake worth
    // saying rather than silently running a backward the user did not ask to time.
    if request.grad_out.is_some() && request.phase == Phase::Forward {
        return Err(ScanError::InvalidInput(
            "--grad needs the backward: use --phase both (or backward)".to_string(),
        ));
    }
    let mut prepared = backend.prepare(&problem, request.semiring)?;
    let output = prepared.run_once(request.phase)?;
    if let Some(path) = &request.grad_out {
        let grad = output.grad.as_deref().ok_or_else(|| {
            ScanError::Backend(format!(
                "the {} backend returned no gradient for phase {}",
                backend.name(),
                request.phase.name()
            ))
        })?;
        npy_io::write_grad(path, dims, grad)?;
    }
    let timing = match &request.timing {
        None => None,
        Some(config) => {
            let mut target = ScanTarget::new(prepared.as_mut(), request.phase);
            let measured = measure_detailed(&mut target, config, &MonotonicClock::new());
            // The backend's own error keeps its kind (out of memory, not implemented).
            let measured = match (measured, target.failure.take()) {
                (Ok(m), _) => m,
                (Err(_), Some(failure)) => return Err(failure),
                (Err(e), None) => return Err(ScanError::Backend(format!("timing failed: {e}"))),
            };
            let s = &measured.summary;
            let (q1, q3) = seed_quartiles(&measured.device_us).unwrap_or((s.median, s.median));
            Some(TimingReport {
                phase: request.phase.name(),
                median_ms: s.median / 1e3,
                q1_ms: q1 / 1e3,
                q3_ms: q3 / 1e3,
                min_ms: s.min / 1e3,
                samples: s.samples,
                calls_per_sample: s.calls_per_sample,
                stopped_by: s.stopped_by.to_string(),
                rse_median: s.rse_median,
            })
        }
    };
    Ok(ToolReport {
        edge: request.edge.clone(),
        semiring: request.semiring.name(),
        backend: backend.name(),
        device,
        dims,
        lengths: problem.lengths.clone(),
        values: output.values,
        grad: request.grad_out.clone(),
        timing,
    })
}
