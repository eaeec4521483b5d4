// libtorch dispatcher shim: call any aten operator by name, boxed. See op_dispatch.h.
#include "shim_common.h"
#include "op_dispatch.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/ivalue.h>
#include <ATen/core/List.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#ifdef REPLAY_WITH_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

// What a call returned last, shared with the calls that read it (replay_op_link_input).
struct replay_output_source {
  std::shared_ptr<std::vector<c10::IValue>> values;
};

namespace {

// An argument (or an element of a list argument, element >= 0) that reads one output tensor
// of another call, as it is or reshaped (the view a view op that is not re-run made of it).
struct input_link {
  size_t arg;
  int64_t element;
  std::shared_ptr<std::vector<c10::IValue>> source;
  // Which of the source's returns (0: its first).
  size_t output;
  // The views applied to it, in order (see replay_op_link_input).
  std::vector<int64_t> views;
  // This call is the source's last reader in the step: the source's output is freed once
  // the call has run, as the model frees a tensor after its last use.
  bool release_after;
  // A list's element as bound: put back after each run, so that the list the prepared stack
  // shares keeps no producer's output alive once its source lets go of it.
  c10::IValue original;
};

// The first tensor of a call's output, or null when it returned none (or has not run).
const c10::IValue* first_tensor(const std::vector<c10::IValue>& values) {
  for (const auto& v : values) {
    if (v.isTensor()) return &v;
  }
  return nullptr;
}

// `t` viewed by `views` (kind, count, integers; as replay_op_link_input documents).
at::Tensor apply_views(at::Tensor t, const std::vector<int64_t>& views) {
  for (size_t i = 0; i + 1 < views.size();) {
    int64_t kind = views[i];
    size_t n = static_cast<size_t>(views[i + 1]);
    const int64_t* a = views.data() + i + 2;
    c10::IntArrayRef ints(a, n);
    switch (kind) {
      case 0: t = t.reshape(ints); break;
      case 1: t = t.t(); break;
      case 2: t = t.transpose(a[0], a[1]); break;
      case 3: t = t.permute(ints); break;
      case 4: t = t.expand(ints); break;
      case 5: t = t.select(a[0], a[1]); break;
      case 6:
        t = t.slice(a[0], a[1] ? std::optional<int64_t>(a[2]) : std::nullopt,
                    a[3] ? std::optional<int64_t>(a[4]) : std::nullopt, a[5]);
        break;
      default: TORCH_CHECK(false, "unknown view kind ", kind);
    }
    i += 2 + n;
  }
  return t;
}

// Return `output` of a call's output when it is a tensor, else null (or not run yet).
const c10::IValue* output_tensor(const std::vector<c10::IValue>& values, size_t output) {
  if (output >= values.size() || !values[output].isTensor()) return nullptr;
  return &values[output];
}

}  // namespace

struct replay_prepared_call {
  c10::OperatorHandle op;
  std::vector<c10::IValue> stack;
  std::shared_ptr<std::vector<c10::IValue>> last_output = std::make_shared<std::vector<c10::IValue>>();
  std::vector<input_link> links;
  bool keep_output = true;
};

namespace {

using replay_shim::dup_string;
using replay_shim::guarded;
using replay_shim::json_escape;
using replay_shim::set_error;

std::vector<c10::OperatorHandle> overloads_of(const std::string& name) {
  std::vector<c10::OperatorHandle> out;
  auto& dispatcher = c10::Dispatcher::singleton();
  for (const auto& op_name : dispatcher.getAllOpNames()) {
    if (op_name.name == name) {
      auto handle = dispatcher.findSchema(op_name);
      if (handle) out.push_back(*handle);
    }
  }
  return out;
}

const at::Tensor& tensor_at(void* const* tensors, size_t i) { return *static_cast<at::Tensor*>(tensors[i]); }

// Converts one argument to the IValue the schema's type expects.
c10::IValue to_ivalue(const c10::Argument& arg, const replay_arg& a) {
  c10::TypePtr type = arg.real_type();
  if (a.kind == REPLAY_ARG_NONE) {
    TORCH_CHECK(type->kind() == c10::TypeKind::OptionalType || type->kind() == c10::TypeKind::NoneType,
                "argument '", arg.name(), "' of type ", type->str(), " cannot be None");
    return c10::IValue();
  }
  if (auto opt = type->cast<c10::OptionalType>()) type = opt->getElementType();
  switch (a.kind) {
    case REPLAY_ARG_TENSOR:
      return c10::IValue(tensor_at(a.tensors, 0));
    case REPLAY_ARG_INT:
      if (type->kind() == c10::TypeKind::FloatType) return c10::IValue(static_cast<double>(a.int_value));
      if (type->kind() == c10::TypeKind::BoolType) return c10::IValue(a.int_value != 0);
      return c10::IValue(a.int_value);
    case REPLAY_ARG_DOUBLE:
      return c10::IValue(a.double_value);
    case REPLAY_ARG_BOOL:
      return c10::IValue(a.int_value != 0);
    case REPLAY_ARG_STRING:
      if (type->kind() == c10::TypeKind::DeviceObjType) return c10::IValue(c10::Device(std::string(a.str)));
      return c10::IValue(std::string(a.str));
    case REPLAY_ARG_INT_LIST:
      return c10::IValue(std::vector<int64_t>(a.ints, a.ints + a.len));
    case REPLAY_ARG_DOUBLE_LIST:
      return c10::IValue(std::vector<double>(a.doubles, a.doubles + a.len));
    case REPLAY_ARG_BOOL_LIST: {
      c10::List<bool> list;
      for (size_t i = 0; i < a.len; ++i) list.push_back(a.ints[i] != 0);
      return c10::IValue(list);
    }
    case REPLAY_ARG_TENSOR_LIST: {
      auto list_type = type->cast<c10::ListType>();
      bool optional_elements = list_type && list_type->getElementType()->kind() == c10::TypeKind::OptionalType;
      if (optional_elements) {
        c10::List<std::optional<at::Tensor>> list;
        for (size_t i = 0; i < a.len; ++i) {
          if (a.tensors[i]) list.push_back(tensor_at(a.tensors, i));
          else list.push_back(std::nullopt);
        }
        return c10::IValue(list);
      }
      c10::List<at::Tensor> list;
      for (size_t i = 0; i < a.len; ++i) {
        TORCH_CHECK(a.tensors[i] != nullptr, "argument '", arg.name(), "' holds a None tensor but its type is ",
                    type->str());
        list.push_back(tensor_at(a.tensors, i));
      }
      return c10::IValue(list);
    }
    default:
      TORCH_CHECK(false, "argument '", arg.name(), "': unknown replay_arg kind ", a.kind);
  }
}

}  // namespace

extern "C" {

void replay_free_string(char* s) { std::free(s); }

char* replay_op_overloads(const char* name, char** error) {
  return guarded(error, static_cast<char*>(nullptr), [&]() -> char* {
    auto handles = overloads_of(name);
    TORCH_CHECK(!handles.empty(), "no operator named '", name, "' is registered with libtorch's dispatcher");
    std::ostringstream out;
    out << "[";
    for (size_t h = 0; h < handles.size(); ++h) {
      const auto& schema = handles[h].schema();
      out << (h ? "," : "") << "{\"overload\":\"" << json_escape(schema.overload_name()) << "\",\"args\":[";
      const auto& args = schema.arguments();
      for (size_t i = 0; i < args.size(); ++i) {
        const auto& a = args[i];
        bool writes = a.alias_info() && a.alias_info()->isWrite();
        out << (i ? "," : "") << "{\"name\":\"" << json_escape(a.name()) << "\",\"type\":\""
            << json_escape(a.real_type()->str()) << "\",\"has_default\":" << (a.default_value() ? "true" : "false")
            << ",\"kwarg_only\":" << (a.kwarg_only() ? "true" : "false") << ",\"writes\":" << (writes ? "true" : "false")
            << "}";
      }
      // Whether the dispatch table (composite kernels included) can run it on each device.
      out << "],\"returns\":" << schema.returns().size() << ",\"kernels\":{\"cpu\":"
          << (handles[h].hasComputedKernelForDispatchKey(c10::DispatchKey::CPU) ? "true" : "false")
          << ",\"cuda\":"
          << (handles[h].hasComputedKernelForDispatchKey(c10::DispatchKey::CUDA) ? "true" : "false") << "}}";
    }
    out << "]";
    return dup_string(out.str());
  });
}

replay_prepared_call* replay_op_prepare(const char* name, const char* overload, const replay_arg* args,
                                        size_t nargs, char** error) {
  return guarded(error, static_cast<replay_prepared_call*>(nullptr), [&]() -> replay_prepared_call* {
    auto handle = c10::Dispatcher::singleton().findSchemaOrThrow(name, overload);
    const auto& schema_args = handle.schema().arguments();
    TORCH_CHECK(nargs <= schema_args.size(), name, ".", overload, " takes ", schema_args.size(),
                " arguments, got ", nargs);
    std::vector<c10::IValue> stack;
    stack.reserve(schema_args.size());
    for (size_t i = 0; i < schema_args.size(); ++i) {
      const auto& arg = schema_args[i];
      if (i < nargs && args[i].kind != REPLAY_ARG_DEFAULT) {
        stack.push_back(to_ivalue(arg, args[i]));
      } else {
        TORCH_CHECK(arg.default_value().has_value(), name, ".", overload, ": argument '", arg.name(),
                    "' has no default and was not given");
        stack.push_back(*arg.default_value());
      }
    }
    return new replay_prepared_call{handle, std::move(stack)};
  });
}

int replay_op_run(replay_prepared_call* call, uint64_t calls, char** error) {
  return guarded(error, -1, [&]() -> int {
    TORCH_CHECK(call != nullptr, "replay_op_run: null call");
    for (uint64_t i = 0; i < calls; ++i) {
      // The dispatcher consumes the stack (arguments popped, results pushed): call on a copy,
      // which costs only reference-count increments.
      std::vector<c10::IValue> stack = call->stack;
      // Linked inputs read their producer's latest output: a reference, as the model
      // passes it (a list's element is replaced in the list the prepared stack shares).
      for (const auto& link : call->links) {
        const c10::IValue* tensor = output_tensor(*link.source, link.output);
        if (tensor == nullptr) continue;
        c10::IValue value = link.views.empty() ? *tensor : c10::IValue(apply_views(tensor->toTensor(), link.views));
        if (link.element < 0) {
          stack[link.arg] = std::move(value);
        } else {
          stack[link.arg].toList().set(static_cast<size_t>(link.element), std::move(value));
        }
      }
      call->op.callBoxed(stack);
      if (i + 1 < calls) continue;
      if (call->keep_output) *call->last_output = std::move(stack);
      // The last call of the batch lets go of the outputs it read last.
      for (const auto& link : call->links) {
        if (link.element >= 0) {
          call->stack[link.arg].toList().set(static_cast<size_t>(link.element), link.original);
        }
        if (link.release_after) link.source->clear();
      }
    }
    return 0;
  });
}

void* replay_op_last_output(replay_prepared_call* call) {
  if (!call) return nullptr;
  const c10::IValue* tensor = first_tensor(*call->last_output);
  return tensor ? new at::Tensor(tensor->toTensor()) : nullptr;
}

void replay_op_keep_output(replay_prepared_call* call, int keep) {
  if (!call) return;
  call->keep_output = keep != 0;
  if (!call->keep_output) call->last_output->clear();
}

replay_output_source* replay_op_output_source(replay_prepared_call* call) {
  if (!call) return nullptr;
  return new replay_output_source{call->last_output};
}

void* replay_output_source_tensor(const replay_output_source* source, size_t output) {
  if (!source) return nullptr;
  const c10::IValue* tensor = output_tensor(*source->values, output);
  return tensor ? new at::Tensor(tensor->toTensor()) : nullptr;
}

void replay_output_source_free(replay_output_source* source) { delete source; }

int replay_op_link_input(replay_prepared_call* call, size_t arg, int64_t element, const replay_output_source* source,
                         size_t output, const int64_t* views, size_t views_len, int release_after,
                         char** error) {
  return guarded(error, -1, [&]() -> int {
    TORCH_CHECK(call != nullptr && source != nullptr, "replay_op_link_input: null call or source");
    TORCH_CHECK(arg < call->stack.size(), "replay_op_link_input: argument ", arg, " of ", call->stack.size());
    const c10::IValue& bound = call->stack[arg];
    if (element < 0) {
      TORCH_CHECK(bound.isTensor(), "replay_op_link_input: argument ", arg, " is no tensor");
    } else {
      TORCH_CHECK(bound.isList() && static_cast<size_t>(element) < bound.toListRef().size(),
                  "replay_op_link_input: argument ", arg, " has no element ", element);
    }
    c10::IValue original = element < 0 ? c10::IValue() : bound.toList().get(static_cast<size_t>(element));
    TORCH_CHECK(views != nullptr || views_len == 0, "replay_op_link_input: null views");
    std::vector<int64_t> program(views, views + views_len);
    // Each view: its kind, its count of integers, and that many integers.
    for (size_t i = 0; i < program.size();) {
      TORCH_CHECK(i + 1 < program.size() && program[i] >= 0 && program[i] <= 6 && program[i + 1] >= 0 &&
                      i + 2 + static_cast<size_t>(program[i + 1]) <= program.size(),
                  "replay_op_link_input: malformed views at ", i);
      i += 2 + static_cast<size_t>(program[i + 1]);
    }
    call->links.push_back(
        input_link{arg, element, source->values, output, std::move(program), release_after != 0, std::move(original)});
    return 0;
  });
}

void replay_op_free(replay_prepared_call* call) { delete call; }

void* replay_torch_current_cuda_stream(int device, char** error) {
#ifdef REPLAY_WITH_TORCH_CUDA
  return guarded(error, static_cast<void*>(nullptr), [&]() -> void* {
    return static_cast<void*>(c10::cuda::getCurrentCUDAStream(static_cast<c10::DeviceIndex>(device)).stream());
  });
#else
  (void)device;
  set_error(error, "this libtorch has no CUDA support");
  return nullptr;
#endif
}

}  // extern "C"
