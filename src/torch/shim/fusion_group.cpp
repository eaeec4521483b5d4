// TorchScript fusion group shim. See fusion_group.h.
#include "shim_common.h"
#include "fusion_group.h"

#include <ATen/Tensor.h>
#include <c10/util/Exception.h>
#include <torch/csrc/jit/codegen/fuser/interface.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/ir/irparser.h>
#include <torch/csrc/jit/passes/tensorexpr_fuser.h>
#include <torch/csrc/jit/runtime/interpreter.h>
#include <torch/csrc/jit/tensorexpr/codegen.h>
#include <torch/csrc/jit/tensorexpr/kernel.h>

#include <memory>
#include <string>
#include <vector>

struct replay_fusion_kernel {
  std::unique_ptr<torch::jit::tensorexpr::TensorExprKernel> kernel;
  size_t inputs;
  std::vector<at::Tensor> outputs;
};

namespace {

using replay_shim::guarded;

std::shared_ptr<torch::jit::Graph> parse(const char* graph_ir) {
  TORCH_CHECK(graph_ir != nullptr, "null graph");
  auto graph = std::make_shared<torch::jit::Graph>();
  torch::jit::parseIR(graph_ir, graph.get());
  return graph;
}

std::vector<c10::IValue> stack_of(void* const* inputs, size_t ninputs) {
  std::vector<c10::IValue> stack;
  stack.reserve(ninputs);
  for (size_t i = 0; i < ninputs; ++i) {
    TORCH_CHECK(inputs[i] != nullptr, "input ", i, " is null");
    stack.emplace_back(*static_cast<at::Tensor*>(inputs[i]));
  }
  return stack;
}

std::vector<at::Tensor> tensors_of(const std::vector<c10::IValue>& stack) {
  std::vector<at::Tensor> out;
  for (const auto& value : stack) {
    TORCH_CHECK(value.isTensor(), "the group returned a ", value.tagKind(), ", not a tensor");
    out.push_back(value.toTensor());
  }
  return out;
}

}  // namespace

extern "C" {

replay_fusion_kernel* replay_fusion_kernel_new(const char* graph_ir, int32_t te_must_use_llvm_cpu,
                                               char** error) {
  return guarded(error, static_cast<replay_fusion_kernel*>(nullptr), [&]() -> replay_fusion_kernel* {
    if (te_must_use_llvm_cpu >= 0) torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = te_must_use_llvm_cpu != 0;
    auto graph = parse(graph_ir);
    auto inputs = graph->inputs().size();
    auto kernel = std::make_unique<torch::jit::tensorexpr::TensorExprKernel>(graph);
    return new replay_fusion_kernel{std::move(kernel), inputs, {}};
  });
}

const char* replay_fusion_kernel_name(const replay_fusion_kernel* kernel) {
  return kernel ? kernel->kernel->getKernelName().c_str() : "";
}

size_t replay_fusion_kernel_inputs(const replay_fusion_kernel* kernel) { return kernel ? kernel->inputs : 0; }

int32_t replay_fusion_llvm_available(void) {
  try {
    torch::jit::tensorexpr::RegisterCodeGenList::GetInstance().FindStmtFactoryMethod("llvm_codegen");
    return 1;
  } catch (...) {
    return 0;
  }
}

int64_t replay_fusion_kernel_run(replay_fusion_kernel* kernel, void* const* inputs, size_t ninputs,
                                 uint64_t calls, char** error) {
  return guarded(error, static_cast<int64_t>(-1), [&]() -> int64_t {
    TORCH_CHECK(kernel != nullptr, "replay_fusion_kernel_run: null kernel");
    TORCH_CHECK(ninputs == kernel->inputs, "the group takes ", kernel->inputs, " inputs, not ", ninputs);
    std::vector<c10::IValue> stack;
    for (uint64_t i = 0; i < calls; ++i) {
      stack = stack_of(inputs, ninputs);
      kernel->kernel->run(stack);
    }
    kernel->outputs = tensors_of(stack);
    return static_cast<int64_t>(kernel->outputs.size());
  });
}

void* replay_fusion_kernel_output(const replay_fusion_kernel* kernel, size_t index) {
  if (!kernel || index >= kernel->outputs.size()) return nullptr;
  return new at::Tensor(kernel->outputs[index]);
}

void replay_fusion_kernel_free(replay_fusion_kernel* kernel) { delete kernel; }

int64_t replay_fusion_reference(const char* graph_ir, void* const* inputs, size_t ninputs,
                                void** outputs, size_t max_outputs, char** error) {
  return guarded(error, static_cast<int64_t>(-1), [&]() -> int64_t {
    auto graph = parse(graph_ir);
    TORCH_CHECK(ninputs == graph->inputs().size(), "the graph takes ", graph->inputs().size(),
                " inputs, not ", ninputs);
    // The graph as parsed, compiled for the interpreter with no optimisation pass: each node
    // is its aten op's call.
    torch::jit::Code code(graph, "replay_fusion_reference");
    torch::jit::InterpreterState state(code);
    auto stack = stack_of(inputs, ninputs);
    state.run(stack);
    auto results = tensors_of(stack);
    for (size_t i = 0; i < results.size() && i < max_outputs; ++i) outputs[i] = new at::Tensor(results[i]);
    return static_cast<int64_t>(results.size());
  });
}

int32_t replay_fuser_on_cpu(char** error) {
  return guarded(error, static_cast<int32_t>(-1), [&]() -> int32_t {
    torch::jit::overrideCanFuseOnCPU(true);
    torch::jit::setTensorExprFuserEnabled(true);
    // With LLVM the CPU backend is LLVM whatever this says; without it, the interpreter.
    torch::jit::tensorexpr::getTEMustUseLLVMOnCPU() = false;
    return 0;
  });
}

}  // extern "C"
