//! The timeline with replayed durations: every signature that replayed (`ok`, or `included`
//! in another's replay) takes its isolated time per invocation, every other keeps the
//! trace's own. What `replay compare` predicts and `replay predict --isolated` prints.

use std::collections::HashMap;

use super::{
    model_call_ns, remove_interruptions, simulate, skeleton, Durations, HostItem, Interruptions,
    PredictError, Prediction, SimulatedStep, StepSkeleton, Timeline, WaitKind,
};
use crate::report::comparison::SelfCheck;
use crate::report::html::TimelineSpan;
use crate::results::isolated::{IsolatedResults, Status};
use crate::trace::Trace;

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
    let skeleton = skeleton(trace)?;
    let own_timeline = Timeline::simulate(
        "trace's own durations",
        skeleton.clone(),
        &Durations::trace_own(),
    );
    let own = own_timeline.prediction();

    let mut durations = replayed_durations(results);
    // The replayed prediction is for a run without the profiler: take its calibrated cost
    // per recorded op out of the host gaps, when the capture measured it.
    if let Some(overhead) = trace.metadata.profiler_overhead_us_per_op {
        durations.remove_profiler_overhead(overhead);
    }
    // Time the process was not running inside the profiled model call is the machine's, not
    // the model's (`predict::interruptions`); the self-check above keeps it.
    let mut skeleton = skeleton;
    let interruptions = remove_interruptions(&mut skeleton);
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
