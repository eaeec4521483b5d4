//! Tier 2: GEMMs, replayed as the BLAS call itself.
//!
//! On CUDA: `cublasGemmEx` / `cublasGemmStridedBatchedEx` through cudarc with the exact
//! column-major call the signature carries (operands swapped and m/n exchanged relative to
//! PyTorch's row-major view), the data types and the compute type PyTorch uses (TF32 off for
//! fp32, as `torch.backends.cuda.matmul.allow_tf32` defaults to False). On the CPU: the GEMM
//! op itself through libtorch (`mm`, `addmm`, `bmm`, `baddbmm`) with the recorded layouts.

use std::time::Instant;

use tch::{Device, Kind, Tensor};

use crate::measure::{BatchTiming, MeasureError, Target};
use crate::signature::schema::GemmParams;
use crate::torch::dtype::kind_from_name;

/// Why a GEMM cannot be set up through libtorch.
#[derive(Debug, thiserror::Error)]
pub enum TorchGemmError {
    /// Not replayable here (a dtype libtorch has no GEMM for, FP8 on a device without it).
    #[error("{0}")]
    Unsupported(String),
    /// libtorch refused the call with the recorded layouts.
    #[error("libtorch rejected the GEMM: {0}")]
    Rejected(#[source] tch::TchError),
    /// Building an operand failed.
    #[error(transparent)]
    Torch(#[from] tch::TchError),
}

/// The row-major operand shapes and strides a [`GemmParams`] describes, for one batch entry
/// `A[m, k]`, `B[k, n]`. `trans_*` means the operand is stored column-major.
pub fn operand_layout(rows: u64, cols: u64, transposed: bool, ld: u64) -> ([i64; 2], [i64; 2]) {
    let sizes = [rows as i64, cols as i64];
    let strides = if transposed {
        [1, ld.max(1) as i64]
    } else {
        [ld.max(1) as i64, 1]
    };
    (sizes, strides)
}

/// Elements of storage an operand with these sizes/strides spans.
fn span(sizes: [i64; 2], strides: [i64; 2]) -> i64 {
    if sizes.contains(&0) {
        0
    } else {
        1 + (sizes[0] - 1) * strides[0] + (sizes[1] - 1) * strides[1]
    }
}

/// Which operand of the row-major product `C = A @ B`.
#[derive(Debug, Clone, Copy)]
enum Side {
    A,
    B,
}

/// Builds a random operand `side` of `p` with exactly the recorded layout (batched when
/// `batch > 1`).
fn operand(
    kind: Kind,
    p: &GemmParams,
    side: Side,
    device: Device,
) -> Result<Tensor, tch::TchError> {
    let batch = p.batch;
    let (rows, cols, transposed, ld, batch_stride) = match side {
        Side::A => (p.m, p.k, p.trans_a, p.lda, p.stride_a),
        Side::B => (p.k, p.n, p.trans_b, p.ldb, p.stride_b),
    };
    let (sizes, strides) = operand_layout(rows, cols, transposed, ld);
    let one = span(sizes, strides);
    let bstride = batch_stride.map(|s| s as i64).unwrap_or(one);
    let total = if batch > 1 {
        one + (batch as i64 - 1) * bstride
    } else {
        one
    };
    let base = Tensor::f_randn([total.max(0)], (Kind::Float, device))?.f_to_kind(kind)?;
    if batch > 1 {
        base.f_as_strided(
            [batch as i64, sizes[0], sizes[1]],
            [bstride, strides[0], strides[1]],
            None::<i64>,
        )
    } else {
        base.f_as_strided(sizes, strides, None::<i64>)
    }
}

/// How many copies of a `bytes`-sized weight operand to use in turn so that, as in a forward
/// pass, the weights come from memory rather than from the last-level cache: enough copies to
/// cover twice the cache, at most 64 and at most 1 GiB in all.
pub fn weight_copies(bytes: u64) -> usize {
    let llc = crate::device::CpuInfo::detect()
        .last_level_cache_bytes()
        .unwrap_or(32 << 20);
    if bytes == 0 {
        return 1;
    }
    let wanted = (2 * llc).div_ceil(bytes).clamp(1, 64);
    let affordable = ((1u64 << 30) / bytes).max(1);
    wanted.min(affordable) as usize
}

/// A GEMM replayed through libtorch on the CPU (or any device libtorch drives).
pub struct TorchGemmTarget {
    a: Tensor,
    b: Tensor,
    /// Copies of the weight-like operand B, used in turn (see [`weight_copies`]).
    b_pool: Vec<Tensor>,
    next_b: usize,
    bias: Option<Tensor>,
    alpha: f64,
    beta: f64,
    batched: bool,
    activation: Option<String>,
    device: Device,
}

impl TorchGemmTarget {
    pub fn new(p: &GemmParams, device: Device) -> Result<TorchGemmTarget, TorchGemmError> {
        let unsupported = |dtype: &str| {
            TorchGemmError::Unsupported(format!("dtype {dtype} has no libtorch GEMM"))
        };
        let kind_a = kind_from_name(&p.dtype_a).ok_or_else(|| unsupported(&p.dtype_a))?;
        let kind_b = kind_from_name(&p.dtype_b).ok_or_else(|| unsupported(&p.dtype_b))?;
        if matches!(kind_a, Kind::Float8e4m3fn | Kind::Float8e5m2) {
            return Err(TorchGemmError::Unsupported("float8 GEMMs (_scaled_mm) need a GPU with FP8 tensor cores; not replayable on this device".into()));
        }
        let batched = p.batch > 1;
        let a = operand(kind_a, p, Side::A, device)?;
        let b = operand(kind_b, p, Side::B, device)?;
        let bias = if p.bias {
            let kind_out = kind_from_name(&p.dtype_out).unwrap_or(kind_a);
            Some(Tensor::f_randn([p.n as i64], (Kind::Float, device))?.f_to_kind(kind_out)?)
        } else {
            None
        };
        let copies = if batched {
            1
        } else {
            weight_copies(b.numel() as u64 * b.kind().elt_size_in_bytes() as u64)
        };
        let mut b_pool = vec![b.shallow_clone()];
        for _ in 1..copies {
            // Same recorded layout, its own storage.
            b_pool.push(operand(kind_b, p, Side::B, device)?);
        }
        let mut target = TorchGemmTarget {
            a,
            b,
            b_pool,
            next_b: 0,
            bias,
            alpha: p.alpha,
            beta: p.beta,
            batched,
            activation: p.activation.clone(),
            device,
        };
        let _ = target.call().map_err(TorchGemmError::Rejected)?;
        Ok(target)
    }

    /// The operands and the result of one call (`replay selftest`).
    pub fn operands_and_result(&mut self) -> Result<(Tensor, Tensor, Tensor), tch::TchError> {
        let _guard = tch::no_grad_guard();
        let out = self.call_with(&self.b)?;
        Ok((self.a.shallow_clone(), self.b.shallow_clone(), out))
    }

    /// One GEMM, as the launching op would call it.
    fn call(&mut self) -> Result<Tensor, tch::TchError> {
        let _guard = tch::no_grad_guard();
        let b = self.b_pool[self.next_b % self.b_pool.len()].shallow_clone();
        self.next_b = (self.next_b + 1) % self.b_pool.len();
        self.call_with(&b)
    }

    fn call_with(&self, b: &Tensor) -> Result<Tensor, tch::TchError> {
        match (&self.bias, self.batched) {
            (None, false) if self.alpha == 1.0 => self.a.f_mm(b),
            (None, true) if self.alpha == 1.0 => self.a.f_bmm(b),
            (None, false) => self.a.f_mm(b)?.f_mul_scalar(self.alpha),
            (None, true) => self.a.f_bmm(b)?.f_mul_scalar(self.alpha),
            (Some(bias), false) => match self.activation.as_deref() {
                Some(act) => bias.f_internal_addmm_activation(&self.a, b, act == "gelu"),
                None => bias.f_addmm(&self.a, b).and_then(|c| {
                    if self.alpha == 1.0 && self.beta == 1.0 {
                        Ok(c)
                    } else {
                        // addmm's beta/alpha are not exposed by tch's f_addmm: compute them explicitly.
                        bias.f_mul_scalar(self.beta)?
                            .f_add(&self.a.f_mm(b)?.f_mul_scalar(self.alpha)?)
                    }
                }),
            },
            (Some(bias), true) => bias.f_baddbmm(&self.a, b, self.beta, self.alpha),
        }
    }
}

impl Target for TorchGemmTarget {
    fn run_batch(&mut self, calls: u64) -> Result<BatchTiming, MeasureError> {
        let start = Instant::now();
        for _ in 0..calls {
            let out = self
                .call()
                .map_err(|e| MeasureError::target(e.to_string()))?;
            let _ = std::hint::black_box(out);
        }
        if let Device::Cuda(i) = self.device {
            tch::Cuda::synchronize(i as i64);
        }
        let elapsed = start.elapsed();
        Ok(BatchTiming {
            device: elapsed,
            host: elapsed,
        })
    }
}

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

/// The cuBLAS replay (compiled everywhere, runs where there is a GPU).
pub mod cuda {
    use std::sync::Arc;

    use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t, cublasOperation_t};
    use cudarc::cublas::CudaBlas;
    use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};

    use super::cublas_types::{element_bytes, for_dtypes};
    use super::*;
    use crate::device::CudaDevice;
    use crate::measure::cuda_timing::EventPair;
    use crate::signature::schema::BlasOp;

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
        events: Arc<EventPair>,
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
            let a_bytes = column_major_elements(a_rows, a_cols, c.lda, c.batch, c.stride_a)
                as usize
                * element_bytes(types.0);
            let b_bytes = column_major_elements(b_rows, b_cols, c.ldb, c.batch, c.stride_b)
                as usize
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
                events: Arc::new(EventPair::new(&device.context)?),
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
            let e = |call: &'static str| {
                move |err: cudarc::driver::DriverError| format!("{call}: {err}")
            };
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
        fn run_batch(&mut self, calls: u64) -> Result<BatchTiming, MeasureError> {
            // The events are shared (Arc) so the closure may borrow the target mutably.
            let (events, stream) = (self.events.clone(), self.stream.clone());
            events.time_batch(&stream, calls, || self.issue_one())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::cuda::column_major_elements;

    #[test]
    fn weights_rotate_to_cover_twice_the_last_level_cache() {
        let llc = crate::device::CpuInfo::detect()
            .last_level_cache_bytes()
            .unwrap_or(32 << 20);
        let small = 1 << 20;
        let copies = super::weight_copies(small) as u64;
        assert!(
            copies * small >= (2 * llc).min(64 * small),
            "{copies} copies of 1 MiB"
        );
        assert_eq!(
            super::weight_copies(1 << 30),
            1,
            "a weight larger than the cache is never copied"
        );
        assert_eq!(super::weight_copies(0), 1);
    }
    use super::*;
    use cudarc::cublas::sys::{cublasComputeType_t, cudaDataType};

    #[test]
    fn row_major_operand_layouts() {
        // A row-major [141, 512] activation: rows 512 apart.
        assert_eq!(operand_layout(141, 512, false, 512), ([141, 512], [512, 1]));
        // linear's weight^T: a [512, 512] view of a row-major weight, i.e. column-major, ld 512.
        assert_eq!(operand_layout(512, 512, true, 512), ([512, 512], [1, 512]));
    }

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
