// lower_divide_test.cpp — codegen's division by a shared divisor (codegen/LowerDivide.h),
// compiled for this CPU by LLVM's JIT, gives the IEEE quotient's bits (memcmp against
// a / y) for: random numerators over every bit pattern with divisors in and around the
// reciprocal path's range [1, 2^24]; the path's edges (2^-100, FLT_MAX, +0 and -0,
// all-ones and zero mantissas); NaN, infinite, negative and subnormal operands; and calls
// where one register leaves the range while the others are in it.
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "absl/strings/str_format.h"
#include "codegen/LowerDivide.h"
#include "gtest/gtest.h"

namespace fixbits::codegen {
namespace {

constexpr int kRegs = 8;  // the softmax kernels' registers a thread

float from_bits(uint32_t b) { return std::bit_cast<float>(b); }

// Runs one call and compares each register with the host's IEEE division. The volatile
// keeps the compiler from folding a[i] / y with anything else.
struct Checker {
  explicit Checker(const HostDivide& d) : div(d) {}
  const HostDivide& div;
  uint64_t checked = 0, differ = 0;
  std::string first;
  std::string summary() const { return absl::StrFormat("%d of %d differ; first: %s", differ, checked, first); }
  void call(const float* a, float y) {
    float q[kRegs];
    div(a, y, q);
    for (int i = 0; i < kRegs; ++i) {
      volatile float num = a[i];
      const float want = num / y;
      ++checked;
      if (std::bit_cast<uint32_t>(q[i]) != std::bit_cast<uint32_t>(want) && differ++ == 0) {
        first = absl::StrFormat("a=%a (0x%08x) y=%a (0x%08x): got %a (0x%08x), IEEE %a (0x%08x)", a[i],
                                std::bit_cast<uint32_t>(a[i]), y, std::bit_cast<uint32_t>(y), q[i],
                                std::bit_cast<uint32_t>(q[i]), want, std::bit_cast<uint32_t>(want));
      }
    }
  }
};

std::unique_ptr<HostDivide> compiled() {
  absl::StatusOr<std::unique_ptr<HostDivide>> d = host_divide(kRegs);
  EXPECT_TRUE(d.ok()) << d.status();
  return d.ok() ? *std::move(d) : nullptr;
}

// A divisor: mostly in [1, 2^24] with random, all-ones or zero mantissas; one in eight
// any bit pattern (below 1, above 2^24, negative, zero, subnormal, infinite, NaN).
float random_divisor(std::mt19937_64& rng) {
  const uint64_t r = rng();
  if ((r & 7) == 0) return from_bits(static_cast<uint32_t>(r >> 32));
  const uint32_t e = 127 + static_cast<uint32_t>((r >> 3) % 25);
  uint32_t m = static_cast<uint32_t>(r >> 8) & 0x7fffff;
  if (((r >> 40) & 3) == 0) m = 0x7fffff;
  if (((r >> 40) & 3) == 1) m = 0;
  return std::min(from_bits((e << 23) | m), 0x1p24f);
}

TEST(LowerDivide, RandomNumeratorsOverEveryPatternGiveTheIeeeQuotient) {
  auto div = compiled();
  ASSERT_NE(div, nullptr);
  Checker c(*div);
  std::mt19937_64 rng(20261205);
  // Mostly the path's own range (positive numbers), then any pattern: 4 million quotients.
  for (int call = 0; call < 500000; ++call) {
    float a[kRegs];
    const float y = random_divisor(rng);
    for (float& v : a) {
      const uint32_t bits = static_cast<uint32_t>(rng());
      v = from_bits(call % 4 == 0 ? bits : bits & 0x7fffffff);
    }
    c.call(a, y);
  }
  EXPECT_EQ(c.differ, 0u) << c.summary();
}

TEST(LowerDivide, TheRangeEdgesAndSpecialValuesGiveTheIeeeQuotient) {
  auto div = compiled();
  ASSERT_NE(div, nullptr);
  Checker c(*div);
  std::vector<float> nums;
  for (float v : {0x1p-100f, std::numeric_limits<float>::max(), 1.0f, 0x1.fffffep-1f, 0x1p-126f, 0x1p-149f,
                  0x1.fffffep-101f, 3.0f}) {
    const uint32_t b = std::bit_cast<uint32_t>(v);
    for (int d = -3; d <= 3; ++d) {
      nums.push_back(from_bits(b + static_cast<uint32_t>(d)));
      nums.push_back(-from_bits(b + static_cast<uint32_t>(d)));
    }
  }
  for (uint32_t b : {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7fa00001u, 0xffc00000u,
                     0x7fffffffu}) {
    nums.push_back(from_bits(b));
  }
  std::vector<float> divisors;
  for (float v : {1.0f, 0x1.000002p0f, 0x1.fffffep0f, 0x1p24f, 0x1.000002p24f, 0x1.fffffep23f, 0x1.fffffep-1f,
                  3.0f, 4096.0f, 131072.0f, 0.5f, 0x1p-130f, 0.0f, -1.0f, -0.0f,
                  std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    divisors.push_back(v);
  }
  // Every numerator against every divisor, in register 0..7 of calls whose other
  // registers are in range (3/7 of a numerator close to 1), so one register out of
  // range sends the whole call to the divisions.
  for (float y : divisors) {
    for (size_t i = 0; i < nums.size(); ++i) {
      float a[kRegs];
      for (int r = 0; r < kRegs; ++r) a[r] = 0.4285714f + r * 0.01f;
      a[i % kRegs] = nums[i];
      c.call(a, y);
      for (int r = 0; r < kRegs; ++r) a[r] = nums[(i + r) % nums.size()];
      c.call(a, y);
    }
  }
  EXPECT_EQ(c.differ, 0u) << c.summary();
}

// Softmax's own operands: e_i in [0, 1] (zeros where x - max < -104), s in [1, cols].
TEST(LowerDivide, SoftmaxOperandsGiveTheIeeeQuotient) {
  auto div = compiled();
  ASSERT_NE(div, nullptr);
  Checker c(*div);
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> e(0.0f, 1.0f), s(1.0f, 131072.0f);
  for (int call = 0; call < 200000; ++call) {
    float a[kRegs];
    for (float& v : a) v = (rng() & 15) == 0 ? 0.0f : e(rng);
    c.call(a, s(rng));
  }
  EXPECT_EQ(c.differ, 0u) << c.summary();
}

TEST(LowerDivide, CountBelowOneIsAnError) {
  absl::StatusOr<std::unique_ptr<HostDivide>> d = host_divide(0);
  ASSERT_FALSE(d.ok());
  EXPECT_NE(std::string(d.status().message()).find("count"), std::string::npos);
}

}  // namespace
}  // namespace fixbits::codegen
