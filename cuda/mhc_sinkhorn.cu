// The mHC suite's fused Sinkhorn-Knopp (`replay bench mhc --impl fused --device cuda`):
// every (b, t) position's n×n matrix of logits made doubly stochastic by one thread, in
// one kernel, instead of torch's ~80 launches over the whole (B, T, n, n) tensor.
//
// The seed's arithmetic in float32: subtract the matrix's max, exp, then `iters` times
// {divide each column by its sum + eps; divide each row by its sum + eps}; one rounding to
// the storage type at the end. Layout: `count` matrices of n×n, row-major, contiguous.
//
// Launch (src/kernels/mhc_sinkhorn/cuda.rs, `launch_shape`): 1-D, MHC_THREADS threads per
// block, one thread per matrix, no shared memory. n ≤ 8 runs a copy unrolled for its n with
// the matrix in registers; 9..16 a generic copy whose matrix lives in local memory.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#define MHC_MAX_N 16

__device__ __forceinline__ float load_f(const float* p, long long i) { return p[i]; }
__device__ __forceinline__ float load_f(const __nv_bfloat16* p, long long i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ float load_f(const __half* p, long long i) { return __half2float(p[i]); }
__device__ __forceinline__ void store_f(float* p, long long i, float v) { p[i] = v; }
__device__ __forceinline__ void store_f(__nv_bfloat16* p, long long i, float v) { p[i] = __float2bfloat16_rn(v); }
__device__ __forceinline__ void store_f(__half* p, long long i, float v) { p[i] = __float2half_rn(v); }

// One matrix; N > 0 is a compile-time size (registers), N == 0 takes `n` at run time.
template <int N, typename T>
__device__ __forceinline__ void sinkhorn_one(const T* __restrict__ in, T* __restrict__ out,
                                             long long base, int n_rt, int iters, float eps) {
    const int n = N > 0 ? N : n_rt;
    float m[(N > 0 ? N : MHC_MAX_N) * (N > 0 ? N : MHC_MAX_N)];
    float mx = -INFINITY;
#pragma unroll
    for (int e = 0; e < n * n; ++e) {
        m[e] = load_f(in, base + e);
        mx = fmaxf(mx, m[e]);
    }
#pragma unroll
    for (int e = 0; e < n * n; ++e) m[e] = expf(m[e] - mx);
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int j = 0; j < n; ++j) {
            float s = 0.f;
#pragma unroll
            for (int i = 0; i < n; ++i) s += m[i * n + j];
            s += eps;
#pragma unroll
            for (int i = 0; i < n; ++i) m[i * n + j] /= s;
        }
#pragma unroll
        for (int i = 0; i < n; ++i) {
            float s = 0.f;
#pragma unroll
            for (int j = 0; j < n; ++j) s += m[i * n + j];
            s += eps;
#pragma unroll
            for (int j = 0; j < n; ++j) m[i * n + j] /= s;
        }
    }
#pragma unroll
    for (int e = 0; e < n * n; ++e) store_f(out, base + e, m[e]);
}

template <typename T>
__device__ __forceinline__ void sinkhorn_kernel(const T* __restrict__ in, T* __restrict__ out,
                                                long long count, int n, int iters, float eps) {
    long long matrix = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (matrix >= count) return;
    long long base = matrix * n * n;
    switch (n) {
        case 1: sinkhorn_one<1>(in, out, base, n, iters, eps); break;
        case 2: sinkhorn_one<2>(in, out, base, n, iters, eps); break;
        case 3: sinkhorn_one<3>(in, out, base, n, iters, eps); break;
        case 4: sinkhorn_one<4>(in, out, base, n, iters, eps); break;
        case 5: sinkhorn_one<5>(in, out, base, n, iters, eps); break;
        case 6: sinkhorn_one<6>(in, out, base, n, iters, eps); break;
        case 7: sinkhorn_one<7>(in, out, base, n, iters, eps); break;
        case 8: sinkhorn_one<8>(in, out, base, n, iters, eps); break;
        default:
            if (n <= MHC_MAX_N) sinkhorn_one<0>(in, out, base, n, iters, eps);
            break;
    }
}

extern "C" __global__ void mhc_sinkhorn_f32(const float* in, float* out, long long count, int n, int iters, float eps) {
    sinkhorn_kernel(in, out, count, n, iters, eps);
}

extern "C" __global__ void mhc_sinkhorn_bf16(const __nv_bfloat16* in, __nv_bfloat16* out, long long count, int n, int iters, float eps) {
    sinkhorn_kernel(in, out, count, n, iters, eps);
}

extern "C" __global__ void mhc_sinkhorn_f16(const __half* in, __half* out, long long count, int n, int iters, float eps) {
    sinkhorn_kernel(in, out, count, n, iters, eps);
}
