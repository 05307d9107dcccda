// ExpF32: fixbits_exp, the one exp(x) for binary32 that the CPU reference and the
// GPU codegen both evaluate, as a fixed sequence of IEEE binary32 operations, so
// softmax bits do not depend on a libm or on a GPU's ex2.approx.
//
// Invariant: fixbits_exp(x) is exactly the result of the sequence below, every op
// correctly rounded to nearest-even binary32, no contraction beyond the listed
// fmas, no flush of subnormals. Accuracy (tested, not part of the contract): within
// 2 ulp of exp(x) for normal results. Codegen emits this sequence and may leave out a
// test that cannot change a result's bits on its target (codegen/LowerExp.h).
//
// The sequence (constants as f32 bit patterns):
//   0. if x is NaN                -> return x + x            (quiet NaN)
//      if x >  kExpOverflow (89)  -> return +inf             (also x = +inf)
//      if x <  kExpUnderflow(-104)-> return +0               (also x = -inf)
//   1. t  = x * kLog2e                      mul.rn  (kLog2e 0x3fb8aa3b)
//   2. n  = rint(t)                         cvt.rni (ties to even)
//   3. r  = fma(-n, kLn2Hi, x)              fma.rn  (kLn2Hi 0x3f317200 = 0.693145751953125)
//   4. r  = fma(-n, kLn2Lo, r)              fma.rn  (kLn2Lo 0x35bfbe8e ~ 1.4286068e-6)
//   5. p  = kC7                             Horner in fma.rn, Taylor coefficients
//      p  = fma(p, r, kC6) ... fma(p, r, kC2)   kC_k = f32(1/k!):
//      p  = fma(p, r, kC1); p = fma(p, r, kC0)  (kC1 = kC0 = 1.0)
//   6. ni = (int)n; n1 = ni / 2 (toward zero); n2 = ni - n1   (|n1|, |n2| <= 76)
//      s1 = bits((n1 + 127) << 23); s2 = bits((n2 + 127) << 23)   (exact 2^n1, 2^n2)
//   7. return (p * s1) * s2                 mul.rn, mul.rn (p * s1 is exact; the
//                                           second multiply is the one rounding,
//                                           overflow -> inf, gradual underflow)
#pragma once

#include <cstdint>

namespace fixbits::dsl::reference {

inline constexpr float kExpOverflow = 89.0f;
inline constexpr float kExpUnderflow = -104.0f;
inline constexpr uint32_t kExpLog2eBits = 0x3fb8aa3bu;
inline constexpr uint32_t kExpLn2HiBits = 0x3f317200u;
inline constexpr uint32_t kExpLn2LoBits = 0x35bfbe8eu;
// f32(1/k!) for k = 0..7, as bit patterns.
inline constexpr uint32_t kExpCoeffBits[8] = {0x3f800000u, 0x3f800000u, 0x3f000000u,
                                              0x3e2aaaabu, 0x3d2aaaabu, 0x3c088889u,
                                              0x3ab60b61u, 0x39500d01u};

float fixbits_exp(float x);

}  // namespace fixbits::dsl::reference
