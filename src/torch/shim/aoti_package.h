// C ABI of the AOTInductor package shim (aoti_package.cpp), declared to Rust in
// src/torch/sys.rs and wrapped safely by src/model/aoti_package.rs.
//
// An AOTInductor package (`torch._inductor.aoti_compile_and_package`, `replay export --format pt2
// --aoti`) is loaded with libtorch's `torch::inductor::AOTIModelPackageLoader` and run on tch
// tensors, without Python. Every entry point catches C++ exceptions and returns them as an error
// string (freed with `replay_free_string`): a C++ exception must never cross into Rust.
#pragma once
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct replay_aoti_package replay_aoti_package;

// The metadata of model `model_name` in the package at `path` (Inductor's
// `aot_inductor.metadata` and the runtime's own keys, `AOTI_DEVICE_KEY` among them), as a JSON
// object of strings, read without loading the model's code. NULL and `*error` on failure.
char* replay_aoti_package_metadata(const char* path, const char* model_name, char** error);

// Loads model `model_name` of the package at `path` onto the package's own device, CUDA device
// `device_index` for a CUDA package (-1: the current one). NULL and `*error` on failure.
replay_aoti_package* replay_aoti_package_load(const char* path, const char* model_name,
                                              int32_t device_index, char** error);

// One run on `ninputs` tch tensors (torch::Tensor*), on libtorch's current stream for a CUDA
// package. With `keep_outputs` the outputs are kept for `replay_aoti_package_output`, else they
// are released before the call returns (as a caller that drops them would). Returns the number
// of outputs, or -1 and `*error`.
int64_t replay_aoti_package_run(replay_aoti_package* package, void* const* inputs, size_t ninputs,
                                int32_t keep_outputs, char** error);

// A new tch tensor (owned by the caller) of kept output `index`, or NULL when there is none.
void* replay_aoti_package_output(replay_aoti_package* package, size_t index);

void replay_aoti_package_free(replay_aoti_package* package);

#ifdef __cplusplus
}
#endif
