//! The small real traces of the repository's test data that some targets apply their input
//! to, loaded once.

use std::path::Path;
use std::sync::OnceLock;

use crate::trace::Trace;

/// A small GPU trace of the repository's test data (GPT-2 small under torch.compile, H200).
pub(super) fn embedded_trace() -> Option<&'static Trace> {
    static TRACE: OnceLock<Option<Trace>> = OnceLock::new();
    TRACE
        .get_or_init(|| {
            let bytes = include_bytes!("../../tests/data/compiled/h200_gpt2_small/trace.json.gz");
            crate::trace::load_bytes(bytes.to_vec(), Path::new("h200_gpt2_small.json.gz")).ok()
        })
        .as_ref()
}

/// The CPU trace recorded beside `tests/data/et/bloom_tiny_cpu.et.json.gz`.
pub(super) fn embedded_cpu_trace() -> Option<&'static Trace> {
    static TRACE: OnceLock<Option<Trace>> = OnceLock::new();
    TRACE
        .get_or_init(|| {
            let bytes = include_bytes!("../../tests/data/et/bloom_tiny_cpu.json.gz");
            crate::trace::load_bytes(bytes.to_vec(), Path::new("bloom_tiny_cpu.json.gz")).ok()
        })
        .as_ref()
}
