//! The signature file: what `replay classify` writes and `replay` reads back to replay.
//!
//! Versioned by [`SCHEMA_VERSION`]; a reader must refuse a version it does not know.
//! Times are microseconds (`_us`) with nanosecond resolution, as in the trace. Shapes,
//! strides and GEMM parameters are in PyTorch's row-major terms; [`CublasCall`] restates
//! a GEMM in cuBLAS's column-major terms.
//!
//! ```text
//! {
//!   "schema_version": 1,
//!   "source": { "path", "sha256", "gzipped", "json_bytes",
//!               "platform": "cuda" | "rocm" | "cpu",
//!               "trace_schema_version", "pytorch_version", "cuda_runtime_version",
//!               "cuda_driver_version", "cupti_version", "base_time_ns",
//!               "device_properties": <as recorded>, "distributed_info": <as recorded>,
//!               "linking": { "gpu_activities", "with_launch", "with_op", "unattributed",
//!                            "launched_by_graph", "collective", "external_id_confirmed",
//!                            "external_id_contradicted", "external_id_not_recorded" },
//!               "execution_trace": { "path", "schema", "kineto_ops", "kineto_ops_with_id",
//!                   "linked_ops", "signatures_with_op", "signatures_linked",
//!                   "signatures_with_schema", "invocations", "invocations_linked",
//!                   "signatures_with_ranges" } },
//!   "summary": { "unit": "kernel" | "host_op",
//!                "tiers": [ { "tier": 1, "unique", "invocations", "total_us" }, .. 2, 3, 4 ],
//!                "unattributed": { "invocations", "total_us" },
//!                "total": { "invocations", "total_us" } },
//!   "signatures": [ {
//!       "id": "07a529331c9cce19",            // stable hash of the signature key
//!       "tier": 1 | 2 | 3 | 4, "unit": "kernel" | "host_op",
//!       "kind": "kernel" | "memcpy" | "memset" | "host_op",
//!       "name": "<kernel / copy / op name>",
//!       "op": { "name": "aten::addmm", "ancestry": ["aten::linear"], "module": "Linear_0",
//!               "schema": "aten::addmm(Tensor self, ...) -> Tensor",       // with an ET
//!               "exact_inputs": [ { "type": "Int", "value": 1 }, .. ],     // with an ET
//!               "input_ranges": [ { "input": 1, "min": 3, "max": 241 } ] },  // ET with ranges
//!       "labels": [ "graph" | "collective" | "rocm" | "no_op" ],
//!       "streams": [7], "count", "trace_total_us", "trace_mean_us", "trace_min_us", "trace_max_us",
//!       "inputs": { "dims", "types", "strides", "concrete" },   // as recorded, or null
//!       "grid": [x, y, z], "block": [x, y, z],                  // kernels only
//!       "replayable": bool, "reason": "why not" | null,
//!       "memcpy": { "kind": "HtoD"|"DtoH"|"DtoD"|"HtoH"|"PtoP", "src", "dst", "bytes" },  // tier 1
//!       "memset": { "bytes" },                                                             // tier 1
//!       "gemm": { "m", "n", "k", "batch", "dtype_a", "dtype_b", "dtype_out",              // tier 2
//!                 "trans_a", "trans_b", "lda", "ldb", "ldc", "stride_a", "stride_b", "stride_c",
//!                 "alpha", "beta", "bias", "activation", "layout_source", "role",
//!                 "cublas": { "transa", "transb", "m", "n", "k", "lda", "ldb", "ldc", "batch",
//!                             "stride_a", "stride_b", "stride_c", "operand_a", "operand_b" } },
//!       "generated": { "kind": "triton" | "inductor_cpp", "graph", "kernel", "source" }    // tier 4
//!   } ],
//!   "unattributed": [ { "name", "kind", "tier", "labels", "count", "total_us", "reason" } ],
//!   "host_overhead": { "overhead_us", "uninstrumented_compiled_us", "ops_us",
//!                      "threads": [..] }                              // CPU-only traces
//!   "compiled_code": { "regions", "region_us", "uninstrumented_us", "steps_us",
//!                      "wrapper": { "median_us", "p10_us", "p90_us", "runs", "usable", … } }
//!                                                            // traces of compiled code
//!   "ranks": [ { "rank", "source": { .. as above }, "total": { "invocations", "total_us" } } ]
//!                                   // several ranks of a job; each signature then has
//!                                   // "ranks": [ { "rank", "count", "total_us", "min_us", "max_us" } ]
//! }
//! ```
//!
//! A signature key is (name, launching op, its `Input Dims`, `Input type`,
//! `Input Strides`, `Concrete Inputs`, grid, block) — streams are ignored — plus the
//! byte count for copies/memsets and whether a CUDA graph launched the kernel. Every GPU
//! activity of the trace is counted in exactly one signature or one unattributed group.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::trace::Platform;

pub use super::fusion_params::FusionGroupParams;

pub use super::exact::{ExactInput, ExecutionTraceSource, InputRange};
pub use super::rank_counts::RankShare;

/// Version of this schema. Bump on any change a reader must know about.
pub const SCHEMA_VERSION: u32 = 1;

/// A classified trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignatureFile {
    pub schema_version: u32,
    pub source: Source,
    pub summary: Summary,
    /// Unique units of work, tier 1 first, then by total time, longest first.
    pub signatures: Vec<Signature>,
    /// GPU activities with no launch call in the trace, grouped by name. Kept so that
    /// nothing is dropped silently; not replayable (nothing says what launched them).
    pub unattributed: Vec<UnattributedGroup>,
    /// For CPU-only traces: host time spent between top-level ops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_overhead: Option<HostOverhead>,
    /// For traces of torch.compile'd code: the compiled regions in the profiled steps and
    /// their time that no recorded op covers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compiled_code: Option<CompiledCode>,
    /// The ranks of a job the file covers, rank by rank (`classify` of several rank traces,
    /// `replay merge`); absent for one trace.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankSource>,
}

pub use super::compiled_step::CompiledCode;

/// Where the signatures came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Source {
    /// The trace path as given to `classify`.
    pub path: String,
    /// SHA-256 of the trace file as stored (compressed if gzipped).
    pub sha256: String,
    pub gzipped: bool,
    /// Size of the JSON text after decompression.
    pub json_bytes: u64,
    pub platform: Platform,
    /// The trace's own `schemaVersion`.
    #[serde(default)]
    pub trace_schema_version: Option<i64>,
    #[serde(default)]
    pub pytorch_version: Option<String>,
    #[serde(default)]
    pub cuda_runtime_version: Option<i64>,
    #[serde(default)]
    pub cuda_driver_version: Option<i64>,
    #[serde(default)]
    pub cupti_version: Option<i64>,
    /// `baseTimeNanoseconds`, when the trace's timestamps are relative to it.
    #[serde(default)]
    pub base_time_ns: Option<i64>,
    /// `deviceProperties` as recorded (`null` when absent).
    #[serde(default)]
    pub device_properties: serde_json::Value,
    /// `distributedInfo` as recorded.
    #[serde(default)]
    pub distributed_info: Option<serde_json::Value>,
    pub linking: LinkingReport,
    /// The Execution Trace linked at classification (`classify --execution-trace`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_trace: Option<ExecutionTraceSource>,
}

/// One rank's trace in a job's signature file (see [`RankShare`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankSource {
    /// `distributedInfo.rank`, else the trace's place among the files given.
    pub rank: u32,
    pub source: Source,
    /// The rank's signatures' and unattributed invocations.
    pub total: Totals,
}

/// How the GPU activities were linked to launch calls and ops.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkingReport {
    pub gpu_activities: u64,
    /// Linked to a launch call by correlation id.
    pub with_launch: u64,
    /// Linked to an enclosing cpu_op.
    pub with_op: u64,
    /// No launch call in the trace.
    pub unattributed: u64,
    pub launched_by_graph: u64,
    pub collective: u64,
    /// The recorded External id agreed with the op found by correlation + containment.
    pub external_id_confirmed: u64,
    /// It disagreed (the GPU-side External id of PyTorch ~1.11-2.2 is the correlation id).
    pub external_id_contradicted: u64,
    pub external_id_not_recorded: u64,
}

/// Totals per tier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// What a signature counts: GPU kernels, or (CPU-only traces) top-level host ops.
    pub unit: Unit,
    /// Tiers 1, 2 and 3 always; tier 4 (generated kernels) when the trace has some.
    pub tiers: Vec<TierSummary>,
    pub unattributed: Totals,
    /// Every unit of work in the trace: signatures plus unattributed.
    pub total: Totals,
}

/// One tier's share of the trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TierSummary {
    pub tier: Tier,
    /// Number of signatures.
    pub unique: u64,
    /// Number of invocations (sum of the signatures' counts).
    pub invocations: u64,
    pub total_us: f64,
}

/// A count of invocations and their time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Totals {
    pub invocations: u64,
    pub total_us: f64,
}

/// How a signature will be replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tier {
    /// `cudaMemcpy`/`cudaMemset` family: replayed from sizes alone.
    Copy = 1,
    /// GEMM kernels (cuBLAS/cuBLASLt/CUTLASS/hipBLASLt): replayed as a BLAS call.
    Gemm = 2,
    /// Everything else: replayed through libtorch from the recorded op and inputs.
    Op = 3,
    /// Kernels torch.compile generated (Triton on the GPU, Inductor C++ on the CPU):
    /// replayed from the kept Inductor cache.
    Generated = 4,
}

impl Tier {
    pub const ALL: [Tier; 4] = [Tier::Copy, Tier::Gemm, Tier::Op, Tier::Generated];

    pub fn number(self) -> u8 {
        self as u8
    }

    pub fn from_number(number: u8) -> Option<Tier> {
        Tier::ALL.into_iter().find(|t| t.number() == number)
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}", self.number())
    }
}

// Written as the bare number 1, 2, 3 or 4, which is what readers of the file expect.
impl Serialize for Tier {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u8(self.number())
    }
}

impl<'de> Deserialize<'de> for Tier {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let number = u8::deserialize(deserializer)?;
        Tier::from_number(number)
            .ok_or_else(|| serde::de::Error::custom(format!("tier {number} is not 1, 2, 3 or 4")))
    }
}

/// What a signature's invocations are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// One GPU activity (kernel, memcpy or memset) per invocation.
    Kernel,
    /// One top-level host op per invocation (CPU-only traces).
    HostOp,
}

/// The kind of work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkKind {
    Kernel,
    Memcpy,
    Memset,
    HostOp,
}

/// Facts about a signature that affect how (or whether) it can be replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// Replayed from a captured CUDA graph (`cudaGraphLaunch`).
    Graph,
    /// A collective communication kernel (NCCL/RCCL).
    Collective,
    /// Captured on AMD ROCm.
    Rocm,
    /// The launch call has no enclosing cpu_op.
    NoOp,
    /// No launch call in the trace (only on [`UnattributedGroup`]s).
    Unattributed,
}

/// One unique unit of work and the statistics of its invocations.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Signature {
    /// Stable id: a hash of the signature key, so the same work has the same id in
    /// every trace and every run.
    pub id: String,
    pub tier: Tier,
    pub unit: Unit,
    pub kind: WorkKind,
    /// Kernel name, memcpy/memset name, or host op name.
    pub name: String,
    /// The op that launched the work (`None` when no op encloses the launch call).
    pub op: Option<LaunchingOp>,
    pub labels: Vec<Label>,
    /// Streams the invocations ran on (informative: the key ignores streams).
    pub streams: Vec<i64>,
    pub count: u64,
    pub trace_total_us: f64,
    pub trace_mean_us: f64,
    pub trace_min_us: f64,
    pub trace_max_us: f64,
    /// The op's inputs exactly as the profiler recorded them.
    pub inputs: Option<RecordedInputs>,
    pub grid: Option<[u32; 3]>,
    pub block: Option<[u32; 3]>,
    pub replayable: bool,
    /// Why not, when `replayable` is false.
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memcpy: Option<MemcpyParams>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memset: Option<MemsetParams>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gemm: Option<GemmParams>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generated: Option<GeneratedParams>,
    /// A TorchScript fusion group: its subgraph and the fuser settings it ran under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fusion: Option<FusionGroupParams>,
    /// This signature's invocations on each rank of a job (absent for one trace).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks: Vec<RankShare>,
}

/// Which code generator wrote a tier-4 kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GeneratedKind {
    /// A Triton kernel (torch.compile on CUDA): `triton_poi_fused_add_0`.
    Triton,
    /// An Inductor C++ kernel (torch.compile on the CPU): `cpp_fused_gelu_view_1`.
    InductorCpp,
}

/// Tier 4: a kernel torch.compile generated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GeneratedParams {
    pub kind: GeneratedKind,
    /// Inductor's graph id, where the recorded name spells it (`graph_0_cpp_fused_*`).
    pub graph: Option<u32>,
    /// The kernel's name in Inductor's generated code (without `graph_N_`).
    pub kernel: String,
    /// Its code in the kept Inductor cache, when a `kernels.json` was at hand.
    pub source: Option<String>,
}

/// The op that launched a kernel, with its context.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchingOp {
    pub name: String,
    /// Enclosing ops, outermost first (from the first invocation).
    pub ancestry: Vec<String>,
    /// Innermost `nn.Module` around the op, when the trace recorded modules.
    pub module: Option<String>,
    /// The recorded inputs of each op in `ancestry` (same order). Replay falls back to an
    /// enclosing op when the launching op only exists on the trace's device
    /// (`aten::_flash_attention_forward` is CUDA-only; `aten::scaled_dot_product_attention`
    /// around it runs anywhere).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ancestor_inputs: Vec<Option<RecordedInputs>>,
    /// The exact operator schema the op called (`aten::add.Tensor(Tensor self, ...) ->
    /// Tensor`), from a linked Execution Trace; tier 3 calls that overload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// The op's arguments as the Execution Trace recorded them (first linked invocation).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exact_inputs: Vec<ExactInput>,
    /// The recorded value ranges of the op's integral tensor arguments, over every linked
    /// invocation (Execution Traces recorded with ranges; see [`InputRange`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input_ranges: Vec<InputRange>,
}

/// `Input Dims`, `Input type`, `Input Strides`, `Concrete Inputs` as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedInputs {
    pub dims: Option<serde_json::Value>,
    pub types: Option<serde_json::Value>,
    pub strides: Option<serde_json::Value>,
    pub concrete: Option<serde_json::Value>,
}

/// Direction of a copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MemcpyKind {
    HtoD,
    DtoH,
    DtoD,
    HtoH,
    PtoP,
}

/// Kind of memory at one end of a copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MemoryKind {
    Pageable,
    Pinned,
    Device,
    /// ROCm's name for host memory of unknown pinning.
    Host,
    Managed,
    Array,
    Unknown,
}

/// Tier 1 copy parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemcpyParams {
    pub kind: MemcpyKind,
    pub src: MemoryKind,
    pub dst: MemoryKind,
    pub bytes: u64,
}

/// Tier 1 memset parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemsetParams {
    pub bytes: u64,
}

/// What a GEMM kernel does within its BLAS call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GemmKernelRole {
    /// The multiply itself.
    Main,
    /// A helper kernel of the same call (split-K reduction, cuBLASLt epilogue): replaying
    /// the call replays it too.
    Auxiliary,
}

/// Tier 2 GEMM parameters, row-major (PyTorch's view):
/// `C[batch][m, n] = alpha * op(A)[m, k] @ op(B)[k, n] + beta * bias`.
///
/// `trans_a` is true when A is stored column-major (a transposed view, stride 1 along
/// rows); `lda` is then the stride between its columns, else between its rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GemmParams {
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub batch: u64,
    pub dtype_a: String,
    pub dtype_b: String,
    pub dtype_out: String,
    pub trans_a: bool,
    pub trans_b: bool,
    pub lda: u64,
    pub ldb: u64,
    pub ldc: u64,
    /// Element stride between consecutive batch matrices (batched GEMMs only).
    #[serde(default)]
    pub stride_a: Option<u64>,
    #[serde(default)]
    pub stride_b: Option<u64>,
    #[serde(default)]
    pub stride_c: Option<u64>,
    pub alpha: f64,
    pub beta: f64,
    /// An addend (`addmm`'s `self`, `linear`'s bias) is part of the call.
    pub bias: bool,
    /// Fused activation (`_addmm_activation`): "relu" or "gelu".
    #[serde(default)]
    pub activation: Option<String>,
    /// Where `trans_*` and `ld*` come from.
    pub layout_source: LayoutSource,
    pub role: GemmKernelRole,
    /// The column-major cuBLAS call that computes the same product.
    pub cublas: CublasCall,
}

/// Evidence for a GEMM's operand layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LayoutSource {
    /// The op's recorded `Input Strides` (PyTorch 2.4+).
    Strides,
    /// No strides recorded; the transposes spelled in the kernel name (`*_tn_*`,
    /// Tensile `Alik`/`Bjlk`), with dense leading dimensions.
    KernelName,
    /// Neither: operands assumed contiguous.
    AssumedContiguous,
}

/// cuBLAS transpose operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BlasOp {
    N,
    T,
}

/// Which PyTorch operand a cuBLAS operand is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GemmOperand {
    /// The row-major left operand (`mat1`, `input`).
    RowMajorA,
    /// The row-major right operand (`mat2`, `weight^T`).
    RowMajorB,
}

/// `cublasGemmEx`/`cublasGemmStridedBatchedEx` arguments, column-major.
///
/// A row-major `C = A @ B` is the column-major `C^T = B^T @ A^T`, so cuBLAS gets the
/// operands swapped and `m`/`n` exchanged: its A is PyTorch's B, its m is PyTorch's n.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CublasCall {
    pub transa: BlasOp,
    pub transb: BlasOp,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub lda: u64,
    pub ldb: u64,
    pub ldc: u64,
    pub batch: u64,
    #[serde(default)]
    pub stride_a: Option<u64>,
    #[serde(default)]
    pub stride_b: Option<u64>,
    #[serde(default)]
    pub stride_c: Option<u64>,
    pub operand_a: GemmOperand,
    pub operand_b: GemmOperand,
}

/// Unattributed GPU activities of one name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnattributedGroup {
    pub name: String,
    pub kind: WorkKind,
    /// The tier the name alone implies.
    pub tier: Tier,
    pub labels: Vec<Label>,
    pub count: u64,
    pub total_us: f64,
    pub reason: String,
}

/// Host time between top-level ops (CPU-only traces).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostOverhead {
    /// Sum over threads of the gaps between consecutive top-level ops, outside compiled
    /// regions: framework overhead.
    pub overhead_us: f64,
    /// The gaps' time inside compiled regions: uninstrumented compiled code, not framework.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub uninstrumented_compiled_us: f64,
    /// Sum over threads of the top-level ops' inclusive time.
    pub ops_us: f64,
    pub threads: Vec<ThreadOverhead>,
}

/// One host thread's top-level op time and the gaps between its ops.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThreadOverhead {
    pub pid: String,
    pub tid: String,
    pub top_level_ops: u64,
    /// From the first top-level op's start to the last one's end.
    pub span_us: f64,
    pub ops_us: f64,
    pub overhead_us: f64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub uninstrumented_compiled_us: f64,
}

fn is_zero(value: &f64) -> bool {
    *value == 0.0
}
