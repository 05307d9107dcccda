// CudaDriver: see CudaDriver.h. The function table FIXBITS_CUDA_FUNCTIONS (CudaApi.h)
// expands into one pointer per driver function, resolved by name with dlsym:
//   X(CUresult, cuMemAlloc_v2, (CUdeviceptr*, size_t))
//   -> CUresult (*cuMemAlloc_v2)(CUdeviceptr*, size_t);  = dlsym(h, "cuMemAlloc_v2")
// Every call goes through FIXBITS_CU, which turns a non-zero CUresult into
// driver_error() with the call's name, cuGetErrorName and cuGetErrorString.
#include "runtime/CudaDriver.h"

#include <dlfcn.h>

#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "runtime/CudaApi.h"
#include "runtime/DriverError.h"

namespace fixbits::runtime {
namespace {

using namespace cuda_api;  // NOLINT: the table's types

struct CudaLibrary {
#define FIXBITS_DECLARE(ret, name, params) ret(*name) params = nullptr;
  FIXBITS_CUDA_FUNCTIONS(FIXBITS_DECLARE)
  FIXBITS_CUDA_OPTIONAL_FUNCTIONS(FIXBITS_DECLARE)
#undef FIXBITS_DECLARE

  absl::Status error(std::string_view call, CUresult r, std::string_view detail = {}) const {
    const char* name = nullptr;
    const char* desc = nullptr;
    if (cuGetErrorName == nullptr || cuGetErrorName(r, &name) != CUDA_SUCCESS) name = nullptr;
    if (cuGetErrorString == nullptr || cuGetErrorString(r, &desc) != CUDA_SUCCESS) desc = nullptr;
    return driver_error(DriverApi::kCuda, call, r, name, desc, detail);
  }
};

#define FIXBITS_CU(fn, ...)                                           \
  do {                                                                \
    const CUresult fixbits_cu_result = lib_->fn(__VA_ARGS__);         \
    if (fixbits_cu_result != CUDA_SUCCESS) return lib_->error(#fn, fixbits_cu_result); \
  } while (0)

// Opens `library`, resolves the table and runs cuInit(0). One CudaLibrary per library
// name for the process (never dlclose'd: the driver must outlive every handle).
absl::StatusOr<std::shared_ptr<const CudaLibrary>> load_cuda_library(const std::string& library) {
  static absl::Mutex mu;
  static auto* loaded =
      new std::vector<std::pair<std::string, std::shared_ptr<const CudaLibrary>>>();
  absl::MutexLock lock(&mu);
  for (const auto& [name, lib] : *loaded) {
    if (name == library) return lib;
  }
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::UnavailableError(absl::StrFormat("no CUDA driver found (%s): %s", library,
                                                  why ? why : "dlopen gave no reason"));
  }
  auto lib = std::make_shared<CudaLibrary>();
#define FIXBITS_RESOLVE(ret, name, params)                                                  \
  lib->name = reinterpret_cast<ret(*) params>(dlsym(handle, #name));                        \
  if (lib->name == nullptr) {                                                               \
    return absl::UnavailableError(absl::StrFormat(                                          \
        "The CUDA driver %s lacks the function %s; it is older than fixbits supports.",     \
        library, #name));                                                                   \
  }
  FIXBITS_CUDA_FUNCTIONS(FIXBITS_RESOLVE)
#undef FIXBITS_RESOLVE
#define FIXBITS_RESOLVE_OPTIONAL(ret, name, params) \
  lib->name = reinterpret_cast<ret(*) params>(dlsym(handle, #name));
  FIXBITS_CUDA_OPTIONAL_FUNCTIONS(FIXBITS_RESOLVE_OPTIONAL)
#undef FIXBITS_RESOLVE_OPTIONAL
  const CUresult r = lib->cuInit(0);
  if (r != CUDA_SUCCESS) return lib->error("cuInit", r);
  loaded->emplace_back(library, lib);
  return std::shared_ptr<const CudaLibrary>(lib);
}

class CudaDriver final : public Driver {
 public:
  CudaDriver(std::shared_ptr<const CudaLibrary> lib, CUdevice dev, CUcontext ctx, DeviceInfo info)
      : lib_(std::move(lib)), dev_(dev), ctx_(ctx), info_(std::move(info)) {}

  ~CudaDriver() override { (void)lib_->cuDevicePrimaryCtxRelease_v2(dev_); }

  const DeviceInfo& info() const override { return info_; }

  // The JIT's error log, as the two options every JIT call here passes (values points
  // into buffer, so a JitLog is not copied).
  struct JitLog {
    JitLog() = default;
    JitLog(const JitLog&) = delete;
    JitLog& operator=(const JitLog&) = delete;
    std::vector<char> buffer = std::vector<char>(16 * 1024, '\0');
    // The size option's value travels in the pointer slot, as the driver API specifies.
    CUjit_option options[2] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[2] = {buffer.data(), reinterpret_cast<void*>(buffer.size() - 1)};
    // The failure's detail: the log without trailing blanks.
    std::string detail() const {
      std::string log(buffer.data());
      while (!log.empty() && (log.back() == '\n' || log.back() == ' ')) log.pop_back();
      return log.empty() ? std::string("The JIT error log is empty.") : absl::StrFormat("JIT error log: %s", log);
    }
  };

  absl::StatusOr<void*> module_load(std::string_view image) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    std::string text(image);  // the driver reads PTX up to a NUL
    JitLog log;
    CUmodule module = nullptr;
    const CUresult r = lib_->cuModuleLoadDataEx(&module, text.c_str(), 2, log.options, log.values);
    if (r != CUDA_SUCCESS) return lib_->error("cuModuleLoadDataEx", r, log.detail());
    return static_cast<void*>(module);
  }

  absl::StatusOr<std::string> compile_module(std::string_view image) override {
    if (lib_->cuLinkCreate_v2 == nullptr || lib_->cuLinkAddData_v2 == nullptr ||
        lib_->cuLinkComplete == nullptr || lib_->cuLinkDestroy == nullptr) {
      return absl::UnimplementedError("This CUDA driver has no cuLink* functions.");
    }
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    std::string text(image);  // NUL-terminated, as for module_load
    JitLog log;
    CUlinkState link = nullptr;
    FIXBITS_CU(cuLinkCreate_v2, 2, log.options, log.values, &link);
    // The cubin lives in `link` until cuLinkDestroy: copied out first.
    absl::StatusOr<std::string> cubin = [&]() -> absl::StatusOr<std::string> {
      CUresult r = lib_->cuLinkAddData_v2(link, CU_JIT_INPUT_PTX, text.data(), text.size() + 1,
                                          "fixbits.ptx", 0, nullptr, nullptr);
      if (r != CUDA_SUCCESS) {
        return lib_->error("cuLinkAddData_v2", r, log.detail());
      }
      void* out = nullptr;
      size_t size = 0;
      r = lib_->cuLinkComplete(link, &out, &size);
      if (r != CUDA_SUCCESS) {
        return lib_->error("cuLinkComplete", r, log.detail());
      }
      return std::string(static_cast<const char*>(out), size);
    }();
    const CUresult destroyed = lib_->cuLinkDestroy(link);
    if (!cubin.ok()) return cubin.status();
    if (destroyed != CUDA_SUCCESS) return lib_->error("cuLinkDestroy", destroyed);
    return cubin;
  }

  absl::Status module_unload(void* module) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    FIXBITS_CU(cuModuleUnload, static_cast<CUmodule>(module));
    return absl::OkStatus();
  }

  absl::StatusOr<void*> module_function(void* module, const std::string& name) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    CUfunction fn = nullptr;
    FIXBITS_CU(cuModuleGetFunction, &fn, static_cast<CUmodule>(module), name.c_str());
    return static_cast<void*>(fn);
  }

  absl::StatusOr<uint64_t> mem_alloc(size_t bytes) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    CUdeviceptr p = 0;
    FIXBITS_CU(cuMemAlloc_v2, &p, bytes);
    return uint64_t{p};
  }

  absl::Status mem_free(uint64_t ptr) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    FIXBITS_CU(cuMemFree_v2, CUdeviceptr{ptr});
    return absl::OkStatus();
  }

  absl::Status copy_to_device(uint64_t dst, const void* src, size_t bytes, void* stream) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    if (stream == nullptr) {
      FIXBITS_CU(cuMemcpyHtoD_v2, CUdeviceptr{dst}, src, bytes);
    } else {
      FIXBITS_CU(cuMemcpyHtoDAsync_v2, CUdeviceptr{dst}, src, bytes, static_cast<CUstream>(stream));
    }
    return absl::OkStatus();
  }

  absl::Status copy_to_host(void* dst, uint64_t src, size_t bytes, void* stream) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    if (stream == nullptr) {
      FIXBITS_CU(cuMemcpyDtoH_v2, dst, CUdeviceptr{src}, bytes);
    } else {
      FIXBITS_CU(cuMemcpyDtoHAsync_v2, dst, CUdeviceptr{src}, bytes, static_cast<CUstream>(stream));
    }
    return absl::OkStatus();
  }

  absl::Status memset8(uint64_t dst, uint8_t value, size_t bytes) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    FIXBITS_CU(cuMemsetD8_v2, CUdeviceptr{dst}, value, bytes);
    return absl::OkStatus();
  }

  absl::StatusOr<void*> stream_create() override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    CUstream s = nullptr;
    FIXBITS_CU(cuStreamCreate, &s, CU_STREAM_NON_BLOCKING);
    return static_cast<void*>(s);
  }

  absl::Status stream_destroy(void* stream) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    FIXBITS_CU(cuStreamDestroy_v2, static_cast<CUstream>(stream));
    return absl::OkStatus();
  }

  absl::Status stream_synchronize(void* stream) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    FIXBITS_CU(cuStreamSynchronize, static_cast<CUstream>(stream));
    return absl::OkStatus();
  }

  absl::StatusOr<void*> event_create() override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    CUevent e = nullptr;
    FIXBITS_CU(cuEventCreate, &e, CU_EVENT_DEFAULT);
    return static_cast<void*>(e);
  }

  absl::Status event_destroy(void* event) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    FIXBITS_CU(cuEventDestroy_v2, static_cast<CUevent>(event));
    return absl::OkStatus();
  }

  absl::Status event_record(void* event, void* stream) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    FIXBITS_CU(cuEventRecord, static_cast<CUevent>(event), static_cast<CUstream>(stream));
    return absl::OkStatus();
  }

  absl::Status event_synchronize(void* event) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    FIXBITS_CU(cuEventSynchronize, static_cast<CUevent>(event));
    return absl::OkStatus();
  }

  absl::StatusOr<float> event_elapsed_ms(void* start, void* stop) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    float ms = 0;
    FIXBITS_CU(cuEventElapsedTime, &ms, static_cast<CUevent>(start), static_cast<CUevent>(stop));
    return ms;
  }

  absl::StatusOr<std::vector<size_t>> param_sizes(void* function) override {
    if (lib_->cuFuncGetParamInfo == nullptr) {
      return absl::UnimplementedError(
          "This CUDA driver has no cuFuncGetParamInfo (it needs CUDA 12.4 or newer).");
    }
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    std::vector<size_t> sizes;
    // The driver answers CUDA_ERROR_INVALID_VALUE one past the last parameter.
    for (size_t i = 0; i < 4096; ++i) {
      size_t offset = 0, size = 0;
      const CUresult r =
          lib_->cuFuncGetParamInfo(static_cast<CUfunction>(function), i, &offset, &size);
      if (r == 1) return sizes;
      if (r != CUDA_SUCCESS) return lib_->error("cuFuncGetParamInfo", r);
      sizes.push_back(size);
    }
    return absl::InternalError("cuFuncGetParamInfo reported more than 4096 kernel parameters.");
  }

  absl::StatusOr<uint32_t> static_shared_bytes(void* function) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    int bytes = 0;
    FIXBITS_CU(cuFuncGetAttribute, &bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
               static_cast<CUfunction>(function));
    return static_cast<uint32_t>(bytes);
  }

  absl::Status set_max_dynamic_shared(void* function, uint32_t bytes) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    FIXBITS_CU(cuFuncSetAttribute, static_cast<CUfunction>(function),
               CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, static_cast<int>(bytes));
    return absl::OkStatus();
  }

  absl::StatusOr<Occupancy> occupancy(void* function, const uint32_t grid[3],
                                      const uint32_t block[3],
                                      uint32_t dynamic_shared_bytes) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    const auto f = static_cast<CUfunction>(function);
    Occupancy o;
    FIXBITS_CU(cuOccupancyMaxActiveBlocksPerMultiprocessor, &o.blocks_per_multiprocessor, f,
               static_cast<int>(block[0] * block[1] * block[2]), size_t{dynamic_shared_bytes});
    FIXBITS_CU(cuFuncGetAttribute, &o.registers_per_thread, CU_FUNC_ATTRIBUTE_NUM_REGS, f);
    FIXBITS_CU(cuFuncGetAttribute, &o.local_bytes_per_thread, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f);
    FIXBITS_CU(cuFuncGetAttribute, &o.cluster_blocks, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, f);
    if (o.cluster_blocks > 0 && lib_->cuOccupancyMaxActiveClusters != nullptr) {
      // The kernel's own cluster size stands, so the config names none (no attributes).
      CUlaunchConfig config{};
      config.gridDimX = grid[0];
      config.gridDimY = grid[1];
      config.gridDimZ = grid[2];
      config.blockDimX = block[0];
      config.blockDimY = block[1];
      config.blockDimZ = block[2];
      config.sharedMemBytes = dynamic_shared_bytes;
      FIXBITS_CU(cuOccupancyMaxActiveClusters, &o.max_active_clusters, f, &config);
    }
    return o;
  }

  absl::Status launch(void* function, const uint32_t grid[3], const uint32_t block[3],
                      uint32_t dynamic_shared_bytes, void* stream, void** args) override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    FIXBITS_CU(cuLaunchKernel, static_cast<CUfunction>(function), grid[0], grid[1], grid[2],
               block[0], block[1], block[2], dynamic_shared_bytes,
               static_cast<CUstream>(stream), args, nullptr);
    return absl::OkStatus();
  }

  absl::Status synchronize() override {
    FIXBITS_CU(cuCtxSetCurrent, ctx_);
    FIXBITS_CU(cuCtxSynchronize);
    return absl::OkStatus();
  }

 private:
  std::shared_ptr<const CudaLibrary> lib_;
  CUdevice dev_;
  CUcontext ctx_;
  DeviceInfo info_;
};

// Queries everything DeviceInfo holds for `dev`.
absl::StatusOr<DeviceInfo> query_device(const std::shared_ptr<const CudaLibrary>& lib_,
                                        int ordinal, CUdevice dev) {
  DeviceInfo info;
  info.platform = Platform::kCuda;
  info.ordinal = ordinal;
  char name[256] = {};
  FIXBITS_CU(cuDeviceGetName, name, static_cast<int>(sizeof(name) - 1), dev);
  info.name = name;
  struct Attr {
    CUdevice_attribute attr;
    int* out;
  };
  const Attr attrs[] = {
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &info.multiprocessor_count},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &info.cc_major},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &info.cc_minor},
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &info.warp_size},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &info.max_threads_per_block},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &info.max_shared_bytes_per_block},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
       &info.max_shared_bytes_per_block_optin},
  };
  for (const Attr& a : attrs) FIXBITS_CU(cuDeviceGetAttribute, a.out, a.attr, dev);
  size_t total = 0;
  FIXBITS_CU(cuDeviceTotalMem_v2, &total, dev);
  info.total_memory_bytes = total;
  FIXBITS_CU(cuDriverGetVersion, &info.driver_version);
  info.arch = absl::StrFormat("sm_%d%d", info.cc_major, info.cc_minor);
  return info;
}

}  // namespace

absl::StatusOr<int> cuda_device_count(const std::string& library) {
  absl::StatusOr<std::shared_ptr<const CudaLibrary>> lib_or = load_cuda_library(library);
  if (!lib_or.ok()) return lib_or.status();
  const std::shared_ptr<const CudaLibrary>& lib_ = *lib_or;
  int count = 0;
  FIXBITS_CU(cuDeviceGetCount, &count);
  return count;
}

absl::StatusOr<std::shared_ptr<Driver>> open_cuda_driver(int ordinal, const std::string& library) {
  absl::StatusOr<std::shared_ptr<const CudaLibrary>> lib_or = load_cuda_library(library);
  if (!lib_or.ok()) return lib_or.status();
  const std::shared_ptr<const CudaLibrary>& lib_ = *lib_or;
  int count = 0;
  FIXBITS_CU(cuDeviceGetCount, &count);
  if (ordinal < 0 || ordinal >= count) {
    return absl::NotFoundError(absl::StrFormat(
        "CUDA device %d does not exist: the driver reports %d device(s).", ordinal, count));
  }
  CUdevice dev = 0;
  FIXBITS_CU(cuDeviceGet, &dev, ordinal);
  absl::StatusOr<DeviceInfo> info = query_device(lib_, ordinal, dev);
  if (!info.ok()) return info.status();
  CUcontext ctx = nullptr;
  FIXBITS_CU(cuDevicePrimaryCtxRetain, &ctx, dev);
  return std::shared_ptr<Driver>(std::make_shared<CudaDriver>(lib_, dev, ctx, *std::move(info)));
}

}  // namespace fixbits::runtime
