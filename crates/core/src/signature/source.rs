//! What a signature file says of the trace it came from: the file and the profiler
//! (`source`) and the compiled code in its steps (`compiled_code`).

use std::path::Path;

use crate::trace::link::Links;
use crate::trace::Trace;

use super::schema::{self, LinkingReport, Source};

/// The trace's file, profiler and link counts, as the signature file records them.
pub(crate) fn source(trace: &Trace, links: &Links, source_path: &Path) -> Source {
    let stats = &links.stats;
    Source {
        path: source_path.display().to_string(),
        sha256: trace.source.sha256.clone(),
        gzipped: trace.source.gzipped,
        json_bytes: trace.source.json_bytes,
        platform: trace.platform,
        trace_schema_version: trace.metadata.schema_version,
        pytorch_version: trace.metadata.pytorch_version.clone(),
        cuda_runtime_version: trace.metadata.cuda_runtime_version,
        cuda_driver_version: trace.metadata.cuda_driver_version,
        cupti_version: trace.metadata.cupti_version,
        base_time_ns: trace.metadata.base_time_ns,
        device_properties: trace
            .metadata
            .device_properties
            .clone()
            .unwrap_or(serde_json::Value::Null),
        distributed_info: trace.metadata.distributed_info.clone(),
        linking: LinkingReport {
            gpu_activities: stats.activities,
            with_launch: stats.with_launch,
            with_op: stats.with_op,
            unattributed: stats.unattributed,
            launched_by_graph: stats.launched_by_graph,
            collective: stats.collective,
            external_id_confirmed: stats.external_id_confirmed,
            external_id_contradicted: stats.external_id_contradicted,
            external_id_not_recorded: stats.external_id_not_recorded,
        },
        execution_trace: None,
    }
}

/// The trace's compiled code within its profiled steps (see [`super::compiled_code`]).
pub(crate) fn compiled_code_in_steps(trace: &Trace) -> Option<schema::CompiledCode> {
    let (_, steps) = crate::trace::steps::step_windows(trace);
    let windows: Vec<(i64, i64)> = steps.iter().map(|s| (s.start_ns, s.end_ns)).collect();
    super::compiled_code::compiled_code(trace, &windows)
}
