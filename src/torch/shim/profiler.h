// C ABI of the profiler session (profiler.cpp), declared to Rust in src/torch/sys.rs.
//
// libtorch's own profiler (Kineto), started and stopped from C++ exactly as
// `torch.profiler.profile(activities=..., record_shapes=True, with_stack=False)` starts and stops
// it from Python in scripts/capture_trace.py: the same ProfilerConfig (state KINETO, input shapes
// recorded, no memory, stack, flops or modules, the default experimental config), the same
// activities, prepareProfiler then enableProfiler, and disableProfiler at the end. The events are
// counted, never exported. Every entry point catches C++ exceptions and returns them as an error
// string.
#pragma once
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// What one session recorded.
typedef struct {
  // Op events of the CPU (`cpu_op` in a trace): one per op that went through the dispatcher,
  // nested ones included.
  uint64_t cpu_ops;
  // Of those, how many carry their input shapes (record_shapes at work).
  uint64_t cpu_ops_with_shapes;
  // CUDA runtime and driver calls (`cuda_runtime`, `cuda_driver`): cudaLaunchKernel and the like.
  uint64_t runtime;
  // Everything else: kernels, copies, memsets and other device activities.
  uint64_t other;
} replay_profiler_counts;

// Starts a session on this thread with capture's settings; CUDA activities too when `with_cuda`
// is non-zero. 0 on success, else -1 and *error (a session already running, a libtorch without
// Kineto, CUDA activities on a machine without CUPTI).
int replay_profiler_start(int with_cuda, char** error);

// Stops the session this thread started and counts its events into *counts. 0 or -1 and *error.
int replay_profiler_stop(replay_profiler_counts* counts, char** error);

#ifdef __cplusplus
}
#endif
