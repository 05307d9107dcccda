// DtypesFlag: the `--dtypes=f16,bf16,f8e4m3` list the cuBLAS samples (scan, match,
// coverage) take: each name a DType that profile::usual_shape knows a cuBLAS family
// for, in the order given; a name that is not one is InvalidArgument naming it.
// Example: parse_dtypes_flag("f16,bf16") -> {kF16, kBF16}.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_split.h"
#include "dsl/FloatFormat.h"
#include "profile/CublasProfile.h"

namespace fixbits::samples {

inline absl::StatusOr<std::vector<DType>> parse_dtypes_flag(const std::string& list) {
  std::vector<DType> out;
  for (absl::string_view d : absl::StrSplit(list, ',', absl::SkipEmpty())) {
    absl::StatusOr<DType> t = parse_dtype(std::string(d));
    if (!t.ok() || !profile::usual_shape({1, 1, 1}, *t).ok()) {
      return absl::InvalidArgumentError("--dtypes takes f16, bf16 and f8e4m3; '" +
                                        std::string(d) + "' is none of them.");
    }
    out.push_back(*t);
  }
  return out;
}

}  // namespace fixbits::samples
