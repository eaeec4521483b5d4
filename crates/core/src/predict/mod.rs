//! The timeline model: predicting a step's time from the durations of its parts, with the
//! host in the picture.
//!
//! Summing kernel times badly under-predicts a launch-bound model (in
//! `h100_bert_small_infer` the kernels are busy ~7 % of the step). The timeline model
//! replays one profiled step instead:
//! - host threads issue work in order; framework time between CUDA calls (or, in a CPU-only
//!   trace, between top-level ops) is kept as measured;
//! - each launch call costs its host dispatch time;
//! - a GPU activity starts when its launch has happened (plus the measured launch latency)
//!   and the previous activity on its stream has finished (plus the measured gap), and
//!   after the activities a `cudaStreamWaitEvent` made it wait for;
//! - device, stream and event synchronisations, and copies that block, make the host wait
//!   until the work they wait for has finished;
//! - the step ends when host and device are both done (in a pipelined trace, where a step
//!   does not end with a sync and the GPU starts it still busy with the previous step, the
//!   device part counts from the end of that backlog: the steady-state period).
//!
//! A trace becomes a [`Skeleton`] ([`skeleton`]), the structure with every duration kept
//! apart; [`simulate`] runs it with a set of [`Durations`]: empty for the trace's own (the
//! self-check, [`self_check`]), or replayed times per signature id. The measured step time
//! is the `ProfilerStep#N` span, else the profiled window ([`crate::trace::steps`]); with several steps,
//! each is predicted and the report gives each and their mean.

pub(crate) mod build;
pub mod calls;
mod catalog;
mod critical_path;
pub(crate) mod delays;
mod durations;
mod error;
mod event_map;
pub mod hardware;
pub mod host_model;
mod interruptions;
mod model_call;
pub mod prediction;
mod profile_rates;
mod replayed;
pub mod request;
pub mod roofline;
mod simulate;
pub mod skeleton;
pub mod step_stats;
pub mod stream;
mod timeline;
pub mod what_if;

pub use crate::trace::steps::{StepSource, StepWindow};
pub use build::{skeleton, skeleton_of_window};
pub use catalog::{GemmShape, SignatureCatalog, SignatureInfo};
pub use critical_path::{critical_path, StepNode};
pub use durations::{Durations, SignatureDuration};
pub use error::PredictError;
pub use host_model::{HostReport, HostSettings, HostTimes};
pub use interruptions::{remove_interruptions, Interruptions};
pub use model_call::{measured_model_call_ns, model_call_ns, HostDeviceSplit};
pub use prediction::{error_percent, Prediction, StepPrediction};
pub use replayed::{
    replayed_durations, with_host_times, with_replayed_durations, ReplayedTimeline, SelfCheck,
    TimelineSpan,
};
pub use request::{predict_trace, PredictOutput, PredictRequest, ReplayedNumbers};
pub use simulate::{simulate, Interval, SimulatedStep, Simulation};
pub use skeleton::{
    Activity, ActivityKind, HostItem, HostThread, LaunchRef, Skeleton, StepSkeleton, Stream,
    WaitKind,
};
pub use timeline::Timeline;
pub use what_if::{run_what_ifs, WhatIf, WhatIfOutcome, WhatIfSyntaxError, WhatIfTimeline};

use crate::trace::Trace;

/// The trace's own durations run through the timeline model, against the trace's own step
/// time: the check that the model reproduces what it models.
pub fn self_check(trace: &Trace) -> Result<Prediction, PredictError> {
    let skeleton = skeleton(trace)?;
    let simulation = simulate(&skeleton, &Durations::trace_own());
    Ok(Prediction::from_simulation(&skeleton, &simulation).for_trace(trace))
}
