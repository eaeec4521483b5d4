//! What the signature file says of a torch.compile'd step's time: its compiled regions, the
//! part of them no recorded op covers ([`CompiledCode`]), and the generated wrapper's host time
//! measured without the profiler ([`WrapperTiming`]).
//!
//! The host time of a torch.compile'd model's generated wrapper, measured by the capture
//! without the profiler (`scripts/inductor_wrapper.py`): the compiled forward pass timed with
//! every generated kernel a no-op and every extern kernel returning its recorded output. It is
//! the time no recorded op covers inside the compiled regions (Dynamo's guards, AOTAutograd's
//! wrappers, the generated `call()`), which the trace can only show inflated by the profiler.
//! `kernels.json` holds it as `wrapper`; classify copies it into the signature file's
//! `compiled_code`.

use serde::{Deserialize, Serialize};

/// Time inside torch.compile'd regions (`Torch-Compiled Region: N/M`, `CompiledFunction`)
/// within the profiled steps (`ProfilerStep#N` spans, else the profiled window).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompiledCode {
    /// Compiled-region spans (merged per host thread) in the steps.
    pub regions: u64,
    /// Their time within the steps.
    pub region_us: f64,
    /// The part of it that no recorded op, generated kernel or CUDA call covers:
    /// uninstrumented compiled code (Inductor's C++ kernels without
    /// `cpp.enable_kernel_profile`, the generated wrapper's own Python).
    pub uninstrumented_us: f64,
    /// The steps' time.
    pub steps_us: f64,
    /// The generated wrapper's host time per forward pass, measured unprofiled by the capture
    /// (`kernels.json`'s `wrapper`); absent when the capture did not measure it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrapper: Option<WrapperTiming>,
}

impl CompiledCode {
    /// Share of the steps' time that was uninstrumented compiled code, in [0, 1].
    pub fn uninstrumented_share(&self) -> f64 {
        if self.steps_us > 0.0 {
            (self.uninstrumented_us / self.steps_us).clamp(0.0, 1.0)
        } else {
            0.0
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WrapperTiming {
    /// Median of the timed passes (µs per forward pass).
    pub median_us: f64,
    pub p10_us: f64,
    pub p90_us: f64,
    /// Timed passes.
    pub runs: u64,
    /// How it was measured, in words.
    pub method: String,
    /// Generated kernels made no-ops.
    #[serde(default)]
    pub kernels_stubbed: u64,
    /// Extern kernels replaying their recorded outputs.
    #[serde(default)]
    pub externs_stubbed: u64,
    /// Calls through `torch.ops` the generated code spells out, left real.
    #[serde(default)]
    pub torch_ops_calls_left_real: u64,
    /// Dynamo's graph breaks (eager code between regions ran real); `None`: unknown.
    #[serde(default)]
    pub graph_breaks: Option<u64>,
    /// Whether the figure is the wrapper alone: replay counts it only then.
    pub usable: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not_usable: Option<String>,
}

impl WrapperTiming {
    /// The wrapper's time per forward pass when it can be counted as measured host time.
    pub fn counted_us(&self) -> Option<f64> {
        (self.usable && self.median_us.is_finite() && self.median_us >= 0.0)
            .then_some(self.median_us)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_usable_finite_figure_counts() {
        let text = r#"{"median_us": 41.5, "p10_us": 40.0, "p90_us": 44.0, "runs": 120,
            "method": "m", "kernels_stubbed": 9, "externs_stubbed": 4,
            "torch_ops_calls_left_real": 0, "graph_breaks": 0, "usable": true,
            "why_not_usable": null}"#;
        let w: WrapperTiming = serde_json::from_str(text).unwrap();
        assert_eq!(w.counted_us(), Some(41.5));
        let broken = WrapperTiming {
            usable: false,
            why_not_usable: Some("1 graph break(s)".into()),
            ..w.clone()
        };
        assert_eq!(broken.counted_us(), None);
        let nan = WrapperTiming {
            median_us: f64::NAN,
            ..w
        };
        assert_eq!(nan.counted_us(), None);
    }
}
