// FakeHip: a CPU stand-in for libamdhip64.so, built as a shared library so
// runtime_hip_fake_test can drive runtime/HipDriver (and Device/Kernel over it) without
// an AMD GPU. Built twice: fixbits_fake_hip, and fixbits_fake_hip_no_occupancy
// (FIXBITS_FAKE_HIP_NO_OCCUPANCY), which lacks the occupancy calculator as an older
// runtime would, so the test can check that HipDriver still loads.
//
// Contract: exports every function of runtime/HipApi.h's tables with its exact type
// (checked at compile time at the end of this file). The numbers it answers to (error
// codes, device and function attributes) are ROCm's, written out here rather than
// taken from HipApi.h, so a wrong value there fails the test instead of agreeing with
// itself. One device, "Fake gfx942": 304 compute units, wavefront 64, 1024 threads and
// 64 KiB of LDS a block, 192 GiB, compute capability 9.4, runtime version 60300000;
// only ordinal 0 exists.
//   Memory: device memory is host memory (an address is a host pointer); copies and
//   memsets are real and synchronous, and one that leaves its allocation is
//   hipErrorInvalidValue. Streams and events keep order trivially; an event's time is
//   the host clock when it was recorded.
//   Modules: an image is the ELF magic "\x7f" "ELF" followed by kernel names, each
//   NUL-terminated, the list ended by an empty name (the names a code object's symbol
//   table would hold); anything else is hipErrorInvalidImage, a name not in it
//   hipErrorNotFound. A launch checks its configuration and runs nothing.
//   Attributes: every kernel has 40 registers, 16 local bytes a thread and 1024 static
//   LDS bytes; hipFuncGetAttribute answers NUM_REGS, LOCAL_SIZE_BYTES and
//   SHARED_SIZE_BYTES with them, except for a kernel whose name starts "noattr_", for
//   which it returns hipErrorNotSupported (so the test reaches HipDriver's "0 where the
//   runtime cannot say" path). Other attributes are hipErrorInvalidValue.
//   Occupancy: a compute unit holds 2048 threads and 64 KiB of LDS, so
//     blocks = min(2048 / blockSize, 65536 / (1024 + dynamic shared bytes))
//   e.g. 256 threads, 0 dynamic bytes -> min(8, 64) = 8; 64 threads, 15360 dynamic
//   bytes -> min(32, 4) = 4. blockSize outside 1..1024 is hipErrorInvalidValue.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/HipApi.h"

using namespace fixbits::runtime::hip_api;  // NOLINT: the table's types

namespace {

// hipError_t values (hip_runtime_api.h).
constexpr hipError_t kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kNoDevice = 100,
                     kInvalidDevice = 101, kInvalidImage = 200, kInvalidHandle = 400,
                     kNotFound = 500, kNotSupported = 801;
// hipDeviceAttribute_t values (hip_runtime_api.h, ROCm 6: the alphabetical list from 0).
constexpr int kAttrMaxThreadsPerBlock = 56, kAttrMultiprocessorCount = 63,
              kAttrMaxSharedMemoryPerBlock = 74, kAttrWarpSize = 87;
// hipFunction_attribute values (driver_types.h: numbered from 0, CUDA's order).
constexpr int kFuncSharedSizeBytes = 1, kFuncLocalSizeBytes = 3, kFuncNumRegs = 4;

constexpr const char* kName = "Fake gfx942";
constexpr int kComputeUnits = 304, kWarpSize = 64, kMaxThreadsPerBlock = 1024;
constexpr int kLdsPerBlock = 64 * 1024;
constexpr size_t kTotalMemory = size_t{192} << 30;
constexpr int kRuntimeVersion = 60300000;

// What every kernel of every module uses (see the occupancy rule above).
constexpr int kRegisters = 40, kLocalBytes = 16, kStaticShared = 1024;
constexpr int kThreadsPerComputeUnit = 2048, kLdsPerComputeUnit = 64 * 1024;

// Live allocations, start -> size, so copies can be checked against them.
std::mutex g_mu;
std::map<const char*, size_t>& allocations() {
  static auto* m = new std::map<const char*, size_t>();
  return *m;
}

// True when [p, p + bytes) lies inside one live allocation.
bool in_allocation(const void* p, size_t bytes) {
  const char* c = static_cast<const char*>(p);
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = allocations().upper_bound(c);
  if (it == allocations().begin()) return false;
  --it;
  const size_t offset = static_cast<size_t>(c - it->first);
  return offset <= it->second && bytes <= it->second - offset;
}

}  // namespace

namespace fixbits::runtime::hip_api {
struct ihipModuleSymbol_t {
  std::string name;
};
struct ihipModule_t {
  std::vector<std::unique_ptr<ihipModuleSymbol_t>> functions;
};
struct ihipStream_t {
  unsigned flags = 0;
};
struct ihipEvent_t {
  bool recorded = false;
  std::chrono::steady_clock::time_point at;
};
}  // namespace fixbits::runtime::hip_api

extern "C" {

const char* hipGetErrorName(hipError_t e) {
  switch (e) {
    case kSuccess: return "hipSuccess";
    case kInvalidValue: return "hipErrorInvalidValue";
    case kOutOfMemory: return "hipErrorOutOfMemory";
    case kNoDevice: return "hipErrorNoDevice";
    case kInvalidDevice: return "hipErrorInvalidDevice";
    case kInvalidImage: return "hipErrorInvalidImage";
    case kInvalidHandle: return "hipErrorInvalidHandle";
    case kNotFound: return "hipErrorNotFound";
    case kNotSupported: return "hipErrorNotSupported";
    default: return "hipErrorUnknown";
  }
}

const char* hipGetErrorString(hipError_t e) {
  switch (e) {
    case kSuccess: return "no error";
    case kInvalidValue: return "invalid argument";
    case kOutOfMemory: return "out of memory";
    case kNoDevice: return "no ROCm-capable device is detected";
    case kInvalidDevice: return "invalid device ordinal";
    case kInvalidImage: return "device kernel image is invalid";
    case kInvalidHandle: return "invalid resource handle";
    case kNotFound: return "named symbol not found";
    case kNotSupported: return "operation not supported";
    default: return "unknown error";
  }
}

hipError_t hipInit(unsigned flags) { return flags == 0 ? kSuccess : kInvalidValue; }

hipError_t hipDriverGetVersion(int* version) {
  if (version == nullptr) return kInvalidValue;
  *version = kRuntimeVersion;
  return kSuccess;
}

hipError_t hipGetDeviceCount(int* count) {
  if (count == nullptr) return kInvalidValue;
  *count = 1;
  return kSuccess;
}

hipError_t hipSetDevice(int device) { return device == 0 ? kSuccess : kInvalidDevice; }

hipError_t hipDeviceGetName(char* name, int len, int device) {
  if (device != 0) return kInvalidDevice;
  if (name == nullptr || len <= 0) return kInvalidValue;
  std::snprintf(name, static_cast<size_t>(len), "%s", kName);
  return kSuccess;
}

hipError_t hipDeviceTotalMem(size_t* bytes, int device) {
  if (device != 0) return kInvalidDevice;
  if (bytes == nullptr) return kInvalidValue;
  *bytes = kTotalMemory;
  return kSuccess;
}

hipError_t hipDeviceComputeCapability(int* major, int* minor, int device) {
  if (device != 0) return kInvalidDevice;
  if (major == nullptr || minor == nullptr) return kInvalidValue;
  *major = 9;
  *minor = 4;
  return kSuccess;
}

hipError_t hipDeviceGetAttribute(int* value, hipDeviceAttribute_t attr, int device) {
  if (device != 0) return kInvalidDevice;
  if (value == nullptr) return kInvalidValue;
  switch (attr) {
    case kAttrMaxThreadsPerBlock: *value = kMaxThreadsPerBlock; return kSuccess;
    case kAttrMultiprocessorCount: *value = kComputeUnits; return kSuccess;
    case kAttrMaxSharedMemoryPerBlock: *value = kLdsPerBlock; return kSuccess;
    case kAttrWarpSize: *value = kWarpSize; return kSuccess;
    default: return kInvalidValue;
  }
}

hipError_t hipDeviceSynchronize() { return kSuccess; }

hipError_t hipModuleLoadData(hipModule_t* module, const void* image) {
  if (module == nullptr || image == nullptr) return kInvalidValue;
  const char* p = static_cast<const char*>(image);
  if (std::strncmp(p, "\x7f" "ELF", 4) != 0) return kInvalidImage;
  auto m = std::make_unique<ihipModule_t>();
  for (p += 4; *p != '\0'; p += std::strlen(p) + 1) {
    m->functions.push_back(std::make_unique<ihipModuleSymbol_t>(ihipModuleSymbol_t{p}));
  }
  *module = m.release();
  return kSuccess;
}

hipError_t hipModuleUnload(hipModule_t module) {
  if (module == nullptr) return kInvalidHandle;
  delete module;
  return kSuccess;
}

hipError_t hipModuleGetFunction(hipFunction_t* function, hipModule_t module, const char* name) {
  if (function == nullptr || name == nullptr) return kInvalidValue;
  if (module == nullptr) return kInvalidHandle;
  for (const auto& f : module->functions) {
    if (f->name == name) {
      *function = f.get();
      return kSuccess;
    }
  }
  return kNotFound;
}

hipError_t hipFuncGetAttribute(int* value, hipFunction_attribute attr, hipFunction_t function) {
  if (value == nullptr) return kInvalidValue;
  if (function == nullptr) return kInvalidHandle;
  if (function->name.rfind("noattr_", 0) == 0) return kNotSupported;
  switch (attr) {
    case kFuncNumRegs: *value = kRegisters; return kSuccess;
    case kFuncLocalSizeBytes: *value = kLocalBytes; return kSuccess;
    case kFuncSharedSizeBytes: *value = kStaticShared; return kSuccess;
    default: return kInvalidValue;
  }
}

hipError_t hipMalloc(void** ptr, size_t bytes) {
  if (ptr == nullptr) return kInvalidValue;
  *ptr = nullptr;
  if (bytes == 0) return kSuccess;
  if (bytes > kTotalMemory) return kOutOfMemory;
  char* p = new (std::nothrow) char[bytes];
  if (p == nullptr) return kOutOfMemory;
  std::lock_guard<std::mutex> lock(g_mu);
  allocations()[p] = bytes;
  *ptr = p;
  return kSuccess;
}

hipError_t hipFree(void* ptr) {
  if (ptr == nullptr) return kSuccess;
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = allocations().find(static_cast<const char*>(ptr));
  if (it == allocations().end()) return kInvalidValue;
  allocations().erase(it);
  delete[] static_cast<char*>(ptr);
  return kSuccess;
}

hipError_t hipMemcpyHtoD(hipDeviceptr_t dst, void* src, size_t bytes) {
  if (bytes == 0) return kSuccess;
  if (src == nullptr || !in_allocation(dst, bytes)) return kInvalidValue;
  std::memcpy(dst, src, bytes);
  return kSuccess;
}

hipError_t hipMemcpyDtoH(void* dst, hipDeviceptr_t src, size_t bytes) {
  if (bytes == 0) return kSuccess;
  if (dst == nullptr || !in_allocation(src, bytes)) return kInvalidValue;
  std::memcpy(dst, src, bytes);
  return kSuccess;
}

hipError_t hipMemcpyHtoDAsync(hipDeviceptr_t dst, void* src, size_t bytes, hipStream_t) {
  return hipMemcpyHtoD(dst, src, bytes);
}

hipError_t hipMemcpyDtoHAsync(void* dst, hipDeviceptr_t src, size_t bytes, hipStream_t) {
  return hipMemcpyDtoH(dst, src, bytes);
}

hipError_t hipMemsetD8(hipDeviceptr_t dst, unsigned char value, size_t bytes) {
  if (bytes == 0) return kSuccess;
  if (!in_allocation(dst, bytes)) return kInvalidValue;
  std::memset(dst, value, bytes);
  return kSuccess;
}

hipError_t hipStreamCreateWithFlags(hipStream_t* stream, unsigned flags) {
  if (stream == nullptr) return kInvalidValue;
  *stream = new ihipStream_t{flags};
  return kSuccess;
}

hipError_t hipStreamDestroy(hipStream_t stream) {
  if (stream == nullptr) return kInvalidHandle;
  delete stream;
  return kSuccess;
}

hipError_t hipStreamSynchronize(hipStream_t) { return kSuccess; }

hipError_t hipEventCreate(hipEvent_t* event) {
  if (event == nullptr) return kInvalidValue;
  *event = new ihipEvent_t;
  return kSuccess;
}

hipError_t hipEventDestroy(hipEvent_t event) {
  if (event == nullptr) return kInvalidHandle;
  delete event;
  return kSuccess;
}

hipError_t hipEventRecord(hipEvent_t event, hipStream_t) {
  if (event == nullptr) return kInvalidHandle;
  event->recorded = true;
  event->at = std::chrono::steady_clock::now();
  return kSuccess;
}

hipError_t hipEventSynchronize(hipEvent_t event) {
  return event == nullptr ? kInvalidHandle : kSuccess;
}

hipError_t hipEventElapsedTime(float* ms, hipEvent_t start, hipEvent_t stop) {
  if (ms == nullptr) return kInvalidValue;
  if (start == nullptr || stop == nullptr || !start->recorded || !stop->recorded) {
    return kInvalidHandle;
  }
  *ms = std::chrono::duration<float, std::milli>(stop->at - start->at).count();
  return kSuccess;
}

hipError_t hipModuleLaunchKernel(hipFunction_t f, unsigned gx, unsigned gy, unsigned gz,
                                 unsigned bx, unsigned by, unsigned bz, unsigned shared,
                                 hipStream_t, void**, void**) {
  if (f == nullptr) return kInvalidHandle;
  const uint64_t threads = uint64_t{bx} * by * bz;
  if (gx == 0 || gy == 0 || gz == 0 || threads == 0 || threads > kMaxThreadsPerBlock ||
      uint64_t{shared} + kStaticShared > kLdsPerBlock) {
    return kInvalidValue;
  }
  return kSuccess;  // there is no code to run
}

#ifndef FIXBITS_FAKE_HIP_NO_OCCUPANCY
hipError_t hipModuleOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, hipFunction_t f,
                                                              int block_size,
                                                              size_t dynamic_shared) {
  if (blocks == nullptr || block_size < 1 || block_size > kMaxThreadsPerBlock) {
    return kInvalidValue;
  }
  if (f == nullptr) return kInvalidHandle;
  const size_t by_threads = size_t{kThreadsPerComputeUnit} / block_size;
  const size_t by_lds = size_t{kLdsPerComputeUnit} / (kStaticShared + dynamic_shared);
  *blocks = static_cast<int>(by_threads < by_lds ? by_threads : by_lds);
  return kSuccess;
}
#endif

}  // extern "C"

// Every function HipDriver resolves is exported above with the table's exact type.
#define FIXBITS_FAKE_HIP_CHECK(ret, name, params)                  \
  static_assert(std::is_same_v<decltype(&::name), ret(*) params>, \
                "FakeHip's " #name " differs from runtime/HipApi.h");
FIXBITS_HIP_FUNCTIONS(FIXBITS_FAKE_HIP_CHECK)
#ifndef FIXBITS_FAKE_HIP_NO_OCCUPANCY
FIXBITS_HIP_OPTIONAL_FUNCTIONS(FIXBITS_FAKE_HIP_CHECK)
#endif
#undef FIXBITS_FAKE_HIP_CHECK
