//! Whether a Kineto op's recorded inputs agree with an Execution Trace node's: what, besides
//! the name, ties an op to its node when the trace records no record-function ids
//! ([`super::link_order`]).
//!
//! A Kineto op profiled with `record_shapes` records `Input Dims` (a tensor's shape, `[]` for
//! anything else) and `Input type` (a tensor's dtype, `float`, `long int`; `Scalar`,
//! `ScalarList` otherwise), one entry per argument; the node records each argument's shape
//! and type (`Tensor(float)`). They agree when every tensor argument of the node has the same
//! shape, and the same dtype, as the Kineto op's entry at its position. An op that recorded
//! no inputs agrees with any node (the name alone decides).

use serde_json::Value;

use crate::trace::{Event, Trace};

use super::node::EtNode;

/// A node's tensor arguments: position, shape and dtype (`float` of `Tensor(float)`).
pub struct EtInputs {
    tensors: Vec<(usize, Value, String)>,
}

impl EtInputs {
    pub fn of(node: &EtNode) -> EtInputs {
        let tensors = node
            .inputs
            .iter()
            .enumerate()
            .filter_map(|(i, arg)| {
                let dtype = arg.tensor_dtype()?;
                Some((i, arg.shape.clone(), dtype.to_owned()))
            })
            .collect();
        EtInputs { tensors }
    }
}

/// A Kineto op's recorded shapes and dtypes, where it recorded them.
pub struct KinetoInputs {
    dims: Option<Vec<Value>>,
    types: Option<Vec<String>>,
}

impl KinetoInputs {
    pub fn of(trace: &Trace, event: &Event) -> KinetoInputs {
        let parse = |id| serde_json::from_str::<Vec<Value>>(trace.text(id)).ok();
        let recorded = &event.args.inputs;
        KinetoInputs {
            dims: recorded.dims.and_then(parse),
            types: recorded.types.and_then(parse).map(|types| {
                types
                    .into_iter()
                    .map(|t| t.as_str().unwrap_or_default().to_owned())
                    .collect()
            }),
        }
    }

    /// Whether the op recorded its input shapes.
    pub fn recorded(&self) -> bool {
        self.dims.is_some()
    }

    /// Whether every tensor argument of the node has the recorded shape and dtype at its
    /// position (always, where nothing was recorded).
    pub fn agree_with(&self, node: &EtInputs) -> bool {
        node.tensors.iter().all(|(i, shape, dtype)| {
            let shape_agrees = self
                .dims
                .as_ref()
                .and_then(|d| d.get(*i))
                .is_none_or(|d| d == shape);
            let dtype_agrees = self
                .types
                .as_ref()
                .and_then(|t| t.get(*i))
                .is_none_or(|t| t == dtype);
            shape_agrees && dtype_agrees
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::execution_trace::EtArg;
    use serde_json::json;

    fn arg(ty: &str, shape: Value) -> EtArg {
        EtArg {
            value: Value::Null,
            ty: ty.into(),
            shape,
            strides: None,
            tensors: Vec::new(),
        }
    }

    fn kineto(dims: Option<Value>, types: Option<&[&str]>) -> KinetoInputs {
        KinetoInputs {
            dims: dims.map(|d| d.as_array().unwrap().clone()),
            types: types.map(|t| t.iter().map(|s| s.to_string()).collect()),
        }
    }

    #[test]
    fn tensor_shapes_and_dtypes_decide_where_recorded() {
        // bloom-tiny's first aten::view, as both sides recorded it.
        let mut node = EtNode::named(7, "aten::view");
        node.inputs = vec![
            arg("Tensor(long int)", json!([1, 5])),
            arg("GenericList[Int]", json!([[]])),
        ];
        let node = EtInputs::of(&node);
        let recorded = |dims: Value, types: &[&str]| kineto(Some(dims), Some(types));
        assert!(recorded(json!([[1, 5], []]), &["long int", "ScalarList"]).agree_with(&node));
        assert!(!recorded(json!([[5, 1], []]), &["long int", "ScalarList"]).agree_with(&node));
        assert!(!recorded(json!([[1, 5], []]), &["float", "ScalarList"]).agree_with(&node));
        // Shapes without dtypes: the shapes decide; nothing recorded: the name alone.
        assert!(kineto(Some(json!([[1, 5], []])), None).agree_with(&node));
        assert!(!kineto(Some(json!([[1, 6], []])), None).agree_with(&node));
        assert!(kineto(None, None).agree_with(&node));
        assert!(!kineto(None, None).recorded());
    }
}
