// CublasLt: NVIDIA's cuBLASLt GEMM through dlopen, as the instrument fixbits measures
// and reconstructs (reference §4): one call names the algorithm the library's
// heuristic picks for a shape (its config attributes) and runs it on fixbits buffers.
//
// Contract:
//   * No link-time dependency: libcublasLt.so.13 is opened at CublasLt::open() (then
//     /usr/local/cuda/lib64/libcublasLt.so.13, then the .so.12 names). Without it the
//     Status is Unavailable("no cuBLASLt found (libcublasLt.so.13): <dlerror>").
//   * Row-major semantics: D (m x n, row-major, out_dtype) = A (m x k) x B (k x n),
//     A and B row-major unless the shape says column-major. cuBLAS is column-major,
//     so the call made is the transposed one, D^T = B^T A^T: cuBLAS sees m' = n,
//     n' = m, its "A" is our B (op N when B is row-major, T when column-major) and its
//     "B" is our A (op N when A is row-major, T when column-major); D^T column-major
//     with ld = n is D row-major. torch's row-major `a @ b` makes the same call (NN).
//   * Compute type CUBLAS_COMPUTE_32F (tf32 inputs: CUBLAS_COMPUTE_32F_FAST_TF32, f32
//     storage), scale type f32, alpha = 1, beta = 0 (C = D, never read), no epilogue.
//   * Supported dtypes: a = b in {f16, bf16} with out = a or f32; a = b = f32 or tf32
//     with out f32; fp8 (e4m3/e5m2, not both e5m2) with out f16/bf16/f32, which
//     cuBLASLt runs only in the "TN" layout: A row-major, B column-major. Scale
//     pointers are left unset (cuBLASLt then scales by 1). Anything else is
//     InvalidArgument naming the field.
//   * The algorithm is the heuristic's first answer for (shape, workspace limit),
//     computed once per shape and cached, so every call on one shape runs the same
//     algorithm. The report carries its config attributes, read with
//     cublasLtMatmulAlgoConfigGetAttribute; one the library refuses to report is
//     named in AlgoConfig.unreadable rather than failing the call.
//   * Every cuBLASLt failure is a Status naming the call, the cublasStatus_t value and
//     its name. Thread-safe (one internal lock); never aborts.
//
// Example:
//   auto dev = runtime::cuda();
//   auto lt = runtime::CublasLt::open(*dev);            // StatusOr<shared_ptr<CublasLt>>
//   runtime::GemmShape s{.m = 1, .n = 4096, .k = 4096};  // f16 x f16 -> f16
//   auto report = (*lt)->matmul(s, a_buf, b_buf, d_buf);  // MatmulReport
//   // report->algo.splitk_num, report->algo.tile_id, report->workspace_bytes ...
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "dsl/FloatFormat.h"
#include "runtime/Device.h"

namespace fixbits::runtime {

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  DType a_dtype = DType::kF16;
  DType b_dtype = DType::kF16;
  DType out_dtype = DType::kF16;
  bool a_row_major = true;  // A is m x k; false: column-major (ld = m)
  bool b_row_major = true;  // B is k x n; false: column-major (ld = k), fp8 needs this
  bool operator==(const GemmShape&) const = default;
};

// "1x4096x4096 f16*f16->f16 NN" (N: row-major operand, T: column-major).
std::string to_string(const GemmShape& s);
// OK, or InvalidArgument naming the field cuBLASLt cannot take (see the contract).
absl::Status validate_for_cublaslt(const GemmShape& s);
// Storage bytes of one element of `t` as cuBLASLt holds it (tf32: 4).
size_t cublaslt_element_bytes(DType t);

// How a row-major GemmShape is issued to cuBLASLt's column-major matmul: cuBLAS's
// m' = n, n' = m, k' = k; its operand "A" is our B, its "B" is our A; each layout is
// (rows, cols, ld) of a column-major matrix. Exposed so the mapping is testable
// without a GPU against the documented semantics D' = op(A') op(B').
struct CublasCall {
  int64_t m = 0, n = 0, k = 0;  // cuBLAS's m', n', k'
  int op_a = 0, op_b = 0;       // cublasOperation_t: 0 = N, 1 = T
  uint64_t a_rows = 0, a_cols = 0;
  int64_t a_ld = 0;
  uint64_t b_rows = 0, b_cols = 0;
  int64_t b_ld = 0;
  uint64_t d_rows = 0, d_cols = 0;
  int64_t d_ld = 0;
};
CublasCall cublas_call_for(const GemmShape& s);

// The chosen algorithm's config attributes (cublasLtMatmulAlgoConfigAttributes_t).
struct AlgoConfig {
  int32_t id = 0;                 // CUBLASLT_ALGO_CONFIG_ID (0)
  uint32_t tile_id = 0;           // TILE_ID (1), a cublasLtMatmulTile_t
  uint32_t splitk_num = 0;        // SPLITK_NUM (2): K splits, 1 (or 0) = none
  uint32_t reduction_scheme = 0;  // REDUCTION_SCHEME (3): 0 none, 1 in place,
                                  // 2 partials in compute type, 4 in output type
  uint32_t cta_swizzling = 0;     // CTA_SWIZZLING (4)
  uint32_t custom_option = 0;     // CUSTOM_OPTION (5)
  uint32_t stages_id = 0;         // STAGES_ID (6), a cublasLtMatmulStages_t
  uint16_t inner_shape_id = 0;    // INNER_SHAPE_ID (7)
  uint16_t cluster_shape_id = 0;  // CLUSTER_SHAPE_ID (8), a cublasLtClusterShape_t
  // Attributes the library refused to report (comma-separated names, left at 0);
  // empty when every one was read.
  std::string unreadable;
  bool operator==(const AlgoConfig&) const = default;
};
// "algo{id=... tile=... splitk=... ...}", every field, one line.
std::string to_string(const AlgoConfig& a);
// "none", "inplace", "compute_type", "output_type" (or the number).
std::string reduction_scheme_name(uint32_t scheme);

struct MatmulReport {
  AlgoConfig algo;
  size_t workspace_bytes = 0;  // what the chosen algorithm needs (heuristic answer)
  float waves_count = 0;       // the heuristic's waves estimate
  int heuristic_answers = 0;   // how many algorithms the heuristic returned (>= 1)
};

struct CublasLtOptions {
  // The workspace offered to the heuristic and to every call (32 MiB, the size
  // NVIDIA recommends for Hopper and torch uses there).
  size_t workspace_bytes = size_t{32} << 20;
  // Library names tried in order; empty: the default list in the contract.
  std::vector<std::string> library_paths;
};

class CublasLt {
 public:
  // Opens cuBLASLt for `device` (CUDA; cuBLASLt's runtime binds the same primary
  // context) and allocates the workspace there.
  static absl::StatusOr<std::shared_ptr<CublasLt>> open(std::shared_ptr<Device> device,
                                                        const CublasLtOptions& options = {});
  ~CublasLt();
  CublasLt(const CublasLt&) = delete;
  CublasLt& operator=(const CublasLt&) = delete;

  // cublasLtGetVersion(), e.g. 130100 for 13.1.0, and the file that was opened.
  size_t version() const;
  const std::string& library_path() const;
  const std::shared_ptr<Device>& device() const;

  // The heuristic's answer for `shape`, without running anything.
  absl::StatusOr<MatmulReport> heuristic(const GemmShape& shape);
  // The same answer without keeping the shape's plan (a scan asks for hundreds of
  // thousands of shapes it never runs); a shape already planned answers from its plan.
  absl::StatusOr<MatmulReport> heuristic_uncached(const GemmShape& shape);

  // D = A x B on `stream` (null: the default stream), asynchronous like cuBLASLt.
  // Buffers must hold at least m*k, k*n and m*n elements of their dtypes.
  absl::StatusOr<MatmulReport> matmul(const GemmShape& shape, const Buffer& a, const Buffer& b,
                                      Buffer& d, Stream* stream = nullptr);
  // The same on raw device addresses (byte offsets into buffers); no size checks.
  absl::StatusOr<MatmulReport> matmul_at(const GemmShape& shape, uint64_t a, uint64_t b,
                                         uint64_t d, Stream* stream = nullptr);

  struct Impl;

 private:
  explicit CublasLt(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fixbits::runtime
