// L2 cache flush, run between timed samples when `--cold` is given.
//
// Writing a buffer larger than the L2 cache evicts whatever the previous sample left
// there, so the next timed kernel starts with a cold L2 (nvbench does the same). Writes,
// not reads: dirty lines must be written back, which also flushes the previous kernel's
// outputs instead of leaving them to be written back inside the next timed region.
#include <cstddef>

extern "C" __global__ void l2_flush(unsigned int* __restrict__ buffer, size_t words, unsigned int value) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < words; i += stride) {
        buffer[i] = value ^ (unsigned int)i;
    }
}
