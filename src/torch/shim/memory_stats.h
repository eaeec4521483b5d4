// C ABI of the memory counters (memory_stats.cpp), declared to Rust in src/torch/sys.rs.
//
// The CPU has no allocator statistics in libtorch, so the shim installs a counting allocator in
// front of the default one; on CUDA it reads the caching allocator's own peaks. Every entry point
// catches C++ exceptions and returns them as an error string.
#pragma once
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// Puts the counting allocator in front of libtorch's CPU allocator (once per process; later
// calls do nothing). 0 on success, else -1 and *error.
int replay_cpu_counter_install(char** error);

// Whether the counting allocator is installed (1) or not (0).
int replay_cpu_counter_installed(void);

// Bytes of live CPU tensor storage allocated since the install, and the most there was at once
// since the last reset (or the install).
uint64_t replay_cpu_counter_live(void);
uint64_t replay_cpu_counter_peak(void);

// Sets the peak to what is live now.
void replay_cpu_counter_reset_peak(void);

// The CUDA caching allocator's peak allocated and reserved bytes on `device` since its last
// reset. 0 on success, else -1 and *error (also when this build has no CUDA).
int replay_cuda_memory_peak(int device, uint64_t* allocated, uint64_t* reserved, char** error);

// Resets the caching allocator's peaks on `device` to what it holds now. 0 or -1 and *error.
int replay_cuda_memory_reset_peak(int device, char** error);

#ifdef __cplusplus
}
#endif
