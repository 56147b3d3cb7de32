// The figures of libtorch's device allocator (the CUDA caching allocator
// on NVIDIA GPUs), which tch does not expose. Every entry point catches
// what libtorch throws (no accelerator, a bad device index) and returns it
// as a message: an exception must not cross into Rust.

#include <ATen/Context.h>
#include <ATen/DeviceAccelerator.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <exception>
#include <string>

namespace {

// Why libtorch_cuda, present beside libtorch_cpu, did not load; empty
// when it loaded or is not there. A function's static, so that it is
// constructed before the loader below writes it, whatever the order of
// the initializers.
std::string& cuda_load_error() {
  static std::string error;
  return error;
}

// libtorch_cuda registers CUDA with libtorch as it loads, but a program
// calls nothing in it, so a linker that drops libraries nothing calls
// (--as-needed, what rustc asks for) leaves it out of the executable and
// CUDA is unavailable. It is loaded here, before main, from beside the
// libtorch_cpu in use, as Python's torch loads it. A CPU build has none.
__attribute__((constructor)) void load_torch_cuda() {
  if (dlopen("libtorch_cuda.so", RTLD_NOLOAD | RTLD_NOW) != nullptr) {
    return;  // linked already
  }
  Dl_info info;
  auto anchor = reinterpret_cast<void*>(&at::accelerator::deviceCount);
  if (dladdr(anchor, &info) == 0 || info.dli_fname == nullptr) {
    return;
  }
  std::string path(info.dli_fname);
  auto slash = path.rfind('/');
  if (slash == std::string::npos) {
    return;
  }
  std::string cuda = path.substr(0, slash + 1) + "libtorch_cuda.so";
  if (access(cuda.c_str(), F_OK) != 0) {
    return;
  }
  if (dlopen(cuda.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    const char* why = dlerror();
    cuda_load_error() = cuda + " did not load: " + (why != nullptr ? why : "unknown error");
  }
}

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
      if (!cuda_load_error().empty()) {
        put(message, len, cuda_load_error().c_str());
        return -1;
      }
      return 0;
    }
    put(name, name_len, c10::DeviceTypeName(*type, true).c_str());
    // The device allocator is made when the accelerator is first used:
    // until then its statistics and their reset refuse every device. This
    // makes it (no device context yet), so that a case that is the first
    // to use the device has its peak counted from its start.
    at::globalContext().lazyInitDevice(*type);
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

// 1 when the current stream of `device` has work queued that has not
// finished, 0 when it has none.
int nnbench_torch_busy(int device, char* message, size_t len) {
  return guarded(message, len, [&]() -> int {
    auto stream = at::accelerator::getCurrentStream(static_cast<c10::DeviceIndex>(device));
    return stream.query() ? 0 : 1;
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
