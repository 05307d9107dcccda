// PatternChecks: the input check both references share. A bit pattern wider than its
// dtype is a caller's mistake, reported naming the problem, the field and the index.
// Invariant: OK exactly when every v[i] < 2^dtype_bits(t) (32-bit dtypes: always OK).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "dsl/FloatFormat.h"

namespace fixbits::dsl::reference {

// problem: "GemmProblem" or "ReduceProblem"; field: "a", "x", ...
inline absl::Status check_patterns(const char* problem, const char* field,
                                   const std::vector<uint32_t>& v, DType t) {
  const int width = dtype_bits(t);
  if (width >= 32) return absl::OkStatus();
  const uint32_t limit = uint32_t{1} << width;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] >= limit) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s.%s[%d] is 0x%x, which does not fit the %d bits of %s.", problem,
                          field, i, v[i], width, dtype_name(t)));
    }
  }
  return absl::OkStatus();
}

}  // namespace fixbits::dsl::reference
