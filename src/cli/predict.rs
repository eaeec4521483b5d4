//! `replay predict`: a trace's step time predicted by the timeline model from the trace's
//! own durations, against the measured step time and the naive kernel sum. Also the
//! timeline part of `replay compare` ([`timeline_for_compare`]).

use std::collections::HashMap;
use std::path::PathBuf;

use clap::Args;

use crate::export;
use crate::predict::{self, Durations, HostItem, Prediction, WaitKind};
use crate::replay::isolated::{IsolatedResults, Status};
use crate::report::comparison::SelfCheck;
use crate::report::html::TimelineSpan;
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

    /// Print the prediction as JSON instead of the summary
    #[arg(long)]
    pub json: bool,
}

/// `replay predict --isolated`: both timelines of the trace, side by side.
#[derive(Debug, serde::Serialize)]
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
}

pub fn run(args: PredictArgs) -> anyhow::Result<()> {
    let loaded = trace::load(&args.trace).map_err(crate::Error::from)?;
    let prediction = self_check(&loaded)?;
    if let Some(path) = &args.isolated {
        let results = read_isolated(path)?;
        let timeline = timeline_for_compare(&loaded, &results)?;
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
            error_percent: percent_error(timeline.predicted_us, prediction.measured_us),
        };
        if args.json {
            print!(
                "{}",
                String::from_utf8_lossy(&export::json::to_bytes(&replayed))
            );
        } else {
            print!("{}", prediction.summary());
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
        print!(
            "{}",
            String::from_utf8_lossy(&export::json::to_bytes(&prediction))
        );
    } else {
        print!("{}", prediction.summary());
    }
    Ok(())
}

fn percent_error(predicted: f64, measured: f64) -> f64 {
    if measured > 0.0 {
        (predicted - measured) / measured * 100.0
    } else {
        f64::NAN
    }
}

/// An `isolated.json`, or a usage error naming the file.
fn read_isolated(path: &std::path::Path) -> Result<IsolatedResults, crate::Error> {
    let bytes = std::fs::read(path).map_err(|e| crate::Error::BadInput {
        path: path.to_path_buf(),
        message: format!("cannot read it: {e}"),
    })?;
    serde_json::from_slice(&bytes).map_err(|e| crate::Error::BadInput {
        path: path.to_path_buf(),
        message: format!("not an isolated.json of `replay isolated`: {e}"),
    })
}

/// The self-check, with a trace that has nothing to time reported as the user's input
/// problem (exit status 2), like a malformed trace.
fn self_check(trace: &Trace) -> Result<Prediction, crate::Error> {
    predict::self_check(trace).map_err(usage_error)
}

fn usage_error(error: predict::PredictError) -> crate::Error {
    crate::Error::BadInput {
        path: error.path().to_path_buf(),
        message: error.reason().to_owned(),
    }
}

/// What `replay compare` takes from the timeline model.
#[derive(Debug, Clone)]
pub struct CompareTimeline {
    /// The timeline prediction of the model call with the replayed durations (mean over the
    /// trace's steps): the framework time before the first op and after the last one, which
    /// belongs to the profiling loop around the model, is left out (`predict::model_call_ns`).
    pub predicted_us: f64,
    /// The trace's own durations through the same model, against the trace's step time.
    pub self_check: SelfCheck,
    /// The last step's simulated timeline with the replayed durations, for the report page.
    pub spans: Vec<TimelineSpan>,
    /// The whole prediction with the replayed durations.
    pub prediction: Prediction,
    /// Interruptions of the profiled model call left out of the prediction.
    pub interruptions: predict::Interruptions,
}

/// The timeline prediction of `trace` with the isolated replay `results`: every signature
/// that replayed (`ok`, or `included` in another's replay) takes its predicted time per
/// invocation; every other keeps the trace's own durations. Launch calls keep their
/// measured dispatch time: a replay's host time covers the whole op (dispatcher and all),
/// most of which the trace already counts as framework time between launches.
pub fn timeline_for_compare(
    trace: &Trace,
    results: &IsolatedResults,
) -> Result<CompareTimeline, crate::Error> {
    let skeleton = predict::skeleton(trace).map_err(usage_error)?;
    let own = predict::simulate(&skeleton, &Durations::trace_own());
    let own = Prediction::from_simulation(&skeleton, &own);

    let mut durations = Durations::trace_own();
    for result in &results.results {
        if let (Status::Ok | Status::Included, Some(predicted_us)) =
            (result.status, result.predicted_us)
        {
            durations.set(result.id.clone(), predicted_us);
        }
    }
    // The replayed prediction is for a run without the profiler: take its calibrated cost
    // per recorded op out of the host gaps, when the capture measured it.
    if let Some(overhead) = trace.metadata.profiler_overhead_us_per_op {
        durations.remove_profiler_overhead(overhead);
    }
    // Time the process was not running inside the profiled model call is the machine's, not
    // the model's (`predict::interruptions`); the self-check above keeps it.
    let mut skeleton = skeleton;
    let interruptions = predict::remove_interruptions(&mut skeleton);
    let simulation = predict::simulate(&skeleton, &durations);
    let prediction = Prediction::from_simulation(&skeleton, &simulation).for_trace(trace);

    let names: HashMap<&str, (&str, u8)> = results
        .results
        .iter()
        .map(|r| (r.id.as_str(), (r.name.as_str(), r.tier.number())))
        .collect();
    let spans = match (skeleton.steps.last(), simulation.steps.last()) {
        (Some(step), Some(simulated)) => {
            let signature = |index: Option<u32>| {
                index
                    .and_then(|i| skeleton.signature_id(i))
                    .and_then(|id| names.get(id).copied())
            };
            step_spans(step, simulated, signature)
        }
        _ => Vec::new(),
    };
    let calls: Vec<f64> = skeleton
        .steps
        .iter()
        .zip(&simulation.steps)
        .map(|(step, simulated)| predict::model_call_ns(step, simulated) as f64 / 1000.0)
        .collect();
    let predicted_us = if calls.is_empty() {
        prediction.predicted_us
    } else {
        calls.iter().sum::<f64>() / calls.len() as f64
    };
    Ok(CompareTimeline {
        predicted_us,
        self_check: SelfCheck {
            predicted_us: own.predicted_us,
            measured_us: own.measured_us,
            error_percent: own.error_percent,
        },
        spans,
        prediction,
        interruptions,
    })
}

/// One simulated step as drawable spans: host launches, waits and ops on one lane per
/// thread, activities on one lane per stream. Framework gaps are the empty space between.
fn step_spans<'n>(
    step: &predict::StepSkeleton,
    simulated: &predict::SimulatedStep,
    signature: impl Fn(Option<u32>) -> Option<(&'n str, u8)>,
) -> Vec<TimelineSpan> {
    let us = |ns: i64| ns as f64 / 1000.0;
    let mut spans = Vec::new();
    for (thread, intervals) in step.threads.iter().zip(&simulated.host) {
        let lane = if step.threads.len() == 1 {
            "host".to_owned()
        } else {
            format!("host {}", thread.label)
        };
        for (item, interval) in thread.items.iter().zip(intervals) {
            let (label, tier) = match item {
                HostItem::Gap { .. } => continue,
                HostItem::HostOp { signature: s, .. } => match signature(*s) {
                    Some((name, tier)) => (name.to_owned(), Some(tier)),
                    None => ("host op".to_owned(), None),
                },
                HostItem::Launch { .. } => ("launch".to_owned(), None),
                HostItem::Wait { kind, .. } => (
                    match kind {
                        WaitKind::Device => "device sync",
                        WaitKind::Stream => "stream sync",
                        WaitKind::Event => "event sync",
                        WaitKind::Copy => "blocking copy",
                    }
                    .to_owned(),
                    None,
                ),
            };
            spans.push(TimelineSpan {
                lane: lane.clone(),
                start_us: us(interval.start_ns),
                dur_us: us(interval.end_ns - interval.start_ns),
                label,
                tier,
            });
        }
    }
    for (activity, interval) in step.activities.iter().zip(&simulated.activities) {
        let (label, tier) = match signature(activity.signature) {
            Some((name, tier)) => (name.to_owned(), Some(tier)),
            None => ("unattributed".to_owned(), None),
        };
        let lane = step
            .streams
            .get(activity.stream)
            .map_or_else(|| "stream ?".to_owned(), |s| format!("stream {}", s.label));
        spans.push(TimelineSpan {
            lane,
            start_us: us(interval.start_ns),
            dur_us: us(interval.end_ns - interval.start_ns),
            label,
            tier,
        });
    }
    spans
}
