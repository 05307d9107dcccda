// ReduceInputs: random reduction inputs for the codegen tests that run reduce programs
// on the interpreter (reduce_split_test, reduce_cluster_test), as dtype bit patterns.
// Invariant: the same arguments give the same bits (std::mt19937 seeded by `seed`).
//   adversarial_bits: +-m * 2^large_exp (m < 1000: large, cancelling), subnormals,
//   signed zeros, and (|v| <= 10000) * 2^small_exp; with `specials` also NaN and +-inf
//   (4 of 10 draws; without, the first 6 cases only).
//   plain_bits: uniform in [lo, hi).
//   fused_row_problem: `rows` rows of an RMSNorm / softmax problem (see below).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "dsl/FloatFormat.h"
#include "dsl/ReduceDesc.h"
#include "dsl/reference/Reference.h"

namespace fixbits::testing {

inline std::vector<uint32_t> adversarial_bits(DType t, size_t n, uint32_t seed, bool specials,
                                              int large_exp, int small_exp) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> out(n);
  for (auto& b : out) {
    float v = 0.0f;
    switch (rng() % (specials ? 10 : 6)) {
      case 0: v = std::ldexp(static_cast<float>(rng() % 1000), large_exp); break;   // large
      case 1: v = -std::ldexp(static_cast<float>(rng() % 1000), large_exp); break;  // cancels
      case 2: v = std::bit_cast<float>(static_cast<uint32_t>(rng() % 0x7fffff)); break;  // subnormal
      case 3: v = (rng() & 1) ? 0.0f : -0.0f; break;
      case 6: v = std::bit_cast<float>(static_cast<uint32_t>(0x7fc00000u | (rng() & 0xffff))); break;  // NaN
      case 7: v = (rng() & 1) ? INFINITY : -INFINITY; break;
      default: v = std::ldexp(static_cast<float>(static_cast<int32_t>(rng() % 20001) - 10000), small_exp);
    }
    b = to_bits(t, v);
  }
  return out;
}

inline std::vector<uint32_t> plain_bits(DType t, size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<uint32_t> out(n);
  for (auto& b : out) b = to_bits(t, u(rng));
  return out;
}

// x: adversarial (exponents 6 and -11) with NaN/inf when `specials`; otherwise plain
// values in [-8, 8) for softmax (+-L would leave all but one exp 0) and adversarial
// without NaN/inf for RMSNorm. w: plain in [0.5, 1.5) (seed 99); eps 1e-5.
inline dsl::reference::ReduceProblem fused_row_problem(const dsl::ReduceDesc& d, int64_t rows, int64_t cols,
                                                       uint32_t seed, bool specials) {
  dsl::reference::ReduceProblem prob{.rows = rows, .cols = cols, .x = {}, .w = {}};
  const size_t n = static_cast<size_t>(rows * cols);
  prob.x = specials ? adversarial_bits(d.in_dtype, n, seed, true, 6, -11)
           : d.op == dsl::ReduceOp::kSoftmax ? plain_bits(d.in_dtype, n, seed, -8.0f, 8.0f)
                                             : adversarial_bits(d.in_dtype, n, seed, false, 6, -11);
  prob.w = plain_bits(d.in_dtype, static_cast<size_t>(cols), 99u, 0.5f, 1.5f);
  prob.eps = 1e-5f;
  return prob;
}

}  // namespace fixbits::testing
