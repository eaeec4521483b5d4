// TorchScript fusion group shim: a fusion group's subgraph (IR text, as the optimised graph
// TorchScript ran holds it) built into NNC's TensorExprKernel, the op TorchScript runs for a
// `prim::TensorExprGroup` node, and run on given inputs; and the same subgraph run unfused,
// op by op through the interpreter, as the reference its output is checked against. Declared
// to Rust in src/torch/sys.rs; the safe layer is src/torch/fusion_kernel.rs.
#pragma once
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct replay_fusion_kernel replay_fusion_kernel;

// Parses `graph_ir` and compiles it as TorchScript's TensorExprGroup op compiles a static-shape
// group. `te_must_use_llvm_cpu` (0 or 1; -1 leaves it) is the fuser switch that decides whether
// a CPU kernel may run in NNC's IR interpreter where this libtorch has no LLVM, set as the
// capture ran. NULL and *error on failure.
replay_fusion_kernel* replay_fusion_kernel_new(const char* graph_ir, int32_t te_must_use_llvm_cpu,
                                               char** error);

// The kernel's name, as TorchScript names it (and the profiler records it): `fused_add_relu`.
// Owned by the kernel.
const char* replay_fusion_kernel_name(const replay_fusion_kernel* kernel);

// How many inputs the subgraph takes.
size_t replay_fusion_kernel_inputs(const replay_fusion_kernel* kernel);

// Whether this libtorch registers NNC's LLVM code generator (1) or not (0): without it, a CPU
// group's kernel runs in NNC's IR interpreter, as TorchScript's own did where the capture ran.
int32_t replay_fusion_llvm_available(void);

// Runs the kernel `calls` times on `inputs` (tch tensors, torch::Tensor*). Returns the number of
// outputs of the last call, or -1 and *error.
int64_t replay_fusion_kernel_run(replay_fusion_kernel* kernel, void* const* inputs, size_t ninputs,
                                 uint64_t calls, char** error);

// Output `index` of the last run (a new tch tensor), or NULL.
void* replay_fusion_kernel_output(const replay_fusion_kernel* kernel, size_t index);

void replay_fusion_kernel_free(replay_fusion_kernel* kernel);

// Runs `graph_ir` unfused on `inputs`: the interpreter calling each aten op of the subgraph in
// turn, no fuser involved. Writes up to `max_outputs` new tch tensors to `outputs` and returns
// how many the graph returned, or -1 and *error.
int64_t replay_fusion_reference(const char* graph_ir, void* const* inputs, size_t ninputs,
                                void** outputs, size_t max_outputs, char** error);

// Switches TorchScript's fuser on for the CPU in this process, as `replay capture
// --fuse-on-cpu` does in Python: NNC's texpr fuser, allowed on the CPU, and its IR interpreter
// allowed where libtorch has no LLVM. 0, or -1 and *error.
int32_t replay_fuser_on_cpu(char** error);

#ifdef __cplusplus
}
#endif
