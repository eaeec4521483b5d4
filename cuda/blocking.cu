// The blocking kernel of replay's CUDA timer (src/measure/cuda_timing.rs, its host side in
// src/measure/blocking_kernel.rs), as nvbench's blocking_kernel does it.
//
// A kernel shorter than its launch (1-2 us on the device against ~5 us of host time per
// libtorch op) leaves the GPU idle between launches, so CUDA events around a batch of them
// measure the host's launch rate, not the kernels. Launched on the timed stream before the
// start event, this one-thread kernel spins on a flag in host-mapped memory; the start event,
// the batch and the end event queue up behind it; the host then sets the flag and the GPU runs
// the queued work back to back, so the events measure device time only.
//
// It gives up after `timeout_ns` of the GPU's global timer and says so in `timed_out`: a
// segment that issues more launches than the launch queue holds (the host then waits in
// cuLaunchKernel for a slot the spinning kernel never frees) or that waits for the device
// itself (a copy to pageable memory, a libtorch op that reads a result back) would otherwise
// deadlock. The host counts such segments and stops blocking for the rest of the measurement.
//
// No CPU twin, unlike replay's other kernels: the CPU timer (the monotonic clock around calls
// the host runs synchronously) has no launch queue to fill, so there is nothing to block.

// The GPU's global nanosecond timer (every architecture replay builds for has it).
__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Launch as <<<1, 1>>>. `release` and `timed_out` are device pointers of host-mapped memory
// (cuMemHostAlloc with DEVICEMAP); the host zeroes both before the launch.
extern "C" __global__ void block_stream(const volatile int* release, volatile int* timed_out,
                                        unsigned long long timeout_ns) {
    const unsigned long long start = global_ns();
    while (*release == 0) {
        if (global_ns() - start > timeout_ns) {
            *timed_out = 1;
            __threadfence_system();
            return;
        }
    }
}
