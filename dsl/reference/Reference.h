// Reference: the exact output bits a descriptor defines, computed on the CPU with
// real binary32 operations (fma where the descriptor says fused).
//
// Invariant: reference::gemm / reference::reduce are the definition of a
// descriptor's bits; every GPU kernel fixbits emits is tested against them with
// memcmp. Inputs are given as raw bit patterns of their dtype (uint32_t each, low
// bits used) so fp8/fp16/bf16 need no host type. Outputs likewise.
// Bad input (wrong sizes, invalid descriptor) returns InvalidArgument naming it.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "dsl/GemmDesc.h"
#include "dsl/ReduceDesc.h"
#include "dsl/reference/MmaModel.h"

namespace fixbits::dsl::reference {

struct GemmProblem {
  int64_t m = 0, n = 0, k = 0;
  bool a_row_major = true;   // a is m x k
  bool b_row_major = true;   // b is k x n
  std::vector<uint32_t> a, b;  // bits in desc.a_dtype / desc.b_dtype
  std::vector<uint32_t> c;     // m x n row-major, out_dtype bits; used when alpha_beta
  std::vector<uint32_t> bias;  // n values, f32 bits; used when desc.bias
  float alpha = 1.0f, beta = 0.0f;
};

// m x n row-major output, out_dtype bits. `model` defaults to the sm_90 model.
absl::StatusOr<std::vector<uint32_t>> gemm(const GemmDesc& desc, const GemmProblem& p,
                                           const MmaModel* model = nullptr);

struct ReduceProblem {
  int64_t rows = 0, cols = 0;  // kRow reduces each row's `cols` elements
  std::vector<uint32_t> x;     // rows x cols row-major, in_dtype bits
  std::vector<uint32_t> w;     // kRmsNorm weight: `cols` values (kRow), in_dtype bits
  float eps = 1e-6f;           // kRmsNorm
};

// kSum/kMax/kMin: one value per reduced line (rows for kRow, cols for kColumn),
// out_dtype bits. kRmsNorm/kSoftmax: same shape as x. `free_layout` is used only
// when desc.order == kFree.
absl::StatusOr<std::vector<uint32_t>> reduce(const ReduceDesc& desc, const ReduceProblem& p,
                                             const FreeLayout& free_layout = {});

}  // namespace fixbits::dsl::reference
