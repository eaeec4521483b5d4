//! Safe Rust over the libtorch dispatcher shim (`shim/op_dispatch.cpp`): list an operator's
//! overloads, prepare a boxed call once, run it many times. C++ exceptions come back as
//! [`ShimError`]s; they never unwind into Rust.

use std::ffi::{c_char, c_void, CStr, CString};
use std::ptr;

use tch::Tensor;

/// A failure reported by libtorch (its message, without the C++ backtrace).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct ShimError(pub String);

pub use replay_core::signature::overload::{OpSchema, SchemaArg};

/// A value for one schema argument.
#[derive(Debug)]
pub enum OpArg {
    None,
    Tensor(Tensor),
    Int(i64),
    Double(f64),
    Bool(bool),
    IntList(Vec<i64>),
    DoubleList(Vec<f64>),
    BoolList(Vec<bool>),
    /// `None` entries are allowed for `Tensor?[]` (as `aten::index` takes).
    TensorList(Vec<Option<Tensor>>),
    /// A `str`, or a `Device` written as `cpu` / `cuda:0`.
    Str(String),
    /// The schema's default value for this argument.
    Default,
}

#[repr(C)]
struct RawArg {
    kind: i32,
    int_value: i64,
    double_value: f64,
    ints: *const i64,
    doubles: *const f64,
    tensors: *const *mut c_void,
    len: usize,
    str_: *const c_char,
}

#[repr(C)]
struct RawPreparedCall {
    _private: [u8; 0],
}

extern "C" {
    fn replay_free_string(s: *mut c_char);
    fn replay_op_overloads(name: *const c_char, error: *mut *mut c_char) -> *mut c_char;
    fn replay_op_prepare(
        name: *const c_char,
        overload: *const c_char,
        args: *const RawArg,
        nargs: usize,
        error: *mut *mut c_char,
    ) -> *mut RawPreparedCall;
    fn replay_op_run(call: *mut RawPreparedCall, calls: u64, error: *mut *mut c_char) -> i32;
    fn replay_op_last_output(call: *mut RawPreparedCall) -> *mut c_void;
    fn replay_op_free(call: *mut RawPreparedCall);
    fn replay_torch_current_cuda_stream(device: i32, error: *mut *mut c_char) -> *mut c_void;
}

/// libtorch's messages can run to a hundred lines (every dispatch key registered for an op):
/// keep the first paragraph, which says what went wrong.
fn first_paragraph(text: &str) -> String {
    let head = text.split("\n\n").next().unwrap_or(text).trim();
    let mut out: String = head.chars().take(600).collect();
    if out.len() < head.len() {
        out.push_str("...");
    }
    out
}

/// Takes ownership of a string the shim allocated (an error message: its first paragraph).
fn take_string(s: *mut c_char) -> String {
    if s.is_null() {
        return String::from("(no message)");
    }
    // SAFETY: the shim returns NUL-terminated strings from malloc, freed exactly once here.
    let text = unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned();
    unsafe { replay_free_string(s) };
    first_paragraph(&text)
}

fn c_string(text: &str) -> Result<CString, ShimError> {
    CString::new(text).map_err(|_| ShimError(format!("'{text}' contains a NUL byte")))
}

/// Every overload of `name` (for example `aten::layer_norm`).
pub fn overloads(name: &str) -> Result<Vec<OpSchema>, ShimError> {
    let c_name = c_string(name)?;
    let mut error = ptr::null_mut();
    // SAFETY: valid C string; the shim catches every C++ exception.
    let raw = unsafe { replay_op_overloads(c_name.as_ptr(), &mut error) };
    if raw.is_null() {
        return Err(ShimError(take_string(error)));
    }
    // SAFETY: as in take_string, but the JSON is kept whole.
    let json = unsafe { CStr::from_ptr(raw) }
        .to_string_lossy()
        .into_owned();
    unsafe { replay_free_string(raw) };
    serde_json::from_str(&json)
        .map_err(|e| ShimError(format!("bad schema JSON from the shim: {e}")))
}

/// libtorch's current CUDA stream for `device`, as a raw `cudaStream_t`.
pub fn torch_current_cuda_stream(device: usize) -> Result<*mut c_void, ShimError> {
    let index = i32::try_from(device)
        .map_err(|_| ShimError(format!("CUDA device index {device} is out of range")))?;
    let mut error = ptr::null_mut();
    // SAFETY: the shim catches every C++ exception.
    let stream = unsafe { replay_torch_current_cuda_stream(index, &mut error) };
    if !error.is_null() {
        return Err(ShimError(take_string(error)));
    }
    Ok(stream)
}

/// An operator call with its arguments bound, ready to run repeatedly.
pub struct PreparedOp {
    raw: *mut RawPreparedCall,
    name: String,
    /// Keeps the tensors alive for as long as the prepared stack refers to them.
    _args: Vec<OpArg>,
}

impl std::fmt::Debug for PreparedOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedOp")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl PreparedOp {
    /// Binds `args` (positional, schema order; missing trailing arguments take their schema
    /// defaults) to `name`.`overload`. The empty overload is the operator's default one.
    pub fn new(name: &str, overload: &str, mut args: Vec<OpArg>) -> Result<PreparedOp, ShimError> {
        let c_name = c_string(name)?;
        let c_overload = c_string(overload)?;
        // Raw views of the Rust-owned values; all of them outlive the prepare call below.
        let mut strings: Vec<CString> = Vec::new();
        let mut tensor_ptrs: Vec<Vec<*mut c_void>> = Vec::new();
        let mut bool_lists: Vec<Vec<i64>> = Vec::new();
        for arg in args.iter_mut() {
            match arg {
                OpArg::Str(s) => strings.push(c_string(s)?),
                OpArg::Tensor(t) => tensor_ptrs.push(vec![t.as_mut_ptr() as *mut c_void]),
                OpArg::TensorList(list) => tensor_ptrs.push(
                    list.iter_mut()
                        .map(|t| {
                            t.as_mut()
                                .map_or(ptr::null_mut(), |t| t.as_mut_ptr() as *mut c_void)
                        })
                        .collect(),
                ),
                OpArg::BoolList(list) => bool_lists.push(list.iter().map(|&b| b as i64).collect()),
                _ => {}
            }
        }
        let (mut next_string, mut next_tensors, mut next_bools) = (0, 0, 0);
        let mut raw_args = Vec::with_capacity(args.len());
        for arg in &args {
            let mut raw = RawArg {
                kind: 0,
                int_value: 0,
                double_value: 0.0,
                ints: ptr::null(),
                doubles: ptr::null(),
                tensors: ptr::null(),
                len: 0,
                str_: ptr::null(),
            };
            match arg {
                OpArg::None => raw.kind = 0,
                OpArg::Default => raw.kind = 10,
                OpArg::Tensor(_) | OpArg::TensorList(_) => {
                    let ptrs = &tensor_ptrs[next_tensors];
                    next_tensors += 1;
                    raw.kind = if matches!(arg, OpArg::Tensor(_)) {
                        1
                    } else {
                        6
                    };
                    raw.tensors = ptrs.as_ptr();
                    raw.len = ptrs.len();
                }
                OpArg::Int(v) => (raw.kind, raw.int_value) = (2, *v),
                OpArg::Double(v) => (raw.kind, raw.double_value) = (3, *v),
                OpArg::Bool(v) => (raw.kind, raw.int_value) = (4, *v as i64),
                OpArg::IntList(v) => (raw.kind, raw.ints, raw.len) = (5, v.as_ptr(), v.len()),
                OpArg::DoubleList(v) => (raw.kind, raw.doubles, raw.len) = (8, v.as_ptr(), v.len()),
                OpArg::BoolList(_) => {
                    let v = &bool_lists[next_bools];
                    next_bools += 1;
                    (raw.kind, raw.ints, raw.len) = (9, v.as_ptr(), v.len());
                }
                OpArg::Str(_) => {
                    raw.kind = 7;
                    raw.str_ = strings[next_string].as_ptr();
                    next_string += 1;
                }
            }
            raw_args.push(raw);
        }
        let mut error = ptr::null_mut();
        // SAFETY: every pointer in raw_args points into values alive until this call returns;
        // the shim copies what it keeps (IValues hold their own tensor references).
        let raw = unsafe {
            replay_op_prepare(
                c_name.as_ptr(),
                c_overload.as_ptr(),
                raw_args.as_ptr(),
                raw_args.len(),
                &mut error,
            )
        };
        if raw.is_null() {
            return Err(ShimError(take_string(error)));
        }
        let full_name = if overload.is_empty() {
            name.to_string()
        } else {
            format!("{name}.{overload}")
        };
        Ok(PreparedOp {
            raw,
            name: full_name,
            _args: args,
        })
    }

    /// `aten::add.Tensor`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Calls the operator `calls` times, back to back.
    pub fn run(&mut self, calls: u64) -> Result<(), ShimError> {
        let mut error = ptr::null_mut();
        // SAFETY: `raw` is a live prepared call owned by self.
        let rc = unsafe { replay_op_run(self.raw, calls, &mut error) };
        if rc != 0 {
            return Err(ShimError(format!("{}: {}", self.name, take_string(error))));
        }
        Ok(())
    }

    /// The first tensor the last call returned.
    pub fn last_output(&self) -> Option<Tensor> {
        // SAFETY: returns a new heap `torch::Tensor*` (or null) that tch takes ownership of.
        let raw = unsafe { replay_op_last_output(self.raw) };
        (!raw.is_null()).then(|| unsafe { Tensor::from_ptr(raw as *mut _) })
    }
}

impl Drop for PreparedOp {
    fn drop(&mut self) {
        // SAFETY: created by replay_op_prepare, freed once.
        unsafe { replay_op_free(self.raw) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tch::{Device, Kind};

    #[test]
    fn lists_the_overloads_of_add() {
        let schemas = overloads("aten::add").unwrap();
        let tensor = schemas
            .iter()
            .find(|s| s.overload == "Tensor")
            .expect("aten::add.Tensor");
        let names: Vec<&str> = tensor.args.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["self", "other", "alpha"]);
        assert_eq!(tensor.args[1].ty, "Tensor");
        assert!(tensor.args[2].has_default && tensor.args[2].kwarg_only);
        assert!(schemas
            .iter()
            .any(|s| s.overload == "out" && s.args.iter().any(|a| a.writes)));
    }

    #[test]
    fn unknown_operator_is_an_error_not_an_abort() {
        let err = overloads("aten::no_such_op").unwrap_err();
        assert!(err.0.contains("aten::no_such_op"), "{err}");
    }

    #[test]
    fn calls_add_by_name_with_defaults() {
        let a = Tensor::ones([2, 3], (Kind::Float, Device::Cpu));
        let b = Tensor::full([2, 3], 2.0, (Kind::Float, Device::Cpu));
        let mut op = PreparedOp::new(
            "aten::add",
            "Tensor",
            vec![OpArg::Tensor(a), OpArg::Tensor(b)],
        )
        .unwrap();
        op.run(3).unwrap();
        let out = op.last_output().unwrap();
        assert_eq!(out.size(), [2, 3]);
        assert_eq!(out.sum(Kind::Float).double_value(&[]), 18.0);
        assert_eq!(op.name(), "aten::add.Tensor");
    }

    #[test]
    fn scalar_int_list_and_optional_arguments() {
        // aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None)
        let x = Tensor::ones([4, 5], (Kind::Float, Device::Cpu));
        let mut op = PreparedOp::new(
            "aten::sum",
            "dim_IntList",
            vec![OpArg::Tensor(x), OpArg::IntList(vec![1]), OpArg::Bool(true)],
        )
        .unwrap();
        op.run(1).unwrap();
        assert_eq!(op.last_output().unwrap().size(), [4, 1]);
        // aten::mul.Scalar(Tensor self, Scalar other)
        let y = Tensor::ones([3], (Kind::Float, Device::Cpu));
        let mut op = PreparedOp::new(
            "aten::mul",
            "Scalar",
            vec![OpArg::Tensor(y), OpArg::Double(0.5)],
        )
        .unwrap();
        op.run(1).unwrap();
        assert_eq!(
            op.last_output().unwrap().sum(Kind::Float).double_value(&[]),
            1.5
        );
    }

    #[test]
    fn libtorch_errors_come_back_as_errors() {
        let a = Tensor::ones([2, 3], (Kind::Float, Device::Cpu));
        let b = Tensor::ones([4, 5], (Kind::Float, Device::Cpu));
        let mut op =
            PreparedOp::new("aten::mm", "", vec![OpArg::Tensor(a), OpArg::Tensor(b)]).unwrap();
        let err = op.run(1).unwrap_err();
        assert!(
            err.0.contains("aten::mm") && err.0.contains("cannot be multiplied"),
            "{err}"
        );
        let err = PreparedOp::new("aten::mm", "no_such_overload", vec![]).unwrap_err();
        assert!(!err.0.is_empty());
        let err = PreparedOp::new("aten::relu", "", vec![OpArg::None]).unwrap_err();
        assert!(err.0.contains("cannot be None"), "{err}");
    }

    #[test]
    fn optional_tensor_lists_for_index() {
        // aten::index.Tensor(Tensor self, Tensor?[] indices)
        let x = Tensor::arange(12, (Kind::Float, Device::Cpu)).view([3, 4]);
        let idx = Tensor::from_slice(&[2i64, 0]);
        let mut op = PreparedOp::new(
            "aten::index",
            "Tensor",
            vec![OpArg::Tensor(x), OpArg::TensorList(vec![None, Some(idx)])],
        )
        .unwrap();
        op.run(1).unwrap();
        let out = op.last_output().unwrap();
        assert_eq!(out.size(), [3, 2]);
        assert_eq!(out.double_value(&[1, 0]), 6.0);
    }

    #[test]
    fn no_cuda_stream_without_a_gpu_is_an_error() {
        if tch::Cuda::is_available() {
            // With CUDA, selftest check "CUDA events on libtorch's stream" gets the stream
            // and times libtorch's work on it.
            return;
        }
        assert!(torch_current_cuda_stream(0).is_err());
    }
}
