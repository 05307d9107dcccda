// RandomInputs: fresh random input bit patterns for GPU-vs-reference tests, with
// adversarial values mixed in (±L pairs, tiny r, subnormals, NaN, ±inf, -0.0).
// Invariant: every pattern is a valid value of its dtype; the seed is returned so a
// failing draw can be replayed (FIXBITS_SEED=<n> fixes it).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "dsl/FloatFormat.h"

namespace fixbits::testing {

inline uint64_t fresh_seed() {
  if (const char* s = std::getenv("FIXBITS_SEED")) return std::strtoull(s, nullptr, 10);
  return (static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
}

enum class Mix { kPlain, kAdversarial, kPositive };

// n values of dtype t. kPlain: normal(0, 1) * 2^U(-4,4). kAdversarial: a quarter of
// the entries replaced by +L, -L, r, subnormals, -0.0 (NaN and inf only when
// `specials`). kPositive: |plain| (for RMSNorm weights, softmax-safe inputs).
inline std::vector<uint32_t> random_bits(DType t, size_t n, std::mt19937_64& rng, Mix mix,
                                         bool specials = false) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_int_distribution<int> scale(-4, 4);
  std::uniform_int_distribution<int> pick(0, 15);
  // L, r and a subnormal of each format (fp8: its largest finite value, its smallest
  // normal and its smallest subnormal, so none of them rounds away).
  float big = t == DType::kF16 ? 1024.0f : 65536.0f;
  float tiny = t == DType::kF16 ? std::ldexp(1.0f, -15) : std::ldexp(1.0f, -20);
  float sub = t == DType::kF32 ? std::ldexp(1.0f, -140)
                               : (t == DType::kF16 ? std::ldexp(1.0f, -20) : std::ldexp(1.0f, -130));
  if (t == DType::kF8E4M3) big = 448.0f, tiny = std::ldexp(1.0f, -6), sub = std::ldexp(1.0f, -9);
  if (t == DType::kF8E5M2) big = 57344.0f, tiny = std::ldexp(1.0f, -14), sub = std::ldexp(1.0f, -16);
  std::vector<uint32_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    float v = std::ldexp(normal(rng), scale(rng));
    if (mix == Mix::kPositive) v = std::fabs(v) + 0.125f;
    if (mix == Mix::kAdversarial) {
      switch (pick(rng)) {
        case 0: v = big; break;
        case 1: v = -big; break;
        case 2: v = tiny; break;
        case 3: v = (i & 1) ? sub : -sub; break;
        case 4: v = -0.0f; break;
        case 5:
          if (specials) v = (i % 3 == 0) ? NAN : ((i % 3 == 1) ? INFINITY : -INFINITY);
          break;
        default: break;
      }
    }
    out[i] = to_bits(t, v);
  }
  return out;
}

}  // namespace fixbits::testing
