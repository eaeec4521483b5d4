//! Folding a linked trace into unique kernel signatures, sorted into replay tiers, and
//! the versioned signature file that records them (see [`schema`]).
//!
//! - Tier 1: copies and memsets, replayed from their sizes;
//! - Tier 2: GEMM kernels, replayed as the BLAS call derived from the launching op
//!   ([`gemm`]);
//! - Tier 3: everything else, replayed through libtorch from the recorded op and inputs;
//! - Tier 4: kernels torch.compile generated (Triton, Inductor C++; [`generated`]), replayed
//!   from the kept Inductor cache.

mod arguments;
pub mod call_site;
mod classify;
pub mod compiled_code;
pub mod compiled_step;
pub mod dtype;
mod exact;
pub mod fold;
pub mod fusion_group;
mod fusion_params;
pub mod gemm;
pub mod gemm_schemas;
pub mod generated;
mod host_ops;
mod ids;
pub mod kernel_kind;
pub mod label;
pub mod merge;
pub mod op_inputs;
pub mod overload;
mod rank_counts;
mod read;
pub mod recorded;
pub mod schema;
mod source;
pub mod stream;
mod table;
pub mod transfer;

use std::path::Path;

use crate::trace::{link, Platform, Trace};

pub use ids::{signature_ids, SignatureIds};
pub use merge::{MergeError, MergePart};
pub use read::{read_bytes, read_file, SignatureFileError};
pub use schema::{
    BlasOp, CompiledCode, CublasCall, ExactInput, ExecutionTraceSource, FusionGroupParams,
    GemmKernelRole, GemmOperand, GemmParams, GeneratedKind, GeneratedParams, HostOverhead,
    InputRange, Label, LaunchingOp, LayoutSource, LinkingReport, MemcpyKind, MemcpyParams,
    MemoryKind, MemsetParams, RankShare, RankSource, RecordedInputs, Signature, SignatureFile,
    Source, Summary, ThreadOverhead, Tier, TierSummary, Totals, UnattributedGroup, Unit, WorkKind,
    SCHEMA_VERSION,
};

/// Classifies every GPU activity of `trace` (or, for a CPU-only trace, every top-level
/// op) into signatures. `source_path` is recorded in the file as the trace's path.
pub fn classify(trace: &Trace, source_path: &Path) -> SignatureFile {
    let links = link::link(trace);
    let mut file = match trace.platform {
        Platform::Cpu => host_ops::classify_host_ops(trace, &links, source_path),
        Platform::Cuda | Platform::Rocm => classify::classify_gpu(trace, &links, source_path),
    };
    fusion_group::attach(&mut file, trace.metadata.fusion_groups.as_ref());
    file
}
