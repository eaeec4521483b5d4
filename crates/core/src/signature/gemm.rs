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

use super::dtype::{canonical_dtype, dtype_from_scalar_type};
use super::op_inputs::{OpInputs, TensorArgument};
use super::schema::{BlasOp, CublasCall, GemmKernelRole, GemmOperand, GemmParams, LayoutSource};

/// How a row-major matrix operand is laid out in memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MatrixLayout {
    /// Stored by columns (a transposed view).
    pub transposed: bool,
    /// Leading dimension, in elements.
    pub ld: u64,
    /// The layout fits neither order; the BLAS call gets a contiguous copy.
    pub copied: bool,
}

/// Layout of a `rows x cols` row-major operand with the given element strides.
pub fn matrix_layout(rows: u64, cols: u64, row_stride: u64, col_stride: u64) -> MatrixLayout {
    let by_rows = MatrixLayout {
        transposed: false,
        ld: cols.max(1),
        copied: false,
    };
    let contiguous = (cols <= 1 || col_stride == 1) && (rows <= 1 || row_stride == cols);
    if contiguous {
        return by_rows;
    }
    let transposed_dense = (rows <= 1 || row_stride == 1) && (cols <= 1 || col_stride == rows);
    if transposed_dense {
        return MatrixLayout {
            transposed: true,
            ld: rows.max(1),
            copied: false,
        };
    }
    if row_stride == 1 && col_stride >= rows.max(1) {
        return MatrixLayout {
            transposed: true,
            ld: col_stride,
            copied: false,
        };
    }
    if col_stride == 1 && row_stride >= cols.max(1) {
        return MatrixLayout {
            transposed: false,
            ld: row_stride,
            copied: false,
        };
    }
    MatrixLayout {
        copied: true,
        ..by_rows
    }
}

/// One operand of a (possibly batched) product, reduced to a matrix.
#[derive(Debug, Clone, Copy, PartialEq)]
struct MatrixOperand {
    rows: u64,
    cols: u64,
    row_stride: u64,
    col_stride: u64,
    /// Number of matrices (product of the leading dimensions).
    batch: u64,
    /// Elements between consecutive matrices (0 when broadcast).
    batch_stride: u64,
}

impl MatrixOperand {
    fn layout(&self) -> MatrixLayout {
        matrix_layout(self.rows, self.cols, self.row_stride, self.col_stride)
    }

    /// The transposed view (`weight.t()`).
    fn transposed(self) -> MatrixOperand {
        MatrixOperand {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }
}

/// Why no GEMM parameters could be derived.
pub type GemmUnavailable = String;

/// Strides of a tensor: as recorded, else those of a contiguous tensor of its sizes.
fn strides_of(tensor: &TensorArgument<'_>) -> Result<Vec<u64>, GemmUnavailable> {
    match tensor.strides {
        Some(strides) => strides
            .iter()
            .map(|&s| u64::try_from(s).map_err(|_| format!("negative stride {s}")))
            .collect(),
        None => {
            let mut strides = vec![1u64; tensor.sizes.len()];
            let mut running = 1u64;
            for (stride, &size) in strides.iter_mut().zip(tensor.sizes).rev() {
                *stride = running;
                running = running
                    .checked_mul(u64::try_from(size.max(1)).map_err(|_| "negative size")?)
                    .ok_or("sizes overflow")?;
            }
            Ok(strides)
        }
    }
}

fn sizes_of(tensor: &TensorArgument<'_>) -> Result<Vec<u64>, GemmUnavailable> {
    tensor
        .sizes
        .iter()
        .map(|&s| u64::try_from(s).map_err(|_| format!("negative size {s}")))
        .collect()
}

fn product(values: &[u64]) -> Result<u64, GemmUnavailable> {
    values
        .iter()
        .try_fold(1u64, |acc, &v| acc.checked_mul(v))
        .ok_or_else(|| "sizes overflow".to_owned())
}

/// The one stride of consecutive dimensions (outermost first) merged into one, when
/// `reshape` can merge them into a view: each dimension's stride is the next inner one's
/// times its size (dimensions of size 1 aside). `None` when they do not merge, so that
/// `reshape` copies the tensor to a contiguous one; `default` when no dimension holds more
/// than one element (any stride then reads the same memory).
fn merged_stride(sizes: &[u64], strides: &[u64], default: u64) -> Option<u64> {
    if sizes.contains(&0) {
        return Some(default);
    }
    let kept: Vec<(u64, u64)> = sizes
        .iter()
        .zip(strides)
        .filter(|(&size, _)| size > 1)
        .map(|(&size, &stride)| (size, stride))
        .collect();
    let Some(&(_, innermost)) = kept.last() else {
        return Some(default);
    };
    kept.windows(2)
        .all(|pair| Some(pair[0].1) == pair[1].0.checked_mul(pair[1].1))
        .then_some(innermost)
}

/// A tensor of rank >= 2 as a batch of matrices over its last two dimensions. Batch
/// dimensions that do not merge into one stride are copied by ATen's `reshape` (`matmul`
/// of 4-D operands) to a contiguous tensor, which is then what the BLAS call reads.
fn batched_matrix(tensor: &TensorArgument<'_>) -> Result<MatrixOperand, GemmUnavailable> {
    let sizes = sizes_of(tensor)?;
    let strides = strides_of(tensor)?;
    let rank = sizes.len();
    if rank < 2 {
        return Err(format!("expected a matrix, got rank {rank}"));
    }
    let (rows, cols) = (sizes[rank - 2], sizes[rank - 1]);
    let batch = product(&sizes[..rank - 2])?;
    let batch_stride = if rank > 2 {
        merged_stride(&sizes[..rank - 2], &strides[..rank - 2], strides[rank - 3])
    } else {
        Some(0)
    };
    Ok(match batch_stride {
        Some(batch_stride) => MatrixOperand {
            rows,
            cols,
            row_stride: strides[rank - 2],
            col_stride: strides[rank - 1],
            batch,
            batch_stride,
        },
        None => MatrixOperand {
            rows,
            cols,
            row_stride: cols,
            col_stride: 1,
            batch,
            batch_stride: rows.checked_mul(cols).ok_or("sizes overflow")?,
        },
    })
}

/// A tensor of any rank >= 1 as one matrix: leading dimensions fold into rows (how
/// `linear` and `matmul` with a 2-D right operand flatten their input); a vector is a row.
/// Both fold with `reshape`, which copies to a contiguous tensor when the leading
/// dimensions do not merge into one row stride (`x.transpose(0, 1)` of a 3-D `x`).
fn folded_matrix(tensor: &TensorArgument<'_>) -> Result<MatrixOperand, GemmUnavailable> {
    let sizes = sizes_of(tensor)?;
    let strides = strides_of(tensor)?;
    match sizes.len() {
        0 => Err("expected a tensor with dimensions, got a scalar".to_owned()),
        1 => Ok(MatrixOperand {
            rows: 1,
            cols: sizes[0],
            row_stride: sizes[0],
            col_stride: strides[0],
            batch: 1,
            batch_stride: 0,
        }),
        rank => {
            let cols = sizes[rank - 1];
            let leading = (&sizes[..rank - 1], &strides[..rank - 1]);
            let (row_stride, col_stride) =
                match merged_stride(leading.0, leading.1, strides[rank - 2]) {
                    Some(row_stride) => (row_stride, strides[rank - 1]),
                    None => (cols, 1),
                };
            Ok(MatrixOperand {
                rows: product(leading.0)?,
                cols,
                row_stride,
                col_stride,
                batch: 1,
                batch_stride: 0,
            })
        }
    }
}

/// A vector as the right operand of a matrix-vector product: one column.
fn column_vector(tensor: &TensorArgument<'_>) -> Result<MatrixOperand, GemmUnavailable> {
    let sizes = sizes_of(tensor)?;
    let strides = strides_of(tensor)?;
    Ok(MatrixOperand {
        rows: sizes[0],
        cols: 1,
        row_stride: strides[0],
        col_stride: 1,
        batch: 1,
        batch_stride: 0,
    })
}

/// The operands and scalars of one product, before layouts are resolved.
struct Product {
    a: MatrixOperand,
    b: MatrixOperand,
    dtype_a: String,
    dtype_b: String,
    dtype_out: String,
    alpha: f64,
    beta: f64,
    bias: bool,
    activation: Option<String>,
}

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
    resolve(product, layout_source, name_transposes, role)
}

fn tensor_at<'a>(
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
fn plain_product(inputs: &OpInputs, a: usize, b: usize) -> Result<Product, GemmUnavailable> {
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
fn accumulate_product(inputs: &OpInputs) -> Result<Product, GemmUnavailable> {
    let product = plain_product(inputs, 1, 2)?;
    Ok(Product {
        beta: inputs.number(3).unwrap_or(1.0),
        alpha: inputs.number(4).unwrap_or(1.0),
        bias: inputs.present_tensor(0).is_some(),
        ..product
    })
}

/// `_scaled_mm(A, B, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum)`.
fn scaled_product(inputs: &OpInputs) -> Result<Product, GemmUnavailable> {
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
fn linear_product(inputs: &OpInputs) -> Result<Product, GemmUnavailable> {
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
fn vector_product(
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
fn matmul_product(inputs: &OpInputs) -> Result<Product, GemmUnavailable> {
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
fn broadcast_batch(a: &[i64], b: &[i64]) -> Result<u64, GemmUnavailable> {
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

/// Dense layout of a `rows x cols` operand stored by rows or, when `transposed`, by
/// columns.
fn dense_layout(rows: u64, cols: u64, transposed: bool) -> MatrixLayout {
    MatrixLayout {
        transposed,
        ld: if transposed { rows.max(1) } else { cols.max(1) },
        copied: false,
    }
}

fn resolve(
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

#[cfg(test)]
mod tests {
    use super::*;

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
