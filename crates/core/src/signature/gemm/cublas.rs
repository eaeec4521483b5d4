//! A product's GEMM parameters and the column-major cuBLAS call they imply (operands swapped,
//! m and n exchanged), with the layout taken from strides or, before PyTorch 2.4, from the
//! kernel name.

use super::super::schema::{
    BlasOp, CublasCall, GemmKernelRole, GemmOperand, GemmParams, LayoutSource,
};
use super::layout::*;
use super::ops::Product;

pub(super) fn resolve(
    product: Product,
    layout_source: LayoutSource,
    name_transposes: Option<(BlasOp, BlasOp)>,
    role: GemmKernelRole,
) -> Result<GemmParams, GemmUnavailable> {
    let Product { a, b, .. } = product;
    if a.cols != b.rows {
        return Err(format!(
            "inner dimensions differ: A is {}x{}, B is {}x{}",
            a.rows, a.cols, b.rows, b.cols
        ));
    }
    let batch = a.batch.max(b.batch);
    if a.batch != b.batch && a.batch != 1 && b.batch != 1 {
        return Err(format!("batch sizes differ: {} and {}", a.batch, b.batch));
    }
    let (m, n, k) = (a.rows, b.cols, a.cols);
    let (a_layout, b_layout) = match (layout_source, name_transposes) {
        // cuBLAS's A is PyTorch's B: transa describes B, transb describes A.
        (LayoutSource::KernelName, Some((transa, transb))) => (
            dense_layout(a.rows, a.cols, transb == BlasOp::T),
            dense_layout(b.rows, b.cols, transa == BlasOp::T),
        ),
        _ => (a.layout(), b.layout()),
    };
    let ldc = n.max(1);
    let batched = batch > 1;
    let stride_c = if batched {
        Some(m.checked_mul(n).ok_or("sizes overflow")?)
    } else {
        None
    };
    // A copied operand is contiguous, so its batch stride is that of a packed batch.
    let batch_stride = |operand: &MatrixOperand, layout: &MatrixLayout| -> Option<u64> {
        if !batched {
            None
        } else if operand.batch == 1 {
            Some(0)
        } else if layout.copied {
            operand.rows.checked_mul(operand.cols)
        } else {
            Some(operand.batch_stride)
        }
    };
    let stride_a = batch_stride(&a, &a_layout);
    let stride_b = batch_stride(&b, &b_layout);
    let cublas = CublasCall {
        transa: if b_layout.transposed {
            BlasOp::T
        } else {
            BlasOp::N
        },
        transb: if a_layout.transposed {
            BlasOp::T
        } else {
            BlasOp::N
        },
        m: n,
        n: m,
        k,
        lda: b_layout.ld,
        ldb: a_layout.ld,
        ldc,
        batch,
        stride_a: stride_b,
        stride_b: stride_a,
        stride_c,
        operand_a: GemmOperand::RowMajorB,
        operand_b: GemmOperand::RowMajorA,
    };
    Ok(GemmParams {
        m,
        n,
        k,
        batch,
        dtype_a: product.dtype_a,
        dtype_b: product.dtype_b,
        dtype_out: product.dtype_out,
        trans_a: a_layout.transposed,
        trans_b: b_layout.transposed,
        lda: a_layout.ld,
        ldb: b_layout.ld,
        ldc,
        stride_a,
        stride_b,
        stride_c,
        alpha: product.alpha,
        beta: product.beta,
        bias: product.bias,
        activation: product.activation,
        layout_source,
        role,
        cublas,
    })
}
