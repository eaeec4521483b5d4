// The profiler session of the host measurement: see profiler.h.
#include "profiler.h"

#include <kineto/ActivityType.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <set>

#include "shim_common.h"

using replay_shim::guarded;
using torch::profiler::impl::ActivityType;
using torch::profiler::impl::ExperimentalConfig;
using torch::profiler::impl::ProfilerConfig;
using torch::profiler::impl::ProfilerState;

extern "C" {

int replay_profiler_start(int with_cuda, char** error) {
  return guarded(error, -1, [&]() -> int {
    // torch.profiler.profile's config() with record_shapes=True and every other option at its
    // default (profile_memory, with_stack, with_flops, with_modules off; _ExperimentalConfig()).
    ProfilerConfig config(ProfilerState::KINETO, /*report_input_shapes=*/true,
                          /*profile_memory=*/false, /*with_stack=*/false, /*with_flops=*/false,
                          /*with_modules=*/false, ExperimentalConfig());
    std::set<ActivityType> activities{ActivityType::CPU};
    if (with_cuda) activities.insert(ActivityType::CUDA);
    // What _KinetoProfile.start() does: prepare the trace, then start it.
    torch::autograd::profiler::prepareProfiler(config, activities);
    torch::autograd::profiler::enableProfiler(config, activities);
    return 0;
  });
}

int replay_profiler_stop(replay_profiler_counts* counts, char** error) {
  return guarded(error, -1, [&]() -> int {
    TORCH_CHECK(counts != nullptr, "replay_profiler_stop: null counts");
    auto result = torch::autograd::profiler::disableProfiler();
    replay_profiler_counts c{0, 0, 0, 0};
    if (result) {
      for (const auto& event : result->events()) {
        switch (static_cast<libkineto::ActivityType>(event.activityType())) {
          case libkineto::ActivityType::CPU_OP:
            c.cpu_ops += 1;
            if (event.hasShapes()) c.cpu_ops_with_shapes += 1;
            break;
          case libkineto::ActivityType::CUDA_RUNTIME:
          case libkineto::ActivityType::CUDA_DRIVER:
            c.runtime += 1;
            break;
          default:
            c.other += 1;
        }
      }
    }
    *counts = c;
    return 0;
  });
}

}  // extern "C"
