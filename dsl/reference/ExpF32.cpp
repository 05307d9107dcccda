// ExpF32: the fixed op sequence of fixbits_exp (written out in ExpF32.h), on the
// CPU with real binary32 operations. This file is compiled with -ffp-contract=off,
// so the only fused operations are the std::fma calls spelled out here.
//
// Example: fixbits_exp(0.0f): t = 0, n = 0, r = 0, p = 1, s1 = s2 = 1 -> 1.0f.
#include "dsl/reference/ExpF32.h"

#include <bit>
#include <cmath>
#include <limits>

namespace fixbits::dsl::reference {

float fixbits_exp(float x) {
  // Step 0: special ranges.
  if (std::isnan(x)) return x + x;
  if (x > kExpOverflow) return std::numeric_limits<float>::infinity();
  if (x < kExpUnderflow) return 0.0f;
  // Steps 1-2: n = rint(x * log2(e)), ties to even (the default rounding mode).
  const float t = x * std::bit_cast<float>(kExpLog2eBits);
  const float n = std::nearbyint(t);
  // Steps 3-4: r = x - n * ln2 in two parts.
  float r = std::fma(-n, std::bit_cast<float>(kExpLn2HiBits), x);
  r = std::fma(-n, std::bit_cast<float>(kExpLn2LoBits), r);
  // Step 5: Horner from the degree-7 coefficient down.
  float p = std::bit_cast<float>(kExpCoeffBits[7]);
  for (int k = 6; k >= 0; --k) p = std::fma(p, r, std::bit_cast<float>(kExpCoeffBits[k]));
  // Steps 6-7: scale by 2^n as two exact powers of two.
  const int ni = static_cast<int>(n);
  const int n1 = ni / 2;
  const int n2 = ni - n1;
  const float s1 = std::bit_cast<float>(static_cast<uint32_t>(n1 + 127) << 23);
  const float s2 = std::bit_cast<float>(static_cast<uint32_t>(n2 + 127) << 23);
  return (p * s1) * s2;
}

}  // namespace fixbits::dsl::reference
