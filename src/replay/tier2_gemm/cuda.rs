//! Tier 2 on CUDA: `cublasGemmEx` / `cublasGemmStridedBatchedEx` through cudarc with the
//! exact column-major call the signature carries (operands swapped and m/n exchanged relative
//! to PyTorch's row-major view), the data types and the compute type PyTorch uses (TF32 off
//! for fp32, as `torch.backends.cuda.matmul.allow_tf32` defaults to False). Compiled
//! everywhere, runs where there is a GPU.

use std::sync::Arc;

use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t, cublasOperation_t};
use cudarc::cublas::CudaBlas;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};

use crate::device::CudaDevice;
use crate::measure::cuda_timing::CudaStreamHandle;
use crate::measure::{MeasureError, Placement, Target};
use crate::signature::schema::{BlasOp, GemmParams};
use cublas_types::{element_bytes, for_dtypes};

/// cuBLAS types for a GEMM, as PyTorch chooses them.
pub mod cublas_types {
    use cudarc::cublas::sys::{cublasComputeType_t, cudaDataType};

    /// `(A/B data type, C data type, compute type)` for PyTorch's dtype names, or why there is none.
    pub fn for_dtypes(
        dtype_ab: &str,
        dtype_out: &str,
    ) -> Result<(cudaDataType, cudaDataType, cublasComputeType_t), String> {
        use cublasComputeType_t::*;
        use cudaDataType::*;
        Ok(match (dtype_ab, dtype_out) {
            // PyTorch keeps TF32 off for fp32 matmuls by default: plain fp32 compute.
            ("float32", _) => (CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F),
            ("float64", _) => (CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F),
            // Half and bfloat16 accumulate in fp32, as at::cuda::blas::gemm does.
            ("float16", "float32") => (CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F),
            ("float16", _) => (CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F),
            ("bfloat16", "float32") => (CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F),
            ("bfloat16", _) => (CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F),
            // torch._int_mm: int8 x int8 -> int32.
            ("int8", _) => (CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I),
            (other, _) if other.starts_with("float8") => {
                return Err(format!(
                    "{other} GEMMs run through cuBLASLt's scaled matmul, not cublasGemmEx"
                ))
            }
            (other, _) => return Err(format!("no cuBLAS GEMM for dtype {other}")),
        })
    }

    /// Bytes of one element of a cuBLAS data type.
    pub fn element_bytes(t: cudaDataType) -> usize {
        use cudaDataType::*;
        match t {
            CUDA_R_64F => 8,
            CUDA_R_32F | CUDA_R_32I => 4,
            CUDA_R_16F | CUDA_R_16BF => 2,
            _ => 1,
        }
    }
}

/// cuBLAS's `int` and `long long` arguments of one call, checked: a signature file is user
/// input, and a dimension over 2^31 - 1 cast with `as` would wrap and hand cuBLAS a shape the
/// buffers were not sized for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CublasDims {
    pub m: i32,
    pub n: i32,
    pub k: i32,
    pub lda: i32,
    pub ldb: i32,
    pub ldc: i32,
    pub batch: i32,
    pub stride_a: i64,
    pub stride_b: i64,
    pub stride_c: i64,
}

impl CublasDims {
    /// The call's arguments, or which one does not fit cuBLAS's 32-bit interface.
    pub fn of(c: &crate::signature::schema::CublasCall) -> Result<CublasDims, String> {
        let int = |name: &str, v: u64| {
            i32::try_from(v).map_err(|_| {
                format!("{name} = {v} does not fit cublasGemmEx's 32-bit int (the 64-bit API is not used)")
            })
        };
        let long = |name: &str, v: Option<u64>| {
            i64::try_from(v.unwrap_or(0))
                .map_err(|_| format!("{name} = {v:?} does not fit a long long"))
        };
        Ok(CublasDims {
            m: int("m", c.m)?,
            n: int("n", c.n)?,
            k: int("k", c.k)?,
            lda: int("lda", c.lda)?,
            ldb: int("ldb", c.ldb)?,
            ldc: int("ldc", c.ldc)?,
            batch: int("batch", c.batch)?,
            stride_a: long("stride_a", c.stride_a)?,
            stride_b: long("stride_b", c.stride_b)?,
            stride_c: long("stride_c", c.stride_c)?,
        })
    }
}

fn op(t: BlasOp) -> cublasOperation_t {
    match t {
        BlasOp::N => cublasOperation_t::CUBLAS_OP_N,
        BlasOp::T => cublasOperation_t::CUBLAS_OP_T,
    }
}

/// Elements a column-major operand of `rows x cols` (before op) with leading dim `ld` spans.
pub fn column_major_elements(
    rows: u64,
    cols: u64,
    ld: u64,
    batch: u64,
    batch_stride: Option<u64>,
) -> u64 {
    if rows == 0 || cols == 0 {
        return 0;
    }
    let one = ld.max(rows) * (cols - 1) + rows;
    one + batch.saturating_sub(1) * batch_stride.unwrap_or(one)
}

pub struct CublasGemmTarget {
    blas: CudaBlas,
    stream: Arc<CudaStream>,
    placement: CudaStreamHandle,
    a: CudaSlice<u8>,
    b: CudaSlice<u8>,
    c: CudaSlice<u8>,
    p: GemmParams,
    dims: CublasDims,
    types: (
        cudarc::cublas::sys::cudaDataType,
        cudarc::cublas::sys::cudaDataType,
        cublasComputeType_t,
    ),
}

impl CublasGemmTarget {
    pub fn new(device: &CudaDevice, p: &GemmParams) -> Result<CublasGemmTarget, MeasureError> {
        let types = for_dtypes(&p.dtype_a, &p.dtype_out).map_err(MeasureError::target)?;
        let dims = CublasDims::of(&p.cublas).map_err(MeasureError::target)?;
        let c = &p.cublas;
        // cuBLAS's A is m x k (op applied), stored rows x cols before op.
        let (a_rows, a_cols) = if c.transa == BlasOp::N {
            (c.m, c.k)
        } else {
            (c.k, c.m)
        };
        let (b_rows, b_cols) = if c.transb == BlasOp::N {
            (c.k, c.n)
        } else {
            (c.n, c.k)
        };
        let a_bytes = column_major_elements(a_rows, a_cols, c.lda, c.batch, c.stride_a) as usize
            * element_bytes(types.0);
        let b_bytes = column_major_elements(b_rows, b_cols, c.ldb, c.batch, c.stride_b) as usize
            * element_bytes(types.0);
        let c_bytes = column_major_elements(c.m, c.n, c.ldc, c.batch, c.stride_c) as usize
            * element_bytes(types.1);
        let stream = device.stream.clone();
        let alloc = |n: usize| {
            stream.alloc_zeros::<u8>(n.max(1)).map_err(|e| {
                MeasureError::target(crate::device::cuda::CudaCallError {
                    call: "cuMemAlloc",
                    source: e,
                })
            })
        };
        let blas = CudaBlas::new(stream.clone()).map_err(MeasureError::target)?;
        Ok(CublasGemmTarget {
            placement: CudaStreamHandle::replay(&stream)
                .with_blocking_kernel(device.blocking_kernel),
            a: alloc(a_bytes)?,
            b: alloc(b_bytes)?,
            c: alloc(c_bytes)?,
            blas,
            stream,
            p: p.clone(),
            dims,
            types,
        })
    }

    /// Uploads cuBLAS's A and B operands (raw element bytes, column-major as the call
    /// reads them), runs the call once and returns C's bytes (`replay selftest`).
    pub fn run_on(&mut self, a: &[u8], b: &[u8]) -> Result<Vec<u8>, String> {
        let e =
            |call: &'static str| move |err: cudarc::driver::DriverError| format!("{call}: {err}");
        if a.len() > self.a.len() || b.len() > self.b.len() {
            return Err("operands larger than the buffers the call was sized for".into());
        }
        let mut a_view = self.a.slice_mut(0..a.len());
        self.stream
            .memcpy_htod(a, &mut a_view)
            .map_err(e("cuMemcpyHtoD"))?;
        let mut b_view = self.b.slice_mut(0..b.len());
        self.stream
            .memcpy_htod(b, &mut b_view)
            .map_err(e("cuMemcpyHtoD"))?;
        self.issue_one().map_err(|err| err.to_string())?;
        self.stream.clone_dtoh(&self.c).map_err(e("cuMemcpyDtoH"))
    }

    fn issue_one(&mut self) -> Result<(), MeasureError> {
        let c = &self.p.cublas;
        let (ab_type, c_type, compute) = self.types;
        let (alpha32, beta32) = (
            self.p.alpha as f32,
            if self.p.bias { self.p.beta as f32 } else { 0.0 },
        );
        let (alpha64, beta64) = (self.p.alpha, if self.p.bias { self.p.beta } else { 0.0 });
        let (alpha_i, beta_i) = (self.p.alpha as i32, 0i32);
        let (alpha, beta): (*const std::ffi::c_void, *const std::ffi::c_void) = match compute {
            cublasComputeType_t::CUBLAS_COMPUTE_64F => (
                (&alpha64 as *const f64).cast(),
                (&beta64 as *const f64).cast(),
            ),
            cublasComputeType_t::CUBLAS_COMPUTE_32I => (
                (&alpha_i as *const i32).cast(),
                (&beta_i as *const i32).cast(),
            ),
            _ => (
                (&alpha32 as *const f32).cast(),
                (&beta32 as *const f32).cast(),
            ),
        };
        let (a, _ra) = self.a.device_ptr(&self.stream);
        let (b, _rb) = self.b.device_ptr(&self.stream);
        let (out, _rc) = self.c.device_ptr_mut(&self.stream);
        let d = self.dims;
        // SAFETY: the buffers were sized for exactly these dimensions, leading dimensions
        // and batch strides (column_major_elements), checked to fit cuBLAS's integer types
        // (CublasDims::of), and live as long as self.
        let result = unsafe {
            if c.batch > 1 {
                cudarc::cublas::result::gemm_strided_batched_ex(
                    *self.blas.handle(),
                    op(c.transa),
                    op(c.transb),
                    d.m,
                    d.n,
                    d.k,
                    alpha,
                    a as *const _,
                    ab_type,
                    d.lda,
                    d.stride_a,
                    b as *const _,
                    ab_type,
                    d.ldb,
                    d.stride_b,
                    beta,
                    out as *mut _,
                    c_type,
                    d.ldc,
                    d.stride_c,
                    d.batch,
                    compute,
                    cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            } else {
                cudarc::cublas::result::gemm_ex(
                    *self.blas.handle(),
                    op(c.transa),
                    op(c.transb),
                    d.m,
                    d.n,
                    d.k,
                    alpha,
                    a as *const _,
                    ab_type,
                    d.lda,
                    b as *const _,
                    ab_type,
                    d.ldb,
                    beta,
                    out as *mut _,
                    c_type,
                    d.ldc,
                    compute,
                    cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            }
        };
        result.map_err(|e| MeasureError::target(format!("cublasGemmEx: {e}")))
    }
}

impl Target for CublasGemmTarget {
    fn placement(&self) -> Placement<'_> {
        Placement::Stream(&self.placement)
    }

    fn run(&mut self, calls: u64) -> Result<(), MeasureError> {
        (0..calls).try_for_each(|_| self.issue_one())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudarc::cublas::sys::{cublasComputeType_t, cudaDataType};

    #[test]
    fn dtypes_map_as_pytorch_calls_cublas() {
        let (ab, c, compute) = cublas_types::for_dtypes("bfloat16", "bfloat16").unwrap();
        assert_eq!(
            (ab, c, compute),
            (
                cudaDataType::CUDA_R_16BF,
                cudaDataType::CUDA_R_16BF,
                cublasComputeType_t::CUBLAS_COMPUTE_32F
            )
        );
        let (_, _, compute) = cublas_types::for_dtypes("float32", "float32").unwrap();
        assert_eq!(
            compute,
            cublasComputeType_t::CUBLAS_COMPUTE_32F,
            "TF32 stays off for fp32, as in PyTorch"
        );
        let (ab, c, compute) = cublas_types::for_dtypes("int8", "int32").unwrap();
        assert_eq!(
            (ab, c, compute),
            (
                cudaDataType::CUDA_R_8I,
                cudaDataType::CUDA_R_32I,
                cublasComputeType_t::CUBLAS_COMPUTE_32I
            )
        );
        assert!(cublas_types::for_dtypes("float8_e4m3fn", "bfloat16")
            .unwrap_err()
            .contains("cuBLASLt"));
        assert_eq!(cublas_types::element_bytes(cudaDataType::CUDA_R_16BF), 2);
    }

    #[test]
    fn cublas_dimensions_over_32_bits_are_refused_not_wrapped() {
        let sigs = crate::signature::read_file(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/signatures/h100_bert_small_infer.json"
        )))
        .unwrap();
        let gemm = sigs
            .signatures
            .iter()
            .find_map(|s| s.gemm.clone())
            .expect("the bert trace has GEMMs");
        let dims = CublasDims::of(&gemm.cublas).unwrap();
        assert_eq!(i64::from(dims.m), gemm.cublas.m as i64);
        assert_eq!(i64::from(dims.ldc), gemm.cublas.ldc as i64);
        let mut huge = gemm.cublas.clone();
        huge.k = 1 << 31;
        let message = CublasDims::of(&huge).unwrap_err();
        assert!(message.contains("k = 2147483648"), "{message}");
        let mut huge = gemm.cublas.clone();
        huge.stride_b = Some(u64::MAX);
        assert!(CublasDims::of(&huge).unwrap_err().contains("stride_b"));
    }

    #[test]
    fn column_major_buffer_sizes() {
        // 4 x 3 column-major, ld 4: exactly 12 elements; ld 6 pads all but the last column.
        assert_eq!(column_major_elements(4, 3, 4, 1, None), 12);
        assert_eq!(column_major_elements(4, 3, 6, 1, None), 16);
        // Batched: the last batch entry starts at (batch - 1) * stride.
        assert_eq!(column_major_elements(4, 3, 4, 8, Some(12)), 12 * 8);
        assert_eq!(column_major_elements(0, 3, 4, 8, Some(12)), 0);
    }
}
