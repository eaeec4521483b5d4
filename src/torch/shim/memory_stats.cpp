// Memory counters: a counting CPU allocator and the CUDA caching allocator's peaks. See
// memory_stats.h.
#include <mutex>
#include <unordered_map>
#include "memory_stats.h"

#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#ifdef REPLAY_WITH_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>

namespace {

char* dup_message(const std::string& s) {
  char* out = static_cast<char*>(std::malloc(s.size() + 1));
  if (out) std::memcpy(out, s.c_str(), s.size() + 1);
  return out;
}

template <typename F>
int guarded(char** error, F&& f) {
  try {
    f();
    return 0;
  } catch (const c10::Error& e) {
    if (error) *error = dup_message(e.what_without_backtrace());
  } catch (const std::exception& e) {
    if (error) *error = dup_message(e.what());
  } catch (...) {
    if (error) *error = dup_message("unknown C++ exception");
  }
  return -1;
}

// Wraps the allocator that was current before it (libtorch's default CPU allocator) and counts
// the bytes of what it hands out. Each DataPtr it returns carries its own data pointer as its
// context, as c10's raw_allocate requires (oneDNN's bfloat16 matmuls and the packed int8/int4
// kernels allocate through it); a table from that pointer to the inner DataPtr and the size
// lets the deleter subtract the size and then let the inner DataPtr free the memory with its
// own deleter. Storage allocated before the install keeps its own deleter, so it is freed as
// before and never counted (neither up nor down).
class CountingCpuAllocator final : public c10::Allocator {
 public:
  explicit CountingCpuAllocator(c10::Allocator* inner) : inner_(inner) {}

  c10::DataPtr allocate(size_t n) override {
    c10::DataPtr inner = inner_->allocate(n);
    void* data = inner.get();
    c10::Device device = inner.device();
    if (data == nullptr) {
      // A zero-byte allocation: nothing to count, nothing to look up when it is freed.
      return inner;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      allocations_[data] = Allocation{std::move(inner), n};
    }
    add(n);
    return c10::DataPtr(data, data, &CountingCpuAllocator::release, device);
  }

  c10::DeleterFnPtr raw_deleter() const override { return &CountingCpuAllocator::release; }

  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }

  uint64_t live() const { return static_cast<uint64_t>(live_.load()); }
  uint64_t peak() const { return static_cast<uint64_t>(peak_.load()); }
  void reset_peak() { peak_.store(live_.load()); }

 private:
  struct Allocation {
    c10::DataPtr inner;
    size_t bytes = 0;
  };

  static void release(void* data);

  void forget(void* data) {
    Allocation allocation;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto found = allocations_.find(data);
      if (found == allocations_.end()) return;
      allocation = std::move(found->second);
      allocations_.erase(found);
    }
    live_.fetch_sub(static_cast<int64_t>(allocation.bytes));
    // `allocation.inner` frees the memory with the inner deleter as it goes out of scope.
  }

  void add(size_t n) {
    int64_t now = live_.fetch_add(static_cast<int64_t>(n)) + static_cast<int64_t>(n);
    int64_t seen = peak_.load();
    while (now > seen && !peak_.compare_exchange_weak(seen, now)) {
    }
  }

  c10::Allocator* inner_;
  std::mutex mutex_;
  std::unordered_map<void*, Allocation> allocations_;
  std::atomic<int64_t> live_{0};
  std::atomic<int64_t> peak_{0};
};

// Never destroyed: storage allocated through it may outlive every static destructor.
std::atomic<CountingCpuAllocator*> g_counter{nullptr};
// The one counting allocator, for its deleter (set before it hands anything out, unlike
// g_counter, which is set only once the install is known to have taken).
std::atomic<CountingCpuAllocator*> g_allocator{nullptr};

void CountingCpuAllocator::release(void* data) {
  if (auto* allocator = g_allocator.load()) allocator->forget(data);
}
std::once_flag g_install_once;
std::string g_install_error;

// Priority for c10::SetCPUAllocator: libtorch registers its default CPU allocator at 0, and a
// set with a lower priority than the current one is ignored, so the install is checked below.
constexpr uint8_t kCounterPriority = 1;

}  // namespace

extern "C" {

int replay_cpu_counter_install(char** error) {
  std::call_once(g_install_once, [] {
    int rc = guarded(nullptr, [] {
      c10::Allocator* inner = c10::GetCPUAllocator();
      auto* counter = new CountingCpuAllocator(inner);
      g_allocator.store(counter);
      c10::SetCPUAllocator(counter, kCounterPriority);
      if (c10::GetCPUAllocator() != counter) {
        g_install_error =
            "libtorch kept its CPU allocator (another one was installed with a higher priority)";
        return;
      }
      g_counter.store(counter);
    });
    if (rc != 0) g_install_error = "installing the counting CPU allocator failed";
  });
  if (g_counter.load() == nullptr) {
    if (error) *error = dup_message(g_install_error.empty() ? "the counting CPU allocator is not installed" : g_install_error);
    return -1;
  }
  return 0;
}

int replay_cpu_counter_installed(void) { return g_counter.load() != nullptr ? 1 : 0; }

uint64_t replay_cpu_counter_live(void) {
  auto* counter = g_counter.load();
  return counter ? counter->live() : 0;
}

uint64_t replay_cpu_counter_peak(void) {
  auto* counter = g_counter.load();
  return counter ? counter->peak() : 0;
}

void replay_cpu_counter_reset_peak(void) {
  auto* counter = g_counter.load();
  if (counter) counter->reset_peak();
}

int replay_cuda_memory_peak(int device, uint64_t* allocated, uint64_t* reserved, char** error) {
#ifdef REPLAY_WITH_TORCH_CUDA
  return guarded(error, [&] {
    auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
    constexpr auto all = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
    *allocated = static_cast<uint64_t>(stats.allocated_bytes[all].peak);
    *reserved = static_cast<uint64_t>(stats.reserved_bytes[all].peak);
  });
#else
  (void)device;
  (void)allocated;
  (void)reserved;
  if (error) *error = dup_message("CUDA memory statistics are unavailable: replay was built against a libtorch without CUDA");
  return -1;
#endif
}

int replay_cuda_memory_reset_peak(int device, char** error) {
#ifdef REPLAY_WITH_TORCH_CUDA
  return guarded(error, [&] {
    c10::cuda::CUDACachingAllocator::resetPeakStats(static_cast<c10::DeviceIndex>(device));
  });
#else
  (void)device;
  if (error) *error = dup_message("CUDA memory statistics are unavailable: replay was built against a libtorch without CUDA");
  return -1;
#endif
}

}  // extern "C"
