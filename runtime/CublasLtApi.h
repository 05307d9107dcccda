// CublasLtApi: the slice of the cuBLASLt C API that fixbits calls, declared here so
// no CUDA header or library is needed at build time (libcublasLt.so.13 is dlopen'ed).
//
// Contract: every type, struct layout and constant below has the numeric value of
// the cuBLASLt 13 headers (cublasLt.h, cublas_api.h, library_types.h), checked against
// NVIDIA's published enum tables; every function fixbits calls is listed exactly once
// in FIXBITS_CUBLASLT_FUNCTIONS with its exported name. CublasLt.cpp expands the table
// into function pointers resolved with dlsym. All handles are opaque pointers, the
// calling convention is the platform's C one. Internal to runtime/.
#pragma once

#include <cstddef>
#include <cstdint>

namespace fixbits::runtime::cublaslt_api {

using cublasStatus_t = int;
using cublasLtHandle_t = struct cublasLtContext*;
using cublasLtMatmulDesc_t = struct cublasLtMatmulDescOpaque_t*;
using cublasLtMatrixLayout_t = struct cublasLtMatrixLayoutOpaque_t*;
using cublasLtMatmulPreference_t = struct cublasLtMatmulPreferenceOpaque_t*;
using cudaStream_t = struct CUstream_st*;  // the same object as the driver's CUstream
using cudaDataType_t = int;
using cublasComputeType_t = int;
using cublasOperation_t = int;
using cublasLtMatmulDescAttributes_t = int;
using cublasLtMatmulPreferenceAttributes_t = int;
using cublasLtMatmulAlgoConfigAttributes_t = int;

// cublasLtMatmulAlgo_t: 64 opaque bytes, 8-byte aligned.
struct cublasLtMatmulAlgo_t {
  uint64_t data[8];
};

// cublasLtMatmulHeuristicResult_t, field for field.
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  cublasStatus_t state;
  float wavesCount;
  int reserved[4];
};
static_assert(sizeof(cublasLtMatmulAlgo_t) == 64, "cublasLtMatmulAlgo_t is 8 x uint64_t");
static_assert(sizeof(cublasLtMatmulHeuristicResult_t) == 96,
              "cublasLtMatmulHeuristicResult_t layout: algo, size_t, int, float, int[4]");

// cublasStatus_t values.
inline constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
inline constexpr cublasStatus_t CUBLAS_STATUS_NOT_INITIALIZED = 1;
inline constexpr cublasStatus_t CUBLAS_STATUS_ALLOC_FAILED = 3;
inline constexpr cublasStatus_t CUBLAS_STATUS_INVALID_VALUE = 7;
inline constexpr cublasStatus_t CUBLAS_STATUS_ARCH_MISMATCH = 8;
inline constexpr cublasStatus_t CUBLAS_STATUS_MAPPING_ERROR = 11;
inline constexpr cublasStatus_t CUBLAS_STATUS_EXECUTION_FAILED = 13;
inline constexpr cublasStatus_t CUBLAS_STATUS_INTERNAL_ERROR = 14;
inline constexpr cublasStatus_t CUBLAS_STATUS_NOT_SUPPORTED = 15;
inline constexpr cublasStatus_t CUBLAS_STATUS_LICENSE_ERROR = 16;

// cudaDataType_t values (library_types.h).
inline constexpr cudaDataType_t CUDA_R_32F = 0;
inline constexpr cudaDataType_t CUDA_R_16F = 2;
inline constexpr cudaDataType_t CUDA_R_16BF = 14;
inline constexpr cudaDataType_t CUDA_R_8F_E4M3 = 28;
inline constexpr cudaDataType_t CUDA_R_8F_E5M2 = 29;

// cublasComputeType_t values.
inline constexpr cublasComputeType_t CUBLAS_COMPUTE_32F = 68;
inline constexpr cublasComputeType_t CUBLAS_COMPUTE_32F_FAST_TF32 = 77;

// cublasOperation_t values.
inline constexpr cublasOperation_t CUBLAS_OP_N = 0;
inline constexpr cublasOperation_t CUBLAS_OP_T = 1;

// cublasLtMatmulDescAttributes_t values.
inline constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_TRANSA = 3;  // int32
inline constexpr cublasLtMatmulDescAttributes_t CUBLASLT_MATMUL_DESC_TRANSB = 4;  // int32

// cublasLtMatmulPreferenceAttributes_t values.
inline constexpr cublasLtMatmulPreferenceAttributes_t CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES =
    1;  // uint64

// cublasLtMatmulAlgoConfigAttributes_t values (and the type each one is read as).
inline constexpr cublasLtMatmulAlgoConfigAttributes_t CUBLASLT_ALGO_CONFIG_ID = 0;           // int32
inline constexpr cublasLtMatmulAlgoConfigAttributes_t CUBLASLT_ALGO_CONFIG_TILE_ID = 1;      // uint32
inline constexpr cublasLtMatmulAlgoConfigAttributes_t CUBLASLT_ALGO_CONFIG_SPLITK_NUM = 2;   // uint32
inline constexpr cublasLtMatmulAlgoConfigAttributes_t CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME =
    3;  // uint32
inline constexpr cublasLtMatmulAlgoConfigAttributes_t CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING =
    4;  // uint32
inline constexpr cublasLtMatmulAlgoConfigAttributes_t CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION =
    5;  // uint32
inline constexpr cublasLtMatmulAlgoConfigAttributes_t CUBLASLT_ALGO_CONFIG_STAGES_ID = 6;    // uint32
inline constexpr cublasLtMatmulAlgoConfigAttributes_t CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID =
    7;  // uint16
inline constexpr cublasLtMatmulAlgoConfigAttributes_t CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID =
    8;  // uint16

// cublasLtReductionScheme_t values (the REDUCTION_SCHEME attribute).
inline constexpr uint32_t CUBLASLT_REDUCTION_SCHEME_NONE = 0;
inline constexpr uint32_t CUBLASLT_REDUCTION_SCHEME_INPLACE = 1;
inline constexpr uint32_t CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE = 2;
inline constexpr uint32_t CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE = 4;

// X(return type, exported symbol, parameter list). One line per cuBLASLt function.
#define FIXBITS_CUBLASLT_FUNCTIONS(X)                                                    \
  X(size_t, cublasLtGetVersion, ())                                                      \
  X(cublasStatus_t, cublasLtCreate, (cublasLtHandle_t*))                                 \
  X(cublasStatus_t, cublasLtDestroy, (cublasLtHandle_t))                                 \
  X(cublasStatus_t, cublasLtMatmulDescCreate,                                            \
    (cublasLtMatmulDesc_t*, cublasComputeType_t, cudaDataType_t))                        \
  X(cublasStatus_t, cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t))                   \
  X(cublasStatus_t, cublasLtMatmulDescSetAttribute,                                      \
    (cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void*, size_t))         \
  X(cublasStatus_t, cublasLtMatrixLayoutCreate,                                          \
    (cublasLtMatrixLayout_t*, cudaDataType_t, uint64_t, uint64_t, int64_t))              \
  X(cublasStatus_t, cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t))               \
  X(cublasStatus_t, cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t*))       \
  X(cublasStatus_t, cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t))       \
  X(cublasStatus_t, cublasLtMatmulPreferenceSetAttribute,                                \
    (cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t, const void*,      \
     size_t))                                                                            \
  X(cublasStatus_t, cublasLtMatmulAlgoGetHeuristic,                                      \
    (cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,                     \
     cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,             \
     cublasLtMatmulPreference_t, int, cublasLtMatmulHeuristicResult_t*, int*))          \
  X(cublasStatus_t, cublasLtMatmulAlgoConfigGetAttribute,                                \
    (const cublasLtMatmulAlgo_t*, cublasLtMatmulAlgoConfigAttributes_t, void*, size_t,  \
     size_t*))                                                                           \
  X(cublasStatus_t, cublasLtMatmul,                                                      \
    (cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*,                   \
     cublasLtMatrixLayout_t, const void*, cublasLtMatrixLayout_t, const void*,           \
     const void*, cublasLtMatrixLayout_t, void*, cublasLtMatrixLayout_t,                 \
     const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t))

// Functions used when present (null otherwise): readable status names.
#define FIXBITS_CUBLASLT_OPTIONAL_FUNCTIONS(X)                                           \
  X(const char*, cublasLtGetStatusName, (cublasStatus_t))                                \
  X(const char*, cublasLtGetStatusString, (cublasStatus_t))

}  // namespace fixbits::runtime::cublaslt_api
