// CuptiApi: the slice of CUPTI's activity API that fixbits calls, declared here so no
// CUDA header or library is needed at build time (libcupti.so.13 is dlopen'ed).
//
// Contract: types and constants have the values of cupti_activity.h / cupti_result.h
// (CUPTI 12 and 13 agree on all of them); the record offsets are those every
// CUpti_ActivityKernel version since 4 shares (kind at 0, grid at 52, name at 104);
// every function is listed once in FIXBITS_CUPTI_FUNCTIONS. Internal to runtime/.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fixbits::runtime::cupti_api {

using CUptiResult = int;
using CUpti_ActivityKind = int;
struct CUpti_Activity;  // opaque: read through the offsets below
using CUcontext = struct CUctx_st*;

inline constexpr CUptiResult CUPTI_SUCCESS = 0;

// CUpti_ActivityFlag value for cuptiActivityFlushAll: deliver buffers not yet full.
inline constexpr uint32_t CUPTI_ACTIVITY_FLAG_FLUSH_FORCED = 1u << 0;

inline constexpr CUpti_ActivityKind CUPTI_ACTIVITY_KIND_MEMSET = 2;
inline constexpr CUpti_ActivityKind CUPTI_ACTIVITY_KIND_KERNEL = 3;
inline constexpr CUpti_ActivityKind CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL = 10;

// CUpti_ActivityKernelN (N >= 4) byte offsets.
inline constexpr size_t kKernelStart = 16;          // uint64 ns
inline constexpr size_t kKernelEnd = 24;            // uint64 ns
inline constexpr size_t kKernelStreamId = 48;       // uint32
inline constexpr size_t kKernelGrid = 52;           // int32 x, y, z
inline constexpr size_t kKernelBlock = 64;          // int32 x, y, z
inline constexpr size_t kKernelStaticShared = 76;   // int32
inline constexpr size_t kKernelDynamicShared = 80;  // int32
inline constexpr size_t kKernelName = 104;          // const char*
// CUpti_ActivityMemsetN: kind, uint32 value, uint64 bytes.
inline constexpr size_t kMemsetBytes = 8;

using CUpti_BuffersCallbackRequestFunc = void (*)(uint8_t** buffer, size_t* size,
                                                  size_t* max_num_records);
using CUpti_BuffersCallbackCompleteFunc = void (*)(CUcontext context, uint32_t stream_id,
                                                   uint8_t* buffer, size_t size,
                                                   size_t valid_size);

#define FIXBITS_CUPTI_FUNCTIONS(X)                                                      \
  X(CUptiResult, cuptiGetResultString, (CUptiResult, const char**))                     \
  X(CUptiResult, cuptiActivityRegisterCallbacks,                                        \
    (CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))              \
  X(CUptiResult, cuptiActivityEnable, (CUpti_ActivityKind))                             \
  X(CUptiResult, cuptiActivityDisable, (CUpti_ActivityKind))                            \
  X(CUptiResult, cuptiActivityFlushAll, (uint32_t))                                     \
  X(CUptiResult, cuptiActivityGetNextRecord, (uint8_t*, size_t, CUpti_Activity**))

}  // namespace fixbits::runtime::cupti_api
