// CudaApi: the slice of the CUDA driver API that fixbits calls, declared here so no
// CUDA header or library is needed at build time (libcuda.so.1 is dlopen'ed).
//
// Contract: every type and constant below has the numeric value documented in the
// CUDA driver API reference (cuda.h); every function fixbits calls is listed exactly
// once in FIXBITS_CUDA_FUNCTIONS, with the symbol the driver exports (the _v2 names
// where the driver has them). CudaLibrary (CudaDriver.cpp) expands the table into
// function pointers resolved with dlsym. Internal to runtime/.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fixbits::runtime::cuda_api {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // 64-bit device address
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUdevice_attribute = int;
using CUfunction_attribute = int;
using CUjit_option = int;
using CUlinkState = struct CUlinkState_st*;
using CUjitInputType = int;

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;

// CUdevice_attribute values.
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr CUdevice_attribute CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

// CUfunction_attribute values.
inline constexpr CUfunction_attribute CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
inline constexpr CUfunction_attribute CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
inline constexpr CUfunction_attribute CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
inline constexpr CUfunction_attribute CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
inline constexpr CUfunction_attribute CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH = 11;

// CUlaunchConfig (CUDA 12.0), as cuOccupancyMaxActiveClusters reads it; fixbits passes
// no launch attributes (attrs null, numAttrs 0), so CUlaunchAttribute is not declared.
struct CUlaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ;
  unsigned blockDimX, blockDimY, blockDimZ;
  unsigned sharedMemBytes;
  CUstream hStream;
  void* attrs;
  unsigned numAttrs;
};

// CUjit_option values (cuModuleLoadDataEx).
inline constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER = 5;
inline constexpr CUjit_option CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;

// CUjitInputType values (cuLinkAddData).
inline constexpr CUjitInputType CU_JIT_INPUT_PTX = 1;

inline constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
inline constexpr unsigned CU_EVENT_DEFAULT = 0;

// X(return type, exported symbol, parameter list). One line per driver function.
#define FIXBITS_CUDA_FUNCTIONS(X)                                                     \
  X(CUresult, cuGetErrorName, (CUresult, const char**))                               \
  X(CUresult, cuGetErrorString, (CUresult, const char**))                             \
  X(CUresult, cuInit, (unsigned))                                                     \
  X(CUresult, cuDriverGetVersion, (int*))                                             \
  X(CUresult, cuDeviceGetCount, (int*))                                               \
  X(CUresult, cuDeviceGet, (CUdevice*, int))                                          \
  X(CUresult, cuDeviceGetName, (char*, int, CUdevice))                                \
  X(CUresult, cuDeviceGetAttribute, (int*, CUdevice_attribute, CUdevice))             \
  X(CUresult, cuDeviceTotalMem_v2, (size_t*, CUdevice))                               \
  X(CUresult, cuDevicePrimaryCtxRetain, (CUcontext*, CUdevice))                       \
  X(CUresult, cuDevicePrimaryCtxRelease_v2, (CUdevice))                               \
  X(CUresult, cuCtxSetCurrent, (CUcontext))                                           \
  X(CUresult, cuCtxSynchronize, ())                                                   \
  X(CUresult, cuModuleLoadDataEx,                                                     \
    (CUmodule*, const void*, unsigned, CUjit_option*, void**))                        \
  X(CUresult, cuModuleUnload, (CUmodule))                                             \
  X(CUresult, cuModuleGetFunction, (CUfunction*, CUmodule, const char*))              \
  X(CUresult, cuModuleGetGlobal_v2, (CUdeviceptr*, size_t*, CUmodule, const char*))   \
  X(CUresult, cuFuncSetAttribute, (CUfunction, CUfunction_attribute, int))            \
  X(CUresult, cuFuncGetAttribute, (int*, CUfunction_attribute, CUfunction))           \
  X(CUresult, cuMemAlloc_v2, (CUdeviceptr*, size_t))                                  \
  X(CUresult, cuMemFree_v2, (CUdeviceptr))                                            \
  X(CUresult, cuMemcpyHtoD_v2, (CUdeviceptr, const void*, size_t))                    \
  X(CUresult, cuMemcpyDtoH_v2, (void*, CUdeviceptr, size_t))                          \
  X(CUresult, cuMemcpyHtoDAsync_v2, (CUdeviceptr, const void*, size_t, CUstream))     \
  X(CUresult, cuMemcpyDtoHAsync_v2, (void*, CUdeviceptr, size_t, CUstream))           \
  X(CUresult, cuMemsetD8_v2, (CUdeviceptr, unsigned char, size_t))                    \
  X(CUresult, cuStreamCreate, (CUstream*, unsigned))                                  \
  X(CUresult, cuStreamDestroy_v2, (CUstream))                                         \
  X(CUresult, cuStreamSynchronize, (CUstream))                                        \
  X(CUresult, cuEventCreate, (CUevent*, unsigned))                                    \
  X(CUresult, cuEventDestroy_v2, (CUevent))                                           \
  X(CUresult, cuEventRecord, (CUevent, CUstream))                                     \
  X(CUresult, cuEventSynchronize, (CUevent))                                          \
  X(CUresult, cuEventElapsedTime, (float*, CUevent, CUevent))                         \
  X(CUresult, cuOccupancyMaxActiveBlocksPerMultiprocessor,                            \
    (int*, CUfunction, int, size_t))                                                  \
  X(CUresult, cuLaunchKernel,                                                         \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,          \
     unsigned, CUstream, void**, void**))

// Functions newer drivers have and fixbits uses when present (null otherwise):
// cuFuncGetParamInfo (CUDA 12.4) lets launch() check argument count and sizes; the
// cuLink* functions give compile_module() the driver's compiled image of a PTX text;
// cuOccupancyMaxActiveClusters (CUDA 12.0) lets occupancy() count a cluster kernel's
// clusters.
#define FIXBITS_CUDA_OPTIONAL_FUNCTIONS(X)                                            \
  X(CUresult, cuFuncGetParamInfo, (CUfunction, size_t, size_t*, size_t*))              \
  X(CUresult, cuLinkCreate_v2, (unsigned, CUjit_option*, void**, CUlinkState*))        \
  X(CUresult, cuLinkAddData_v2,                                                       \
    (CUlinkState, CUjitInputType, void*, size_t, const char*, unsigned, CUjit_option*, \
     void**))                                                                         \
  X(CUresult, cuLinkComplete, (CUlinkState, void**, size_t*))                         \
  X(CUresult, cuLinkDestroy, (CUlinkState))                                           \
  X(CUresult, cuOccupancyMaxActiveClusters, (int*, CUfunction, const CUlaunchConfig*))

}  // namespace fixbits::runtime::cuda_api
