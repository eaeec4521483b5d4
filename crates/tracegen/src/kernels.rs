//! The kernels of a bfloat16 transformer training step on an H100, named as the profiler
//! records them (names taken from the H100 traces in ../shared/traces/kineto and from
//! PyTorch's and cuBLAS's kernels), with launch configurations and durations that follow the
//! work's size.

use crate::builder::Kernel;
use crate::event::Value;

/// The compute stream, the copy stream of the input pipeline, and NCCL's stream.
pub const COMPUTE: u64 = 7;
pub const SIDE: u64 = 20;
pub const NCCL: u64 = 40;

/// Dense bf16 throughput a GEMM reaches (FLOP/ns: 550 TFLOP/s).
const GEMM_FLOP_PER_NS: f64 = 550_000.0;
/// Bytes per ns an elementwise kernel streams (2.4 TB/s).
const STREAM_BYTES_PER_NS: f64 = 2_400.0;

fn plain(
    name: &'static str,
    grid: [u64; 3],
    block: [u64; 3],
    registers: u64,
    shared: u64,
    dur: u64,
) -> Kernel {
    Kernel {
        name,
        grid,
        block,
        registers,
        shared_memory: shared,
        dur: dur.max(1_500),
        stream: COMPUTE,
        ex: false,
        extra: Vec::new(),
    }
}

/// A cuBLAS sm90 GEMM of `m x n x k` (`layout`: `tn` forward, `nn` data gradient, `nt`
/// weight gradient).
pub fn gemm(layout: &str, m: u64, n: u64, k: u64) -> Kernel {
    let name: &'static str = match layout {
        "nn" => "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
        "nt" => "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
        _ => "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    };
    let tile_n = if layout == "nt" { 256 } else { 128 };
    let flops = 2.0 * m as f64 * n as f64 * k as f64;
    plain(
        name,
        [n.div_ceil(tile_n), m.div_ceil(128), 1],
        [384, 1, 1],
        168,
        231_424,
        (flops / GEMM_FLOP_PER_NS) as u64,
    )
}

fn elementwise_dur(elements: u64, tensors: u64) -> u64 {
    (elements as f64 * 2.0 * tensors as f64 / STREAM_BYTES_PER_NS) as u64
}

fn grid_for(elements: u64) -> [u64; 3] {
    [elements.div_ceil(4 * 128).clamp(1, 2_147_483_647), 1, 1]
}

pub fn add(elements: u64) -> Kernel {
    plain(
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
        grid_for(elements), [128, 1, 1], 24, 0, elementwise_dur(elements, 3))
}

pub fn gelu(elements: u64) -> Kernel {
    plain(
        "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
        grid_for(elements), [128, 1, 1], 30, 0, elementwise_dur(elements, 2))
}

pub fn gelu_backward(elements: u64) -> Kernel {
    plain(
        "void at::native::vectorized_elementwise_kernel<4, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, std::array<char*, 3ul> >(int, at::native::GeluBackwardCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16, c10::BFloat16)#1}, std::array<char*, 3ul>)",
        grid_for(elements), [128, 1, 1], 32, 0, elementwise_dur(elements, 3))
}

pub fn layer_norm(rows: u64, hidden: u64) -> Kernel {
    plain(
        "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)",
        [rows, 1, 1], [32, 4, 1], 34, 24, elementwise_dur(rows * hidden, 2))
}

pub fn layer_norm_backward_input(rows: u64, hidden: u64) -> Kernel {
    plain(
        "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<c10::BFloat16, float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)",
        [rows, 1, 1], [128, 1, 1], 40, 0, elementwise_dur(rows * hidden, 3))
}

pub fn layer_norm_backward_weight(rows: u64, hidden: u64) -> Kernel {
    plain(
        "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernel_32x32<c10::BFloat16, float>(long, long, c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16*, c10::BFloat16*)",
        [hidden.div_ceil(32), 1, 1], [32, 32, 1], 64, 8_448, elementwise_dur(rows * hidden, 2))
}

pub fn flash_forward(batch: u64, heads: u64, seq: u64, head_dim: u64) -> Kernel {
    let flops = 4.0 * (batch * heads) as f64 * (seq * seq * head_dim) as f64;
    Kernel {
        ex: true,
        ..plain(
            "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t> >, false, true, false, false, false, true, false>(pytorch_flash::Flash_fwd_params)",
            [seq.div_ceil(128), batch, heads], [128, 1, 1], 255, 49_152, (flops / (GEMM_FLOP_PER_NS * 0.6)) as u64)
    }
}

pub fn flash_backward(batch: u64, heads: u64, seq: u64, head_dim: u64) -> Kernel {
    let flops = 10.0 * (batch * heads) as f64 * (seq * seq * head_dim) as f64;
    Kernel {
        ex: true,
        ..plain(
            "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<pytorch_flash::Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> >, true, false, false, false, false, false, false>(pytorch_flash::Flash_bwd_params)",
            [seq.div_ceil(128), batch, heads], [256, 1, 1], 255, 114_688, (flops / (GEMM_FLOP_PER_NS * 0.5)) as u64)
    }
}

pub fn flash_backward_convert(batch: u64, heads: u64, seq: u64, head_dim: u64) -> Kernel {
    plain(
        "void pytorch_flash::flash_bwd_convert_dq_kernel<pytorch_flash::Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<128, 64, 128, 8, cutlass::bfloat16_t> > >(pytorch_flash::Flash_bwd_params, int)",
        [seq.div_ceil(64), batch, heads], [256, 1, 1], 48, 32_768, elementwise_dur(batch * heads * seq * head_dim, 3))
}

pub fn embedding(tokens: u64, hidden: u64) -> Kernel {
    plain(
        "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, true>(at::cuda::detail::TensorInfo<c10::BFloat16, unsigned int>, at::cuda::detail::TensorInfo<c10::BFloat16 const, unsigned int>, at::cuda::detail::TensorInfo<long const, unsigned int>, int, int, unsigned int, unsigned int, long)",
        [tokens * hidden / 128 / 4, 1, 1], [128, 1, 1], 32, 0, elementwise_dur(tokens * hidden, 2))
}

pub fn embedding_backward(tokens: u64, hidden: u64) -> Kernel {
    plain(
        "void at::native::(anonymous namespace)::embedding_backward_feature_kernel<c10::BFloat16, float, long>(long const*, c10::BFloat16 const*, float*, int, long, int)",
        [hidden.div_ceil(32), 1, 1], [32, 32, 1], 38, 8_704, elementwise_dur(tokens * hidden, 3))
}

pub fn log_softmax(rows: u64, vocab: u64) -> Kernel {
    plain(
        "void at::native::(anonymous namespace)::cunn_SoftMaxForward<8, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::LogSoftMaxForwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, int)",
        [rows, 1, 1], [1024, 1, 1], 37, 0, elementwise_dur(rows * vocab, 2))
}

pub fn log_softmax_backward(rows: u64, vocab: u64) -> Kernel {
    plain(
        "void at::native::(anonymous namespace)::cunn_SoftMaxBackward<8, c10::BFloat16, float, c10::BFloat16, at::native::(anonymous namespace)::LogSoftMaxBackwardEpilogue>(c10::BFloat16*, c10::BFloat16 const*, c10::BFloat16 const*, long)",
        [rows, 1, 1], [1024, 1, 1], 40, 0, elementwise_dur(rows * vocab, 3))
}

pub fn nll_loss(rows: u64) -> Kernel {
    plain(
        "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<c10::BFloat16, float, long>(c10::BFloat16*, c10::BFloat16*, c10::BFloat16 const*, long const*, c10::BFloat16 const*, bool, long, long, long, long)",
        [1, 1, 1], [32, 1, 1], 32, 0, elementwise_dur(rows, 2))
}

pub fn fill(elements: u64, stream: u64) -> Kernel {
    Kernel {
        stream,
        ..plain(
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<long>, std::array<char*, 1ul> >(int, at::native::FillFunctor<long>, std::array<char*, 1ul>)",
            grid_for(elements), [128, 1, 1], 16, 0, elementwise_dur(elements, 4))
    }
}

/// The fused AdamW update over a list of tensors (`_foreach` / `multi_tensor_apply`).
pub fn adam(elements: u64) -> Kernel {
    plain(
        "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, bool*, bool*>(at::native::(anonymous namespace)::TensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, bool*, bool*)",
        [320, 1, 1], [512, 1, 1], 72, 0, elementwise_dur(elements, 8))
}

/// NCCL's all-reduce of `elements` bf16 values across `ranks` (ring), with the collective's
/// fields the profiler copies onto the kernel.
pub fn all_reduce(elements: u64, ranks: u64, collective: Vec<(&'static str, Value)>) -> Kernel {
    let bytes = elements * 2;
    let dur = (2.0 * (ranks - 1) as f64 / ranks as f64 * bytes as f64 / 180.0) as u64;
    Kernel {
        stream: NCCL,
        extra: collective,
        ..plain(
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
            [24, 1, 1],
            [544, 1, 1],
            96,
            87_568,
            dur,
        )
    }
}
