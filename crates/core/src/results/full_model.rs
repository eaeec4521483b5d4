//! `full_model_timing.json`: the whole model timed, R forward passes after W warm-ups.

use serde::{Deserialize, Serialize};

/// `results/full_model_timing.json`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FullModelTiming {
    pub model: String,
    pub device: String,
    pub seq_len: i64,
    pub batch: i64,
    /// The model's inputs (`--input` specs, or the default token ids), ranges filled in.
    #[serde(default)]
    pub inputs: Vec<String>,
    pub warmup: u32,
    pub runs: u32,
    pub threads: i32,
    /// How each run was timed: CUDA events on a GPU, the monotonic clock on the CPU.
    pub timer: String,
    pub mean_us: f64,
    pub median_us: f64,
    pub min_us: f64,
    pub max_us: f64,
    pub std_us: f64,
    pub p10_us: f64,
    pub p90_us: f64,
    /// Relative standard error of the median.
    pub rse_median: Option<f64>,
    pub samples_us: Vec<f64>,
    /// Energy of one forward pass (`--energy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<crate::energy::EnergySummary>,
    /// What was timed when it was not a TorchScript model: `aoti_package`, an AOTInductor
    /// package run by libtorch's `AOTIModelPackageLoader`; `torch_compile`, the model
    /// compiled with torch.compile, timed in the capture's Python process (absent for
    /// TorchScript).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_format: Option<String>,
    /// torch.compile's mode, for `torch_compile`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compile_mode: Option<String>,
    /// Where the runs were timed when not in replay's own process (`the capture's Python
    /// process` for `torch_compile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timed_in: Option<String>,
    /// Of `runs`, those timed after the isolated replay (the later half of a
    /// `torch_compile` timing, in a second Python process); the others were timed before it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_after_isolated: Option<u32>,
}
