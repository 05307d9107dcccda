// exp_f32_test: fixbits_exp's special values, exact points, and its accuracy
// against the double-precision exp (the contract promises the op sequence; the
// accuracy bound is what makes that sequence a usable exp).
#include "dsl/reference/ExpF32.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

#include "dsl/FloatFormat.h"

namespace fixbits::dsl::reference {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Distance in ulps between float y and the real value want (ulp of want in f32,
// subnormal ulp 2^-149 at the bottom).
double ulp_error(float y, double want) {
  const int e = std::max(std::ilogb(want), -126);
  return std::fabs(double(y) - want) / std::ldexp(1.0, e - 23);
}

TEST(ExpF32, SpecialValues) {
  EXPECT_EQ(float_bits(fixbits_exp(0.0f)), 0x3f800000u);
  EXPECT_EQ(float_bits(fixbits_exp(-0.0f)), 0x3f800000u);
  EXPECT_TRUE(std::isnan(fixbits_exp(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(fixbits_exp(kInf), kInf);
  EXPECT_EQ(float_bits(fixbits_exp(-kInf)), 0x00000000u);
  EXPECT_EQ(fixbits_exp(89.5f), kInf);
  EXPECT_EQ(fixbits_exp(88.8f), kInf);  // e^88.8 > FLT_MAX: overflow in the last multiply
  EXPECT_TRUE(std::isfinite(fixbits_exp(88.7f)));
  EXPECT_EQ(float_bits(fixbits_exp(-104.5f)), 0x00000000u);
  EXPECT_EQ(float_bits(fixbits_exp(-1000.0f)), 0x00000000u);
  // e^-100 ~ 3.7e-44 is subnormal (2^-144.3): nonzero, gradual underflow.
  const float tiny = fixbits_exp(-100.0f);
  EXPECT_GT(tiny, 0.0f);
  EXPECT_LT(tiny, std::ldexp(1.0f, -126));
  EXPECT_LE(ulp_error(tiny, std::exp(-100.0)), 1.0);
}

// exp(1) = 2.71828182845..., f32 nearest 0x402df854.
TEST(ExpF32, KnownValues) {
  EXPECT_LE(ulp_error(fixbits_exp(1.0f), std::exp(1.0)), 1.0);
  const uint32_t e1 = float_bits(fixbits_exp(1.0f));
  EXPECT_TRUE(e1 == 0x402df854u || e1 == 0x402df853u || e1 == 0x402df855u) << std::hex << e1;
  EXPECT_LE(ulp_error(fixbits_exp(-1.0f), std::exp(-1.0)), 1.0);
  EXPECT_LE(ulp_error(fixbits_exp(std::log(2.0f)), 2.0), 1.0);
}

// Every 97th f32 bit pattern in [-103, 88.7]: within 2 ulp of exp in double.
TEST(ExpF32, AccuracySweep) {
  double worst = 0;
  float worst_x = 0;
  int count = 0;
  for (uint32_t b = 0; b < 0xffffffffu - 97; b += 97) {
    const float x = bits_float(b);
    if (!(x >= -103.0f && x <= 88.7f)) continue;
    const double err = ulp_error(fixbits_exp(x), std::exp(double(x)));
    ++count;
    if (err > worst) {
      worst = err;
      worst_x = x;
    }
  }
  EXPECT_GT(count, 10000000);
  EXPECT_LE(worst, 2.0) << "worst at x = " << worst_x;
  std::printf("fixbits_exp: %d points, worst error %.3f ulp at x = %.9g\n", count, worst,
              worst_x);
}

}  // namespace
}  // namespace fixbits::dsl::reference
