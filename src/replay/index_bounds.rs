//! Valid index inputs for the operators that take them.
//!
//! A replayed `embedding` or `gather` with random indices reads out of bounds: on a GPU that is
//! an illegal memory access that kills the process (the most common failure of replay tools).
//! For every operator that indexes, this table says which argument holds indices and what
//! bounds them, so the tensor built for it holds values in `[0, bound)`. Integer tensors of
//! operators not listed here are filled with zeros, which is a valid index for any non-empty
//! dimension.

/// What bounds the values of an index argument.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// `size(arg, dim)` with a fixed `dim`.
    SizeOf { arg: usize, dim: i64 },
    /// `size(arg, dim)` where `dim` is the value of the integer argument `dim_arg`.
    SizeAlongArg { arg: usize, dim_arg: usize },
    /// `numel(arg)`.
    NumelOf { arg: usize },
    /// Each tensor `j` of the `Tensor?[]` argument indexes `size(arg, j)`.
    PerListPosition { arg: usize },
    /// Offsets into the indices of `embedding_bag`: must start at 0 and be non-decreasing,
    /// bounded by `numel(arg)`.
    Offsets { arg: usize },
}

/// The index arguments of an operator: `(argument position, bound)`.
pub fn index_arguments(op_name: &str) -> &'static [(usize, Bound)] {
    let base = op_name.strip_prefix("aten::").unwrap_or(op_name);
    let base = base.strip_suffix('_').unwrap_or(base);
    match base {
        "embedding" => &[(1, Bound::SizeOf { arg: 0, dim: 0 })],
        "embedding_bag" | "_embedding_bag" | "_embedding_bag_forward_only" => &[
            (1, Bound::SizeOf { arg: 0, dim: 0 }),
            (2, Bound::Offsets { arg: 1 }),
        ],
        "index_select" | "index_add" | "index_copy" | "index_fill" | "index_reduce" => {
            &[(2, Bound::SizeAlongArg { arg: 0, dim_arg: 1 })]
        }
        "gather" | "scatter" | "scatter_add" | "scatter_reduce" => {
            &[(2, Bound::SizeAlongArg { arg: 0, dim_arg: 1 })]
        }
        "take" | "put" => &[(1, Bound::NumelOf { arg: 0 })],
        "index" | "_index_put_impl" | "index_put" | "_unsafe_index" | "_unsafe_index_put" => {
            &[(1, Bound::PerListPosition { arg: 0 })]
        }
        "nll_loss" | "nll_loss_forward" | "nll_loss2d" | "nll_loss2d_forward"
        | "cross_entropy_loss" => &[(1, Bound::SizeOf { arg: 0, dim: 1 })],
        "multi_margin_loss" | "multilabel_margin_loss" => &[(1, Bound::SizeOf { arg: 0, dim: 1 })],
        _ => &[],
    }
}

/// `dim` as a non-negative axis of a tensor with `rank` dimensions.
pub fn wrap_dim(dim: i64, rank: usize) -> Option<usize> {
    let rank = rank as i64;
    let d = if dim < 0 { dim + rank } else { dim };
    (0..rank.max(1)).contains(&d).then_some(d as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_index_ops() {
        assert_eq!(
            index_arguments("aten::embedding"),
            &[(1, Bound::SizeOf { arg: 0, dim: 0 })]
        );
        assert_eq!(index_arguments("aten::index_select")[0].0, 2);
        assert_eq!(
            index_arguments("aten::scatter_add_")[0].1,
            Bound::SizeAlongArg { arg: 0, dim_arg: 1 }
        );
        assert!(index_arguments("aten::add").is_empty());
    }

    #[test]
    fn dims_wrap() {
        assert_eq!(wrap_dim(-1, 3), Some(2));
        assert_eq!(wrap_dim(0, 3), Some(0));
        assert_eq!(wrap_dim(3, 3), None);
        assert_eq!(wrap_dim(-4, 3), None);
        assert_eq!(wrap_dim(0, 0), Some(0), "a 0-dim tensor accepts dim 0");
    }
}
