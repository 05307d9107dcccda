// HipApi: the slice of the HIP runtime API that fixbits calls, declared here so no
// ROCm header or library is needed at build time (libamdhip64.so is dlopen'ed).
//
// Contract: values follow hip_runtime_api.h of ROCm 5/6 (hipDeviceAttribute_t is the
// alphabetical "CUDA compatible" list starting at 0) and its driver_types.h
// (hipFunction_attribute); every function fixbits calls is listed exactly once, in
// FIXBITS_HIP_FUNCTIONS (required) or FIXBITS_HIP_OPTIONAL_FUNCTIONS (null when the
// runtime lacks it). On HIP a module image is an HSA code object (ELF bytes), not
// assembly text. Internal to runtime/.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fixbits::runtime::hip_api {

using hipError_t = int;
using hipDeviceptr_t = void*;
using hipModule_t = struct ihipModule_t*;
using hipFunction_t = struct ihipModuleSymbol_t*;
using hipStream_t = struct ihipStream_t*;
using hipEvent_t = struct ihipEvent_t*;
using hipDeviceAttribute_t = int;
using hipFunction_attribute = int;

inline constexpr hipError_t hipSuccess = 0;
inline constexpr hipError_t hipErrorNoDevice = 100;

inline constexpr hipDeviceAttribute_t hipDeviceAttributeMaxThreadsPerBlock = 56;
inline constexpr hipDeviceAttribute_t hipDeviceAttributeMultiprocessorCount = 63;
inline constexpr hipDeviceAttribute_t hipDeviceAttributeMaxSharedMemoryPerBlock = 74;
inline constexpr hipDeviceAttribute_t hipDeviceAttributeWarpSize = 87;

// hipFunction_attribute values (driver_types.h numbers them implicitly from 0, in
// CUfunction_attribute's order).
inline constexpr hipFunction_attribute HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
inline constexpr hipFunction_attribute HIP_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
inline constexpr hipFunction_attribute HIP_FUNC_ATTRIBUTE_NUM_REGS = 4;

inline constexpr unsigned hipStreamNonBlocking = 1;

#define FIXBITS_HIP_FUNCTIONS(X)                                                      \
  X(const char*, hipGetErrorName, (hipError_t))                                       \
  X(const char*, hipGetErrorString, (hipError_t))                                     \
  X(hipError_t, hipInit, (unsigned))                                                  \
  X(hipError_t, hipDriverGetVersion, (int*))                                          \
  X(hipError_t, hipGetDeviceCount, (int*))                                            \
  X(hipError_t, hipSetDevice, (int))                                                  \
  X(hipError_t, hipDeviceGetName, (char*, int, int))                                  \
  X(hipError_t, hipDeviceTotalMem, (size_t*, int))                                    \
  X(hipError_t, hipDeviceComputeCapability, (int*, int*, int))                        \
  X(hipError_t, hipDeviceGetAttribute, (int*, hipDeviceAttribute_t, int))             \
  X(hipError_t, hipDeviceSynchronize, ())                                             \
  X(hipError_t, hipModuleLoadData, (hipModule_t*, const void*))                       \
  X(hipError_t, hipModuleUnload, (hipModule_t))                                       \
  X(hipError_t, hipModuleGetFunction, (hipFunction_t*, hipModule_t, const char*))     \
  X(hipError_t, hipFuncGetAttribute, (int*, hipFunction_attribute, hipFunction_t))    \
  X(hipError_t, hipMalloc, (void**, size_t))                                          \
  X(hipError_t, hipFree, (void*))                                                     \
  X(hipError_t, hipMemcpyHtoD, (hipDeviceptr_t, void*, size_t))                       \
  X(hipError_t, hipMemcpyDtoH, (void*, hipDeviceptr_t, size_t))                       \
  X(hipError_t, hipMemcpyHtoDAsync, (hipDeviceptr_t, void*, size_t, hipStream_t))     \
  X(hipError_t, hipMemcpyDtoHAsync, (void*, hipDeviceptr_t, size_t, hipStream_t))     \
  X(hipError_t, hipMemsetD8, (hipDeviceptr_t, unsigned char, size_t))                 \
  X(hipError_t, hipStreamCreateWithFlags, (hipStream_t*, unsigned))                   \
  X(hipError_t, hipStreamDestroy, (hipStream_t))                                      \
  X(hipError_t, hipStreamSynchronize, (hipStream_t))                                  \
  X(hipError_t, hipEventCreate, (hipEvent_t*))                                        \
  X(hipError_t, hipEventDestroy, (hipEvent_t))                                        \
  X(hipError_t, hipEventRecord, (hipEvent_t, hipStream_t))                            \
  X(hipError_t, hipEventSynchronize, (hipEvent_t))                                    \
  X(hipError_t, hipEventElapsedTime, (float*, hipEvent_t, hipEvent_t))                \
  X(hipError_t, hipModuleLaunchKernel,                                                \
    (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,       \
     unsigned, hipStream_t, void**, void**))

// Functions fixbits uses when present (null otherwise): the occupancy calculator lets
// occupancy() say how many blocks a compute unit holds; without it occupancy() is
// Unimplemented and everything else works.
#define FIXBITS_HIP_OPTIONAL_FUNCTIONS(X)                                             \
  X(hipError_t, hipModuleOccupancyMaxActiveBlocksPerMultiprocessor,                   \
    (int*, hipFunction_t, int, size_t))

}  // namespace fixbits::runtime::hip_api
