//! `isolated.json`: what `replay isolated` measured for each signature of a signature file.
//! Plain data, shared by the replay engine that writes it and the reports that read it.

use serde::{Deserialize, Serialize};

use crate::energy::EnergySummary;
use crate::measure::Summary;
use crate::signature::schema::Tier;

/// Outcome of one signature.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Measured.
    Ok,
    /// Its work runs inside another signature's replay (a GEMM's split-K reduction, say).
    Included,
    /// Set up or measured, and it went wrong.
    Failed,
    /// Cannot be replayed from what the trace recorded.
    Unsupported,
    /// The device ran out of memory.
    Oom,
    /// Not replayed (unsupported, failed or out of memory; `reason` says which): its
    /// prediction is the roofline estimate of a calibration profile (`--profile`).
    Estimated,
}

/// One signature's result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SignatureResult {
    pub id: String,
    pub tier: Tier,
    pub name: String,
    pub op: Option<String>,
    pub count: u64,
    pub trace_mean_us: f64,
    pub trace_total_us: f64,
    pub status: Status,
    /// How it was replayed: `cublasGemmEx`, `libtorch dispatcher aten::add.Tensor`, `host memcpy`...
    pub method: Option<String>,
    /// Why not `ok`.
    pub reason: Option<String>,
    /// The signature whose replay stands for this one (itself when replayed alone).
    pub replayed_as: String,
    /// This signature's share of that replay's time.
    pub share: f64,
    /// Predicted time of one invocation: the replay's median × share (µs).
    pub predicted_us: Option<f64>,
    /// Host (dispatch) time of one invocation: the replay's host median × share (µs).
    pub host_us: Option<f64>,
    pub stats: Option<Summary>,
    /// Energy of one invocation: the replay's median joules per call × share (`--energy`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joules_per_invocation: Option<f64>,
    /// The replay's energy measurement, or why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy: Option<Result<EnergySummary, String>>,
    /// The roofline estimate of one invocation on `--profile`'s device, when given and the
    /// signature's work is known (beside the measurement, or in place of a missing one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roofline: Option<RooflineEstimate>,
}

/// One signature's roofline estimate, as `isolated.json` records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RooflineEstimate {
    /// The estimate of one invocation (µs): the larger of the two below.
    pub us: f64,
    pub flops: f64,
    pub bytes: f64,
    /// FLOPs / GFLOPS (µs); 0 for memory-only work.
    pub compute_us: f64,
    /// bytes / bandwidth (µs).
    pub memory_us: f64,
    /// `compute` or `memory`.
    pub bound: String,
    /// The rates used and where they came from, in words.
    pub how: String,
}

/// How the run was configured, recorded with the results.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunConfig {
    pub cold: bool,
    pub max_time_per_kernel_s: f64,
    pub noise_target: f64,
    pub min_samples: usize,
    /// Interleaved rounds each signature's budget was split into ([`crate::measure::interleave`]).
    #[serde(default = "crate::measure::stats::one_round")]
    pub rounds: u32,
}

/// The whole result file.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct IsolatedResults {
    pub schema_version: u32,
    pub tool: String,
    pub device: String,
    pub signatures_file: String,
    pub config: RunConfig,
    /// Signatures in the file; `results` holds those done so far.
    pub signatures_total: usize,
    pub complete: bool,
    pub results: Vec<SignatureResult>,
}

pub const ISOLATED_SCHEMA_VERSION: u32 = 1;

impl IsolatedResults {
    /// Reads an `isolated.json`; a file that is missing or is not one is the user's to fix.
    pub fn read(path: &std::path::Path) -> crate::Result<IsolatedResults> {
        let bytes = std::fs::read(path).map_err(|e| crate::Error::BadInput {
            path: path.to_path_buf(),
            message: format!("cannot read it: {e}"),
        })?;
        Self::from_bytes(&bytes, path)
    }

    /// [`IsolatedResults::read`] on a file's bytes; `path` names the file in errors.
    pub fn from_bytes(bytes: &[u8], path: &std::path::Path) -> crate::Result<IsolatedResults> {
        serde_json::from_slice(bytes).map_err(|e| crate::Error::BadInput {
            path: path.to_path_buf(),
            message: format!("not an isolated.json of `replay isolated`: {e}"),
        })
    }
}
