// lower_exp_test.cpp — codegen's fixbits_exp IR (codegen/LowerExp.h), compiled for this
// CPU by LLVM's JIT, gives reference::fixbits_exp's bits: every non-NaN argument of a
// strided sweep of all 2^32 patterns plus the range edges and their neighbours, for the
// general lowering and for those it may take (canonical-NaN targets, arguments <= 0, both).
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "codegen/LowerExp.h"
#include "dsl/reference/ExpF32.h"
#include "gtest/gtest.h"

namespace fixbits::codegen {
namespace {

using dsl::reference::fixbits_exp;

// The range edges of ExpF32.h (89, -104), 0, 1, the largest and smallest normals and
// subnormals, infinities, NaNs (quiet, signalling, negative), each with 4 neighbours.
std::vector<uint32_t> edge_patterns() {
  std::vector<uint32_t> centers;
  for (float v : {0.0f, 1.0f, 89.0f, 104.0f, 88.72283f, 87.33654f, 103.97208f, 126.0f, 150.0f,
                  1.17549435e-38f, 3.40282347e38f, 1.4e-45f}) {
    centers.push_back(std::bit_cast<uint32_t>(v));
    centers.push_back(std::bit_cast<uint32_t>(-v));
  }
  for (uint32_t b : {0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7fa00001u, 0xffc00000u, 0x7fffffffu}) {
    centers.push_back(b);
  }
  std::vector<uint32_t> out;
  for (uint32_t c : centers) {
    for (int d = -4; d <= 4; ++d) out.push_back(c + static_cast<uint32_t>(d));
  }
  return out;
}

// Every 61st bit pattern (about 70 million arguments; 61 is odd, so all exponents and
// low mantissa bits are met), then the edges. `check` sees each argument once.
// FIXBITS_LOWER_EXP_STRIDE=1 makes it all 2^32 (about a minute a test here).
uint64_t stride() {
  const char* v = std::getenv("FIXBITS_LOWER_EXP_STRIDE");
  const uint64_t s = v == nullptr ? 61 : std::strtoull(v, nullptr, 10);
  return s == 0 ? 61 : s;
}
template <typename F>
void sweep(F check) {
  const uint64_t step = stride();
  for (uint64_t b = 0; b < (uint64_t{1} << 32); b += step) check(static_cast<uint32_t>(b));
  for (uint32_t b : edge_patterns()) check(b);
}

struct Tally {
  uint64_t checked = 0, differ = 0;
  uint32_t first = 0;
  void add(uint32_t x, bool same) {
    ++checked;
    if (!same && differ++ == 0) first = x;
  }
};

TEST(LowerExp, GeneralLoweringIsTheReferenceBitForBit) {
  absl::StatusOr<std::unique_ptr<HostExp>> e = host_exp({});
  ASSERT_TRUE(e.ok()) << e.status();
  Tally t;
  sweep([&](uint32_t b) {
    const float x = std::bit_cast<float>(b);
    // NaNs too: both are x + x on this host.
    t.add(b, std::bit_cast<uint32_t>((**e)(x)) == std::bit_cast<uint32_t>(fixbits_exp(x)));
  });
  EXPECT_EQ(t.differ, 0u) << "first differing argument 0x" << std::hex << t.first << " of "
                          << std::dec << t.checked;
  EXPECT_GT(t.checked, (uint64_t{1} << 32) / stride());
}

TEST(LowerExp, CanonicalNanLoweringIsTheReferenceForEveryNumberAndANanForANan) {
  absl::StatusOr<std::unique_ptr<HostExp>> e = host_exp({.nan_is_canonical = true});
  ASSERT_TRUE(e.ok()) << e.status();
  Tally t;
  uint64_t nans = 0;
  sweep([&](uint32_t b) {
    const float x = std::bit_cast<float>(b);
    const float y = (**e)(x);
    if (std::isnan(x)) {
      ++nans;
      t.add(b, std::isnan(y));  // this host keeps payloads; sm_90 gives 0x7fffffff both ways
    } else {
      t.add(b, std::bit_cast<uint32_t>(y) == std::bit_cast<uint32_t>(fixbits_exp(x)));
    }
  });
  EXPECT_EQ(t.differ, 0u) << "first differing argument 0x" << std::hex << t.first;
  EXPECT_GT(nans, (uint64_t{1} << 24) / stride());
}

TEST(LowerExp, NonPositiveLoweringIsTheReferenceForEveryArgumentAtMostZero) {
  absl::StatusOr<std::unique_ptr<HostExp>> e = host_exp({.nan_is_canonical = true, .arg_non_positive = true});
  ASSERT_TRUE(e.ok()) << e.status();
  Tally t;
  uint64_t positive = 0;
  sweep([&](uint32_t b) {
    const float x = std::bit_cast<float>(b);
    const float y = (**e)(x);  // computed for a positive x too: defined, never a trap
    if (x > 0.0f) {
      ++positive;
    } else if (std::isnan(x)) {
      t.add(b, std::isnan(y));
    } else {
      t.add(b, std::bit_cast<uint32_t>(y) == std::bit_cast<uint32_t>(fixbits_exp(x)));
    }
  });
  EXPECT_EQ(t.differ, 0u) << "first differing argument 0x" << std::hex << t.first;
  EXPECT_GT(positive, (uint64_t{1} << 30) / stride());
}

// gfx942's lowering of softmax's exp: arguments <= 0, NaNs kept by the select of x + x.
TEST(LowerExp, NonPositiveLoweringWithNanSelectIsTheReferenceForEveryArgumentAtMostZeroAndNan) {
  absl::StatusOr<std::unique_ptr<HostExp>> e = host_exp({.arg_non_positive = true});
  ASSERT_TRUE(e.ok()) << e.status();
  Tally t;
  sweep([&](uint32_t b) {
    const float x = std::bit_cast<float>(b);
    const float y = (**e)(x);
    if (!(x > 0.0f)) t.add(b, std::bit_cast<uint32_t>(y) == std::bit_cast<uint32_t>(fixbits_exp(x)));
  });
  EXPECT_EQ(t.differ, 0u) << "first differing argument 0x" << std::hex << t.first;
  EXPECT_GT(t.checked, (uint64_t{1} << 31) / stride());
}

}  // namespace
}  // namespace fixbits::codegen
