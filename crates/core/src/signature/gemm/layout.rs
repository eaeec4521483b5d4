//! How a row-major operand lies in memory, following ATen's `prepare_matrix_for_cublas`:
//! dense, dense transposed, strided in place, or copied to a contiguous matrix; batched and
//! folded (3-D `linear` inputs) operands.

use super::super::op_inputs::TensorArgument;

/// Why no GEMM parameters could be derived.
pub type GemmUnavailable = String;

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
pub(super) struct MatrixOperand {
    pub(super) rows: u64,
    pub(super) cols: u64,
    pub(super) row_stride: u64,
    pub(super) col_stride: u64,
    /// Number of matrices (product of the leading dimensions).
    pub(super) batch: u64,
    /// Elements between consecutive matrices (0 when broadcast).
    pub(super) batch_stride: u64,
}

impl MatrixOperand {
    pub(super) fn layout(&self) -> MatrixLayout {
        matrix_layout(self.rows, self.cols, self.row_stride, self.col_stride)
    }

    /// The transposed view (`weight.t()`).
    pub(super) fn transposed(self) -> MatrixOperand {
        MatrixOperand {
            rows: self.cols,
            cols: self.rows,
            row_stride: self.col_stride,
            col_stride: self.row_stride,
            ..self
        }
    }
}

/// Strides of a tensor: as recorded, else those of a contiguous tensor of its sizes.
pub(super) fn strides_of(tensor: &TensorArgument<'_>) -> Result<Vec<u64>, GemmUnavailable> {
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

pub(super) fn sizes_of(tensor: &TensorArgument<'_>) -> Result<Vec<u64>, GemmUnavailable> {
    tensor
        .sizes
        .iter()
        .map(|&s| u64::try_from(s).map_err(|_| format!("negative size {s}")))
        .collect()
}

pub(super) fn product(values: &[u64]) -> Result<u64, GemmUnavailable> {
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
pub(super) fn merged_stride(sizes: &[u64], strides: &[u64], default: u64) -> Option<u64> {
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
pub(super) fn batched_matrix(
    tensor: &TensorArgument<'_>,
) -> Result<MatrixOperand, GemmUnavailable> {
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
pub(super) fn folded_matrix(tensor: &TensorArgument<'_>) -> Result<MatrixOperand, GemmUnavailable> {
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
pub(super) fn column_vector(tensor: &TensorArgument<'_>) -> Result<MatrixOperand, GemmUnavailable> {
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

/// Dense layout of a `rows x cols` operand stored by rows or, when `transposed`, by
/// columns.
pub(super) fn dense_layout(rows: u64, cols: u64, transposed: bool) -> MatrixLayout {
    MatrixLayout {
        transposed,
        ld: if transposed { rows.max(1) } else { cols.max(1) },
        copied: false,
    }
}
