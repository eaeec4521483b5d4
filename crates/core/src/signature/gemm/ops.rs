//! The product each GEMM op computes from its recorded arguments: which inputs are A, B and
//! the addend, with which scalars (`mm`, `addmm`, `linear`, `matmul`, `_scaled_mm`, ...).

use super::super::dtype::{canonical_dtype, dtype_from_scalar_type};
use super::super::op_inputs::{OpInputs, TensorArgument};
use super::layout::*;

/// The operands and scalars of one product, before layouts are resolved.
pub(super) struct Product {
    pub(super) a: MatrixOperand,
    pub(super) b: MatrixOperand,
    pub(super) dtype_a: String,
    pub(super) dtype_b: String,
    pub(super) dtype_out: String,
    pub(super) alpha: f64,
    pub(super) beta: f64,
    pub(super) bias: bool,
    pub(super) activation: Option<String>,
}

pub(super) fn tensor_at<'a>(
    inputs: &'a OpInputs,
    index: usize,
    what: &str,
) -> Result<TensorArgument<'a>, GemmUnavailable> {
    inputs
        .present_tensor(index)
        .ok_or_else(|| format!("{what} (argument {index}) has no recorded sizes"))
}

/// `mm(A, B)` / `bmm(A, B)`: `C = A @ B`.
/// Rank-3 operands (`bmm`) are batches of matrices; rank-2 ones are a batch of one.
pub(super) fn plain_product(
    inputs: &OpInputs,
    a: usize,
    b: usize,
) -> Result<Product, GemmUnavailable> {
    let a_tensor = tensor_at(inputs, a, "left operand")?;
    let b_tensor = tensor_at(inputs, b, "right operand")?;
    let (a_matrix, b_matrix) = (batched_matrix(&a_tensor)?, batched_matrix(&b_tensor)?);
    let dtype_a = canonical_dtype(a_tensor.type_name);
    Ok(Product {
        a: a_matrix,
        b: b_matrix,
        dtype_b: canonical_dtype(b_tensor.type_name),
        dtype_out: dtype_a.clone(),
        dtype_a,
        alpha: 1.0,
        beta: 0.0,
        bias: false,
        activation: None,
    })
}

/// `addmm(self, A, B, beta, alpha)` / `baddbmm(...)`: `C = beta * self + alpha * A @ B`.
pub(super) fn accumulate_product(inputs: &OpInputs) -> Result<Product, GemmUnavailable> {
    let product = plain_product(inputs, 1, 2)?;
    Ok(Product {
        beta: inputs.number(3).unwrap_or(1.0),
        alpha: inputs.number(4).unwrap_or(1.0),
        bias: inputs.present_tensor(0).is_some(),
        ..product
    })
}

/// `_scaled_mm(A, B, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum)`.
pub(super) fn scaled_product(inputs: &OpInputs) -> Result<Product, GemmUnavailable> {
    let product = plain_product(inputs, 0, 1)?;
    let out_dtype = inputs
        .number(6)
        .and_then(|n| dtype_from_scalar_type(n as i64))
        .map(str::to_owned);
    Ok(Product {
        bias: inputs.present_tensor(4).is_some(),
        dtype_out: out_dtype.unwrap_or_else(|| product.dtype_a.clone()),
        ..product
    })
}

/// `linear(input[..., k], weight[n, k], bias[n]?)`: `C = input @ weight^T + bias`.
pub(super) fn linear_product(inputs: &OpInputs) -> Result<Product, GemmUnavailable> {
    let input = tensor_at(inputs, 0, "input")?;
    let weight = tensor_at(inputs, 1, "weight")?;
    let bias = inputs.present_tensor(2).is_some();
    let dtype_a = canonical_dtype(input.type_name);
    Ok(Product {
        a: folded_matrix(&input)?,
        b: batched_matrix(&weight)?.transposed(),
        dtype_b: canonical_dtype(weight.type_name),
        dtype_out: dtype_a.clone(),
        dtype_a,
        alpha: 1.0,
        beta: if bias { 1.0 } else { 0.0 },
        bias,
        activation: None,
    })
}

/// `mv(A, x)` / `addmv(self, A, x, beta, alpha)`: a GEMM with n = 1.
pub(super) fn vector_product(
    inputs: &OpInputs,
    a: usize,
    x: usize,
    alpha: f64,
    beta: f64,
    accumulate: bool,
) -> Result<Product, GemmUnavailable> {
    let a_tensor = tensor_at(inputs, a, "matrix")?;
    let x_tensor = tensor_at(inputs, x, "vector")?;
    let dtype_a = canonical_dtype(a_tensor.type_name);
    Ok(Product {
        a: batched_matrix(&a_tensor)?,
        b: column_vector(&x_tensor)?,
        dtype_b: canonical_dtype(x_tensor.type_name),
        dtype_out: dtype_a.clone(),
        dtype_a,
        alpha,
        beta,
        bias: accumulate && inputs.present_tensor(0).is_some(),
        activation: None,
    })
}

/// `matmul(a, b)` with NumPy semantics: vectors are promoted, a 2-D right operand folds
/// the left operand's batch into rows, otherwise batch dimensions broadcast.
pub(super) fn matmul_product(inputs: &OpInputs) -> Result<Product, GemmUnavailable> {
    let a_tensor = tensor_at(inputs, 0, "left operand")?;
    let b_tensor = tensor_at(inputs, 1, "right operand")?;
    let (a_rank, b_rank) = (a_tensor.sizes.len(), b_tensor.sizes.len());
    let (a, b) = if b_rank == 1 {
        (folded_matrix(&a_tensor)?, column_vector(&b_tensor)?)
    } else if b_rank == 2 || a_rank == 1 {
        // A 2-D right operand folds the left's batch into rows; a vector on the left is
        // one row broadcast over the right's batch.
        (folded_matrix(&a_tensor)?, batched_matrix(&b_tensor)?)
    } else {
        let a = batched_matrix(&a_tensor)?;
        let b = batched_matrix(&b_tensor)?;
        let a_batch = &a_tensor.sizes[..a_rank - 2];
        let b_batch = &b_tensor.sizes[..b_rank - 2];
        let batch = broadcast_batch(a_batch, b_batch)?;
        (
            MatrixOperand {
                batch,
                batch_stride: if a.batch == 1 { 0 } else { a.batch_stride },
                ..a
            },
            MatrixOperand {
                batch,
                batch_stride: if b.batch == 1 { 0 } else { b.batch_stride },
                ..b
            },
        )
    };
    let dtype_a = canonical_dtype(a_tensor.type_name);
    Ok(Product {
        a,
        b,
        dtype_b: canonical_dtype(b_tensor.type_name),
        dtype_out: dtype_a.clone(),
        dtype_a,
        alpha: 1.0,
        beta: 0.0,
        bias: false,
        activation: None,
    })
}

/// Number of matrices after broadcasting two batch shapes (aligned from the right).
pub(super) fn broadcast_batch(a: &[i64], b: &[i64]) -> Result<u64, GemmUnavailable> {
    let rank = a.len().max(b.len());
    let mut total = 1u64;
    for i in 0..rank {
        let pick = |dims: &[i64]| -> i64 {
            let offset = rank - dims.len();
            if i < offset {
                1
            } else {
                dims[i - offset]
            }
        };
        let (x, y) = (pick(a), pick(b));
        let size = if x == y || y == 1 {
            x
        } else if x == 1 {
            y
        } else {
            return Err(format!("batch dimensions {x} and {y} do not broadcast"));
        };
        total = total
            .checked_mul(u64::try_from(size).map_err(|_| "negative size")?)
            .ok_or("sizes overflow")?;
    }
    Ok(total)
}
