//! What a CUDA/HIP API call on the host means for the timeline, from its name.
//!
//! Only the calls that change *when* things happen are singled out: the ones that make the
//! host wait for the GPU, and the event calls that order one stream after another. Every
//! other call (attribute queries, `cudaEventQuery` polling, allocation...) is host time
//! like any framework code, kept as measured. Launch calls are recognised by what they
//! launched (a GPU activity with their correlation id), not by name.

/// The timeline role of a host API call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    /// Blocks until all GPU work issued before it has finished (`cudaDeviceSynchronize`;
    /// also `cudaFree`, which synchronises the device implicitly).
    DeviceSync,
    /// Blocks until one stream's work issued before it has finished.
    StreamSync,
    /// Blocks until the work before the matching `cudaEventRecord` has finished.
    EventSync,
    /// Marks the point of a stream that a later event wait or event sync refers to.
    EventRecord,
    /// Makes a stream wait for an event recorded on another: a cross-stream dependency.
    StreamWaitEvent,
    /// Anything else: host time.
    Other,
}

/// The kind of the call named `name` (CUDA runtime, CUDA driver or HIP spelling).
pub fn call_kind(name: &str) -> CallKind {
    // Versioned driver entry points (`cuStreamSynchronize_v2`...) share the base name.
    // (By bytes: `split("_v")` builds a substring searcher per call, and this runs for
    // every API call of a trace.)
    let base = name
        .as_bytes()
        .windows(2)
        .position(|pair| pair == b"_v")
        .and_then(|at| name.get(..at))
        .unwrap_or(name);
    match base {
        "cudaDeviceSynchronize"
        | "cuCtxSynchronize"
        | "hipDeviceSynchronize"
        | "cudaFree"
        | "cuMemFree"
        | "hipFree" => CallKind::DeviceSync,
        "cudaStreamSynchronize" | "cuStreamSynchronize" | "hipStreamSynchronize" => {
            CallKind::StreamSync
        }
        "cudaEventSynchronize" | "cuEventSynchronize" | "hipEventSynchronize" => {
            CallKind::EventSync
        }
        "cudaEventRecord"
        | "cudaEventRecordWithFlags"
        | "cuEventRecord"
        | "cuEventRecordWithFlags"
        | "hipEventRecord" => CallKind::EventRecord,
        "cudaStreamWaitEvent" | "cuStreamWaitEvent" | "hipStreamWaitEvent" => {
            CallKind::StreamWaitEvent
        }
        _ => CallKind::Other,
    }
}

/// Whether a copy call returns only once its copy is done: the synchronous copy API
/// (`cudaMemcpy`, `hipMemcpy`, `hipMemcpyWithStream`, `cuMemcpyDtoH`...), as opposed to
/// the `*Async` family.
pub fn is_synchronous_copy_call(name: &str) -> bool {
    let copy = ["cudaMemcpy", "cuMemcpy", "hipMemcpy"]
        .iter()
        .any(|prefix| name.starts_with(prefix));
    copy && !name.contains("Async")
}

/// The cuda_sync row kineto writes for a synchronisation names its stream with this
/// value (or its 32-bit unsigned spelling) when the sync is device-wide.
pub fn is_device_wide_stream_id(id: i64) -> bool {
    id == -1 || id == i64::from(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synchronising_calls_of_every_api_are_recognised() {
        assert_eq!(call_kind("cudaDeviceSynchronize"), CallKind::DeviceSync);
        assert_eq!(call_kind("hipDeviceSynchronize"), CallKind::DeviceSync);
        assert_eq!(call_kind("cudaStreamSynchronize"), CallKind::StreamSync);
        assert_eq!(call_kind("cuStreamSynchronize_v2"), CallKind::StreamSync);
        assert_eq!(call_kind("cudaEventSynchronize"), CallKind::EventSync);
        assert_eq!(call_kind("cudaEventRecord"), CallKind::EventRecord);
        assert_eq!(call_kind("cudaStreamWaitEvent"), CallKind::StreamWaitEvent);
        assert_eq!(call_kind("cudaLaunchKernel"), CallKind::Other);
        assert_eq!(call_kind("cudaEventQuery"), CallKind::Other);
    }

    #[test]
    fn only_the_synchronous_copy_api_blocks_by_name() {
        assert!(is_synchronous_copy_call("cudaMemcpy"));
        assert!(is_synchronous_copy_call("hipMemcpyWithStream"));
        assert!(is_synchronous_copy_call("cuMemcpyDtoH_v2"));
        assert!(!is_synchronous_copy_call("cudaMemcpyAsync"));
        assert!(!is_synchronous_copy_call("cuMemcpyHtoDAsync_v2"));
        assert!(!is_synchronous_copy_call("cudaMemsetAsync"));
    }

    #[test]
    fn device_wide_sync_rows_are_recognised() {
        assert!(is_device_wide_stream_id(-1));
        assert!(is_device_wide_stream_id(4294967295));
        assert!(!is_device_wide_stream_id(7));
    }
}
