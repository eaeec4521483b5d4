// The semi-Markov CRF streaming scan (issue 15) on the GPU: forward and backward in the Log,
// Max and Entropy semirings. The CPU twin is src/kernels/semiring_scan/cpu/; the shared-memory
// sizes these kernels assume are computed in src/kernels/semiring_scan/launch.rs, and the host
// side that launches them is src/suites/scan/cuda_backend/.
//
// Layout (all contiguous): edge[B][T-1][K][C][C] float32, lengths[B] int32 in 1..=T.
//   beta[n][c] = (+)_{d=1..min(D,n)} (+)_{c'} beta[n-d][c'] (x) edge[n-d][slice(d)][c][c'],
//   D = max(K-1, 1), slice(d) = min(d, K-1), beta[0][c] = one, Z = (+)_c beta[len-1][c].
//
// One block per sequence; the sequential scan over positions runs inside the block, the
// (duration, source label) terms of each position in parallel. The ring buffer of the last
// D rows lives in shared memory. There is no semiring zero: every ⊕ runs over the terms
// that exist (d <= n), as on the CPU, which equals the reference's −1e5 filling.
//
// Precision, as on the CPU: Log and Entropy rows are kept as a float64 base per row plus
// float32 residuals (beta = base + residual, the row's largest value as its base), so that the
// float32 values stay O(K) however long the sequence; the backward works on residuals plus the
// exact difference of the bases. Max keeps absolute float32 rows (its bases stay 0), which
// makes its rows bit-identical to the CPU kernel's and its argmax ties resolve the same way.
//
// Saving forward (`save` != 0) also writes every row to global memory for the backward:
// saved_x[B][T][C], saved_base_x[B][T] (and the h halves for Entropy).
//
// Shared memory (dynamic), the layout the host sizes in kernels/semiring_scan/launch.rs:
//   forward:           double base_x[D], base_h[D]; float ring_x[D*C], ring_h[D*C],
//                      next_x[C], next_h[C], top[2]
//   backward (Log):    float rel[(D+1)*C]
//   backward (Entropy): float adj_x[(D+1)*C], adj_h[(D+1)*C], top[2]
//   backward (Max):    none

#include <cfloat>
#include <climits>
#include <cmath>

namespace {

constexpr unsigned FULL_MASK = 0xffffffffu;

__device__ __forceinline__ int max_duration(int K) { return K - 1 > 1 ? K - 1 : 1; }
__device__ __forceinline__ int slice_of(int d, int K) { return d < K - 1 ? d : K - 1; }

// Where sequence b's edge block [T−1][K][C][C] starts (its gradient's too).
__device__ __forceinline__ size_t sequence_offset(int b, int T, int K, int C) {
    return (size_t)b * (T - 1) * K * C * C;
}

// Offset of edge[m][slice(d)][c][src] within one sequence's block: the segment of duration d
// that starts at position m, from label src to label c.
__device__ __forceinline__ size_t edge_offset(int m, int d, int c, int src, int K, int C) {
    return (((size_t)m * K + slice_of(d, K)) * C + c) * C + src;
}

// ---------------------------------------------------------------------------------------------
// The semirings' ⊕ as online accumulators: push one term, combine two partial sums (for the
// warp reduction), finish into (value, entropy half).
// ---------------------------------------------------------------------------------------------

// (logsumexp, +): the running max and the sum of exp(x − max).
struct LogRing {
    static constexpr bool REBASE = true;
    static constexpr bool PAIRS = false;
    float m, s;
    __device__ void clear() { m = -INFINITY; s = 0.0f; }
    __device__ void push(float x, float) {
        if (x > m) {
            s = s * expf(m - x) + 1.0f;
            m = x;
        } else {
            s += expf(x - m);
        }
    }
    __device__ void combine(const LogRing& o) {
        if (o.s == 0.0f) return;
        if (s == 0.0f) { *this = o; return; }
        float top = fmaxf(m, o.m);
        s = s * expf(m - top) + o.s * expf(o.m - top);
        m = top;
    }
    __device__ void shuffle_down(int offset) {
        LogRing o;
        o.m = __shfl_down_sync(FULL_MASK, m, offset);
        o.s = __shfl_down_sync(FULL_MASK, s, offset);
        combine(o);
    }
    __device__ float value() const { return m + logf(s); }
    __device__ float entropy() const { return 0.0f; }
};

// (max, +).
struct MaxRing {
    static constexpr bool REBASE = false;
    static constexpr bool PAIRS = false;
    float m;
    __device__ void clear() { m = -INFINITY; }
    __device__ void push(float x, float) { m = x > m ? x : m; }
    __device__ void combine(const MaxRing& o) { m = o.m > m ? o.m : m; }
    __device__ void shuffle_down(int offset) {
        MaxRing o;
        o.m = __shfl_down_sync(FULL_MASK, m, offset);
        combine(o);
    }
    __device__ float value() const { return m; }
    __device__ float entropy() const { return 0.0f; }
};

// torch-struct's entropy semiring over items (x_i, h_i): P = logsumexp x,
// H = Σ p_i (h_i − x_i + P). Kept relative to the running max m: s = Σ w_i and
// t = Σ w_i (h_i − x_i + m) with w_i = exp(x_i − m), so P = m + ln s and H = t / s + ln s.
// Raising m to m' scales both by f = exp(m − m') and adds s (m' − m) to t.
struct EntropyRing {
    static constexpr bool REBASE = true;
    static constexpr bool PAIRS = true;
    float m, s, t;
    __device__ void clear() { m = -INFINITY; s = 0.0f; t = 0.0f; }
    __device__ void push(float x, float h) {
        if (s == 0.0f) {
            m = x; s = 1.0f; t = h;
        } else if (x > m) {
            float f = expf(m - x);
            t = f * (t + s * (x - m)) + h;
            s = s * f + 1.0f;
            m = x;
        } else {
            float w = expf(x - m);
            s += w;
            t += w * (h - x + m);
        }
    }
    __device__ void combine(const EntropyRing& o) {
        if (o.s == 0.0f) return;
        if (s == 0.0f) { *this = o; return; }
        float top = fmaxf(m, o.m);
        float f = expf(m - top), g = expf(o.m - top);
        t = f * (t + s * (top - m)) + g * (o.t + o.s * (top - o.m));
        s = s * f + o.s * g;
        m = top;
    }
    __device__ void shuffle_down(int offset) {
        EntropyRing o;
        o.m = __shfl_down_sync(FULL_MASK, m, offset);
        o.s = __shfl_down_sync(FULL_MASK, s, offset);
        o.t = __shfl_down_sync(FULL_MASK, t, offset);
        combine(o);
    }
    __device__ float value() const { return m + logf(s); }
    __device__ float entropy() const { return t / s + logf(s); }
};

template <class R>
__device__ __forceinline__ R warp_reduce(R acc) {
    for (int offset = 16; offset > 0; offset >>= 1) acc.shuffle_down(offset);
    return acc;
}

// ---------------------------------------------------------------------------------------------
// Forward
// ---------------------------------------------------------------------------------------------

template <class R>
__device__ void scan_forward(const float* __restrict__ edge, const int* __restrict__ lengths,
                             int T, int K, int C, double* __restrict__ values, int save,
                             float* __restrict__ saved_x, double* __restrict__ saved_base_x,
                             float* __restrict__ saved_h, double* __restrict__ saved_base_h) {
    extern __shared__ double shared[];
    const int D = max_duration(K);
    double* base_x = shared;
    double* base_h = base_x + D;
    float* ring_x = reinterpret_cast<float*>(base_h + D);
    float* ring_h = ring_x + D * C;
    float* next_x = ring_h + D * C;
    float* next_h = next_x + C;
    float* top = next_h + C;

    const int b = blockIdx.x;
    const int len = lengths[b];
    const float* seq = edge + sequence_offset(b, T, K, C);
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = blockDim.x >> 5;
    const size_t row0 = (size_t)b * T;

    for (int c = tid; c < C; c += blockDim.x) {
        ring_x[c] = 0.0f;
        ring_h[c] = 0.0f;
        if (save) {
            saved_x[row0 * C + c] = 0.0f;
            if (R::PAIRS) saved_h[row0 * C + c] = 0.0f;
        }
    }
    if (tid == 0) {
        base_x[0] = 0.0;
        base_h[0] = 0.0;
        if (save) {
            saved_base_x[row0] = 0.0;
            if (R::PAIRS) saved_base_h[row0] = 0.0;
        }
    }
    __syncthreads();

    for (int n = 1; n < len; ++n) {
        const int durations = n < D ? n : D;
        const int width = durations * C;
        const int previous = (n - 1) % D;
        const double ref_x = base_x[previous], ref_h = base_h[previous];
        for (int c = warp; c < C; c += warps) {
            R acc;
            acc.clear();
            for (int j = lane; j < width; j += 32) {
                const int dur = j / C + 1, src = j - (dur - 1) * C;
                const int slot = (n - dur) % D;
                const float e = seq[edge_offset(n - dur, dur, c, src, K, C)];
                float x = ring_x[slot * C + src] + e;
                float h = 0.0f;
                if (R::REBASE) x = x + (float)(base_x[slot] - ref_x);
                if (R::PAIRS) h = ring_h[slot * C + src] + (float)(base_h[slot] - ref_h);
                acc.push(x, h);
            }
            acc = warp_reduce(acc);
            if (lane == 0) {
                next_x[c] = acc.value();
                next_h[c] = acc.entropy();
            }
        }
        __syncthreads();
        if (tid == 0) {
            float tx = 0.0f, th = 0.0f;
            if (R::REBASE) {
                tx = -INFINITY;
                th = -INFINITY;
                for (int c = 0; c < C; ++c) {
                    tx = fmaxf(tx, next_x[c]);
                    th = fmaxf(th, next_h[c]);
                }
            }
            top[0] = tx;
            top[1] = th;
            const int slot = n % D;
            base_x[slot] = ref_x + (double)tx;
            base_h[slot] = ref_h + (double)th;
            if (save) {
                saved_base_x[row0 + n] = base_x[slot];
                if (R::PAIRS) saved_base_h[row0 + n] = base_h[slot];
            }
        }
        __syncthreads();
        const int slot = n % D;
        for (int c = tid; c < C; c += blockDim.x) {
            const float x = next_x[c] - top[0], h = next_h[c] - top[1];
            ring_x[slot * C + c] = x;
            ring_h[slot * C + c] = h;
            if (save) {
                saved_x[(row0 + n) * C + c] = x;
                if (R::PAIRS) saved_h[(row0 + n) * C + c] = h;
            }
        }
        __syncthreads();
    }

    if (tid == 0) {
        const int last = (len - 1) % D;
        R acc;
        acc.clear();
        for (int c = 0; c < C; ++c) acc.push(ring_x[last * C + c], ring_h[last * C + c]);
        values[b] = R::PAIRS ? base_h[last] + (double)acc.entropy()
                             : base_x[last] + (double)acc.value();
    }
}

}  // namespace

// One entry point per semiring (extern "C" names cannot be templates).
extern "C" __global__ void scan_forward_log(const float* edge, const int* lengths, int T, int K,
                                            int C, double* values, int save, float* saved_x,
                                            double* saved_base_x, float* saved_h,
                                            double* saved_base_h) {
    scan_forward<LogRing>(edge, lengths, T, K, C, values, save, saved_x, saved_base_x, saved_h,
                          saved_base_h);
}

extern "C" __global__ void scan_forward_max(const float* edge, const int* lengths, int T, int K,
                                            int C, double* values, int save, float* saved_x,
                                            double* saved_base_x, float* saved_h,
                                            double* saved_base_h) {
    scan_forward<MaxRing>(edge, lengths, T, K, C, values, save, saved_x, saved_base_x, saved_h,
                          saved_base_h);
}

extern "C" __global__ void scan_forward_entropy(const float* edge, const int* lengths, int T,
                                                int K, int C, double* values, int save,
                                                float* saved_x, double* saved_base_x,
                                                float* saved_h, double* saved_base_h) {
    scan_forward<EntropyRing>(edge, lengths, T, K, C, values, save, saved_x, saved_base_x,
                              saved_h, saved_base_h);
}

// ---------------------------------------------------------------------------------------------
// Backward: Log. The outside pass from the saved rows, one warp per source label:
//   rel[m, c'] = logsumexp_{d,c} edge[m, d, c, c'] + rel[m+d, c] + (base[m] − base[m+d]),
//   rel[len−1, c] = base[len−1] − log Z, marginal = exp(beta[m, c'] + edge + rel[m+d, c] +
//   (base[m] − base[m+d])), every float32 O(K) (the CPU twin's log_backward).
// ---------------------------------------------------------------------------------------------

extern "C" __global__ void scan_backward_log(const float* __restrict__ edge,
                                             const int* __restrict__ lengths, int T, int K, int C,
                                             const double* __restrict__ values,
                                             const float* __restrict__ saved_x,
                                             const double* __restrict__ saved_base_x,
                                             float* __restrict__ grad) {
    extern __shared__ float rel[];
    const int D = max_duration(K), slots = D + 1;
    const int b = blockIdx.x;
    const int len = lengths[b];
    if (len <= 1) return;
    const float* seq = edge + sequence_offset(b, T, K, C);
    float* g = grad + sequence_offset(b, T, K, C);
    const float* beta = saved_x + (size_t)b * T * C;
    const double* base = saved_base_x + (size_t)b * T;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = blockDim.x >> 5;

    for (int c = tid; c < C; c += blockDim.x)
        rel[((len - 1) % slots) * C + c] = (float)(base[len - 1] - values[b]);
    __syncthreads();

    for (int m = len - 2; m >= 0; --m) {
        const int durations = len - 1 - m < D ? len - 1 - m : D;
        const int width = durations * C;
        for (int src = warp; src < C; src += warps) {
            const float beta_src = beta[(size_t)m * C + src];
            LogRing acc;
            acc.clear();
            for (int j = lane; j < width; j += 32) {
                const int dur = j / C + 1, c = j - (dur - 1) * C;
                const size_t at = edge_offset(m, dur, c, src, K, C);
                const float shift = (float)(base[m] - base[m + dur]);
                const float w = seq[at] + rel[((m + dur) % slots) * C + c] + shift;
                acc.push(w, 0.0f);
                g[at] = expf(w + beta_src);
            }
            acc = warp_reduce(acc);
            if (lane == 0) rel[(m % slots) * C + src] = acc.value();
        }
        __syncthreads();
    }
}

// ---------------------------------------------------------------------------------------------
// Backward: Max. A backtrack of the argmax through the saved rows by one warp: at each step
// the best (duration, source label), ties to the smallest duration and then the smallest
// source label (the CPU twin's order); the final label ties to the smallest.
// ---------------------------------------------------------------------------------------------

extern "C" __global__ void scan_backward_max(const float* __restrict__ edge,
                                             const int* __restrict__ lengths, int T, int K, int C,
                                             const float* __restrict__ saved_x,
                                             const double* __restrict__ saved_base_x,
                                             float* __restrict__ grad) {
    const int D = max_duration(K);
    const int b = blockIdx.x;
    const int len = lengths[b];
    const int lane = threadIdx.x;
    if (lane >= 32) return;
    const float* seq = edge + sequence_offset(b, T, K, C);
    float* g = grad + sequence_offset(b, T, K, C);
    const float* beta = saved_x + (size_t)b * T * C;
    const double* base = saved_base_x + (size_t)b * T;

    int label = 0;
    {
        float best = -INFINITY;
        for (int c = 0; c < C; ++c) {
            const float v = beta[(size_t)(len - 1) * C + c];
            if (v > best) { best = v; label = c; }
        }
    }
    int n = len - 1;
    while (n > 0) {
        const int durations = n < D ? n : D;
        const int width = durations * C;
        float best = -INFINITY;
        int index = INT_MAX;
        for (int j = lane; j < width; j += 32) {
            const int dur = j / C + 1, src = j - (dur - 1) * C;
            const float shift = (float)(base[n - dur] - base[n]);
            const float e = seq[edge_offset(n - dur, dur, label, src, K, C)];
            const float v = beta[(size_t)(n - dur) * C + src] + e + shift;
            if (v > best) { best = v; index = j; }
        }
        for (int offset = 16; offset > 0; offset >>= 1) {
            const float ob = __shfl_down_sync(FULL_MASK, best, offset);
            const int oi = __shfl_down_sync(FULL_MASK, index, offset);
            if (ob > best || (ob == best && oi < index)) { best = ob; index = oi; }
        }
        index = __shfl_sync(FULL_MASK, index, 0);
        // A NaN potential makes every comparison false: stop rather than loop.
        if (index == INT_MAX) break;
        const int dur = index / C + 1, src = index - (dur - 1) * C;
        if (lane == 0)
            g[edge_offset(n - dur, dur, label, src, K, C)] = 1.0f;
        n -= dur;
        label = src;
    }
}

// ---------------------------------------------------------------------------------------------
// Backward: Entropy. Reverse mode through the entropy ⊕ (the CPU twin's entropy_backward): a
// node's items (x_i, h_i) = (beta_x[m, c'] + edge, beta_h[m, c']) make P and H; with the
// node's adjoints (P̄, H̄), x̄_i = p_i (P̄ + H̄ ((h_i − x_i) − (H − P))), h̄_i = H̄ p_i. One thread
// per (duration, source label) of a step owns the adjoint of row n − d, label c', so the
// accumulation needs no atomics; the adjoints of the last D + 1 rows live in shared memory.
// ---------------------------------------------------------------------------------------------

extern "C" __global__ void scan_backward_entropy(const float* __restrict__ edge,
                                                 const int* __restrict__ lengths, int T, int K,
                                                 int C, const float* __restrict__ saved_x,
                                                 const double* __restrict__ saved_base_x,
                                                 const float* __restrict__ saved_h,
                                                 const double* __restrict__ saved_base_h,
                                                 float* __restrict__ grad) {
    extern __shared__ float adjoints[];
    const int D = max_duration(K), slots = D + 1;
    float* adj_x = adjoints;
    float* adj_h = adj_x + slots * C;
    const int b = blockIdx.x;
    const int len = lengths[b];
    if (len <= 1) return;
    const float* seq = edge + sequence_offset(b, T, K, C);
    float* g = grad + sequence_offset(b, T, K, C);
    const float* x = saved_x + (size_t)b * T * C;
    const float* h = saved_h + (size_t)b * T * C;
    const double* base_x = saved_base_x + (size_t)b * T;
    const double* base_h = saved_base_h + (size_t)b * T;
    const int tid = threadIdx.x;

    for (int i = tid; i < slots * C; i += blockDim.x) {
        adj_x[i] = 0.0f;
        adj_h[i] = 0.0f;
    }
    __syncthreads();
    // The final ⊕ over labels with adjoints (P̄, H̄) = (0, 1): the loss is H alone.
    if (tid == 0) {
        const float* lx = x + (size_t)(len - 1) * C;
        const float* lh = h + (size_t)(len - 1) * C;
        EntropyRing acc;
        acc.clear();
        for (int c = 0; c < C; ++c) acc.push(lx[c], lh[c]);
        const float top_x = acc.value(), top_spread = acc.entropy() - top_x;
        const int last = (len - 1) % slots;
        for (int c = 0; c < C; ++c) {
            const float p = expf(lx[c] - top_x);
            adj_x[last * C + c] = p * ((lh[c] - lx[c]) - top_spread);
            adj_h[last * C + c] = p;
        }
    }
    __syncthreads();

    for (int n = len - 1; n >= 1; --n) {
        const int here = n % slots;
        const int durations = n < D ? n : D;
        for (int t = tid; t < durations * C; t += blockDim.x) {
            const int dur = t / C + 1, src = t - (dur - 1) * C;
            const int m = n - dur;
            const float shift = (float)(base_x[m] - base_x[n]);
            const float spread_shift = (float)((base_h[m] - base_h[n]) - (base_x[m] - base_x[n]));
            const float xs = x[(size_t)m * C + src], hs = h[(size_t)m * C + src];
            float sum_x = 0.0f, sum_h = 0.0f;
            for (int c = 0; c < C; ++c) {
                const float bar_p = adj_x[here * C + c], bar_h = adj_h[here * C + c];
                const float node_x = x[(size_t)n * C + c];
                const float spread = h[(size_t)n * C + c] - node_x;
                const size_t at = edge_offset(m, dur, c, src, K, C);
                const float e = seq[at];
                const float p = expf(xs + e + shift - node_x);
                const float deviation = (hs - xs - e) - spread + spread_shift;
                const float bar_x = p * (bar_p + bar_h * deviation);
                g[at] = bar_x;
                sum_x += bar_x;
                sum_h += bar_h * p;
            }
            adj_x[(m % slots) * C + src] += sum_x;
            adj_h[(m % slots) * C + src] += sum_h;
        }
        __syncthreads();
        // Row n is spent; its slot is row n − D − 1's from the next step on.
        for (int c = tid; c < C; c += blockDim.x) {
            adj_x[here * C + c] = 0.0f;
            adj_h[here * C + c] = 0.0f;
        }
        __syncthreads();
    }
}
