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
}
