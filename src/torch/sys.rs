//! The raw C ABI of the libtorch shim (`shim/op_dispatch.h`, `shim/memory_stats.h`,
//! `shim/aoti_package.h`, `shim/profiler.h`, `shim/fusion_group.h`): the `extern "C"` block and the `#[repr(C)]` types
//! it passes. Nothing here is safe to call directly; the safe layer is [`super::prepared_op`],
//! [`super::overloads`], [`super::cuda_stream`], [`super::profiler_session`] and
//! `crate::model::aoti_package`.

use std::ffi::{c_char, c_void};
use std::ptr;

/// What a [`RawArg`] holds: `replay_arg_kind` of `op_dispatch.h`, value for value (the shim
/// reads the field as an `int32_t`; a number missing here would be a kind it rejects).
#[repr(i32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArgKind {
    /// `REPLAY_ARG_NONE`: an absent optional.
    None = 0,
    /// `REPLAY_ARG_TENSOR`: `tensors[0]`, a tch tensor (`torch::Tensor*`).
    Tensor = 1,
    /// `REPLAY_ARG_INT`: `int_value`; also ScalarType, Layout and MemoryFormat codes.
    Int = 2,
    /// `REPLAY_ARG_DOUBLE`: `double_value`.
    Double = 3,
    /// `REPLAY_ARG_BOOL`: `int_value != 0`.
    Bool = 4,
    /// `REPLAY_ARG_INT_LIST`: `ints[0..len]`.
    IntList = 5,
    /// `REPLAY_ARG_TENSOR_LIST`: `tensors[0..len]`; a null entry is None (for `Tensor?[]`).
    TensorList = 6,
    /// `REPLAY_ARG_STRING`: `str`, NUL-terminated; also a Device (`cpu`, `cuda:0`).
    String = 7,
    /// `REPLAY_ARG_DOUBLE_LIST`: `doubles[0..len]`.
    DoubleList = 8,
    /// `REPLAY_ARG_BOOL_LIST`: `ints[0..len]`, non-zero is true.
    BoolList = 9,
    /// `REPLAY_ARG_DEFAULT`: the schema's default value for this argument.
    Default = 10,
}

/// `replay_arg`: one argument, its payload in the fields its [`ArgKind`] names.
#[repr(C)]
pub struct RawArg {
    pub kind: ArgKind,
    pub int_value: i64,
    pub double_value: f64,
    pub ints: *const i64,
    pub doubles: *const f64,
    pub tensors: *const *mut c_void,
    pub len: usize,
    pub str_: *const c_char,
}

impl RawArg {
    /// An argument of `kind` with every payload field empty, for the caller to fill.
    pub fn empty(kind: ArgKind) -> RawArg {
        RawArg {
            kind,
            int_value: 0,
            double_value: 0.0,
            ints: ptr::null(),
            doubles: ptr::null(),
            tensors: ptr::null(),
            len: 0,
            str_: ptr::null(),
        }
    }
}

/// `replay_aoti_package`: a loaded AOTInductor package, opaque, owned by the shim.
#[repr(C)]
pub struct RawAotiPackage {
    _private: [u8; 0],
}

/// `replay_fusion_kernel` (`shim/fusion_group.h`): a fusion group's compiled NNC kernel,
/// opaque, owned by the shim.
#[repr(C)]
pub struct RawFusionKernel {
    _private: [u8; 0],
}

/// `replay_profiler_counts` (`shim/profiler.h`): what one profiler session recorded.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RawProfilerCounts {
    pub cpu_ops: u64,
    pub cpu_ops_with_shapes: u64,
    pub runtime: u64,
    pub other: u64,
}

/// `replay_prepared_call`: opaque, owned by the shim.
#[repr(C)]
pub struct RawPreparedCall {
    _private: [u8; 0],
}

/// `replay_output_source`: a shared handle on a prepared call's last output, opaque, owned by
/// the shim.
#[repr(C)]
pub struct RawOutputSource {
    _private: [u8; 0],
}

extern "C" {
    pub fn replay_free_string(s: *mut c_char);
    pub fn replay_op_overloads(name: *const c_char, error: *mut *mut c_char) -> *mut c_char;
    pub fn replay_op_prepare(
        name: *const c_char,
        overload: *const c_char,
        args: *const RawArg,
        nargs: usize,
        error: *mut *mut c_char,
    ) -> *mut RawPreparedCall;
    pub fn replay_op_run(call: *mut RawPreparedCall, calls: u64, error: *mut *mut c_char) -> i32;
    pub fn replay_op_last_output(call: *mut RawPreparedCall) -> *mut c_void;
    pub fn replay_op_keep_output(call: *mut RawPreparedCall, keep: i32);
    pub fn replay_op_free(call: *mut RawPreparedCall);
    pub fn replay_op_output_source(call: *mut RawPreparedCall) -> *mut RawOutputSource;
    pub fn replay_output_source_tensor(
        source: *const RawOutputSource,
        output: usize,
    ) -> *mut c_void;
    pub fn replay_output_source_free(source: *mut RawOutputSource);
    pub fn replay_op_link_input(
        call: *mut RawPreparedCall,
        arg: usize,
        element: i64,
        source: *const RawOutputSource,
        output: usize,
        views: *const i64,
        views_len: usize,
        release_after: i32,
        error: *mut *mut c_char,
    ) -> i32;
    pub fn replay_torch_current_cuda_stream(device: i32, error: *mut *mut c_char) -> *mut c_void;

    // memory_stats.h: the counting CPU allocator and the CUDA caching allocator's peaks.
    pub fn replay_cpu_counter_install(error: *mut *mut c_char) -> i32;
    pub fn replay_cpu_counter_installed() -> i32;
    pub fn replay_cpu_counter_live() -> u64;
    pub fn replay_cpu_counter_peak() -> u64;
    pub fn replay_cpu_counter_reset_peak();
    pub fn replay_cuda_memory_peak(
        device: i32,
        allocated: *mut u64,
        reserved: *mut u64,
        error: *mut *mut c_char,
    ) -> i32;
    pub fn replay_cuda_memory_reset_peak(device: i32, error: *mut *mut c_char) -> i32;

    // aoti_package.h: AOTInductor packages through libtorch's AOTIModelPackageLoader.
    pub fn replay_aoti_package_metadata(
        path: *const c_char,
        model_name: *const c_char,
        error: *mut *mut c_char,
    ) -> *mut c_char;
    pub fn replay_aoti_package_load(
        path: *const c_char,
        model_name: *const c_char,
        device_index: i32,
        error: *mut *mut c_char,
    ) -> *mut RawAotiPackage;
    pub fn replay_aoti_package_run(
        package: *mut RawAotiPackage,
        inputs: *const *mut c_void,
        ninputs: usize,
        keep_outputs: i32,
        error: *mut *mut c_char,
    ) -> i64;
    pub fn replay_aoti_package_output(package: *mut RawAotiPackage, index: usize) -> *mut c_void;
    pub fn replay_aoti_package_free(package: *mut RawAotiPackage);

    // fusion_group.h: a TorchScript fusion group's kernel, and its subgraph run unfused.
    pub fn replay_fusion_kernel_new(
        graph_ir: *const c_char,
        te_must_use_llvm_cpu: i32,
        error: *mut *mut c_char,
    ) -> *mut RawFusionKernel;
    pub fn replay_fusion_kernel_name(kernel: *const RawFusionKernel) -> *const c_char;
    pub fn replay_fusion_kernel_inputs(kernel: *const RawFusionKernel) -> usize;
    pub fn replay_fusion_llvm_available() -> i32;
    pub fn replay_fusion_kernel_run(
        kernel: *mut RawFusionKernel,
        inputs: *const *mut c_void,
        ninputs: usize,
        calls: u64,
        error: *mut *mut c_char,
    ) -> i64;
    pub fn replay_fusion_kernel_output(kernel: *const RawFusionKernel, index: usize)
        -> *mut c_void;
    pub fn replay_fusion_kernel_free(kernel: *mut RawFusionKernel);
    pub fn replay_fuser_on_cpu(error: *mut *mut c_char) -> i32;
    pub fn replay_fusion_reference(
        graph_ir: *const c_char,
        inputs: *const *mut c_void,
        ninputs: usize,
        outputs: *mut *mut c_void,
        max_outputs: usize,
        error: *mut *mut c_char,
    ) -> i64;

    // profiler.h: libtorch's profiler with capture's settings, its events counted.
    pub fn replay_profiler_start(with_cuda: i32, error: *mut *mut c_char) -> i32;
    pub fn replay_profiler_stop(counts: *mut RawProfilerCounts, error: *mut *mut c_char) -> i32;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The numbers of `replay_arg_kind`, read from the header the shim is compiled with, so
    /// the two enums cannot drift apart unnoticed.
    #[test]
    fn arg_kinds_match_the_header() {
        let header = include_str!("shim/op_dispatch.h");
        let ours = [
            ("NONE", ArgKind::None),
            ("TENSOR", ArgKind::Tensor),
            ("INT", ArgKind::Int),
            ("DOUBLE", ArgKind::Double),
            ("BOOL", ArgKind::Bool),
            ("INT_LIST", ArgKind::IntList),
            ("TENSOR_LIST", ArgKind::TensorList),
            ("STRING", ArgKind::String),
            ("DOUBLE_LIST", ArgKind::DoubleList),
            ("BOOL_LIST", ArgKind::BoolList),
            ("DEFAULT", ArgKind::Default),
        ];
        let declared: Vec<(String, i32)> = header
            .lines()
            .filter_map(|line| {
                let (name, rest) = line.trim().strip_prefix("REPLAY_ARG_")?.split_once('=')?;
                let value = rest.trim().split(',').next()?.trim().parse().ok()?;
                Some((name.trim().to_string(), value))
            })
            .collect();
        assert_eq!(declared.len(), ours.len(), "{declared:?}");
        for (name, kind) in ours {
            let value = declared
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| *v)
                .unwrap_or_else(|| panic!("REPLAY_ARG_{name} is not in op_dispatch.h"));
            assert_eq!(kind as i32, value, "REPLAY_ARG_{name}");
        }
    }
}
