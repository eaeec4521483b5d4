//! Recognising GEMM kernels and convolution ops by name.
//!
//! Kernel names are the only portable evidence of what library a kernel came from:
//! cuBLAS (`sm90_xmma_gemm_*`, `ampere_sgemm_*`, `volta_sgemm_*`, `gemv*`, `gemmk1`,
//! `splitKreduce`), cuBLASLt and CUTLASS (`cutlass*gemm*`, `nvjet_*`, `cublasLt::*`),
//! MAGMA (`magma_*gemm*`) and AMD's Tensile/hipBLASLt (`Cijk_*`). cuDNN also runs
//! GEMM-shaped kernels for convolutions (`*_implicit_gemm_*`, `implicit_convolve_sgemm`,
//! and even plain `volta_sgemm_*` on V100); those are convolutions, replayed through
//! the conv op, so a GEMM name under a convolution op is not tier 2.

use super::schema::{BlasOp, GemmKernelRole};

/// Name fragments (lowercase) of BLAS GEMM/GEMV kernels.
const GEMM_FRAGMENTS: [&str; 6] = [
    "gemm",
    "gemv",
    "nvjet",
    "splitkreduce",
    "cijk_",
    "cublaslt::",
];

/// Name fragments (lowercase) that make a GEMM-looking name something else.
const NOT_GEMM_FRAGMENTS: [&str; 9] = [
    "fbgemm",        // FBGEMM-GPU embedding/permute kernels, not GEMMs
    "implicit_gemm", // cuDNN/CUTLASS implicit-GEMM convolutions
    "implicitgemm",
    "convolve", // cuDNN implicit/explicit_convolve_sgemm
    "fprop",
    "dgrad",
    "wgrad",
    "cudnn",
    "conv",
];

/// Helper kernels a BLAS call launches besides the multiply itself.
const AUXILIARY_FRAGMENTS: [&str; 2] = ["splitkreduce", "epilogue"];

/// Whether a kernel name is a BLAS GEMM/GEMV kernel (or one of its helper kernels).
pub fn is_gemm_kernel(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    GEMM_FRAGMENTS.iter().any(|f| lower.contains(f))
        && !NOT_GEMM_FRAGMENTS.iter().any(|f| lower.contains(f))
}

/// The role of a GEMM kernel within its BLAS call.
pub fn gemm_kernel_role(name: &str) -> GemmKernelRole {
    let lower = name.to_ascii_lowercase();
    if AUXILIARY_FRAGMENTS.iter().any(|f| lower.contains(f)) {
        GemmKernelRole::Auxiliary
    } else {
        GemmKernelRole::Main
    }
}

/// Whether an op is a convolution (its GEMM-shaped kernels are cuDNN's, not cuBLAS's).
pub fn is_convolution_op(op_name: &str) -> bool {
    let lower = op_name.to_ascii_lowercase();
    lower.contains("conv") || lower.contains("cudnn")
}

/// The column-major transposes (cuBLAS `transa`, `transb`) a GEMM kernel's name spells.
///
/// cuBLAS and CUTLASS put them right after the tile shape: `ampere_sgemm_128x64_nn`,
/// `volta_sgemm_64x32_sliced1x4_tn`, `cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4`,
/// `sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize...`. AMD Tensile spells the index
/// order of each operand: `Cijk_Ailk_Bljk` is NN, `Alik` a transposed A, `Bjlk` a
/// transposed B.
pub fn blas_transposes_in_kernel_name(name: &str) -> Option<(BlasOp, BlasOp)> {
    if let Some(tensile) = name.find("Cijk_") {
        let rest = &name[tensile + "Cijk_".len()..];
        let transa = if rest.starts_with("Ailk") {
            BlasOp::N
        } else if rest.starts_with("Alik") {
            BlasOp::T
        } else {
            return None;
        };
        let transb = match rest.get(5..9) {
            Some("Bljk") => BlasOp::N,
            Some("Bjlk") => BlasOp::T,
            _ => return None,
        };
        return Some((transa, transb));
    }
    let op = |c: u8| match c {
        b'n' => Some(BlasOp::N),
        b't' => Some(BlasOp::T),
        _ => None,
    };
    let bytes = name.as_bytes();
    for (at, _) in name.match_indices('_') {
        let (Some(&a), Some(&b)) = (bytes.get(at + 1), bytes.get(at + 2)) else {
            continue;
        };
        let after = name.get(at + 3..).unwrap_or("");
        let at_boundary = after.is_empty()
            || after.starts_with("_align")
            || after.starts_with("_n_tilesize")
            || after.starts_with("_t_tilesize");
        if let (true, Some(transa), Some(transb)) = (at_boundary, op(a), op(b)) {
            return Some((transa, transb));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blas_gemm_kernels_are_recognised() {
        for name in [
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
            "ampere_sgemm_128x64_nn",
            "volta_sgemm_64x64_nt",
            "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8::Params)",
            "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_256x128_32x3_nt_align1>(cutlass_80_tensorop_s1688gemm_256x128_32x3_nt_align1::Params)",
            "nvjet_tst_128x256_64x4_2x1_v_bz_coopA_TNT",
            "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 2, 2, false, false, cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float> >(cublasGemvParamsEx<int, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float const>, cublasGemvTensorStridedBatched<float>, float>, float, float)",
            "void splitKreduce_kernel<float, float, float, float>(cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, float const*)",
            "void cublasLt::splitKreduce_kernel<32, 16, int, float, float, float, float, true, true, false>(cublasLt::cublasSplitKParams<float>, float const*, float const*, float*, float const*, float const*, float const*, float const*, float*, void*, long, float*, int*)",
            "magma_sgemmEx_kernel",
            "Cijk_Ailk_Bjlk_SB_Bias_AS_SAV_UserArgs_MT64x16x16_MI16x16x1_SN_LDSB0",
        ] {
            assert!(is_gemm_kernel(name), "{name}");
        }
    }

    #[test]
    fn convolution_and_fbgemm_kernels_are_not_gemms() {
        for name in [
            "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16",
            "void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false, true, true>(int, int, int, float const*, int, float*, float const*, kernel_conv_params, unsigned long long, int, float, float, int, float const*, float const*, bool, int, int)",
            "void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8>(cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8::Params)",
            "_ZN19cutlass_cudnn_train6KernelINS_4conv6kernel23ImplicitGemmConvolutionINS1_11threadblock",
            "void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)",
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
        ] {
            assert!(!is_gemm_kernel(name), "{name}");
        }
    }

    #[test]
    fn split_k_reduction_is_auxiliary() {
        assert_eq!(
            gemm_kernel_role(
                "void splitKreduce_kernel<float, float, float, float>(cublasSplitKParams<float>)"
            ),
            GemmKernelRole::Auxiliary
        );
        assert_eq!(
            gemm_kernel_role("ampere_sgemm_128x64_nn"),
            GemmKernelRole::Main
        );
    }

    #[test]
    fn layouts_spelled_in_kernel_names_are_read() {
        use BlasOp::{N, T};
        for (name, expected) in [
            ("ampere_sgemm_128x64_nn", Some((N, N))),
            ("volta_sgemm_64x32_sliced1x4_tn", Some((T, N))),
            ("volta_sgemm_128x32_nt", Some((N, T))),
            (
                "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4>(cutlass_80_tensorop_s1688gemm_64x64_16x6_tn_align4::Params)",
                Some((T, N)),
            ),
            (
                "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
                Some((T, N)),
            ),
            (
                "Cijk_Alik_Bljk_SB_Bias_AS_SAV_UserArgs_MT64x16x32",
                Some((T, N)),
            ),
            (
                "Cijk_Ailk_Bjlk_SB_Bias_AS_SAV_UserArgs_MT64x16x16",
                Some((N, T)),
            ),
            (
                "void splitKreduce_kernel<float, float, float, float>(cublasSplitKParams<float>)",
                None,
            ),
            ("nvjet_tst_128x256_64x4_2x1_v_bz_coopA_TNT", None),
        ] {
            assert_eq!(blas_transposes_in_kernel_name(name), expected, "{name}");
        }
    }

    #[test]
    fn convolution_ops_are_recognised() {
        assert!(is_convolution_op("aten::cudnn_convolution"));
        assert!(is_convolution_op("aten::convolution_backward"));
        assert!(is_convolution_op("aten::cudnn_convolution_backward_weight"));
        assert!(!is_convolution_op("aten::addmm"));
    }
}
