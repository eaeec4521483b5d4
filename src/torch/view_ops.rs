//! The view ops a linked input applies to its producer's output (a step's view ops that are
//! not re-run, [`ViewOp`]): applied here through tch to check what the input will read, and
//! encoded for the shim, which applies them on every run (`replay_op_link_input`).

use replay_core::sequence_gaps::ViewOp;
use tch::{TchError, Tensor};

/// `tensor` viewed by `views`, in order.
pub fn apply_views(tensor: &Tensor, views: &[ViewOp]) -> Result<Tensor, TchError> {
    views
        .iter()
        .try_fold(tensor.shallow_clone(), |t, view| match view {
            ViewOp::Reshape(sizes) => t.f_reshape(sizes.as_slice()),
            // `t` of a tensor of fewer than two dimensions is the tensor.
            ViewOp::T if t.dim() < 2 => Ok(t),
            ViewOp::T => t.f_transpose(0, 1),
            ViewOp::Transpose(a, b) => t.f_transpose(*a, *b),
            ViewOp::Permute(dims) => t.f_permute(dims.as_slice()),
            ViewOp::Expand(sizes) => t.f_expand(sizes.as_slice(), false),
            ViewOp::Select(dim, index) => t.f_select(*dim, *index),
            ViewOp::Slice {
                dim,
                start,
                end,
                step,
            } => t.f_slice(*dim, *start, *end, *step),
        })
}

/// `views` as the shim reads them: per view its kind, the count of its integers, the
/// integers (a slice's missing start or end: a flag 0, then 0).
pub fn encode(views: &[ViewOp]) -> Vec<i64> {
    let mut out = Vec::new();
    let mut push = |kind: i64, ints: &[i64]| {
        out.push(kind);
        out.push(ints.len() as i64);
        out.extend_from_slice(ints);
    };
    for view in views {
        match view {
            ViewOp::Reshape(sizes) => push(0, sizes),
            ViewOp::T => push(1, &[]),
            ViewOp::Transpose(a, b) => push(2, &[*a, *b]),
            ViewOp::Permute(dims) => push(3, dims),
            ViewOp::Expand(sizes) => push(4, sizes),
            ViewOp::Select(dim, index) => push(5, &[*dim, *index]),
            ViewOp::Slice {
                dim,
                start,
                end,
                step,
            } => push(
                6,
                &[
                    *dim,
                    i64::from(start.is_some()),
                    start.unwrap_or(0),
                    i64::from(end.is_some()),
                    end.unwrap_or(0),
                    *step,
                ],
            ),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use replay_core::execution_trace::{EtArg, EtNode, TensorRef};
    use tch::{Device, Kind};

    #[test]
    fn views_apply_as_their_ops_and_encode_for_the_shim() {
        let x = Tensor::arange(24, (Kind::Float, Device::Cpu)).reshape([2, 3, 4]);
        let views = [
            ViewOp::Reshape(vec![6, 4]),
            ViewOp::T,
            ViewOp::Slice {
                dim: 1,
                start: Some(1),
                end: None,
                step: 2,
            },
            ViewOp::Select(0, 3),
        ];
        let v = apply_views(&x, &views).unwrap();
        // x viewed [6, 4], transposed [4, 6], columns 1, 3, 5 [4, 3], row 3: x's elements 7,
        // 15, 23 (row r of [6, 4] holds 4r .. 4r + 3; column 3 of it is 4r + 3).
        assert_eq!(v.size(), [3]);
        let got: Vec<f64> = (0..3).map(|i| v.double_value(&[i])).collect();
        assert_eq!(got, [7.0, 15.0, 23.0]);
        assert_eq!(
            encode(&views),
            [0, 2, 6, 4, 1, 0, 6, 6, 1, 1, 1, 0, 0, 2, 5, 2, 0, 3]
        );
        // One view of what the step is (a shim-side mistake would show in the linked run).
        assert!(apply_views(&x, &[ViewOp::Select(5, 0)]).is_err());
    }

    /// An Execution Trace node `name(x, args...)` of a [2, 7] input giving `pieces` tensors.
    fn cutting(name: &str, args: &[serde_json::Value], pieces: usize) -> EtNode {
        let tensor = |id: i64| TensorRef {
            tensor_id: id,
            storage_id: 1,
            offset: 0,
            numel: 14,
            itemsize: 4,
            device: None,
        };
        let arg = |value: serde_json::Value| EtArg {
            value,
            ty: "Int".into(),
            shape: serde_json::Value::Null,
            strides: None,
            tensors: Vec::new(),
        };
        let mut inputs = vec![EtArg {
            ty: "Tensor(float)".into(),
            shape: serde_json::json!([2, 7]),
            tensors: vec![tensor(1)],
            ..arg(serde_json::Value::Null)
        }];
        inputs.extend(args.iter().cloned().map(arg));
        EtNode {
            inputs,
            outputs: vec![EtArg {
                ty: "GenericList[Tensor(float)]".into(),
                tensors: (0..pieces as i64).map(|k| tensor(10 + k)).collect(),
                ..arg(serde_json::Value::Null)
            }],
            ..EtNode::named(5, name)
        }
    }

    #[test]
    fn a_split_lists_pieces_are_the_views_torch_cuts() {
        use serde_json::json;
        let x = Tensor::arange(14, (Kind::Float, Device::Cpu)).reshape([2, 7]);
        let cases: Vec<(EtNode, Vec<Tensor>)> = vec![
            (
                cutting("aten::split", &[json!(3), json!(1)], 3),
                x.split(3, 1),
            ),
            (
                cutting("aten::chunk", &[json!(2), json!(-1)], 2),
                x.chunk(2, -1),
            ),
            (cutting("aten::unbind", &[json!(0)], 2), x.unbind(0)),
            (
                cutting("aten::split_with_sizes", &[json!([2, 5]), json!(1)], 2),
                x.split_with_sizes([2, 5], 1),
            ),
            // The dimension left at its default, 0.
            (cutting("aten::split", &[json!(1)], 2), x.split(1, 0)),
        ];
        for (node, expected) in cases {
            let pieces = ViewOp::pieces(&node).unwrap_or_else(|| panic!("{}", node.name));
            assert_eq!(pieces.len(), expected.len(), "{}", node.name);
            for (piece, want) in pieces.iter().zip(&expected) {
                let got = apply_views(&x, std::slice::from_ref(piece)).unwrap();
                assert_eq!(got.size(), want.size(), "{} {piece:?}", node.name);
                assert!(got.equal(want), "{} {piece:?}", node.name);
            }
        }
        // Another op with a list output gives no pieces.
        assert!(ViewOp::pieces(&cutting("aten::meshgrid", &[], 2)).is_none());
    }
}
