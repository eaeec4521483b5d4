//! `comparison_report.json`: the whole model's measured latency against what its replayed
//! kernels predict, tier by tier. The report's types; `aggregate.rs` builds it,
//! `energy_report.rs` its energy part.
//!
//! Keeps the original tool's fields with its meanings (`full_model_inference_us`,
//! `predicted_from_kernels_us`, `error_percent` = (measured − predicted) / measured × 100,
//! `tier_breakdown`) and adds `prediction_error_percent` (the opposite sign, as every other
//! error here), the timeline prediction, coverage, the top
//! signatures and the trace self-check.

use serde::{Deserialize, Serialize};

pub use crate::predict::SelfCheck;

pub use super::energy_report::EnergyReport;
use crate::results::full_model::FullModelTiming;
use crate::results::isolated::Status;
use crate::signature::schema::Tier;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TierBreakdown {
    /// How this tier was replayed on the device that ran it.
    pub method: String,
    pub unique_kernels: usize,
    pub invocations: u64,
    /// Σ predicted time of one invocation × count (µs); unreplayed signatures at trace time.
    pub total_us: f64,
    /// Share of the summed prediction.
    pub share: f64,
    /// Σ of the trace's own durations for this tier (µs).
    pub trace_total_us: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Tiers {
    pub tier1_cuda_runtime: TierBreakdown,
    pub tier2_cublas: TierBreakdown,
    pub tier3_libtorch: TierBreakdown,
    /// Kernels torch.compile generated, when the trace has some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier4_generated: Option<TierBreakdown>,
}

impl Tiers {
    /// Each tier's number and breakdown, tier 4 only where there is one.
    pub fn numbered(&self) -> Vec<(u8, &TierBreakdown)> {
        let mut tiers = vec![
            (1, &self.tier1_cuda_runtime),
            (2, &self.tier2_cublas),
            (3, &self.tier3_libtorch),
        ];
        if let Some(generated) = &self.tier4_generated {
            tiers.push((4, generated));
        }
        tiers
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PredictionError {
    pub predicted_us: f64,
    /// (predicted − measured) / measured × 100: negative when the prediction falls short.
    /// Written as `prediction_error_percent` (the report's top-level `error_percent` is the
    /// seed's, of the opposite sign); reports written before read under either name.
    #[serde(rename = "prediction_error_percent", alias = "error_percent")]
    pub error_percent: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TopSignature {
    pub id: String,
    pub tier: Tier,
    pub name: String,
    pub op: Option<String>,
    pub count: u64,
    pub status: Status,
    pub isolated_median_us: Option<f64>,
    /// Isolated median × share × count, or the trace time when not replayed.
    pub predicted_total_us: f64,
    pub trace_total_us: f64,
    /// `aten::linear [1,5,1024]×[250880,1024] f32`: the op with its shapes and dtypes, what
    /// tells the signatures of one op apart ([`crate::signature::label`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// The trace's own mean time per invocation.
    #[serde(default)]
    pub trace_mean_us: f64,
    /// Isolated time per invocation (median × share) over the trace's mean: above 1 the
    /// replay is slower than the traced run; `None` when it did not replay on its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub isolated_over_trace: Option<f64>,
    /// Its time per invocation in its place in the re-run step (`replay sequence`), when
    /// compare re-ran it: against the isolated time, the context effect.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_context_us: Option<f64>,
}

/// One signature's isolated time against its time in the trace: a dot of the report's
/// scatter. Every signature of the run, largest trace time first.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SignatureTime {
    pub id: String,
    pub tier: Tier,
    pub label: String,
    pub count: u64,
    /// Isolated time per invocation (median × share); `None` when it did not replay on its
    /// own (included in another's replay, unsupported, failed).
    pub isolated_us: Option<f64>,
    /// The trace's own mean time per invocation.
    pub trace_mean_us: f64,
    pub isolated_over_trace: Option<f64>,
    /// Its share of the trace's time (Σ of every signature's trace time).
    pub share_of_trace: f64,
    /// Its time per invocation in the re-run step (see [`TopSignature::in_context_us`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_context_us: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Unreplayed {
    pub id: String,
    pub name: String,
    pub status: Status,
    pub reason: String,
    pub trace_total_us: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Coverage {
    /// Share of the trace's time whose signatures replayed `ok` (or are `included`).
    pub replayed_share_of_trace_time: f64,
    /// Time inside torch.compile'd regions of the profiled steps that no recorded op
    /// covers (µs): replay could not see it. Absent for traces without compiled regions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uninstrumented_compiled_us: Option<f64>,
    /// Its share of the profiled steps' time, in [0, 1].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unseen_share_of_step: Option<f64>,
    /// The compiled wrapper's host time per forward pass, measured unprofiled by the capture
    /// with every kernel a no-op: the unseen part of the step, measured. It is added to the
    /// kernel sum (`predictions.sum`; `predicted_from_kernels_us` stays the seed's Σ).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrapper_us: Option<f64>,
    /// For a compiled trace: the share of the profiled step replay measured: the ops replayed
    /// alone and the measured wrapper, replayed share × (1 − unseen share) + min(unseen share,
    /// `wrapper_us` / the step's time). The unseen time beyond the wrapper stays unseen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accounted_share_of_step: Option<f64>,
    /// How unreplayed signatures enter the predictions.
    pub accounting: String,
    pub unreplayed: Vec<Unreplayed>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ComparisonReport {
    pub model: String,
    pub device: String,
    pub seq_len: i64,
    /// The model's inputs as fed to the profiled and the timed runs (`--input`, or token ids).
    #[serde(default)]
    pub inputs: Vec<String>,
    pub trace: Option<String>,
    pub signatures: String,
    /// Median of the measured full-model runs (µs).
    pub full_model_inference_us: f64,
    pub full_model: FullModelTiming,
    /// Where and how the full model was timed when replay did not time it itself between the
    /// isolated rounds (a torch.compile'd model, timed in the capture's Python process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub full_model_note: Option<String>,
    /// The original tool's prediction: Σ isolated median × count.
    pub predicted_from_kernels_us: f64,
    /// The seed's error of the kernel sum, with the seed's sign: (measured − predicted) /
    /// measured × 100, positive when the kernels sum to less than the model (its README:
    /// measured 12,500 µs, predicted 11,800 µs, 5.6).
    pub error_percent: f64,
    /// replay's signed error of the kernel sum: (predicted − measured) / measured × 100, the
    /// sign every other error of this report has (−5.6 in the seed's example).
    #[serde(default)]
    pub prediction_error_percent: f64,
    pub predictions: Predictions,
    pub invocations: u64,
    pub tier_breakdown: Tiers,
    pub top_signatures: Vec<TopSignature>,
    pub coverage: Coverage,
    /// The timeline model fed with the trace's own durations, against the trace's step time.
    pub trace_self_check: Option<SelfCheck>,
    /// Host gaps inside the profiled model call far longer than its others (the process was
    /// preempted while profiled), replaced by a typical gap in the timeline prediction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline_interruptions: Option<crate::predict::Interruptions>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<EnergyReport>,
    /// Every signature's isolated time against its trace time (the page's scatter).
    #[serde(default)]
    pub signature_times: Vec<SignatureTime>,
    /// The Execution Trace the signatures were classified with and how it linked (ops
    /// linked, signatures with exact schemas and recorded index ranges); absent without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_trace: Option<crate::signature::ExecutionTraceSource>,
    /// The host-model prediction's step split into host and device time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_device: Option<HostDevice>,
    /// Figures that disagree by far more than the profiler or noise explain, each naming the
    /// one to distrust ([`super::disturbed`]); absent when none do.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub machine_disturbed: Vec<String>,
    /// The median of each fifth of the real model's runs in the order they ran (µs): a machine
    /// that changed speed mid-run shows as fifths far apart, and the measured median then
    /// depends on when it changed; absent for fewer than 10 runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub full_model_fifths_us: Vec<f64>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Predictions {
    pub sum: PredictionError,
    pub timeline: Option<PredictionError>,
    /// The timeline with every op's time from the trace's step re-run in order (`replay
    /// sequence`): in-context times instead of isolated ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence: Option<PredictionError>,
    /// The trace's step re-run in order in real time (`replay sequence`'s `real_time`: the
    /// ops back to back, one timing around the step), no timeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequence_real_time: Option<PredictionError>,
    /// The timeline with the host's durations from the host model (measured without the
    /// profiler) instead of the profiled trace's: what a GPU's host-bound step needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_model: Option<PredictionError>,
    /// `sum`, `timeline`, `sequence` or `host_model`: the one closest to the measured time,
    /// known only after measuring (for reference: the prediction is `chosen`).
    pub best: String,
    /// The prediction, named by rule before the truth is known ([`chosen_prediction`]): the
    /// host model on a GPU, the timeline on the CPU, the kernel sum without a trace.
    #[serde(default)]
    pub chosen: String,
    /// The rule that chose it, in words.
    #[serde(default)]
    pub chosen_because: String,
    /// Whether the chosen prediction falls inside the measured runs' p10-p90.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chosen_inside_p10_p90: Option<bool>,
}

/// The rule that names the prediction before the truth is known: on a GPU the host model
/// (the step is host-bound and the profiled host time is the profiler's); on the CPU the
/// sequence (the timeline with each op's in-context time from the step re-run in order: the
/// closest in `make bench-accuracy`, 2026-11-29: within 5 % on 10 of 12 configurations by the
/// median of three, the timeline on 4); else the timeline; the kernel sum when there is no
/// trace. Returns the name and the reason.
pub fn chosen_prediction(
    on_gpu: bool,
    has_host_model: bool,
    has_sequence: bool,
    has_timeline: bool,
) -> (&'static str, &'static str) {
    match (on_gpu, has_host_model, has_sequence, has_timeline) {
        (true, true, _, _) => (
            "host_model",
            "on a GPU: the timeline with the host's costs measured without the profiler",
        ),
        (false, _, true, _) => (
            "sequence",
            "on the CPU: the timeline with the step re-run in order, the closest in make \
             bench-accuracy",
        ),
        (_, _, _, true) => (
            "timeline",
            "the timeline of the trace (on a GPU without a host model, on the CPU without a \
             re-run step)",
        ),
        _ => ("sum", "no trace: the kernel sum is the only prediction"),
    }
}

/// The predicted model call split into host and device time, and which bounds it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostDevice {
    /// The busiest host thread's own time (waiting for the device left out), µs.
    pub host_us: f64,
    /// Time with a kernel, copy or memset running, µs.
    pub device_us: f64,
    /// `host` or `device`.
    pub bound: String,
    /// What the host side ran with (`model`, `corrected`, `trace`) and from where.
    pub host_times: String,
    pub host_model: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::chosen_prediction;

    #[test]
    fn the_prediction_is_named_by_device_and_by_what_was_measured() {
        let name = |gpu, host, seq, timeline| chosen_prediction(gpu, host, seq, timeline).0;
        // A GPU: the host model whenever there is one, the sequence never first.
        assert_eq!(name(true, true, true, true), "host_model");
        assert_eq!(name(true, false, true, true), "timeline");
        // The CPU: the sequence when the step was re-run, the host model never.
        assert_eq!(name(false, true, true, true), "sequence");
        assert_eq!(name(false, true, false, true), "timeline");
        assert_eq!(name(false, false, false, false), "sum");
        assert_eq!(name(true, false, false, false), "sum");
    }
}
