//! `replay predict`'s computation, apart from its printing: a trace's timeline prediction,
//! the `--profile` re-timing and each `--what-if` on top of it, and the prediction with the
//! durations of an `isolated.json`. The command line ([`crate::cli`]) prints what
//! [`predict_trace`] returns; the Python package returns it as frames. One computation for
//! both, so the numbers are the same.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::hardware::{Basis, HardwareScaling};
use super::host_model::trace_device_name;
use super::what_if::{Change, WhatIfOutcome, WhatIfTimeline};
use super::{
    Durations, HostReport, HostSettings, HostTimes, Prediction, SignatureCatalog, Timeline, WhatIf,
};
use crate::results::calibration::Profile;
use crate::results::isolated::{IsolatedResults, Status};
use crate::signature;
use crate::trace::Trace;

/// What to predict besides the trace's own timeline (the arguments of `replay predict`).
#[derive(Debug, Clone, Default)]
pub struct PredictRequest {
    /// Applied in order, each on top of the ones before it (after `profile`'s).
    pub what_ifs: Vec<WhatIf>,
    /// Re-time the trace to this calibration profile's device (`--profile`).
    pub profile: Option<PathBuf>,
    /// The trace's own device's profile [default: found in `profiles/` by device name].
    pub source_profile: Option<PathBuf>,
    /// Also predict with the replayed durations of this `isolated.json` (`--isolated`).
    pub isolated: Option<PathBuf>,
    /// Build the signature catalog even when no what-if needs it (the Perfetto export and
    /// the critical path name their work with it).
    pub want_catalog: bool,
    /// Whose host durations the `isolated` prediction runs with (`--host-times`) [default:
    /// the host model when a host section is given, else the trace's corrected].
    pub host_times: Option<HostTimes>,
    /// A calibration profile whose `host` section drives the host model (`--host-profile`);
    /// without it, `profile`'s when that has one.
    pub host_profile: Option<PathBuf>,
}

/// The prediction with an `isolated.json`'s durations, as `replay predict --isolated`
/// prints it.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayedNumbers {
    /// The isolated file, as given.
    pub isolated: String,
    /// The device the isolated durations were measured on.
    pub isolated_device: String,
    /// Signatures of the file whose replayed durations replaced the trace's.
    pub replayed_signatures: usize,
    /// What `predicted_us` and `measured_us` span.
    pub span: &'static str,
    /// The timeline with the replayed durations (the model call, as in `replay compare`).
    pub predicted_us: f64,
    /// The same span in the trace (the model call on the trace's own times).
    pub measured_us: f64,
    pub error_percent: f64,
    /// The trace's whole profiled step, loop around the model included, for reference.
    pub measured_step_us: f64,
    /// The predicted model call's host and device time, and which one bounds it.
    pub host_us: f64,
    pub device_us: f64,
    pub bound: &'static str,
    /// What the host side ran with.
    pub host: HostReport,
}

/// Everything `replay predict` computes.
#[derive(Debug)]
pub struct PredictOutput {
    /// The trace's own durations through the timeline model.
    pub original: Timeline,
    /// Its numbers against the trace's measured step.
    pub prediction: Prediction,
    /// `--profile`'s re-timing (when given) and then each what-if, in order.
    pub answers: Vec<WhatIfTimeline>,
    /// The answers' numbers beside the original's.
    pub outcomes: Vec<WhatIfOutcome>,
    /// What the what-ifs selected by (empty when nothing needed it).
    pub catalog: SignatureCatalog,
    /// How `--profile` re-timed the signatures (empty without it).
    pub hardware_note: String,
    /// With `isolated`: the replayed prediction.
    pub replayed: Option<ReplayedNumbers>,
}

/// `replay predict` on a loaded trace (`trace_path` is the file it was read from: messages
/// name it, and the catalog records it).
pub fn predict_trace(
    trace: &Trace,
    trace_path: &Path,
    request: &PredictRequest,
) -> crate::Result<PredictOutput> {
    let skeleton = super::skeleton(trace).map_err(crate::Error::from)?;
    let original = Timeline::simulate(
        "original: the trace's own durations",
        skeleton,
        &Durations::trace_own(),
    );
    let prediction = original.prediction().for_trace(trace);

    // --profile first, then the what-ifs on top of it.
    let hardware = hardware_what_if(request, trace, trace_path)?;
    let what_ifs: Vec<WhatIf> = hardware.iter().chain(&request.what_ifs).cloned().collect();
    let catalog = if what_ifs.is_empty() && !request.want_catalog {
        SignatureCatalog::default()
    } else {
        SignatureCatalog::from_file(&signature::classify(trace, trace_path))
    };
    let answers = super::run_what_ifs(&original, &what_ifs, &catalog)?;
    let hardware_note = hardware
        .as_ref()
        .map(|h| hardware_note(h, &catalog, &original.skeleton.signature_ids))
        .unwrap_or_default();
    let outcomes = answers
        .iter()
        .map(|answer| WhatIfOutcome::new(answer, &prediction))
        .collect();
    let replayed = match &request.isolated {
        Some(path) => {
            let results = IsolatedResults::read(path)?;
            let settings = HostSettings::from_flags(
                request.host_times,
                request.host_profile.as_deref(),
                request.profile.as_deref(),
            )?;
            let timeline =
                super::with_host_times(trace, &results, &settings).map_err(crate::Error::from)?;
            let measured_us = timeline
                .measured_model_call_us
                .unwrap_or(prediction.measured_us);
            let host = timeline.host.clone().unwrap_or_else(unreachable_report);
            Some(ReplayedNumbers {
                isolated: path.display().to_string(),
                isolated_device: results.device.clone(),
                replayed_signatures: results
                    .results
                    .iter()
                    .filter(|r| matches!(r.status, Status::Ok | Status::Included))
                    .count(),
                span: "the model call: from the first op, launch or kernel to the end of the \
                       last, the loop around the model left out",
                predicted_us: timeline.predicted_us,
                measured_us,
                error_percent: super::error_percent(timeline.predicted_us, measured_us),
                measured_step_us: prediction.measured_us,
                host_us: timeline.host_us,
                device_us: timeline.device_us,
                bound: timeline.bound(),
                host,
            })
        }
        None => None,
    };
    Ok(PredictOutput {
        original,
        prediction,
        answers,
        outcomes,
        catalog,
        hardware_note,
        replayed,
    })
}

/// `with_host_times` always reports its host side; an empty report should it not.
fn unreachable_report() -> HostReport {
    HostReport {
        host_times: HostTimes::Corrected,
        host_model: String::new(),
        profiler_us_per_cpu_event: 0.0,
        profiler_us_per_runtime_event: 0.0,
        units: 0,
        launches: 0,
        launches_measured: 0,
        notes: Vec::new(),
    }
}

/// Where `--profile` looks for the trace's own device's profile: `profiles/` in the working
/// directory (the user's own), then the profiles that ship with replay, found from anywhere.
fn profile_dirs() -> Vec<PathBuf> {
    let local = PathBuf::from(crate::shipped::PROFILES_DIR);
    let shipped = crate::shipped::shipped_file(crate::shipped::PROFILES_DIR);
    let same = match (local.canonicalize(), shipped.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    if same {
        vec![local]
    } else {
        vec![local, shipped]
    }
}

/// `--profile`'s what-if: the source profile given, or found in `profiles/` by the trace's
/// device name.
fn hardware_what_if(
    request: &PredictRequest,
    trace: &Trace,
    trace_path: &Path,
) -> crate::Result<Option<WhatIf>> {
    let Some(target_path) = &request.profile else {
        return Ok(None);
    };
    let target = Profile::read(target_path)?;
    // The trace's own device: nothing to re-time (its host section, if any, drives the host
    // model of `--isolated`).
    if trace_device_name(trace).is_some_and(|device| target.stands_for(&device)) {
        return Ok(None);
    }
    let (source, source_path) = match &request.source_profile {
        Some(path) => (Profile::read(path)?, path.clone()),
        None => {
            let device = trace_device_name(trace).ok_or_else(|| crate::Error::BadInput {
                path: trace_path.to_path_buf(),
                message: "it names no device (no deviceProperties): give --source-profile".into(),
            })?;
            let dirs = profile_dirs();
            let mut found = None;
            for dir in &dirs {
                found = find_profile(dir, &device)?;
                if found.is_some() {
                    break;
                }
            }
            found.ok_or_else(|| {
                let looked: Vec<String> =
                    dirs.iter().map(|d| format!("{}/", d.display())).collect();
                crate::Error::BadInput {
                    path: trace_path.to_path_buf(),
                    message: format!(
                        "no profile in {} stands for its device '{device}': give \
                         --source-profile (or add '{device}' to a profile's device_names)",
                        looked.join(" or ")
                    ),
                }
            })?
        }
    };
    let expression = format!(
        "profile={} (from {})",
        target.metadata.hardware_name, source.metadata.hardware_name
    );
    Ok(Some(WhatIf {
        expression,
        change: Change::Hardware(Box::new(HardwareScaling {
            source,
            source_path,
            target,
            target_path: target_path.clone(),
        })),
    }))
}

/// The profile in `dir` that stands for `device`, if any (files read in name order).
fn find_profile(dir: &Path, device: &str) -> crate::Result<Option<(Profile, PathBuf)>> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(None);
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    for path in paths {
        let profile = Profile::read(&path)?;
        if profile.stands_for(device) {
            return Ok(Some((profile, path)));
        }
    }
    Ok(None)
}

/// How `--profile` re-timed the trace's signatures, by basis, for the summary.
fn hardware_note(what_if: &WhatIf, catalog: &SignatureCatalog, trace_ids: &[String]) -> String {
    let Change::Hardware(scaling) = &what_if.change else {
        return String::new();
    };
    let mut counts = BTreeMap::new();
    for id in trace_ids {
        let basis = catalog
            .get(id)
            .and_then(|info| scaling.factor(info))
            .map_or("kept (no basis in both profiles)", |(_, b)| match b {
                Basis::MeasuredGflops => "GEMM by measured GFLOPS",
                Basis::PeakGflops => "GEMM by peak GFLOPS",
                Basis::MeasuredBandwidth => "other by measured bandwidth",
                Basis::PeakBandwidth => "other by peak bandwidth",
            });
        *counts.entry(basis).or_insert(0usize) += 1;
    }
    let parts: Vec<String> = counts.iter().map(|(b, n)| format!("{n} {b}")).collect();
    format!(
        "on other hardware: {} ({}, {}) from {} ({}, {}); signatures: {}\n",
        scaling.target.metadata.hardware_name,
        scaling.target.source,
        scaling.target_path.display(),
        scaling.source.metadata.hardware_name,
        scaling.source.source,
        scaling.source_path.display(),
        parts.join(", ")
    )
}
