//! The Execution Trace's model: its nodes (one per recorded operator or annotation), their
//! inputs and outputs exactly as the trace encodes them, and the tensor identities it gives.
//!
//! A node's argument is a value with a type (`Tensor(float)`, `Int`, `GenericList[Int,Int]`,
//! `None`, `Device`, ...), a shape and, from schema 1.1.1 on, strides. A tensor's value is
//! its identity `[tensor id, storage id, offset, element count, element size, device]`: two
//! arguments with the same tensor id are the same tensor, two with the same storage id
//! share memory (a view and its base), which is what makes data flow between ops visible.

use std::path::PathBuf;

use serde_json::Value;

use crate::signature::InputRange;

/// Which layout the file's nodes have (see [`super::layout`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchemaVersion {
    /// `1.0.x`: flat keys per node (`rf_id`, `parent`, `inputs`, `input_shapes`, ...).
    V1_0,
    /// `1.1.x` (`1.1.0-chakra.0.0.4`, `1.1.1-chakra.0.0.4`): `ctrl_deps`,
    /// `inputs: {values, shapes, types[, strides]}`, the rest in `attrs`.
    V1_1,
}

/// A parsed Execution Trace.
#[derive(Debug, Clone)]
pub struct ExecutionTrace {
    pub path: PathBuf,
    /// The `schema` string as written (`1.0.1`, `1.1.0-chakra.0.0.4`).
    pub schema: String,
    pub version: SchemaVersion,
    /// The recording process's id, when the trace names it.
    pub pid: Option<i64>,
    /// Wall-clock time of the recording, as written.
    pub time: Option<String>,
    /// Every node, in file order.
    pub nodes: Vec<EtNode>,
}

impl ExecutionTrace {
    /// The node of record-function id `rf_id` (ids > 0; 0 is the observer's own root).
    pub fn node_of_rf_id(&self, rf_id: u64) -> Option<&EtNode> {
        self.nodes.iter().find(|n| n.rf_id == Some(rf_id))
    }

    /// The operator nodes: those with an operator schema (aten ops and custom ops), not the
    /// annotations and threads around them.
    pub fn operators(&self) -> impl Iterator<Item = &EtNode> {
        self.nodes.iter().filter(|n| n.op_schema.is_some())
    }
}

/// One recorded operator or annotation.
#[derive(Debug, Clone, PartialEq)]
pub struct EtNode {
    pub id: i64,
    pub name: String,
    /// The enclosing node (`parent` in 1.0, `ctrl_deps` in 1.1).
    pub parent: Option<i64>,
    /// The record-function id; the Kineto op of the same step records it as
    /// `args."Record function id"`.
    pub rf_id: Option<u64>,
    /// The exact operator schema (`aten::add.Tensor(Tensor self, Tensor other, *, Scalar
    /// alpha=1) -> Tensor`); `None` for annotations and ops recorded without one.
    pub op_schema: Option<String>,
    /// Autograd sequence number (-1: none).
    pub seq_id: Option<i64>,
    /// The observer's thread number (not the OS thread id).
    pub tid: Option<u64>,
    /// The RecordFunction scope (0 function, 7 user scope, ...).
    pub scope: Option<u64>,
    /// A generated kernel's backend and source file (1.1: `kernel_backend`, `kernel_file`).
    pub kernel_backend: Option<String>,
    pub kernel_file: Option<String>,
    /// The integral input tensors' value ranges, by argument position, where the observer
    /// recorded them (1.1.1 `tensor_range`; see [`super::tensor_range`]).
    pub input_ranges: Vec<InputRange>,
    pub inputs: Vec<EtArg>,
    pub outputs: Vec<EtArg>,
}

impl EtNode {
    /// A node `id` named `name` with nothing else recorded yet (no parent, schema, ranges,
    /// inputs or outputs).
    pub fn named(id: i64, name: impl Into<String>) -> EtNode {
        EtNode {
            id,
            name: name.into(),
            parent: None,
            rf_id: None,
            op_schema: None,
            seq_id: None,
            tid: None,
            scope: None,
            kernel_backend: None,
            kernel_file: None,
            input_ranges: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
        }
    }

    /// The overload named by the schema: `Tensor` for `aten::add.Tensor(...)`, the empty
    /// string for the default overload (`aten::t(...)`), `None` without a schema.
    pub fn overload(&self) -> Option<&str> {
        self.op_schema.as_deref().map(overload_of_schema)
    }
}

/// The overload name of a schema text: what lies between the operator's name and `(`
/// ([`schema_name`](crate::signature::overload::schema_name)).
pub fn overload_of_schema(schema: &str) -> &str {
    crate::signature::overload::schema_name(schema).1
}

/// The operator name of a schema text: `aten::add` for `aten::add.Tensor(...)`.
pub fn operator_of_schema(schema: &str) -> &str {
    crate::signature::overload::schema_name(schema).0
}

/// One input or output of a node.
#[derive(Debug, Clone, PartialEq)]
pub struct EtArg {
    /// The value as the trace wrote it: a tensor's identity list, a number, a list, a
    /// string, `"<None>"`.
    pub value: Value,
    /// The type as written: `Tensor(float)`, `Int`, `GenericList[Int,Int]`, `None`.
    pub ty: String,
    /// The shape as written (`[1024, 1024]` for a tensor, `[[], []]` for a list of ints).
    pub shape: Value,
    /// The strides, where the schema records them (1.1.1 on).
    pub strides: Option<Value>,
    /// The tensors this argument holds: one for a tensor, each element of a tensor list.
    pub tensors: Vec<TensorRef>,
}

impl EtArg {
    pub fn is_tensor(&self) -> bool {
        self.ty.starts_with("Tensor")
    }

    /// A tensor's dtype as the type names it: `float` of `Tensor(float)`; `None` for anything
    /// that is not one tensor.
    pub fn tensor_dtype(&self) -> Option<&str> {
        self.ty.strip_prefix("Tensor(")?.strip_suffix(')')
    }
}

#[cfg(test)]
impl EtArg {
    /// A float32 tensor argument of `numel` elements at offset 0 (the tests' nodes).
    pub(crate) fn float_tensor(tensor_id: i64, storage_id: i64, numel: i64) -> EtArg {
        EtArg {
            value: Value::Null,
            ty: "Tensor(float)".into(),
            shape: serde_json::json!([numel]),
            strides: None,
            tensors: vec![TensorRef {
                tensor_id,
                storage_id,
                offset: 0,
                numel,
                itemsize: 4,
                device: None,
            }],
        }
    }
}

/// A tensor of the Execution Trace: (tensor id, storage id). Ids are reused once a tensor is
/// freed; the latest producer before a read is the one it reads.
pub type TensorKey = (i64, i64);

pub fn tensor_key(tensor: &TensorRef) -> TensorKey {
    (tensor.tensor_id, tensor.storage_id)
}

/// A tensor's identity as the trace encodes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorRef {
    /// Unique per tensor object in the trace.
    pub tensor_id: i64,
    /// Unique per storage: views share their base's.
    pub storage_id: i64,
    /// Offset into the storage, in elements.
    pub offset: i64,
    pub numel: i64,
    /// Bytes per element.
    pub itemsize: i64,
    /// `cuda:0`, `cpu`; absent in traces that did not record it.
    pub device: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overload_and_operator_names_come_from_the_schema_text() {
        let add = "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor";
        assert_eq!(overload_of_schema(add), "Tensor");
        assert_eq!(operator_of_schema(add), "aten::add");
        let t = "aten::t(Tensor(a) self) -> Tensor(a)";
        assert_eq!(overload_of_schema(t), "");
        assert_eq!(operator_of_schema(t), "aten::t");
        let mm = "aten::mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out) -> Tensor(a!)";
        assert_eq!(overload_of_schema(mm), "out");
        assert_eq!(operator_of_schema(mm), "aten::mm");
        let custom = "c10d::allreduce_(Tensor[] tensors) -> Tensor[]";
        assert_eq!(overload_of_schema(custom), "");
        assert_eq!(operator_of_schema(custom), "c10d::allreduce_");
    }
}
