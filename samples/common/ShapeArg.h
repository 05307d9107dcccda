// ShapeArg: the `MxNxK[:in[:out]][:tn]` text the cuBLAS samples take for one GEMM shape
// (fixbits-cublas-probe --shapes, fixbits-cublas-scan --probe-at). The first dtype is
// A's and B's; the output is the second, else f16 for fp8 inputs, f32 for tf32, the
// input's otherwise; fp8 always runs TN (B column-major), `tn` asks for it elsewhere.
// The shape is checked with runtime::validate_for_cublaslt; every error names the text.
// Example: parse_shape_arg("128x4096x4096:f8e4m3:f16") -> e4m3 x e4m3 -> f16, TN.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "dsl/FloatFormat.h"
#include "runtime/CublasLt.h"

namespace fixbits::samples {

inline absl::StatusOr<runtime::GemmShape> parse_shape_arg(std::string_view text) {
  std::vector<std::string> parts = absl::StrSplit(absl::string_view(text.data(), text.size()), ':');
  std::vector<std::string> dims = absl::StrSplit(parts[0], 'x');
  runtime::GemmShape s;
  if (dims.size() != 3 || !absl::SimpleAtoi(dims[0], &s.m) || !absl::SimpleAtoi(dims[1], &s.n) ||
      !absl::SimpleAtoi(dims[2], &s.k)) {
    return absl::InvalidArgumentError("The shape '" + std::string(text) +
                                      "' is not MxNxK[:in[:out]][:tn].");
  }
  int dtypes = 0;
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i] == "tn") {
      s.b_row_major = false;
      continue;
    }
    absl::StatusOr<DType> t = parse_dtype(parts[i]);
    if (!t.ok()) {
      return absl::InvalidArgumentError("The shape '" + std::string(text) + "' names '" +
                                        parts[i] + "', neither a dtype nor 'tn'.");
    }
    if (dtypes++ == 0) {
      s.a_dtype = s.b_dtype = *t;
      s.out_dtype = dtype_is_fp8(*t) ? DType::kF16 : (*t == DType::kTF32 ? DType::kF32 : *t);
    } else {
      s.out_dtype = *t;
    }
  }
  if (dtype_is_fp8(s.a_dtype)) s.b_row_major = false;
  if (absl::Status v = runtime::validate_for_cublaslt(s); !v.ok()) return v;
  return s;
}

}  // namespace fixbits::samples
