//! Tier 2: GEMMs, replayed as the BLAS call itself.
//!
//! On CUDA: `cublasGemmEx` / `cublasGemmStridedBatchedEx` through cudarc with the exact
//! column-major call the signature carries (operands swapped and m/n exchanged relative to
//! PyTorch's row-major view), the data types and the compute type PyTorch uses (TF32 off for
//! fp32, as `torch.backends.cuda.matmul.allow_tf32` defaults to False). On the CPU: the GEMM
//! op itself through libtorch (`mm`, `addmm`, `bmm`, `baddbmm`) with the recorded layouts.
//!
//! One backend per file: [`libtorch`] and [`cuda`] (cuBLAS).

pub mod cuda;
pub mod libtorch;

pub use cuda::{cublas_types, CublasDims};
pub use libtorch::{operand_layout, TorchGemmError, TorchGemmTarget};
