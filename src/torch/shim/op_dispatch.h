// C ABI of the libtorch dispatcher shim (op_dispatch.cpp), declared to Rust in src/torch/sys.rs
// (whose `ArgKind` mirrors `replay_arg_kind` below: keep the two in step).
//
// tch cannot call an aten operator by name; this shim can. Rust asks for the overloads of an
// operator (their schemas, as JSON), picks the one that matches the recorded inputs, then
// prepares a boxed call once and runs it as often as the measurement needs. Every entry point
// catches C++ exceptions and returns them as an error string: a C++ exception must never cross
// into Rust (that would abort the process).
#pragma once
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum replay_arg_kind {
  REPLAY_ARG_NONE = 0,
  REPLAY_ARG_TENSOR = 1,       // tensors[0]: a tch tensor (torch::Tensor*)
  REPLAY_ARG_INT = 2,          // int_value; also ScalarType, Layout, MemoryFormat codes
  REPLAY_ARG_DOUBLE = 3,       // double_value
  REPLAY_ARG_BOOL = 4,         // int_value != 0
  REPLAY_ARG_INT_LIST = 5,     // ints[0..len]
  REPLAY_ARG_TENSOR_LIST = 6,  // tensors[0..len]; a null entry is None (for Tensor?[])
  REPLAY_ARG_STRING = 7,       // str (NUL-terminated); also Device ("cpu", "cuda:0")
  REPLAY_ARG_DOUBLE_LIST = 8,  // doubles[0..len]
  REPLAY_ARG_BOOL_LIST = 9,    // ints[0..len], != 0 is true
  REPLAY_ARG_DEFAULT = 10,     // the schema's default value for this argument
};

typedef struct {
  int32_t kind;
  int64_t int_value;
  double double_value;
  const int64_t* ints;
  const double* doubles;
  void* const* tensors;
  size_t len;
  const char* str;
} replay_arg;

typedef struct replay_prepared_call replay_prepared_call;

// Frees a string returned by this shim.
void replay_free_string(char* s);

// The overloads of `name` ("aten::add") as a JSON array of
// {"overload", "args": [{"name", "type", "has_default", "kwarg_only", "writes"}], "returns",
//  "kernels": {"cpu", "cuda"}} (whether the dispatch table, composite kernels included, has a
// kernel for that device).
// Returns NULL and sets *error when the operator is unknown.
char* replay_op_overloads(const char* name, char** error);

// Builds the boxed argument stack for `name`.`overload` from `args` (positional, in schema
// order; arguments past `nargs` take their schema defaults). NULL and *error on failure.
replay_prepared_call* replay_op_prepare(const char* name, const char* overload, const replay_arg* args,
                                        size_t nargs, char** error);

// Calls the prepared operator `calls` times. 0 on success, else -1 and *error.
int replay_op_run(replay_prepared_call* call, uint64_t calls, char** error);

// The first tensor the last run returned (a new tch tensor), or NULL when it returned none.
void* replay_op_last_output(replay_prepared_call* call);

// Whether each run keeps what it returned (the default) until the next run; when not, the
// outputs are freed as the run ends, and what was kept is dropped now.
void replay_op_keep_output(replay_prepared_call* call, int keep);

void replay_op_free(replay_prepared_call* call);

// What a prepared call returned last, shared: it stays readable after the call is freed.
typedef struct replay_output_source replay_output_source;

// A new handle on `call`'s last output (updated by every later run of `call`); free it with
// replay_output_source_free.
replay_output_source* replay_op_output_source(replay_prepared_call* call);

// Return `output` of the source's output (a new torch::Tensor*), or null when it is no tensor
// (or the call has not run).
void* replay_output_source_tensor(const replay_output_source* source, size_t output);

void replay_output_source_free(replay_output_source* source);

// From now on, argument `arg` of `call` (element `element` of a list argument; -1: the
// argument itself) reads return `output` of `source`'s latest output on every run, when it is
// a tensor, viewed by `views` (views_len integers; none: as it is): the view ops the model
// applied to it that are not re-run, each as its kind, its count of integers, the integers:
// 0 reshape(sizes), 1 t(), 2 transpose(dim0, dim1), 3 permute(dims), 4 expand(sizes),
// 5 select(dim, index), 6 slice(dim, has_start, start, has_end, end, step). With
// `release_after` non-zero, `call` is the source's last reader: the source's output is freed
// after each run of `call` (its producer's next run gives it again). Returns 0, or -1 with
// *error set.
int replay_op_link_input(replay_prepared_call* call, size_t arg, int64_t element, const replay_output_source* source,
                         size_t output, const int64_t* views, size_t views_len, int release_after,
                         char** error);

// libtorch's current CUDA stream on `device` (a cudaStream_t), so CUDA events can time tier-3
// work on the stream it really runs on. NULL and *error without CUDA support.
void* replay_torch_current_cuda_stream(int device, char** error);

#ifdef __cplusplus
}
#endif
