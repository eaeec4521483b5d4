// replay's own GPU bandwidth kernels for `replay calibrate` (memory): STREAM's copy and triad
// over float32, as BabelStream writes them for GPUs.
//
// Grid-stride loops over float4 (16-byte loads and stores, the widest a thread issues), so a
// grid sized to fill the GPU once streams any n; the n % 4 floats past the last float4 are
// done one by one. The buffers come from cuMemAlloc (256-byte aligned), so the float4 views
// are aligned. Bytes counted (host side): copy 2·n·4, triad 3·n·4.
#include <cstddef>

// b[i] = a[i]
extern "C" __global__ void stream_copy(const float* __restrict__ a, float* __restrict__ b,
                                       unsigned long long n) {
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t n4 = n / 4;
    const float4* a4 = reinterpret_cast<const float4*>(a);
    float4* b4 = reinterpret_cast<float4*>(b);
    for (size_t i = first; i < n4; i += stride) {
        b4[i] = a4[i];
    }
    for (size_t i = 4 * n4 + first; i < n; i += stride) {
        b[i] = a[i];
    }
}

// a[i] = b[i] + s * c[i]   (a multiply and an add, not fused, as on the CPU)
extern "C" __global__ void stream_triad(float* __restrict__ a, const float* __restrict__ b,
                                        const float* __restrict__ c, float s,
                                        unsigned long long n) {
    const size_t stride = (size_t)blockDim.x * gridDim.x;
    const size_t first = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t n4 = n / 4;
    float4* a4 = reinterpret_cast<float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    const float4* c4 = reinterpret_cast<const float4*>(c);
    for (size_t i = first; i < n4; i += stride) {
        const float4 x = b4[i];
        const float4 y = c4[i];
        a4[i] = make_float4(__fadd_rn(x.x, __fmul_rn(s, y.x)), __fadd_rn(x.y, __fmul_rn(s, y.y)),
                            __fadd_rn(x.z, __fmul_rn(s, y.z)), __fadd_rn(x.w, __fmul_rn(s, y.w)));
    }
    for (size_t i = 4 * n4 + first; i < n; i += stride) {
        a[i] = __fadd_rn(b[i], __fmul_rn(s, c[i]));
    }
}
