//! `replay isolated`: every replay unit of a signature file set up, measured and reported,
//! one at a time. A failure in one unit never ends the run; the caller gets every result as
//! soon as it exists so it can write results as it goes.

use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::device::Device;
use crate::energy::{measure_energy, EnergyConfig, EnergyProbe, EnergySummary};
use crate::measure::{measure, Clock, MeasureConfig, Summary};
use crate::signature::schema::{SignatureFile, Tier};

use super::registry::{replay_units, target_for, SetupError};

/// Outcome of one signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Measured.
    Ok,
    /// Its work runs inside another signature's replay (a GEMM's split-K reduction, say).
    Included,
    /// Set up or measured, and it went wrong.
    Failed,
    /// Cannot be replayed from what the trace recorded.
    Unsupported,
    /// The device ran out of memory.
    Oom,
}

/// One signature's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SignatureResult {
    pub id: String,
    pub tier: Tier,
    pub name: String,
    pub op: Option<String>,
    pub count: u64,
    pub trace_mean_us: f64,
    pub trace_total_us: f64,
    pub status: Status,
    /// How it was replayed: `cublasGemmEx`, `libtorch dispatcher aten::add.Tensor`, `host memcpy`...
    pub method: Option<String>,
    /// Why not `ok`.
    pub reason: Option<String>,
    /// The signature whose replay stands for this one (itself when replayed alone).
    pub replayed_as: String,
    /// This signature's share of that replay's time.
    pub share: f64,
    /// Predicted time of one invocation: the replay's median × share (µs).
    pub predicted_us: Option<f64>,
    /// Host (dispatch) time of one invocation: the replay's host median × share (µs).
    pub host_us: Option<f64>,
    pub stats: Option<Summary>,
    /// Energy of one invocation: the replay's median joules per call × share (`--energy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joules_per_invocation: Option<f64>,
    /// The replay's energy measurement, or why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<Result<EnergySummary, String>>,
}

/// How the run was configured, recorded with the results.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunConfig {
    pub cold: bool,
    pub max_time_per_kernel_s: f64,
    pub noise_target: f64,
    pub min_samples: usize,
}

/// The whole result file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IsolatedResults {
    pub schema_version: u32,
    pub tool: String,
    pub device: String,
    pub signatures_file: String,
    pub config: RunConfig,
    /// Signatures in the file; `results` holds those done so far.
    pub signatures_total: usize,
    pub complete: bool,
    pub results: Vec<SignatureResult>,
}

pub const ISOLATED_SCHEMA_VERSION: u32 = 1;

/// Progress of a run, for bars and logs.
#[derive(Debug, Clone)]
pub struct Progress<'a> {
    pub unit_index: usize,
    pub units_total: usize,
    pub name: &'a str,
}

/// Something that prepares the device before each sample when `--cold` is given.
pub type ColdFlush = Box<dyn FnMut() -> Result<(), String>>;

/// Runs every replay unit of `file` on `device`.
///
/// `on_progress` is called before each unit; `on_results` after each, with all results so far.
#[allow(clippy::too_many_arguments)]
pub fn run(
    file: &SignatureFile,
    signatures_path: &Path,
    device: &Device,
    config: &MeasureConfig,
    run_config: RunConfig,
    clock: &dyn Clock,
    mut cold_flush: Option<ColdFlush>,
    mut energy: Option<(&mut (dyn EnergyProbe + 'static), &EnergyConfig)>,
    mut on_progress: impl FnMut(Progress<'_>),
    mut on_results: impl FnMut(&IsolatedResults),
) -> IsolatedResults {
    let units = replay_units(file);
    let sigs = &file.signatures;
    let mut results = IsolatedResults {
        schema_version: ISOLATED_SCHEMA_VERSION,
        tool: format!("replay {}", env!("CARGO_PKG_VERSION")),
        device: device.describe(),
        signatures_file: signatures_path.display().to_string(),
        config: run_config,
        signatures_total: sigs.len(),
        complete: false,
        results: Vec::with_capacity(sigs.len()),
    };
    for (unit_index, unit) in units.iter().enumerate() {
        let lead = &sigs[unit.lead];
        on_progress(Progress {
            unit_index,
            units_total: units.len(),
            name: &lead.name,
        });
        let mut energy_result: Option<Result<EnergySummary, String>> = None;
        let outcome: Result<(Summary, String), SetupError> = target_for(file, unit, device)
            .and_then(|(mut target, method)| {
                let mut flushing;
                let target: &mut dyn crate::measure::Target = match cold_flush.as_mut() {
                    Some(flush) => {
                        flushing = ColdTarget {
                            inner: target.as_mut(),
                            flush,
                        };
                        &mut flushing
                    }
                    None => target.as_mut(),
                };
                let summary = measure(target, config, clock)?;
                // Energy after time: the probe's windows repeat the same batches, long enough
                // to cover its update period (`energy::measure_energy`).
                if let Some((probe, energy_config)) = energy.as_mut() {
                    let calls = summary.calls_per_sample.max(1);
                    energy_result = Some(
                        measure_energy(&mut **probe, calls, energy_config, || {
                            target.run_batch(calls).map(|_| ())
                        })
                        .map_err(|e| e.to_string()),
                    );
                }
                Ok((summary, method.0))
            });
        let base = |i: usize, share: f64| {
            let s = &sigs[i];
            SignatureResult {
                id: s.id.clone(),
                tier: s.tier,
                name: s.name.clone(),
                op: s.op.as_ref().map(|o| o.name.clone()),
                count: s.count,
                trace_mean_us: s.trace_mean_us,
                trace_total_us: s.trace_total_us,
                status: Status::Ok,
                method: None,
                reason: None,
                replayed_as: lead.id.clone(),
                share,
                predicted_us: None,
                host_us: None,
                stats: None,
                joules_per_invocation: None,
                energy: None,
            }
        };
        for &(i, share) in &unit.members {
            let mut r = base(i, share);
            match &outcome {
                Ok((summary, method)) => {
                    r.method = Some(method.clone());
                    r.predicted_us = Some(summary.median * share);
                    r.host_us = Some(summary.host_median * share);
                    r.stats = Some(summary.clone());
                    if let Some(e) = &energy_result {
                        r.joules_per_invocation = e
                            .as_ref()
                            .ok()
                            .map(|e| e.joules_per_invocation.median * share);
                        r.energy = Some(e.clone());
                    }
                }
                Err(SetupError::Unsupported(m)) => {
                    (r.status, r.reason) = (Status::Unsupported, Some(m.clone()))
                }
                Err(SetupError::Failed(m)) => {
                    (r.status, r.reason) = (Status::Failed, Some(m.clone()))
                }
                Err(SetupError::Oom(m)) => (r.status, r.reason) = (Status::Oom, Some(m.clone())),
            }
            results.results.push(r);
        }
        for &i in &unit.included {
            let mut r = base(i, 0.0);
            match &outcome {
                Ok(_) => {
                    r.status = Status::Included;
                    r.reason = Some(format!("runs inside the replay of {}", lead.id));
                    r.predicted_us = Some(0.0);
                    r.host_us = Some(0.0);
                }
                Err(_) => {
                    r.status = Status::Unsupported;
                    r.reason = Some(format!("runs inside {}, which did not replay", lead.id));
                }
            }
            results.results.push(r);
        }
        on_results(&results);
    }
    results.complete = true;
    on_results(&results);
    results
}

/// Wraps a target so every sample starts from cold caches.
struct ColdTarget<'a> {
    inner: &'a mut dyn crate::measure::Target,
    flush: &'a mut ColdFlush,
}

impl crate::measure::Target for ColdTarget<'_> {
    fn run_batch(
        &mut self,
        calls: u64,
    ) -> Result<crate::measure::BatchTiming, crate::measure::MeasureError> {
        self.inner.run_batch(calls)
    }

    fn prepare_sample(&mut self) -> Result<(), crate::measure::MeasureError> {
        self.inner.prepare_sample()?;
        (self.flush)().map_err(crate::measure::MeasureError::target)
    }
}

/// Budget per signature from `--max-time-per-kernel`.
pub fn budget(seconds: f64) -> Duration {
    Duration::from_secs_f64(seconds.max(0.0))
}
