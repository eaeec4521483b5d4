//! GEMM parameters from the op that launched a GEMM kernel, and the cuBLAS call they imply.
//!
//! PyTorch describes a product row-major: `C[m, n] = A[m, k] @ B[k, n]`. A row-major
//! matrix is stored either by rows (stride 1 along columns: not transposed, leading
//! dimension = stride between rows) or, for a transposed view such as `weight.t()`, by
//! columns (stride 1 along rows: transposed, leading dimension = stride between columns).
//! The layout rules follow ATen's `prepare_matrix_for_cublas`: a dense contiguous matrix
//! is used as is, a dense transposed one is used transposed, a strided one is used in place
//! when one stride is 1 and the other at least the matching size, anything else is first
//! copied to a contiguous matrix.
//!
//! cuBLAS is column-major. Reading row-major `C` column-major gives `C^T`, and
//! `C^T = B^T @ A^T`, so the implied call passes PyTorch's B as cuBLAS's A, PyTorch's A as
//! cuBLAS's B, and exchanges m and n. The kernel names agree: a `linear` layer (A by rows,
//! B = `weight.t()` by columns) runs `*_tn_*` kernels, i.e. `transa = T`, `transb = N`.

mod cublas;
mod layout;
mod ops;

use super::op_inputs::OpInputs;
use super::schema::{BlasOp, GemmKernelRole, GemmParams, LayoutSource};
pub use layout::{matrix_layout, GemmUnavailable, MatrixLayout};
use ops::{
    accumulate_product, linear_product, matmul_product, plain_product, scaled_product,
    vector_product, Product,
};

/// Ops whose recorded inputs determine a GEMM.
pub const GEMM_OPS: [&str; 13] = [
    "aten::mm",
    "aten::addmm",
    "aten::addmm_",
    "aten::_addmm_activation",
    "aten::bmm",
    "aten::baddbmm",
    "aten::baddbmm_",
    "aten::_scaled_mm",
    "aten::_int_mm",
    "aten::linear",
    "aten::matmul",
    "aten::mv",
    "aten::addmv",
];

/// The GEMM that `op_name` with `inputs` performs, in row-major terms, with the implied
/// cuBLAS call. `role` says whether the kernel being described is the multiply itself;
/// `name_transposes` are the (transa, transb) its name spells, used only when the trace
/// recorded no strides (PyTorch < 2.4), where they are the best evidence of the layout.
pub fn gemm_from_op(
    op_name: &str,
    inputs: &OpInputs,
    role: GemmKernelRole,
    name_transposes: Option<(BlasOp, BlasOp)>,
) -> Result<GemmParams, GemmUnavailable> {
    // The arguments by the op's schema, not by position (TorchScript's extra leading inputs).
    let inputs = &*inputs.arguments_of(op_name);
    let layout_source = match (inputs.strides.is_some(), name_transposes) {
        (true, _) => LayoutSource::Strides,
        (false, Some(_)) => LayoutSource::KernelName,
        (false, None) => LayoutSource::AssumedContiguous,
    };
    let product = match op_name {
        "aten::mm" | "aten::bmm" => plain_product(inputs, 0, 1)?,
        "aten::_int_mm" => Product {
            dtype_out: "int32".to_owned(),
            ..plain_product(inputs, 0, 1)?
        },
        "aten::addmm" | "aten::addmm_" | "aten::baddbmm" | "aten::baddbmm_" => {
            accumulate_product(inputs)?
        }
        "aten::_addmm_activation" => {
            let use_gelu = inputs
                .value_text(5)
                .is_some_and(|v| v == "True" || v == "true");
            Product {
                activation: Some(if use_gelu { "gelu" } else { "relu" }.to_owned()),
                ..accumulate_product(inputs)?
            }
        }
        "aten::_scaled_mm" => scaled_product(inputs)?,
        "aten::linear" => linear_product(inputs)?,
        "aten::matmul" => matmul_product(inputs)?,
        "aten::mv" => vector_product(inputs, 0, 1, 1.0, 0.0, false)?,
        "aten::addmv" => {
            let beta = inputs.number(3).unwrap_or(1.0);
            let alpha = inputs.number(4).unwrap_or(1.0);
            vector_product(inputs, 1, 2, alpha, beta, true)?
        }
        other => {
            return Err(format!(
                "`{other}` is not an op whose inputs determine a GEMM"
            ));
        }
    };
    cublas::resolve(product, layout_source, name_transposes, role)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::signature::schema::GemmOperand;

    fn inputs(dims: &str, types: &str, strides: Option<&str>, concrete: Option<&str>) -> OpInputs {
        OpInputs::parse(Some(dims), Some(types), strides, concrete).expect("test inputs parse")
    }

    fn main_gemm(op: &str, inputs: &OpInputs) -> GemmParams {
        gemm_from_op(op, inputs, GemmKernelRole::Main, None).expect("gemm derivable")
    }

    #[test]
    fn contiguous_mm_maps_to_a_swapped_nn_call() {
        // A[2,3] @ B[3,4], both stored by rows.
        let g = main_gemm(
            "aten::mm",
            &inputs(
                "[[2, 3], [3, 4]]",
                r#"["float", "float"]"#,
                Some("[[3, 1], [4, 1]]"),
                Some(r#"["", ""]"#),
            ),
        );
        assert_eq!((g.m, g.n, g.k, g.batch), (2, 4, 3, 1));
        assert_eq!((g.trans_a, g.trans_b), (false, false));
        assert_eq!((g.lda, g.ldb, g.ldc), (3, 4, 4));
        assert_eq!((g.alpha, g.beta, g.bias), (1.0, 0.0, false));
        // Column-major: C^T[4,2] = B^T[4,3] @ A^T[3,2]; B by rows is B^T by columns.
        let c = &g.cublas;
        assert_eq!((c.transa, c.transb), (BlasOp::N, BlasOp::N));
        assert_eq!((c.m, c.n, c.k), (4, 2, 3));
        assert_eq!((c.lda, c.ldb, c.ldc), (4, 3, 4));
        assert_eq!(
            (c.operand_a, c.operand_b),
            (GemmOperand::RowMajorB, GemmOperand::RowMajorA)
        );
    }

    #[test]
    fn bert_linear_addmm_is_a_tn_call() {
        // h100_bert_small_infer: addmm(bias[512], x[141,512], weight.t()[512,512]).
        let g = main_gemm(
            "aten::addmm",
            &inputs(
                "[[512], [141, 512], [512, 512], [], []]",
                r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]"#,
                Some("[[1], [512, 1], [1, 512], [], []]"),
                Some(r#"["", "", "", "1", "1"]"#),
            ),
        );
        assert_eq!((g.m, g.n, g.k), (141, 512, 512));
        assert_eq!((g.trans_a, g.trans_b), (false, true));
        assert_eq!((g.lda, g.ldb, g.ldc), (512, 512, 512));
        assert_eq!((g.alpha, g.beta, g.bias), (1.0, 1.0, true));
        assert_eq!(g.dtype_out, "bfloat16");
        // The sm90/cutlass kernels of this op are all named `*_tn_*`.
        let c = &g.cublas;
        assert_eq!((c.transa, c.transb), (BlasOp::T, BlasOp::N));
        assert_eq!((c.m, c.n, c.k), (512, 141, 512));
        assert_eq!((c.lda, c.ldb, c.ldc), (512, 512, 512));
    }

    #[test]
    fn strided_row_slice_keeps_its_leading_dimension() {
        // h100_vit_infer: the CLS-token rows x[:, 0] of a [4,197,768] tensor.
        let g = main_gemm(
            "aten::addmm",
            &inputs(
                "[[768], [4, 768], [768, 768], [], []]",
                r#"["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"]"#,
                Some("[[1], [151296, 1], [1, 768], [], []]"),
                Some(r#"["", "", "", "1", "1"]"#),
            ),
        );
        assert_eq!((g.m, g.n, g.k), (4, 768, 768));
        assert_eq!((g.trans_a, g.lda), (false, 151296));
        assert_eq!(g.cublas.ldb, 151296);
    }

    #[test]
    fn transposed_left_operand_uses_the_column_stride() {
        // A = X.t() for X[2,3] contiguous: A[3,2] with strides (1, 3).
        let g = main_gemm(
            "aten::mm",
            &inputs(
                "[[3, 2], [2, 5]]",
                r#"["c10::Half", "c10::Half"]"#,
                Some("[[1, 3], [5, 1]]"),
                None,
            ),
        );
        assert_eq!((g.m, g.n, g.k), (3, 5, 2));
        assert_eq!((g.trans_a, g.lda), (true, 3));
        assert_eq!((g.trans_b, g.ldb), (false, 5));
        assert_eq!((g.cublas.transa, g.cublas.transb), (BlasOp::N, BlasOp::T));
        assert_eq!((g.cublas.lda, g.cublas.ldb), (5, 3));
        assert_eq!(g.dtype_a, "float16");
    }

    #[test]
    fn padded_transposed_operand_keeps_its_padding_as_leading_dimension() {
        // B[4,6] stored by columns with 8 elements between columns.
        let layout = matrix_layout(4, 6, 1, 8);
        assert_eq!(
            layout,
            MatrixLayout {
                transposed: true,
                ld: 8,
                copied: false
            }
        );
        // Neither stride is 1: copied to a contiguous matrix first.
        let layout = matrix_layout(4, 6, 12, 2);
        assert_eq!(
            layout,
            MatrixLayout {
                transposed: false,
                ld: 6,
                copied: true
            }
        );
    }

    #[test]
    fn leading_dimensions_that_do_not_merge_are_copied() {
        // linear(x.transpose(0, 1)) for a contiguous x[5, 2, 7]: rows b * 5 + i lie at
        // 7 b + 14 i, no single row stride; reshape copies x to a contiguous [10, 7].
        let g = main_gemm(
            "aten::linear",
            &inputs(
                "[[2, 5, 7], [4, 7]]",
                r#"["float", "float"]"#,
                Some("[[7, 14, 1], [7, 1]]"),
                None,
            ),
        );
        assert_eq!((g.m, g.k, g.trans_a, g.lda), (10, 7, false, 7));
        // A contiguous 3-D input folds in place.
        let g = main_gemm(
            "aten::linear",
            &inputs(
                "[[2, 5, 7], [4, 7]]",
                r#"["float", "float"]"#,
                Some("[[70, 14, 1], [7, 1]]"),
                None,
            ),
        );
        assert_eq!((g.m, g.lda), (10, 14));
        // matmul of 4-D operands whose batch dimensions are swapped: a contiguous copy.
        let g = main_gemm(
            "aten::matmul",
            &inputs(
                "[[2, 3, 5, 7], [2, 3, 7, 4]]",
                r#"["float", "float"]"#,
                Some("[[35, 70, 7, 1], [84, 28, 4, 1]]"),
                None,
            ),
        );
        assert_eq!((g.batch, g.stride_a, g.stride_b), (6, Some(35), Some(28)));
        assert_eq!((g.trans_a, g.lda), (false, 7));
    }

    #[test]
    fn bmm_carries_batch_strides() {
        let g = main_gemm(
            "aten::bmm",
            &inputs(
                "[[8, 2, 3], [8, 3, 4]]",
                r#"["float", "float"]"#,
                Some("[[6, 3, 1], [12, 4, 1]]"),
                None,
            ),
        );
        assert_eq!((g.m, g.n, g.k, g.batch), (2, 4, 3, 8));
        assert_eq!(
            (g.stride_a, g.stride_b, g.stride_c),
            (Some(6), Some(12), Some(8))
        );
        assert_eq!((g.cublas.stride_a, g.cublas.stride_b), (Some(12), Some(6)));
    }

    #[test]
    fn baddbmm_reads_alpha_and_beta() {
        let g = main_gemm(
            "aten::baddbmm",
            &inputs(
                "[[8, 2, 4], [8, 2, 3], [8, 3, 4], [], []]",
                r#"["float", "float", "float", "Scalar", "Scalar"]"#,
                None,
                Some(r#"["", "", "", "0.5", "2"]"#),
            ),
        );
        assert_eq!((g.beta, g.alpha, g.bias, g.batch), (0.5, 2.0, true, 8));
        assert_eq!(g.layout_source, LayoutSource::AssumedContiguous);
    }

    #[test]
    fn linear_folds_leading_dimensions_and_transposes_the_weight() {
        // input[2,5,3] @ weight[4,3]^T + bias[4].
        let g = main_gemm(
            "aten::linear",
            &inputs(
                "[[2, 5, 3], [4, 3], [4]]",
                r#"["float", "float", "float"]"#,
                Some("[[15, 3, 1], [3, 1], [1]]"),
                None,
            ),
        );
        assert_eq!((g.m, g.n, g.k, g.batch), (10, 4, 3, 1));
        assert_eq!((g.trans_a, g.lda, g.trans_b, g.ldb), (false, 3, true, 3));
        assert!(g.bias);
        assert_eq!((g.cublas.transa, g.cublas.transb), (BlasOp::T, BlasOp::N));
    }

    #[test]
    fn torchscript_linear_with_an_extra_leading_input_takes_its_arguments_by_schema() {
        // gpt2-small traced with torch.jit.trace, captured on the CPU at seq-len 16: the
        // attention's output projection is recorded with the residual stream in front of its
        // (input, weight, bias). Taken by position, the residual was the weight: 16x16x768.
        let attn_proj = inputs(
            "[[1, 16, 768], [1, 16, 768], [768, 768], [768]]",
            r#"["float", "float", "float", "float"]"#,
            Some("[[12288, 768, 1], [12288, 768, 1], [768, 1], [1]]"),
            Some(r#"["", "", "", ""]"#),
        );
        let g = main_gemm("aten::linear", &attn_proj);
        assert_eq!((g.m, g.n, g.k, g.batch), (16, 768, 768, 1));
        assert!(g.bias && g.trans_b);
        // The MLP's output projection, same pattern: by position its inner dimensions differ
        // (it went to tier 3); by schema it is the 16x768x3072 GEMM it is.
        let mlp_proj = inputs(
            "[[1, 16, 768], [1, 16, 3072], [768, 3072], [768]]",
            r#"["float", "float", "float", "float"]"#,
            Some("[[12288, 768, 1], [49152, 3072, 1], [3072, 1], [1]]"),
            Some(r#"["", "", "", ""]"#),
        );
        let g = main_gemm("aten::linear", &mlp_proj);
        assert_eq!((g.m, g.n, g.k), (16, 768, 3072));
        // An exact call is read as recorded.
        let plain = inputs(
            "[[1, 16, 768], [2304, 768], [2304]]",
            r#"["float", "float", "float"]"#,
            Some("[[12288, 768, 1], [768, 1], [1]]"),
            Some(r#"["", "", ""]"#),
        );
        assert_eq!(main_gemm("aten::linear", &plain).n, 2304);
    }

    #[test]
    fn scaled_mm_takes_its_output_dtype_from_the_recorded_scalar_type() {
        let g = main_gemm(
            "aten::_scaled_mm",
            &inputs(
                "[[16, 32], [32, 64], [], [], [], [], [], []]",
                r#"["c10::Float8_e4m3fn", "c10::Float8_e4m3fn", "float", "float", "", "", "Scalar", "Scalar"]"#,
                Some("[[32, 1], [1, 32], [], [], [], [], [], []]"),
                Some(r#"["", "", "", "", "", "", "15", "False"]"#),
            ),
        );
        assert_eq!(
            (g.dtype_a.as_str(), g.dtype_out.as_str()),
            ("float8_e4m3fn", "bfloat16")
        );
        assert!(!g.bias);
        assert!(g.trans_b);
    }

    #[test]
    fn without_strides_the_kernel_name_gives_the_layout() {
        // PyTorch 1.9 `linear` backward: grad_weight = grad.t() @ input, recorded as
        // mm([1000, 32], [32, 2048]) without strides; cuBLAS ran `volta_sgemm_128x32_nt`.
        let no_strides = inputs(
            "[[1000, 32], [32, 2048]]",
            r#"["float", "float"]"#,
            None,
            None,
        );
        let g = gemm_from_op(
            "aten::mm",
            &no_strides,
            GemmKernelRole::Main,
            Some((BlasOp::N, BlasOp::T)),
        )
        .expect("gemm derivable");
        assert_eq!(g.layout_source, LayoutSource::KernelName);
        assert_eq!(
            (g.trans_a, g.lda, g.trans_b, g.ldb),
            (true, 1000, false, 2048)
        );
        assert_eq!((g.cublas.transa, g.cublas.transb), (BlasOp::N, BlasOp::T));
        // Recorded strides win over the name.
        let with_strides = inputs(
            "[[1000, 32], [32, 2048]]",
            r#"["float", "float"]"#,
            Some("[[32, 1], [2048, 1]]"),
            None,
        );
        let g = gemm_from_op(
            "aten::mm",
            &with_strides,
            GemmKernelRole::Main,
            Some((BlasOp::N, BlasOp::T)),
        )
        .expect("gemm derivable");
        assert_eq!(g.layout_source, LayoutSource::Strides);
        assert!(!g.trans_a);
    }

    #[test]
    fn int_mm_outputs_int32() {
        let g = main_gemm(
            "aten::_int_mm",
            &inputs(
                "[[32, 64], [64, 16]]",
                r#"["signed char", "signed char"]"#,
                None,
                None,
            ),
        );
        assert_eq!(
            (g.dtype_a.as_str(), g.dtype_out.as_str()),
            ("int8", "int32")
        );
    }

    #[test]
    fn matmul_promotes_vectors_and_broadcasts_batches() {
        let vector_left = main_gemm(
            "aten::matmul",
            &inputs("[[3], [3, 4]]", r#"["float", "float"]"#, None, None),
        );
        assert_eq!((vector_left.m, vector_left.n, vector_left.k), (1, 4, 3));

        let broadcast = main_gemm(
            "aten::matmul",
            &inputs(
                "[[2, 1, 5, 3], [7, 3, 4]]",
                r#"["float", "float"]"#,
                None,
                None,
            ),
        );
        assert_eq!(
            (broadcast.m, broadcast.n, broadcast.k, broadcast.batch),
            (5, 4, 3, 14)
        );

        let folded = main_gemm(
            "aten::matmul",
            &inputs("[[2, 5, 3], [3, 4]]", r#"["float", "float"]"#, None, None),
        );
        assert_eq!((folded.m, folded.batch), (10, 1));
    }

    #[test]
    fn mismatched_or_unknown_inputs_are_reported_not_guessed() {
        let mismatched = inputs("[[2, 3], [4, 5]]", r#"["float", "float"]"#, None, None);
        assert!(gemm_from_op("aten::mm", &mismatched, GemmKernelRole::Main, None).is_err());
        let no_dims = inputs("[[], []]", r#"["float", "float"]"#, None, None);
        assert!(gemm_from_op("aten::mm", &no_dims, GemmKernelRole::Main, None).is_err());
        let unknown = inputs("[[2, 3], [3, 4]]", r#"["float", "float"]"#, None, None);
        assert!(gemm_from_op(
            "aten::cudnn_convolution",
            &unknown,
            GemmKernelRole::Main,
            None
        )
        .is_err());
    }
}
