//! `replay predict`: a trace's step time predicted by the timeline model from the trace's
//! own durations, against the measured step time and the naive kernel sum; with
//! `--isolated`, also from replayed durations ([`predict::with_replayed_durations`]); with
//! `--what-if`, the same timeline with changed durations ([`predict::what_if`]); with
//! `--perfetto`, the timelines as a Chrome trace ([`export::perfetto`]).

use std::path::PathBuf;

use clap::Args;
use serde::Serialize;

use crate::export;
use crate::predict::hardware::{Basis, HardwareScaling};
use crate::predict::what_if::{Change, WhatIfOutcome, ACCEPTED};
use crate::predict::{self, Durations, Prediction, SignatureCatalog, Timeline, WhatIf};
use crate::results::calibration::Profile;
use crate::results::isolated::{IsolatedResults, Status};
use crate::signature;
use crate::trace::{self, Trace};

#[derive(Debug, Args)]
pub struct PredictArgs {
    /// PyTorch profiler (Kineto) Chrome trace, plain JSON or gzipped
    #[arg(long, value_name = "FILE")]
    pub trace: PathBuf,

    /// Also predict the step with the kernel durations of this `isolated.json` (a replay of
    /// this trace's signatures, on any device), matched by signature id; the trace's own
    /// durations stay where a signature did not replay
    #[arg(long, value_name = "FILE")]
    pub isolated: Option<PathBuf>,

    /// Ask the timeline "what if": tier1|tier2|tier3*F, kernel:REGEX*F, op:REGEX*F, host*F,
    /// launch*F, launch=US (launch=0: no host cost per launch, as with CUDA Graphs),
    /// durations=FILE (an isolated.json, by signature id). Repeatable: each applies on top
    /// of the ones before it, and each answer is printed beside the original
    #[arg(long = "what-if", value_name = "EXPR", help_heading = "What-if", long_help = what_if_help())]
    pub what_if: Vec<WhatIf>,

    /// Write the predicted timelines (the original and each what-if, one process each) as a
    /// Chrome trace that ui.perfetto.dev and chrome://tracing open
    #[arg(long, value_name = "OUT.json")]
    pub perfetto: Option<PathBuf>,

    /// Predict the trace on other hardware: re-time its kernels from the trace's device to
    /// this calibration profile's (`replay calibrate`, or a datasheet profile in profiles/) —
    /// GEMMs by GFLOPS at their size and dtype, everything else by memory bandwidth — and run
    /// the timeline again; host time is kept. Printed and exported like a what-if (first,
    /// before any --what-if)
    #[arg(long, value_name = "TARGET.json", help_heading = "Other hardware")]
    pub profile: Option<PathBuf>,

    /// The profile of the device the trace was captured on [default: the profile in
    /// profiles/ whose hardware name or device names match the trace's deviceProperties name]
    #[arg(
        long,
        value_name = "SOURCE.json",
        help_heading = "Other hardware",
        requires = "profile"
    )]
    pub source_profile: Option<PathBuf>,

    /// Print the prediction as JSON instead of the summary
    #[arg(long)]
    pub json: bool,
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

/// The name of the first device in the trace's `deviceProperties`.
fn trace_device_name(trace: &Trace) -> Option<String> {
    trace
        .metadata
        .device_properties
        .as_ref()?
        .as_array()?
        .first()?
        .get("name")?
        .as_str()
        .map(str::to_owned)
}

/// `--profile`'s what-if: the source profile given, or found in `profiles/` by the trace's
/// device name.
fn hardware_what_if(args: &PredictArgs, trace: &Trace) -> crate::Result<Option<WhatIf>> {
    let Some(target_path) = &args.profile else {
        return Ok(None);
    };
    let target = Profile::read(target_path)?;
    let (source, source_path) = match &args.source_profile {
        Some(path) => (Profile::read(path)?, path.clone()),
        None => {
            let device = trace_device_name(trace).ok_or_else(|| crate::Error::BadInput {
                path: args.trace.clone(),
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
                    path: args.trace.clone(),
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
fn find_profile(dir: &std::path::Path, device: &str) -> crate::Result<Option<(Profile, PathBuf)>> {
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
    let mut counts = std::collections::BTreeMap::new();
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

fn what_if_help() -> String {
    format!(
        "Ask the timeline \"what if\": re-run it with changed durations and print the new step \
         time beside the original. Accepted: {ACCEPTED}. tierN: the tier's signatures (1 \
         copies and memsets, 2 GEMMs, 3 everything else); kernel:REGEX the signatures whose \
         kernel name REGEX finds; op:REGEX those launched inside an op REGEX finds; host the \
         host's own time (framework time, launch calls, a wait's own cost); launch=0 no host \
         cost per launch (the effect of CUDA Graphs). Repeatable: applied in order, each on \
         top of the ones before it."
    )
}

/// `replay predict --isolated`: both timelines of the trace, side by side.
#[derive(Debug, Serialize)]
struct ReplayedPrediction<'a> {
    /// The trace's own durations through the timeline (the self-check).
    self_check: &'a Prediction,
    /// The isolated file, as given.
    isolated: String,
    /// The device the isolated durations were measured on.
    isolated_device: &'a str,
    /// Signatures of the file whose replayed durations replaced the trace's.
    replayed_signatures: usize,
    /// The timeline with the replayed durations (the model call, as in `replay compare`).
    predicted_us: f64,
    /// The trace's measured step.
    measured_us: f64,
    error_percent: f64,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    what_ifs: &'a [WhatIfOutcome],
}

/// `replay predict --json` without `--isolated`: the prediction's own fields, and the
/// what-ifs' answers when some were asked.
#[derive(Debug, Serialize)]
struct PredictionWithWhatIfs<'a> {
    #[serde(flatten)]
    prediction: &'a Prediction,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    what_ifs: &'a [WhatIfOutcome],
}

pub fn run(args: PredictArgs) -> anyhow::Result<()> {
    let loaded = trace::load(&args.trace).map_err(crate::Error::from)?;
    let skeleton = predict::skeleton(&loaded).map_err(crate::Error::from)?;
    let original = Timeline::simulate(
        "original: the trace's own durations",
        skeleton,
        &Durations::trace_own(),
    );
    let prediction = original.prediction().for_trace(&loaded);

    // --profile first, then the what-ifs on top of it.
    let hardware = hardware_what_if(&args, &loaded)?;
    let what_ifs: Vec<WhatIf> = hardware.iter().chain(&args.what_if).cloned().collect();
    // What the what-ifs select by, and what the exported timeline names its work with.
    let catalog = if what_ifs.is_empty() && args.perfetto.is_none() {
        SignatureCatalog::default()
    } else {
        catalog_of(&loaded, &args.trace)
    };
    let answers = predict::run_what_ifs(&original, &what_ifs, &catalog)?;
    let note = hardware
        .as_ref()
        .map(|h| hardware_note(h, &catalog, &original.skeleton.signature_ids))
        .unwrap_or_default();
    let outcomes: Vec<WhatIfOutcome> = answers
        .iter()
        .map(|answer| WhatIfOutcome::new(answer, &prediction))
        .collect();
    if let Some(path) = &args.perfetto {
        let mut timelines: Vec<&Timeline> = vec![&original];
        timelines.extend(answers.iter().map(|a| &a.timeline));
        export::perfetto::write(path, &timelines, &catalog)?;
    }

    if let Some(path) = &args.isolated {
        let results = IsolatedResults::read(path)?;
        let timeline =
            predict::with_replayed_durations(&loaded, &results).map_err(crate::Error::from)?;
        let replayed = ReplayedPrediction {
            self_check: &prediction,
            isolated: path.display().to_string(),
            isolated_device: &results.device,
            replayed_signatures: results
                .results
                .iter()
                .filter(|r| matches!(r.status, Status::Ok | Status::Included))
                .count(),
            predicted_us: timeline.predicted_us,
            measured_us: prediction.measured_us,
            error_percent: predict::error_percent(timeline.predicted_us, prediction.measured_us),
            what_ifs: &outcomes,
        };
        if args.json {
            print!(
                "{}",
                String::from_utf8_lossy(&export::json::to_bytes(&replayed))
            );
        } else {
            print!("{}", prediction.summary());
            print!("{}", WhatIfOutcome::summary(&outcomes, &prediction));
            print!("{note}");
            println!(
                "with the durations of {} ({}, {} signatures replayed): {:.1} us predicted against {:.1} us measured ({:+.1} %)",
                replayed.isolated,
                replayed.isolated_device,
                replayed.replayed_signatures,
                replayed.predicted_us,
                replayed.measured_us,
                replayed.error_percent
            );
        }
        return Ok(());
    }
    if args.json {
        let printed = PredictionWithWhatIfs {
            prediction: &prediction,
            what_ifs: &outcomes,
        };
        print!(
            "{}",
            String::from_utf8_lossy(&export::json::to_bytes(&printed))
        );
    } else {
        print!("{}", prediction.summary());
        print!("{}", WhatIfOutcome::summary(&outcomes, &prediction));
        print!("{note}");
    }
    Ok(())
}

/// The trace's signatures by id: their tiers, names, ops and labels.
fn catalog_of(trace: &Trace, path: &std::path::Path) -> SignatureCatalog {
    SignatureCatalog::from_file(&signature::classify(trace, path))
}
