//! The timeline with replayed durations: every signature that replayed (`ok`, or `included`
//! in another's replay) takes its isolated time per invocation, every other keeps the
//! trace's own. What `replay compare` predicts and `replay predict --isolated` prints.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use super::{
    measured_model_call_ns, model_call_ns, remove_interruptions, simulate, skeleton, Durations,
    HostDeviceSplit, HostItem, HostReport, HostSettings, HostTimes, Interruptions, PredictError,
    Prediction, SimulatedStep, StepSkeleton, Timeline, WaitKind,
};
use crate::results::isolated::{IsolatedResults, Status};
use crate::trace::Trace;

/// The trace's own durations through the prediction's model, against the trace's step time
/// (a report's `trace_self_check`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SelfCheck {
    pub predicted_us: f64,
    pub measured_us: f64,
    /// (predicted − measured) / measured × 100, as
    /// [`crate::report::comparison::PredictionError`]'s.
    #[serde(rename = "prediction_error_percent", alias = "error_percent")]
    pub error_percent: f64,
}

/// One bar of the timeline (`report.html`): a host op or a GPU activity of one step.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineSpan {
    /// `host`, `stream 7`, ...
    pub lane: String,
    pub start_us: f64,
    pub dur_us: f64,
    pub label: String,
    pub tier: Option<u8>,
    /// The signature id of the work, to label it with its shapes on the page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// The timeline of a trace with replayed kernel durations: what `replay compare` reports and
/// `replay predict --isolated` prints.
#[derive(Debug, Clone)]
pub struct ReplayedTimeline {
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
    pub interruptions: Interruptions,
    /// The trace's own timeline (the self-check) and the one with the replayed durations
    /// (interruptions left out), for the exporters (`export::perfetto`).
    pub own_timeline: Timeline,
    pub replayed_timeline: Timeline,
    /// The same span as `predicted_us` in the trace itself (mean over the steps): the model
    /// call on the trace's own times. `None` when the steps do not know their trace times.
    pub measured_model_call_us: Option<f64>,
    /// The predicted model call's host time (the busiest thread's own work, waits' waiting
    /// left out) and device time (any activity running), means over the steps.
    pub host_us: f64,
    pub device_us: f64,
    /// What the host side ran with (`None`: the trace's host time less capture's per-op
    /// profiler cost, as `replay compare` has always predicted).
    pub host: Option<HostReport>,
}

impl ReplayedTimeline {
    /// Which side bounds the predicted step: `host` or `device`.
    pub fn bound(&self) -> &'static str {
        if self.host_us >= self.device_us {
            "host"
        } else {
            "device"
        }
    }
}

/// The replayed time per invocation of every signature of `results` that replayed (`ok`, or
/// `included` in another's replay), by signature id: the durations both
/// [`with_replayed_durations`] and the `durations=FILE` what-if put in the timeline.
pub fn replayed_durations(results: &IsolatedResults) -> Durations {
    let mut durations = Durations::trace_own();
    for result in &results.results {
        if let (Status::Ok | Status::Included | Status::Estimated, Some(predicted_us)) =
            (result.status, result.predicted_us)
        {
            durations.set(result.id.clone(), predicted_us);
        }
    }
    durations
}

/// The timeline prediction of `trace` with the isolated replay `results`: every signature
/// that replayed (`ok`, or `included` in another's replay) takes its predicted time per
/// invocation; every other keeps the trace's own durations. Launch calls keep their
/// measured dispatch time: a replay's host time covers the whole op (dispatcher and all),
/// most of which the trace already counts as framework time between launches.
pub fn with_replayed_durations(
    trace: &Trace,
    results: &IsolatedResults,
) -> Result<ReplayedTimeline, PredictError> {
    replayed_timeline(trace, results, None)
}

/// [`with_replayed_durations`] with the host's durations chosen by `host` ([`HostTimes`]):
/// the trace's own, corrected for the profiler, or the host model's. The isolated results'
/// own host measurements (`host_us`) join the settings' for the host model.
pub fn with_host_times(
    trace: &Trace,
    results: &IsolatedResults,
    host: &HostSettings,
) -> Result<ReplayedTimeline, PredictError> {
    let mut host = host.clone();
    for result in &results.results {
        if let (Status::Ok | Status::Included, Some(us)) = (result.status, result.host_us) {
            host.measured_host_us.entry(result.id.clone()).or_insert(us);
        }
    }
    replayed_timeline(trace, results, Some(&host))
}

fn replayed_timeline(
    trace: &Trace,
    results: &IsolatedResults,
    host: Option<&HostSettings>,
) -> Result<ReplayedTimeline, PredictError> {
    let skeleton = skeleton(trace)?;
    let own_timeline = Timeline::simulate(
        "trace's own durations",
        skeleton.clone(),
        &Durations::trace_own(),
    );
    let own = own_timeline.prediction();

    let mut durations = replayed_durations(results);
    let mut skeleton = skeleton;
    let host_report = match host {
        // The replayed prediction is for a run without the profiler: take its calibrated
        // cost per recorded op out of the host gaps, when the capture measured it.
        None => {
            if let Some(overhead) = trace.metadata.profiler_overhead_us_per_op {
                durations.remove_profiler_overhead(overhead);
            }
            None
        }
        Some(settings) => Some(settings.apply(trace, &mut skeleton).map_err(|message| {
            PredictError::HostModel {
                path: trace.source.path.clone(),
                message,
            }
        })?),
    };
    // Time the process was not running inside the profiled model call is the machine's, not
    // the model's (`predict::interruptions`); the self-check above keeps it, and so does a
    // prediction with the trace's own host times (like with like).
    let keep_trace_host = host_report
        .as_ref()
        .is_some_and(|r| r.host_times == HostTimes::Trace);
    let interruptions = if keep_trace_host {
        Interruptions::default()
    } else {
        remove_interruptions(&mut skeleton)
    };
    let simulation = simulate(&skeleton, &durations);
    let prediction = Prediction::from_simulation(&skeleton, &simulation).for_trace(trace);

    let names: HashMap<&str, (&str, u8)> = results
        .results
        .iter()
        .map(|r| (r.id.as_str(), (r.name.as_str(), r.tier.number())))
        .collect();
    let spans = match (skeleton.steps.last(), simulation.steps.last()) {
        (Some(step), Some(simulated)) => {
            let signature = |index: Option<u32>| {
                let id = index.and_then(|i| skeleton.signature_id(i))?;
                let (name, tier) = names.get(id).copied()?;
                Some((id, name, tier))
            };
            step_spans(step, simulated, signature)
        }
        _ => Vec::new(),
    };
    let calls: Vec<f64> = skeleton
        .steps
        .iter()
        .zip(&simulation.steps)
        .map(|(step, simulated)| model_call_ns(step, simulated) as f64 / 1000.0)
        .collect();
    let predicted_us = if calls.is_empty() {
        prediction.predicted_us
    } else {
        calls.iter().sum::<f64>() / calls.len() as f64
    };
    let measured_calls: Option<Vec<f64>> = own_timeline
        .skeleton
        .steps
        .iter()
        .map(|step| measured_model_call_ns(step).map(|ns| ns as f64 / 1000.0))
        .collect();
    let measured_model_call_us = measured_calls
        .filter(|calls| !calls.is_empty())
        .map(|calls| calls.iter().sum::<f64>() / calls.len() as f64);
    let splits: Vec<HostDeviceSplit> = skeleton
        .steps
        .iter()
        .zip(&simulation.steps)
        .map(|(step, simulated)| HostDeviceSplit::of(step, simulated))
        .collect();
    let mean_us = |f: &dyn Fn(&HostDeviceSplit) -> i64| {
        if splits.is_empty() {
            0.0
        } else {
            splits.iter().map(|s| f(s) as f64).sum::<f64>() / splits.len() as f64 / 1000.0
        }
    };
    let (host_us, device_us) = (mean_us(&|s| s.host_ns), mean_us(&|s| s.device_ns));
    Ok(ReplayedTimeline {
        predicted_us,
        self_check: SelfCheck {
            predicted_us: own.predicted_us,
            measured_us: own.measured_us,
            error_percent: own.error_percent,
        },
        spans,
        prediction,
        interruptions,
        own_timeline,
        replayed_timeline: Timeline {
            name: "replayed durations".to_owned(),
            skeleton,
            simulation,
        },
        measured_model_call_us,
        host_us,
        device_us,
        host: host_report,
    })
}

/// One simulated step as drawable spans: host launches, waits and ops on one lane per
/// thread, activities on one lane per stream. Framework gaps are the empty space between.
fn step_spans<'n>(
    step: &StepSkeleton,
    simulated: &SimulatedStep,
    signature: impl Fn(Option<u32>) -> Option<(&'n str, &'n str, u8)>,
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
            let (label, tier, id) = match item {
                HostItem::Gap { .. } => continue,
                HostItem::HostOp { signature: s, .. } => match signature(*s) {
                    Some((id, name, tier)) => (name.to_owned(), Some(tier), Some(id.to_owned())),
                    None => ("host op".to_owned(), None, None),
                },
                HostItem::Launch { .. } => ("launch".to_owned(), None, None),
                HostItem::Wait { kind, .. } => (
                    match kind {
                        WaitKind::Device => "device sync",
                        WaitKind::Stream => "stream sync",
                        WaitKind::Event => "event sync",
                        WaitKind::Copy => "blocking copy",
                    }
                    .to_owned(),
                    None,
                    None,
                ),
            };
            spans.push(TimelineSpan {
                lane: lane.clone(),
                start_us: us(interval.start_ns),
                dur_us: us(interval.end_ns - interval.start_ns),
                label,
                tier,
                signature: id,
            });
        }
    }
    for (activity, interval) in step.activities.iter().zip(&simulated.activities) {
        let (label, tier, id) = match signature(activity.signature) {
            Some((id, name, tier)) => (name.to_owned(), Some(tier), Some(id.to_owned())),
            None => ("unattributed".to_owned(), None, None),
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
            signature: id,
        });
    }
    spans
}
