//! A host reference of cuBLAS's GEMM semantics, written from the cuBLAS documentation
//! and nothing of replay's: `cublasGemmEx` and `cublasGemmStridedBatchedEx`, column-major,
//! computed naively in f64.
//!
//! For each batch entry `p` (one entry for `cublasGemmEx`):
//! `C_p = alpha * op(A_p) * op(B_p) + beta * C_p`, with `op(A)` m x k, `op(B)` k x n and
//! `C` m x n, where element `(i, j)` of a column-major matrix with leading dimension `ld`
//! is at `i + j * ld`, and `A_p` starts at `p * strideA` (likewise B and C).
//! `op(X) = X` for `N` and `X^T` for `T`, so `op(A)(i, l)` is `A[i + l * lda]` for `N`
//! and `A[l + i * lda]` for `T`. cuBLAS rejects (`CUBLAS_STATUS_INVALID_VALUE`) a leading
//! dimension smaller than the rows of the matrix as stored: `lda < max(1, m)` for
//! `transa = N`, `lda < max(1, k)` for `T`, likewise `ldb` against `k` / `n`, and
//! `ldc < max(1, m)`. Any element read or written outside the buffers given is reported
//! here as an error (on a GPU it would read whatever lies there).

/// `CUBLAS_OP_N` / `CUBLAS_OP_T`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transpose {
    N,
    T,
}

/// The arguments of one `cublasGemmStridedBatchedEx` call (batch 1 and no strides for
/// `cublasGemmEx`), in the order the C API takes them.
#[derive(Debug, Clone, Copy)]
pub struct GemmCall {
    pub transa: Transpose,
    pub transb: Transpose,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub alpha: f64,
    pub lda: usize,
    pub stride_a: usize,
    pub ldb: usize,
    pub stride_b: usize,
    pub beta: f64,
    pub ldc: usize,
    pub stride_c: usize,
    pub batch: usize,
}

/// Rows of a matrix as stored (before `op`), i.e. the least leading dimension cuBLAS takes.
fn stored_rows(trans: Transpose, rows_after_op: usize, cols_after_op: usize) -> usize {
    match trans {
        Transpose::N => rows_after_op,
        Transpose::T => cols_after_op,
    }
}

fn element(buffer: &[f64], index: usize, what: &str) -> Result<f64, String> {
    buffer.get(index).copied().ok_or_else(|| {
        format!(
            "{what}: element {index} read, but the buffer holds {} elements",
            buffer.len()
        )
    })
}

/// Runs the call on the given buffers, as cuBLAS would, in f64.
pub fn gemm_strided_batched(
    call: &GemmCall,
    a: &[f64],
    b: &[f64],
    c: &mut [f64],
) -> Result<(), String> {
    let GemmCall {
        transa,
        transb,
        m,
        n,
        k,
        alpha,
        lda,
        stride_a,
        ldb,
        stride_b,
        beta,
        ldc,
        stride_c,
        batch,
    } = *call;
    let need_lda = stored_rows(transa, m, k).max(1);
    let need_ldb = stored_rows(transb, k, n).max(1);
    if lda < need_lda || ldb < need_ldb || ldc < m.max(1) {
        return Err(format!(
            "CUBLAS_STATUS_INVALID_VALUE: lda {lda} (needs {need_lda}), ldb {ldb} \
             (needs {need_ldb}), ldc {ldc} (needs {})",
            m.max(1)
        ));
    }
    for p in 0..batch {
        for j in 0..n {
            for i in 0..m {
                let mut sum = 0.0f64;
                for l in 0..k {
                    let a_index = match transa {
                        Transpose::N => i + l * lda,
                        Transpose::T => l + i * lda,
                    };
                    let b_index = match transb {
                        Transpose::N => l + j * ldb,
                        Transpose::T => j + l * ldb,
                    };
                    sum += element(a, p * stride_a + a_index, "A")?
                        * element(b, p * stride_b + b_index, "B")?;
                }
                let c_index = p * stride_c + i + j * ldc;
                let old = element(c, c_index, "C")?;
                // cuBLAS does not read C when beta is 0 (it may hold NaN).
                let accumulated = if beta == 0.0 { 0.0 } else { beta * old };
                c[c_index] = alpha * sum + accumulated;
            }
        }
    }
    Ok(())
}

/// `cublasGemmEx`: one matrix, no batch strides.
pub fn gemm(call: &GemmCall, a: &[f64], b: &[f64], c: &mut [f64]) -> Result<(), String> {
    gemm_strided_batched(
        &GemmCall {
            batch: 1,
            stride_a: 0,
            stride_b: 0,
            stride_c: 0,
            ..*call
        },
        a,
        b,
        c,
    )
}

#[test]
fn reference_computes_a_known_column_major_product() {
    // A = [[1, 2], [3, 4]] column-major: [1, 3, 2, 4]; B = [[5, 6], [7, 8]]: [5, 7, 6, 8].
    let call = GemmCall {
        transa: Transpose::N,
        transb: Transpose::N,
        m: 2,
        n: 2,
        k: 2,
        alpha: 1.0,
        lda: 2,
        stride_a: 0,
        ldb: 2,
        stride_b: 0,
        beta: 0.0,
        ldc: 2,
        stride_c: 0,
        batch: 1,
    };
    let mut c = vec![f64::NAN; 4];
    gemm(&call, &[1.0, 3.0, 2.0, 4.0], &[5.0, 7.0, 6.0, 8.0], &mut c).unwrap();
    // A B = [[19, 22], [43, 50]], column-major.
    assert_eq!(c, vec![19.0, 43.0, 22.0, 50.0]);
    // A^T B = [[26, 30], [38, 44]].
    let mut c = vec![0.0; 4];
    gemm(
        &GemmCall {
            transa: Transpose::T,
            ..call
        },
        &[1.0, 3.0, 2.0, 4.0],
        &[5.0, 7.0, 6.0, 8.0],
        &mut c,
    )
    .unwrap();
    assert_eq!(c, vec![26.0, 38.0, 30.0, 44.0]);
    // A leading dimension below the stored rows is refused, as cuBLAS does.
    assert!(gemm(&GemmCall { lda: 1, ..call }, &[0.0; 4], &[0.0; 4], &mut c).is_err());
}
