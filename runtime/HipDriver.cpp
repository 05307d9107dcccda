// HipDriver: see HipDriver.h. The same shape as CudaDriver.cpp: FIXBITS_HIP_FUNCTIONS
// (HipApi.h) expands into dlsym'ed pointers and every call goes through FIXBITS_HIP,
// which maps a non-zero hipError_t through driver_error() with hipGetErrorName and
// hipGetErrorString. HIP binds the device per thread, so each call starts with
// hipSetDevice(ordinal). FIXBITS_HIP_OPTIONAL_FUNCTIONS resolve to null when the
// runtime lacks them, and the call that needs one says so (Unimplemented).
#include "runtime/HipDriver.h"

#include <dlfcn.h>

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "runtime/DriverError.h"
#include "runtime/HipApi.h"

namespace fixbits::runtime {
namespace {

using namespace hip_api;  // NOLINT: the table's types

struct HipLibrary {
  std::string path;  // the name it was opened by, for messages
#define FIXBITS_DECLARE(ret, name, params) ret(*name) params = nullptr;
  FIXBITS_HIP_FUNCTIONS(FIXBITS_DECLARE)
  FIXBITS_HIP_OPTIONAL_FUNCTIONS(FIXBITS_DECLARE)
#undef FIXBITS_DECLARE

  absl::Status error(std::string_view call, hipError_t r) const {
    const char* name = hipGetErrorName ? hipGetErrorName(r) : nullptr;
    const char* desc = hipGetErrorString ? hipGetErrorString(r) : nullptr;
    return driver_error(DriverApi::kHip, call, r, name, desc);
  }
};

#define FIXBITS_HIP(fn, ...)                                            \
  do {                                                                  \
    const hipError_t fixbits_hip_result = lib_->fn(__VA_ARGS__);        \
    if (fixbits_hip_result != hipSuccess) return lib_->error(#fn, fixbits_hip_result); \
  } while (0)

absl::StatusOr<std::shared_ptr<const HipLibrary>> load_hip_library(const std::string& library) {
  static absl::Mutex mu;
  static auto* loaded =
      new std::vector<std::pair<std::string, std::shared_ptr<const HipLibrary>>>();
  absl::MutexLock lock(&mu);
  for (const auto& [name, lib] : *loaded) {
    if (name == library) return lib;
  }
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::UnavailableError(absl::StrFormat("no HIP runtime found (%s): %s", library,
                                                  why ? why : "dlopen gave no reason"));
  }
  auto lib = std::make_shared<HipLibrary>();
  lib->path = library;
#define FIXBITS_RESOLVE(ret, name, params)                                                  \
  lib->name = reinterpret_cast<ret(*) params>(dlsym(handle, #name));                        \
  if (lib->name == nullptr) {                                                               \
    return absl::UnavailableError(absl::StrFormat(                                          \
        "The HIP runtime %s lacks the function %s; it is older than fixbits supports.",     \
        library, #name));                                                                   \
  }
  FIXBITS_HIP_FUNCTIONS(FIXBITS_RESOLVE)
#undef FIXBITS_RESOLVE
#define FIXBITS_RESOLVE_OPTIONAL(ret, name, params) \
  lib->name = reinterpret_cast<ret(*) params>(dlsym(handle, #name));
  FIXBITS_HIP_OPTIONAL_FUNCTIONS(FIXBITS_RESOLVE_OPTIONAL)
#undef FIXBITS_RESOLVE_OPTIONAL
  const hipError_t r = lib->hipInit(0);
  if (r != hipSuccess) return lib->error("hipInit", r);
  loaded->emplace_back(library, lib);
  return std::shared_ptr<const HipLibrary>(lib);
}

class HipDriver final : public Driver {
 public:
  HipDriver(std::shared_ptr<const HipLibrary> lib, int ordinal, DeviceInfo info)
      : lib_(std::move(lib)), ordinal_(ordinal), info_(std::move(info)) {}

  const DeviceInfo& info() const override { return info_; }

  absl::StatusOr<void*> module_load(std::string_view image) override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    std::string bytes(image);
    hipModule_t module = nullptr;
    FIXBITS_HIP(hipModuleLoadData, &module, bytes.data());
    return static_cast<void*>(module);
  }

  absl::Status module_unload(void* module) override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    FIXBITS_HIP(hipModuleUnload, static_cast<hipModule_t>(module));
    return absl::OkStatus();
  }

  absl::StatusOr<void*> module_function(void* module, const std::string& name) override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    hipFunction_t fn = nullptr;
    FIXBITS_HIP(hipModuleGetFunction, &fn, static_cast<hipModule_t>(module), name.c_str());
    return static_cast<void*>(fn);
  }

  absl::StatusOr<uint64_t> mem_alloc(size_t bytes) override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    void* p = nullptr;
    FIXBITS_HIP(hipMalloc, &p, bytes);
    return reinterpret_cast<uint64_t>(p);
  }

  absl::Status mem_free(uint64_t ptr) override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    FIXBITS_HIP(hipFree, reinterpret_cast<void*>(ptr));
    return absl::OkStatus();
  }

  absl::Status copy_to_device(uint64_t dst, const void* src, size_t bytes, void* stream) override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    void* d = reinterpret_cast<void*>(dst);
    void* s = const_cast<void*>(src);
    if (stream == nullptr) {
      FIXBITS_HIP(hipMemcpyHtoD, d, s, bytes);
    } else {
      FIXBITS_HIP(hipMemcpyHtoDAsync, d, s, bytes, static_cast<hipStream_t>(stream));
    }
    return absl::OkStatus();
  }

  absl::Status copy_to_host(void* dst, uint64_t src, size_t bytes, void* stream) override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    void* s = reinterpret_cast<void*>(src);
    if (stream == nullptr) {
      FIXBITS_HIP(hipMemcpyDtoH, dst, s, bytes);
    } else {
      FIXBITS_HIP(hipMemcpyDtoHAsync, dst, s, bytes, static_cast<hipStream_t>(stream));
    }
    return absl::OkStatus();
  }

  absl::Status memset8(uint64_t dst, uint8_t value, size_t bytes) override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    FIXBITS_HIP(hipMemsetD8, reinterpret_cast<void*>(dst), value, bytes);
    return absl::OkStatus();
  }

  absl::StatusOr<void*> stream_create() override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    hipStream_t s = nullptr;
    FIXBITS_HIP(hipStreamCreateWithFlags, &s, hipStreamNonBlocking);
    return static_cast<void*>(s);
  }

  absl::Status stream_destroy(void* stream) override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    FIXBITS_HIP(hipStreamDestroy, static_cast<hipStream_t>(stream));
    return absl::OkStatus();
  }

  absl::Status stream_synchronize(void* stream) override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    FIXBITS_HIP(hipStreamSynchronize, static_cast<hipStream_t>(stream));
    return absl::OkStatus();
  }

  absl::StatusOr<void*> event_create() override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    hipEvent_t e = nullptr;
    FIXBITS_HIP(hipEventCreate, &e);
    return static_cast<void*>(e);
  }

  absl::Status event_destroy(void* event) override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    FIXBITS_HIP(hipEventDestroy, static_cast<hipEvent_t>(event));
    return absl::OkStatus();
  }

  absl::Status event_record(void* event, void* stream) override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    FIXBITS_HIP(hipEventRecord, static_cast<hipEvent_t>(event), static_cast<hipStream_t>(stream));
    return absl::OkStatus();
  }

  absl::Status event_synchronize(void* event) override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    FIXBITS_HIP(hipEventSynchronize, static_cast<hipEvent_t>(event));
    return absl::OkStatus();
  }

  absl::StatusOr<float> event_elapsed_ms(void* start, void* stop) override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    float ms = 0;
    FIXBITS_HIP(hipEventElapsedTime, &ms, static_cast<hipEvent_t>(start),
                static_cast<hipEvent_t>(stop));
    return ms;
  }

  absl::StatusOr<std::vector<size_t>> param_sizes(void*) override {
    return absl::UnimplementedError("The HIP runtime cannot list a kernel's parameters.");
  }

  absl::StatusOr<uint32_t> static_shared_bytes(void* function) override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    int bytes = 0;
    // Not every HIP answers this for a module's function; then the kernel's static bytes
    // are unknown (AMD has no opt-in, so only the total check loses them).
    const hipError_t r = lib_->hipFuncGetAttribute(&bytes, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                                                   static_cast<hipFunction_t>(function));
    if (r != hipSuccess) {
      return absl::UnimplementedError(lib_->error("hipFuncGetAttribute", r).message());
    }
    return static_cast<uint32_t>(bytes);
  }

  absl::Status set_max_dynamic_shared(void* function, uint32_t bytes) override {
    // AMD has no opt-in: the per-block limit is the whole LDS, checked by launch().
    return absl::OkStatus();
  }

  // HIP's calculator takes no grid, and AMD has no clusters: cluster_blocks and
  // max_active_clusters stay 0. Registers and local bytes are 0 where
  // hipFuncGetAttribute cannot say for a module's function (DeviceInfo.h's Occupancy).
  absl::StatusOr<Occupancy> occupancy(void* function, const uint32_t grid[3],
                                      const uint32_t block[3],
                                      uint32_t dynamic_shared_bytes) override {
    if (lib_->hipModuleOccupancyMaxActiveBlocksPerMultiprocessor == nullptr) {
      return absl::UnimplementedError(absl::StrFormat(
          "The HIP runtime %s lacks the function "
          "hipModuleOccupancyMaxActiveBlocksPerMultiprocessor, so it has no occupancy "
          "calculator.",
          lib_->path));
    }
    FIXBITS_HIP(hipSetDevice, ordinal_);
    const auto f = static_cast<hipFunction_t>(function);
    Occupancy o;
    FIXBITS_HIP(hipModuleOccupancyMaxActiveBlocksPerMultiprocessor, &o.blocks_per_multiprocessor,
                f, static_cast<int>(block[0] * block[1] * block[2]),
                size_t{dynamic_shared_bytes});
    o.registers_per_thread = attribute_or_zero(f, HIP_FUNC_ATTRIBUTE_NUM_REGS);
    o.local_bytes_per_thread = attribute_or_zero(f, HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
    return o;
  }

  absl::Status launch(void* function, const uint32_t grid[3], const uint32_t block[3],
                      uint32_t dynamic_shared_bytes, void* stream, void** args) override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    FIXBITS_HIP(hipModuleLaunchKernel, static_cast<hipFunction_t>(function), grid[0], grid[1],
                grid[2], block[0], block[1], block[2], dynamic_shared_bytes,
                static_cast<hipStream_t>(stream), args, nullptr);
    return absl::OkStatus();
  }

  absl::Status synchronize() override {
    FIXBITS_HIP(hipSetDevice, ordinal_);
    FIXBITS_HIP(hipDeviceSynchronize);
    return absl::OkStatus();
  }

 private:
  // `attr` of `f`, or 0 where hipFuncGetAttribute fails (not every HIP answers every
  // attribute for a module's function; the device is already set).
  int attribute_or_zero(hipFunction_t f, hipFunction_attribute attr) const {
    int value = 0;
    if (lib_->hipFuncGetAttribute(&value, attr, f) != hipSuccess) return 0;
    return value;
  }

  std::shared_ptr<const HipLibrary> lib_;
  int ordinal_;
  DeviceInfo info_;
};

absl::StatusOr<DeviceInfo> query_device(const std::shared_ptr<const HipLibrary>& lib_,
                                        int ordinal) {
  DeviceInfo info;
  info.platform = Platform::kHip;
  info.ordinal = ordinal;
  char name[256] = {};
  FIXBITS_HIP(hipDeviceGetName, name, static_cast<int>(sizeof(name) - 1), ordinal);
  info.name = name;
  FIXBITS_HIP(hipDeviceComputeCapability, &info.cc_major, &info.cc_minor, ordinal);
  struct Attr {
    hipDeviceAttribute_t attr;
    int* out;
  };
  const Attr attrs[] = {
      {hipDeviceAttributeMultiprocessorCount, &info.multiprocessor_count},
      {hipDeviceAttributeWarpSize, &info.warp_size},
      {hipDeviceAttributeMaxThreadsPerBlock, &info.max_threads_per_block},
      {hipDeviceAttributeMaxSharedMemoryPerBlock, &info.max_shared_bytes_per_block},
  };
  for (const Attr& a : attrs) FIXBITS_HIP(hipDeviceGetAttribute, a.out, a.attr, ordinal);
  info.max_shared_bytes_per_block_optin = info.max_shared_bytes_per_block;
  size_t total = 0;
  FIXBITS_HIP(hipDeviceTotalMem, &total, ordinal);
  info.total_memory_bytes = total;
  FIXBITS_HIP(hipDriverGetVersion, &info.driver_version);
  return info;
}

}  // namespace

absl::StatusOr<std::shared_ptr<Driver>> open_hip_driver(int ordinal, const std::string& library) {
  absl::StatusOr<std::shared_ptr<const HipLibrary>> lib_or = load_hip_library(library);
  if (!lib_or.ok()) return lib_or.status();
  const std::shared_ptr<const HipLibrary>& lib_ = *lib_or;
  int count = 0;
  FIXBITS_HIP(hipGetDeviceCount, &count);
  if (ordinal < 0 || ordinal >= count) {
    return absl::NotFoundError(absl::StrFormat(
        "HIP device %d does not exist: the runtime reports %d device(s).", ordinal, count));
  }
  absl::StatusOr<DeviceInfo> info = query_device(lib_, ordinal);
  if (!info.ok()) return info.status();
  return std::shared_ptr<Driver>(std::make_shared<HipDriver>(lib_, ordinal, *std::move(info)));
}

}  // namespace fixbits::runtime
