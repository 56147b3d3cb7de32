// The figures of libtorch's device allocator (the CUDA caching allocator
// on NVIDIA GPUs), which tch does not expose. Every entry point catches
// what libtorch throws (no accelerator, a bad device index) and returns it
// as a message: an exception must not cross into Rust.

#include <ATen/DeviceAccelerator.h>

#include <cstdint>
#include <cstring>
#include <exception>

namespace {

void put(char* message, size_t len, const char* text) {
  if (message == nullptr || len == 0) {
    return;
  }
  std::strncpy(message, text, len - 1);
  message[len - 1] = '\0';
}

template <typename F>
int guarded(char* message, size_t len, F body) {
  try {
    return body();
  } catch (const std::exception& e) {
    put(message, len, e.what());
  } catch (...) {
    put(message, len, "unknown C++ exception");
  }
  return -1;
}

}  // namespace

extern "C" {

// How many devices the accelerator has (0 when libtorch has none, as a CPU
// build has not), and its name; -1 on error.
int nnbench_torch_devices(char* name, size_t name_len, char* message, size_t len) {
  return guarded(message, len, [&]() -> int {
    auto type = at::accelerator::getAccelerator(false);
    if (!type.has_value()) {
      return 0;
    }
    put(name, name_len, c10::DeviceTypeName(*type, true).c_str());
    return static_cast<int>(at::accelerator::deviceCount());
  });
}

// Allocated and reserved bytes of `device`, now and at their peak since the
// last reset: out[0..4] = allocated, allocated peak, reserved, reserved peak.
int nnbench_torch_memory(int device, int64_t* out, char* message, size_t len) {
  return guarded(message, len, [&]() -> int {
    auto stats = at::accelerator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
    const auto all = static_cast<size_t>(c10::CachingDeviceAllocator::StatType::AGGREGATE);
    out[0] = stats.allocated_bytes[all].current;
    out[1] = stats.allocated_bytes[all].peak;
    out[2] = stats.reserved_bytes[all].current;
    out[3] = stats.reserved_bytes[all].peak;
    return 0;
  });
}

int nnbench_torch_reset_peak(int device, char* message, size_t len) {
  return guarded(message, len, [&]() -> int {
    at::accelerator::resetPeakStats(static_cast<c10::DeviceIndex>(device));
    return 0;
  });
}

int nnbench_torch_synchronize(int device, char* message, size_t len) {
  return guarded(message, len, [&]() -> int {
    at::accelerator::synchronizeDevice(static_cast<c10::DeviceIndex>(device));
    return 0;
  });
}

// Hands the blocks the caching allocator keeps reserved back to the driver.
int nnbench_torch_empty_cache(char* message, size_t len) {
  return guarded(message, len, [&]() -> int {
    at::accelerator::emptyCache();
    return 0;
  });
}

}  // extern "C"
