// AOTInductor package shim: libtorch's AOTIModelPackageLoader behind a C ABI. See
// aoti_package.h.
#include "shim_common.h"
#include "aoti_package.h"

#include <ATen/Tensor.h>
#include <c10/util/Exception.h>
#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

struct replay_aoti_package {
  std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader;
  std::vector<at::Tensor> outputs;
};

namespace {

using replay_shim::dup_string;
using replay_shim::guarded;
using replay_shim::json_escape;
using replay_shim::set_error;

}  // namespace

extern "C" {

char* replay_aoti_package_metadata(const char* path, const char* model_name, char** error) {
  return guarded(error, static_cast<char*>(nullptr), [&]() -> char* {
    auto metadata = torch::inductor::AOTIModelPackageLoader::load_metadata_from_package(path, model_name);
    // Sorted, so the JSON is the same from run to run.
    std::map<std::string, std::string> sorted(metadata.begin(), metadata.end());
    std::string out = "{";
    for (const auto& [key, value] : sorted) {
      if (out.size() > 1) out += ",";
      out += "\"" + json_escape(key) + "\":\"" + json_escape(value) + "\"";
    }
    return dup_string(out + "}");
  });
}

replay_aoti_package* replay_aoti_package_load(const char* path, const char* model_name,
                                              int32_t device_index, char** error) {
  return guarded(error, static_cast<replay_aoti_package*>(nullptr), [&]() -> replay_aoti_package* {
    auto loader = std::make_unique<torch::inductor::AOTIModelPackageLoader>(
        path, model_name, /*run_single_threaded=*/false, /*num_runners=*/1,
        static_cast<c10::DeviceIndex>(device_index));
    return new replay_aoti_package{std::move(loader), {}};
  });
}

int64_t replay_aoti_package_run(replay_aoti_package* package, void* const* inputs, size_t ninputs,
                                int32_t keep_outputs, char** error) {
  return guarded(error, static_cast<int64_t>(-1), [&]() -> int64_t {
    TORCH_CHECK(package != nullptr, "replay_aoti_package_run: null package");
    std::vector<at::Tensor> args;
    args.reserve(ninputs);
    for (size_t i = 0; i < ninputs; ++i) args.push_back(*static_cast<at::Tensor*>(inputs[i]));
    // A null stream: libtorch's current stream on a CUDA device (the runner asks for it).
    std::vector<at::Tensor> outputs = package->loader->run(args, nullptr);
    auto count = static_cast<int64_t>(outputs.size());
    if (keep_outputs) package->outputs = std::move(outputs);
    else package->outputs.clear();
    return count;
  });
}

void* replay_aoti_package_output(replay_aoti_package* package, size_t index) {
  if (!package || index >= package->outputs.size()) return nullptr;
  return new at::Tensor(package->outputs[index]);
}

// The loader's destructor (noexcept) removes the folder it unpacked the package into.
void replay_aoti_package_free(replay_aoti_package* package) { delete package; }

}  // extern "C"
