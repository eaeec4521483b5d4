//! What a prediction reports: predicted against measured step time, and the naive kernel
//! sum for contrast, per step and as means over the steps.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::trace::{FxHashMap, Nanos, Platform, Trace};

use super::simulate::{mean, SimulatedStep, Simulation};
use super::skeleton::{Skeleton, StepSkeleton};
use crate::signature::compiled_code::{compiled_code, CompiledCodeIndex};
use crate::trace::steps::{step_windows, StepSource, StepWindow};

/// One step's numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepPrediction {
    pub name: String,
    pub predicted_us: f64,
    pub measured_us: f64,
    /// (predicted - measured) / measured × 100: negative is an under-prediction.
    pub error_percent: f64,
    /// Σ GPU activity durations (the naive prediction); on a CPU-only trace, Σ top-level
    /// op durations.
    pub kernel_sum_us: f64,
    pub kernel_sum_error_percent: f64,
    /// Share of the predicted step with at least one GPU activity running.
    pub gpu_busy_fraction: f64,
    /// When the last host thread finished, and the last activity.
    pub host_end_us: f64,
    pub device_end_us: f64,
    /// GPU work of the step that ran past the step span's end in the trace (0 when the
    /// step ends with a synchronisation); see [`StepSkeleton::measured_device_tail_ns`].
    pub measured_device_tail_us: f64,
    /// Earlier steps' GPU work still running when the step started (pipelined traces):
    /// the device part of the step is counted from its end.
    pub device_backlog_us: f64,
    pub host_threads: u64,
    pub launches: u64,
    pub waits: u64,
    pub host_ops: u64,
    pub activities: u64,
    pub broken_dependencies: u64,
    /// Time inside torch.compile'd regions of the step that no recorded op covers
    /// (uninstrumented compiled code: the timeline keeps it as host time between ops, but it
    /// is no framework overhead). Absent when the step has no compiled region.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uninstrumented_compiled_us: Option<f64>,
}

/// The prediction for a trace: means over its steps, and each step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    /// The trace file, as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Platform>,
    pub measured_from: StepSource,
    /// Mean predicted step time over the steps.
    pub predicted_us: f64,
    /// Mean measured step time over the steps.
    pub measured_us: f64,
    /// Error of the means: (predicted - measured) / measured × 100.
    pub error_percent: f64,
    /// Mean Σ GPU activity durations per step (Σ top-level ops on a CPU-only trace).
    pub kernel_sum_us: f64,
    pub kernel_sum_error_percent: f64,
    /// GPU busy time over predicted time, all steps together.
    pub gpu_busy_fraction: f64,
    /// Invocations whose duration came from replayed timings (0 for the self-check).
    pub overridden_invocations: u64,
    /// Mean over the steps of their uninstrumented compiled code (see
    /// [`StepPrediction::uninstrumented_compiled_us`]); absent without compiled regions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uninstrumented_compiled_us: Option<f64>,
    pub steps: Vec<StepPrediction>,
}

fn us(nanos: f64) -> f64 {
    // Whole nanoseconds print with at most three decimals, like every time in the files.
    (nanos).round() / 1000.0
}

/// Signed error in percent; 0 when there is nothing measured to compare with (a
/// hand-built skeleton), since no error can be stated.
pub fn error_percent(predicted: f64, measured: f64) -> f64 {
    if measured > 0.0 {
        100.0 * (predicted - measured) / measured
    } else {
        0.0
    }
}

/// `part / whole` within [0, 1]. GPU busy time can exceed a pipelined step's predicted
/// time (its streams overlap the previous step's backlog), hence the bound.
fn fraction(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        (part / whole).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// The uninstrumented compiled code in `window` of `trace` (see
/// [`StepPrediction::uninstrumented_compiled_us`]).
pub fn uninstrumented_compiled_us(trace: &Trace, window: &StepWindow) -> Option<f64> {
    compiled_code(trace, &[(window.start_ns, window.end_ns)]).map(|c| c.uninstrumented_us)
}

fn step_prediction(step: &StepSkeleton, simulated: &SimulatedStep) -> StepPrediction {
    let predicted = simulated.predicted_ns as f64;
    let measured = step.measured_ns as f64;
    let kernel_sum = simulated.kernel_sum_ns as f64;
    StepPrediction {
        name: step.name.clone(),
        predicted_us: us(predicted),
        measured_us: us(measured),
        error_percent: error_percent(predicted, measured),
        kernel_sum_us: us(kernel_sum),
        kernel_sum_error_percent: error_percent(kernel_sum, measured),
        gpu_busy_fraction: fraction(simulated.gpu_busy_ns as f64, predicted),
        host_end_us: us(simulated.host_end_ns as f64),
        device_end_us: us(simulated.device_end_ns as f64),
        measured_device_tail_us: us(step.measured_device_tail_ns as f64),
        device_backlog_us: us(simulated.device_backlog_ns as f64),
        host_threads: step.threads.len() as u64,
        launches: step.launch_count() as u64,
        waits: step.wait_count() as u64,
        host_ops: step.host_op_count() as u64,
        activities: step.activities.len() as u64,
        broken_dependencies: simulated.broken_dependencies,
        uninstrumented_compiled_us: None,
    }
}

/// One step's part of a [`Prediction`]: its numbers and what the means are made of. The
/// streamed predict ([`super::stream`]) keeps these, one step at a time, instead of the
/// steps' skeletons.
#[derive(Debug, Clone)]
pub struct StepNumbers {
    pub prediction: StepPrediction,
    predicted_ns: Nanos,
    measured_ns: Nanos,
    kernel_sum_ns: Nanos,
    gpu_busy_ns: Nanos,
    overridden_invocations: u64,
}

impl StepNumbers {
    pub fn new(step: &StepSkeleton, simulated: &SimulatedStep) -> StepNumbers {
        StepNumbers {
            prediction: step_prediction(step, simulated),
            predicted_ns: simulated.predicted_ns,
            measured_ns: step.measured_ns,
            kernel_sum_ns: simulated.kernel_sum_ns,
            gpu_busy_ns: simulated.gpu_busy_ns,
            overridden_invocations: simulated.overridden_invocations,
        }
    }
}

impl Prediction {
    /// The numbers of `simulation`, a run of `skeleton`.
    pub fn from_simulation(skeleton: &Skeleton, simulation: &Simulation) -> Prediction {
        let steps: Vec<StepNumbers> = skeleton
            .steps
            .iter()
            .zip(&simulation.steps)
            .map(|(step, simulated)| StepNumbers::new(step, simulated))
            .collect();
        Prediction::from_steps(skeleton.source, steps)
    }

    /// The prediction made of each step's numbers, in order.
    pub fn from_steps(source: StepSource, steps: Vec<StepNumbers>) -> Prediction {
        let predicted = mean(steps.iter().map(|s| s.predicted_ns));
        let measured = mean(steps.iter().map(|s| s.measured_ns));
        let kernel_sum = mean(steps.iter().map(|s| s.kernel_sum_ns));
        let busy: Nanos = steps
            .iter()
            .map(|s| s.gpu_busy_ns)
            .fold(0, Nanos::saturating_add);
        let predicted_total: Nanos = steps
            .iter()
            .map(|s| s.predicted_ns)
            .fold(0, Nanos::saturating_add);
        Prediction {
            trace: None,
            platform: None,
            measured_from: source,
            predicted_us: us(predicted),
            measured_us: us(measured),
            error_percent: error_percent(predicted, measured),
            kernel_sum_us: us(kernel_sum),
            kernel_sum_error_percent: error_percent(kernel_sum, measured),
            gpu_busy_fraction: fraction(busy as f64, predicted_total as f64),
            overridden_invocations: steps.iter().map(|s| s.overridden_invocations).sum(),
            uninstrumented_compiled_us: None,
            steps: steps.into_iter().map(|s| s.prediction).collect(),
        }
    }

    /// Names the trace the prediction is for, and gives each step its uninstrumented
    /// compiled code.
    pub fn for_trace(self, trace: &Trace) -> Prediction {
        let (_, windows) = step_windows(trace);
        let index = CompiledCodeIndex::new(trace);
        let by_name: FxHashMap<&str, &StepWindow> =
            windows.iter().rev().map(|w| (w.name.as_str(), w)).collect();
        let compiled: Vec<Option<f64>> = self
            .steps
            .iter()
            .map(|step| {
                by_name.get(step.name.as_str()).and_then(|window| {
                    index
                        .in_windows(&[(window.start_ns, window.end_ns)])
                        .map(|c| c.uninstrumented_us)
                })
            })
            .collect();
        self.named(&trace.source.path, trace.platform, compiled)
    }

    /// Names the trace (`path`, on `platform`), and gives each step its uninstrumented
    /// compiled code (`compiled`, by step) and the steps their mean.
    pub fn named(
        mut self,
        path: &std::path::Path,
        platform: Platform,
        compiled: Vec<Option<f64>>,
    ) -> Prediction {
        self.trace = Some(path.display().to_string());
        self.platform = Some(platform);
        for (step, compiled) in self.steps.iter_mut().zip(compiled) {
            step.uninstrumented_compiled_us = compiled;
        }
        let per_step: Vec<f64> = self
            .steps
            .iter()
            .filter_map(|s| s.uninstrumented_compiled_us)
            .collect();
        if !per_step.is_empty() {
            // Over every step: a step without compiled code has none.
            let total: f64 = per_step.iter().sum();
            self.uninstrumented_compiled_us =
                Some(us((1000.0 * total / self.steps.len() as f64).round()));
        }
        self
    }

    /// The readable summary `replay predict` prints.
    pub fn summary(&self) -> String {
        let mut text = String::new();
        if let Some(trace) = &self.trace {
            let platform = match self.platform {
                Some(Platform::Cuda) => " (CUDA)",
                Some(Platform::Rocm) => " (ROCm)",
                Some(Platform::Cpu) => " (CPU only)",
                None => "",
            };
            let _ = writeln!(text, "trace: {trace}{platform}");
        }
        let what = match (self.measured_from, self.steps.len()) {
            (StepSource::ProfilerStep, 1) => format!(
                "step: {} (the ProfilerStep span)",
                self.steps.first().map_or("", |s| s.name.as_str())
            ),
            (StepSource::ProfilerStep, n) => {
                format!("steps: {n} ProfilerStep spans; the numbers are means over them")
            }
            (StepSource::ProfiledWindow, _) => {
                "step: the profiled window (the trace has no ProfilerStep span)".to_owned()
            }
        };
        let _ = writeln!(text, "{what}");
        let _ = writeln!(
            text,
            "  predicted step time (timeline model) {:>12.1} us",
            self.predicted_us
        );
        let _ = writeln!(
            text,
            "  measured step time                   {:>12.1} us",
            self.measured_us
        );
        let _ = writeln!(
            text,
            "  error                                {:>+12.2} %",
            self.error_percent
        );
        let naive = if self.platform == Some(Platform::Cpu) {
            "naive op sum (top-level ops)"
        } else {
            "naive kernel sum"
        };
        let _ = writeln!(
            text,
            "  {naive:<36} {:>12.1} us   ({:+.1} % vs measured)",
            self.kernel_sum_us, self.kernel_sum_error_percent
        );
        let _ = writeln!(
            text,
            "  GPU busy                             {:>12.1} % of the predicted step",
            100.0 * self.gpu_busy_fraction
        );
        if let Some(unseen) = self.uninstrumented_compiled_us {
            let share = if self.measured_us > 0.0 {
                unseen / self.measured_us
            } else {
                0.0
            };
            let _ = writeln!(
                text,
                "  uninstrumented compiled code         {:>12.1} us   ({} of the measured step: \
                 inside torch.compile regions, no recorded op covers it; not framework time)",
                unseen,
                crate::percent::percent_text(share)
            );
        }
        if self.steps.len() > 1 {
            let _ = writeln!(
                text,
                "  {:<20} {:>12} {:>12} {:>9} {:>12}",
                "step", "predicted us", "measured us", "error %", "kernels us"
            );
            for step in &self.steps {
                let _ = writeln!(
                    text,
                    "  {:<20} {:>12.1} {:>12.1} {:>+9.2} {:>12.1}",
                    step.name,
                    step.predicted_us,
                    step.measured_us,
                    step.error_percent,
                    step.kernel_sum_us
                );
            }
        }
        if self.steps.iter().any(|s| s.measured_device_tail_us > 0.0) {
            let _ = writeln!(
                text,
                "  note: pipelined steps (no synchronisation at a step's end): GPU work ran past \
                 the step spans, each step is charged from the end of the previous step's GPU work"
            );
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_signed_and_safe_without_a_measurement() {
        assert_eq!(error_percent(110.0, 100.0), 10.0);
        assert_eq!(error_percent(90.0, 100.0), -10.0);
        assert_eq!(error_percent(5.0, 0.0), 0.0);
        assert_eq!(fraction(1.0, 0.0), 0.0);
        assert_eq!(us(1500.0), 1.5);
    }
}
