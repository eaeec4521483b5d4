//! [`OpArg`]: a value for one argument of an operator's schema, owned by Rust.

use tch::Tensor;

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
