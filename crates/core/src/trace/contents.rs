//! A parsed trace: the kept events, their strings, and the file-level metadata.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::event::{Category, Event, Nanos};
use super::strings::{StrId, StringTable};

/// The GPU software stack a trace was captured on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    /// NVIDIA CUDA (CUPTI).
    Cuda,
    /// AMD ROCm (roctracer): kineto writes the same categories, with `hip*` API names.
    Rocm,
    /// No GPU activity at all: a CPU-only capture.
    Cpu,
}

/// The file a trace was read from.
#[derive(Debug, Clone, PartialEq)]
pub struct SourceFile {
    pub path: PathBuf,
    /// SHA-256 of the file's bytes as stored (compressed, if gzipped), lowercase hex.
    pub sha256: String,
    pub gzipped: bool,
    /// Size of the file as stored.
    pub file_bytes: u64,
    /// Size of the JSON text (after decompression).
    pub json_bytes: u64,
}

/// Top-level keys of the trace object that describe the capture.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceMetadata {
    /// `schemaVersion`.
    pub schema_version: Option<i64>,
    /// `deviceProperties`, as recorded.
    pub device_properties: Option<serde_json::Value>,
    /// `distributedInfo`, as recorded.
    pub distributed_info: Option<serde_json::Value>,
    pub cuda_runtime_version: Option<i64>,
    pub cuda_driver_version: Option<i64>,
    pub cupti_version: Option<i64>,
    /// `roctracer_version`, present on some ROCm captures.
    pub roctracer_version: Option<serde_json::Value>,
    /// PyTorch version, from a top-level `pytorch_version`/`torch_version` key or from
    /// `metadata.pip_packages` (`torch==X`), whichever the capture tool wrote.
    pub pytorch_version: Option<String>,
    /// `baseTimeNanoseconds`: when present, event `ts` values are relative to it
    /// (absolute time in ns = base + ts * 1000).
    pub base_time_ns: Option<i64>,
    pub trace_name: Option<String>,
    /// `replayProfilerOverheadUsPerOp`: host time the profiler itself adds to each recorded
    /// op, calibrated by `scripts/capture_trace.py` on a loop of tiny ops with and without
    /// the profiler. The timeline model takes it out of the host gaps.
    pub profiler_overhead_us_per_op: Option<f64>,
    /// `replayFusionGroups`: TorchScript's fusion groups the capture read from the optimised
    /// graph the model ran (`scripts/fusion_groups.py`), as written; see
    /// [`crate::signature::fusion_group`].
    pub fusion_groups: Option<serde_json::Value>,
}

/// How many events of each kind the file held, kept or not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventCounts {
    /// Entries of `traceEvents`.
    pub total: u64,
    /// Complete events kept in [`Trace::events`].
    pub kept: u64,
    /// Flow events (`s`/`f`), not needed because linking uses correlation ids.
    pub flows: u64,
    /// Events of categories classification does not use (instant events, metadata,
    /// `Trace` spans, `gpu_user_annotation`, python frames that are not modules...).
    pub ignored: u64,
}

/// A Kineto trace, reduced to the events that classification needs.
#[derive(Debug, Clone)]
pub struct Trace {
    pub source: SourceFile,
    pub metadata: TraceMetadata,
    pub platform: Platform,
    /// Kept events, in file order.
    pub events: Vec<Event>,
    pub strings: StringTable,
    pub counts: EventCounts,
}

impl Trace {
    /// Text of an interned string.
    pub fn text(&self, id: StrId) -> &str {
        self.strings.get(id)
    }

    /// Name of an event.
    pub fn name(&self, event: &Event) -> &str {
        self.strings.get(event.name)
    }

    /// Indices into [`Trace::events`] of the GPU activities (kernels, memcpys, memsets).
    pub fn gpu_activity_indices(&self) -> impl Iterator<Item = usize> + '_ {
        self.events
            .iter()
            .enumerate()
            .filter(|(_, e)| e.category.is_gpu_activity())
            .map(|(i, _)| i)
    }

    /// Number of GPU activities.
    pub fn gpu_activity_count(&self) -> u64 {
        self.gpu_activity_indices().count() as u64
    }

    /// Sum of the durations of all GPU activities: the "total GPU time" that signatures
    /// must account for.
    pub fn gpu_activity_total_ns(&self) -> Nanos {
        self.events
            .iter()
            .filter(|e| e.category.is_gpu_activity())
            .fold(0i64, |sum, e| sum.saturating_add(e.dur_ns))
    }

    /// Absolute Unix time in nanoseconds of a timestamp on the trace's axis: PyTorch 2.4+
    /// writes `ts` relative to `baseTimeNanoseconds`, older versions absolute.
    pub fn absolute_ns(&self, ts_ns: Nanos) -> i128 {
        i128::from(self.metadata.base_time_ns.unwrap_or(0)) + i128::from(ts_ns)
    }

    /// Number of kept events of one category.
    pub fn count_of(&self, category: Category) -> usize {
        self.events
            .iter()
            .filter(|e| e.category == category)
            .count()
    }
}
