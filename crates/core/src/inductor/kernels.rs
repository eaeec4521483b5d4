//! `inductor/kernels.json`: what the capture of a compiled model recorded about each kernel
//! Inductor generated, for replay to call it alone.
//!
//! ```text
//! { "format": "replay-inductor-kernels", "version": 1, "torch", "device", "mode",
//!   "wrapper": { "median_us", "p10_us", "p90_us", "runs", "method", "usable", … },  // optional
//!   "kernels": [ { "name", "trace_name", "kind": "inductor_cpp" | "triton", "graph",
//!                  "source",                                   // Inductor's module, in cache/
//!                  "kernel_source", "library", "symbol", "arg_types",   // inductor_cpp
//!                  "cubin", "function", "num_warps", "shared_mem", "signature",  // triton
//!                  "num_ctas", "global_scratch_size", "profile_scratch_size", "arch",
//!                  "cache_hash",                                      // triton, optional
//!                  "calls": [ { "count", "grid",
//!                               "args": [ {"tensor": {"dtype", "sizes", "strides",
//!                                                     "storage_offset", "values"}},
//!                                         {"int": 128}, {"float": 0.5}, {"bool": true},
//!                                         {"none": null}, {"other": "<type>"} ] } ] } ] }
//! ```
//!
//! Every path is relative to the folder holding `kernels.json` and stays inside it.
//!
//! A Triton kernel's launch data (`cubin` to `profile_scratch_size`) is optional: where the
//! entry lacks it, it is read from the Triton cache kept beside `kernels.json`
//! ([`super::triton_cache`]; `cache_hash`, the cache folder of the compiled kernel that ran,
//! picks one of several autotuned cubins). The optional fields keep version 1 readable both
//! ways.

use serde::{Deserialize, Serialize};

use crate::signature::schema::GeneratedKind;

/// The `format` every `kernels.json` names.
pub const KERNELS_FORMAT: &str = "replay-inductor-kernels";
/// The version this reader knows.
pub const KERNELS_VERSION: u32 = 1;
/// The file's name inside the `inductor/` folder.
pub const KERNELS_FILE: &str = "kernels.json";
/// The folder beside a trace that holds the kept Inductor cache.
pub const INDUCTOR_DIR: &str = "inductor";

/// A whole `kernels.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelsFile {
    pub format: String,
    pub version: u32,
    /// The torch version that compiled the kernels.
    pub torch: String,
    /// `cpu`, `cuda`, `cuda:N`.
    pub device: String,
    /// torch.compile's mode: `default`, `reduce-overhead`, `max-autotune`.
    pub mode: String,
    pub kernels: Vec<RecordedKernel>,
    /// The generated wrapper's host time, timed with every kernel a no-op (optional: a
    /// capture before it has none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrapper: Option<crate::signature::compiled_step::WrapperTiming>,
}

/// One generated kernel and the argument layouts it was called with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordedKernel {
    /// The kernel's name in Inductor's generated code (`cpp_fused_gelu_view_1`).
    pub name: String,
    /// The name the profiler records for it (`graph_0_cpp_fused_gelu_view_1`,
    /// `triton_poi_fused_add_0`): how trace signatures find it.
    pub trace_name: String,
    pub kind: GeneratedKind,
    #[serde(default)]
    pub graph: Option<u32>,
    /// Inductor's Python module that holds the kernel (in the kept cache).
    pub source: String,
    /// inductor_cpp: the kernel's C++ source without its Python bindings.
    #[serde(default)]
    pub kernel_source: Option<String>,
    /// inductor_cpp: a shared library of `kernel_source` that needs no Python.
    #[serde(default)]
    pub library: Option<String>,
    /// inductor_cpp: the exported `extern "C"` entry point.
    #[serde(default)]
    pub symbol: Option<String>,
    /// inductor_cpp: the C types of the entry point's arguments.
    #[serde(default)]
    pub arg_types: Vec<String>,
    /// triton: the compiled kernel.
    #[serde(default)]
    pub cubin: Option<String>,
    /// triton: the entry symbol in `cubin`.
    #[serde(default)]
    pub function: Option<String>,
    #[serde(default)]
    pub num_warps: Option<u32>,
    #[serde(default)]
    pub shared_mem: Option<u32>,
    /// triton: blocks per cluster (1 unless Hopper clusters were asked for).
    #[serde(default)]
    pub num_ctas: Option<u32>,
    /// triton: global scratch bytes per block (Triton >= 3.3).
    #[serde(default)]
    pub global_scratch_size: Option<u64>,
    /// triton: profiler scratch bytes per block (Triton >= 3.5).
    #[serde(default)]
    pub profile_scratch_size: Option<u64>,
    /// triton: the compute capability the cubin was built for (90).
    #[serde(default)]
    pub arch: Option<u32>,
    /// triton: the Triton cache folder (under `cache/triton/<device>/`) of the compiled
    /// kernel that ran: Inductor's `launcher.cache_hash`.
    #[serde(default)]
    pub cache_hash: Option<String>,
    /// triton: Triton's signature (`*fp32`, `i32`, ...; constexprs dropped).
    #[serde(default)]
    pub signature: Vec<String>,
    pub calls: Vec<KernelCall>,
}

/// One distinct argument layout and how many times the recorded pass used it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelCall {
    pub count: u64,
    pub args: Vec<KernelArg>,
    /// triton: the launch grid.
    #[serde(default)]
    pub grid: Option<[u32; 3]>,
}

/// One argument of a call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelArg {
    Tensor(TensorArg),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// `{"none": null}`: Python's None (an optional tensor not given).
    None(serde_json::Value),
    /// `{"other": "<type>"}`: a value of a type the capture does not record.
    Other(String),
}

/// A tensor argument's layout (and, for integer and bool tensors, its contents).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TensorArg {
    pub dtype: String,
    pub sizes: Vec<i64>,
    pub strides: Vec<i64>,
    pub storage_offset: i64,
    /// A `.npy` of the tensor's values (integer/bool tensors, which may index others).
    #[serde(default)]
    pub values: Option<String>,
}

impl RecordedKernel {
    /// Every path the kernel names, with the key that names it.
    pub fn paths(&self) -> Vec<(String, &str)> {
        let mut paths = vec![("source".to_owned(), self.source.as_str())];
        for (key, path) in [
            ("kernel_source", &self.kernel_source),
            ("library", &self.library),
            ("cubin", &self.cubin),
        ] {
            if let Some(path) = path {
                paths.push((key.to_owned(), path.as_str()));
            }
        }
        for (c, call) in self.calls.iter().enumerate() {
            for (a, arg) in call.args.iter().enumerate() {
                if let KernelArg::Tensor(TensorArg {
                    values: Some(values),
                    ..
                }) = arg
                {
                    paths.push((format!("calls[{c}].args[{a}].values"), values.as_str()));
                }
            }
        }
        paths
    }
}
