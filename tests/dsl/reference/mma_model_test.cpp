// mma_model_test: the sm_90 truncating MMA model and the exact-RNE model on
// crafted cases whose bits are worked out by hand in the comments.
//
// Notation: ulp(1) = 2^-23 in f32; the sm90 alignment quantum is 2^(E-25) (2^(E-13)
// for fp8 inputs), E the leading bit position of the largest term.
#include "dsl/reference/MmaModel.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace fixbits::dsl::reference {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
float p2(int e) { return std::ldexp(1.0f, e); }

class MmaModelTest : public ::testing::Test {
 protected:
  uint32_t sm90(float c, const std::vector<float>& a, const std::vector<float>& b,
                DType in = DType::kF16) {
    return float_bits(sm90_->mma(c, a, b, in));
  }
  uint32_t rne(float c, const std::vector<float>& a, const std::vector<float>& b,
               DType in = DType::kF16) {
    return float_bits(rne_->mma(c, a, b, in));
  }
  std::unique_ptr<MmaModel> sm90_ = make_sm90_mma_model();
  std::unique_ptr<MmaModel> rne_ = make_exact_rne_mma_model();
};

TEST_F(MmaModelTest, Names) {
  EXPECT_STREQ(sm90_->name(), "sm90");
  EXPECT_STREQ(rne_->name(), "exact_rne");
}

// c = 1, product (3*2^-13)*(2^-12) = 3*2^-25 = 0.75 ulp(1). Exact sum 1 + 0.75 ulp:
// sm90 truncates toward zero -> 1.0 (0x3f800000); RNE -> 1 + ulp (0x3f800001).
TEST_F(MmaModelTest, FinalTruncationVersusRne) {
  EXPECT_EQ(sm90(1.0f, {3 * p2(-13)}, {p2(-12)}), 0x3f800000u);
  EXPECT_EQ(rne(1.0f, {3 * p2(-13)}, {p2(-12)}), 0x3f800001u);
  // Negative: toward zero keeps the magnitude 1.0; RNE gives -(1 + ulp).
  EXPECT_EQ(sm90(-1.0f, {-3 * p2(-13)}, {p2(-12)}), 0xbf800000u);
  EXPECT_EQ(rne(-1.0f, {-3 * p2(-13)}, {p2(-12)}), 0xbf800001u);
}

// 16 products: 1*1 and fifteen of (3*2^-14)*(2^-13) = 3*2^-27 = 0.75 units of the
// quantum 2^-25. Each small term truncates to 0 at alignment, so sm90 gives exactly
// 1.0 even though the exact sum 1 + 45*2^-27 = 1 + 2.8125 ulp would truncate to
// 1 + 2 ulp. RNE of the exact sum: 1 + 3 ulp (0x3f800003).
TEST_F(MmaModelTest, AlignmentDropsLowBitsOfEveryTerm) {
  std::vector<float> a(16, 3 * p2(-14)), b(16, p2(-13));
  a[0] = 1.0f;
  b[0] = 1.0f;
  EXPECT_EQ(sm90(0.0f, a, b), 0x3f800000u);
  EXPECT_EQ(rne(0.0f, a, b), 0x3f800003u);
  // Terms of exactly one unit (2^-12 * 2^-13 = 2^-25) survive: 1 + 15*2^-25 =
  // 1 + 3.75 ulp -> toward zero 1 + 3 ulp; RNE 1 + 4 ulp.
  std::fill(a.begin() + 1, a.end(), p2(-12));
  EXPECT_EQ(sm90(0.0f, a, b), 0x3f800003u);
  EXPECT_EQ(rne(0.0f, a, b), 0x3f800004u);
}

// Alignment truncates toward zero, not down: c = 1, product (-3*2^-15)*(2^-12) =
// -3*2^-27 = -0.75 units of 2^-25 -> 0, so the result is 1.0 (flooring would give
// -1 unit: 1 - 2^-25, then toward zero 1 - 2^-24 = 0x3f7fffff).
// With (-3*2^-14)*(2^-12) = -1.5 units -> -1 unit: 1 - 2^-25, and the final
// truncation toward zero (ulp below 1 is 2^-24) gives 0x3f7fffff.
TEST_F(MmaModelTest, AlignmentTruncatesTowardZero) {
  EXPECT_EQ(sm90(1.0f, {-3 * p2(-15)}, {p2(-12)}), 0x3f800000u);
  EXPECT_EQ(sm90(1.0f, {-3 * p2(-14)}, {p2(-12)}), 0x3f7fffffu);
  // RNE of the exact 1 - 3*2^-26 = 1 - 1.5 * 2^-25 = 1 - 0.75 ulp(below 1): 0x3f7fffff.
  EXPECT_EQ(rne(1.0f, {-3 * p2(-14)}, {p2(-12)}), 0x3f7fffffu);
}

// c takes part in the alignment. c = 1024, sixteen products (3*2^-9)*(2^-8) =
// 3*2^-17; E = 10, quantum 2^-15, each product is 0.75 units -> 0: result 1024.
// The exact sum 1024 + 48*2^-17 = 1024 + 3*2^-13 is 1024 + 3 ulp(1024).
TEST_F(MmaModelTest, AccumulatorSetsTheAlignment) {
  std::vector<float> a(16, 3 * p2(-9)), b(16, p2(-8));
  EXPECT_EQ(sm90(1024.0f, a, b), 0x44800000u);
  EXPECT_EQ(rne(1024.0f, a, b), 0x44800003u);
  // With c = 0 nothing is truncated: 48*2^-17 = 1.5*2^-12 exactly.
  EXPECT_EQ(sm90(0.0f, a, b), float_bits(1.5f * p2(-12)));
}

// The accumulator's own low bits are truncated when a product is larger:
// c = 1 + 2^-23, products 8*1 and -7.5*1: E = 3, quantum 2^-22, c -> 1.0, sum 1.5.
// Exact: 1.5 + 2^-23, representable -> 0x3fc00001.
TEST_F(MmaModelTest, AccumulatorLowBitsTruncated) {
  const float c = bits_float(0x3f800001u);
  EXPECT_EQ(sm90(c, {8.0f, -7.5f}, {1.0f, 1.0f}), 0x3fc00000u);
  EXPECT_EQ(rne(c, {8.0f, -7.5f}, {1.0f, 1.0f}), 0x3fc00001u);
}

// Alignment uses the sum of the inputs' exponent fields, not the product's leading
// bit (measured on sm_90). p0 = 1.5 * 1.5 = 2.25: exponent fields 0 + 0 = 0 although
// its leading bit is 1. Fifteen products 2^-12 * 2^-13 = 2^-25 are one unit each of
// the quantum 2^(0-25), so they survive: 2.25 + 15*2^-25 = 2.25 + 1.875 ulp(2)
// -> toward zero 2.25 + ulp = 0x40100001. (Aligned to the leading bit they would be
// half units, truncated to 0, giving 2.25 = 0x40100000.)
TEST_F(MmaModelTest, AlignmentUsesExponentFieldSum) {
  std::vector<float> a(16, p2(-12)), b(16, p2(-13));
  a[0] = b[0] = 1.5f;
  EXPECT_EQ(sm90(0.0f, a, b), 0x40100001u);
}

// A subnormal f16 input counts at the minimum exponent -14. p0 = 2^-24 * 1 has
// exponent fields -14 + 0 = -14, so E = -14 and the quantum is 2^-39; fifteen
// products 2^-24 * 2^-24 = 2^-48 are dropped -> exactly 2^-24. (By leading bits, E
// would be -24 and the 2^-48 terms would add 15*2^-48 = 7.5 ulp(2^-24) -> +7 ulp.)
TEST_F(MmaModelTest, SubnormalInputsAlignAtMinimumExponent) {
  std::vector<float> a(16, p2(-24)), b(16, p2(-24));
  b[0] = 1.0f;
  EXPECT_EQ(sm90(0.0f, a, b), float_bits(p2(-24)));
  // The exact model keeps them: 2^-24 * (1 + 15*2^-24) -> RNE 1 + 8*2^-23 (7.5 -> 8).
  EXPECT_EQ(rne(0.0f, a, b), float_bits(p2(-24)) + 8);
}

// fp8 inputs keep 13 fraction bits at alignment and in the result.
TEST_F(MmaModelTest, Fp8UsesThirteenBits) {
  // c = 1, product 2^-7 * 2^-7 = 2^-14 < quantum 2^-13 -> dropped.
  EXPECT_EQ(sm90(1.0f, {p2(-7)}, {p2(-7)}, DType::kF8E4M3), 0x3f800000u);
  // c = 1, product 2^-6 * 2^-7 = 2^-13: kept, 1 + 2^-13 = 0x3f800400.
  EXPECT_EQ(sm90(1.0f, {p2(-6)}, {p2(-7)}, DType::kF8E4M3), 0x3f800400u);
  // c = 1, products 1*1 and 2^-6 * 2^-7: sum 2 + 2^-13; the result keeps 13
  // fraction bits at exponent 1 (quantum 2^-12) -> 2.0. With f16 inputs the same
  // values give 2 + 2^-13 exactly (2^-13 = 512 ulp(2): 0x40000200).
  EXPECT_EQ(sm90(1.0f, {1.0f, p2(-6)}, {1.0f, p2(-7)}, DType::kF8E4M3), 0x40000000u);
  EXPECT_EQ(sm90(1.0f, {1.0f, p2(-6)}, {1.0f, p2(-7)}, DType::kF16), 0x40000200u);
}

TEST_F(MmaModelTest, NanAndInf) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (auto* m : {sm90_.get(), rne_.get()}) {
    SCOPED_TRACE(m->name());
    std::vector<float> one{1.0f}, zero{0.0f}, inf{kInf}, ninf{-kInf};
    EXPECT_EQ(float_bits(m->mma(nan, one, one, DType::kF16)), 0x7fffffffu);
    EXPECT_EQ(float_bits(m->mma(0.0f, std::vector<float>{nan}, one, DType::kF16)),
              0x7fffffffu);
    EXPECT_EQ(float_bits(m->mma(0.0f, inf, zero, DType::kF16)), 0x7fffffffu);  // inf * 0
    EXPECT_EQ(float_bits(m->mma(0.0f, zero, ninf, DType::kF16)), 0x7fffffffu);
    EXPECT_EQ(float_bits(m->mma(kInf, ninf, one, DType::kF16)), 0x7fffffffu);  // inf - inf
    EXPECT_EQ(float_bits(m->mma(0.0f, std::vector<float>{kInf, -kInf},
                                std::vector<float>{1.0f, 1.0f}, DType::kF16)),
              0x7fffffffu);
    EXPECT_EQ(m->mma(1.0f, inf, one, DType::kF16), kInf);
    EXPECT_EQ(m->mma(1.0f, inf, std::vector<float>{-2.0f}, DType::kF16), -kInf);
    EXPECT_EQ(m->mma(-kInf, one, one, DType::kF16), -kInf);
  }
}

TEST_F(MmaModelTest, SignedZeros) {
  for (auto* m : {sm90_.get(), rne_.get()}) {
    SCOPED_TRACE(m->name());
    // Every term -0 -> -0; any +0 term -> +0 (IEEE exact-zero sum).
    EXPECT_EQ(float_bits(m->mma(-0.0f, std::vector<float>{-0.0f}, std::vector<float>{1.0f},
                                DType::kF16)),
              0x80000000u);
    EXPECT_EQ(float_bits(m->mma(-0.0f, std::vector<float>{0.0f}, std::vector<float>{1.0f},
                                DType::kF16)),
              0x00000000u);
    // Cancellation to zero -> +0.
    EXPECT_EQ(float_bits(m->mma(-1.0f, std::vector<float>{1.0f}, std::vector<float>{1.0f},
                                DType::kF16)),
              0x00000000u);
  }
}

// f16 subnormals are exact inputs: 2^-24 * 2^-24 = 2^-48, a normal f32.
TEST_F(MmaModelTest, SubnormalInputs) {
  EXPECT_EQ(sm90(0.0f, {p2(-24)}, {p2(-24)}), float_bits(p2(-48)));
  EXPECT_EQ(rne(0.0f, {p2(-24)}, {p2(-24)}), float_bits(p2(-48)));
}

// Results in f32's subnormal range. bf16 inputs (3*2^-76) * 2^-75 = 1.5 * 2^-150 =
// 0.75 of the smallest subnormal 2^-149: RNE -> 2^-149 (0x00000001); toward zero -> +0.
TEST_F(MmaModelTest, SubnormalResults) {
  EXPECT_EQ(rne(0.0f, {3 * p2(-76)}, {p2(-75)}, DType::kBF16), 0x00000001u);
  EXPECT_EQ(sm90(0.0f, {3 * p2(-76)}, {p2(-75)}, DType::kBF16), 0x00000000u);
  // 2^-75 * 2^-75 = 2^-150 is exactly half: RNE ties to even -> +0.
  EXPECT_EQ(rne(0.0f, {p2(-75)}, {p2(-75)}, DType::kBF16), 0x00000000u);
  // 3 * 2^-150 = 1.5 subnormal units: tie -> 2 units.
  EXPECT_EQ(rne(0.0f, {3 * p2(-75)}, {p2(-75)}, DType::kBF16), 0x00000002u);
}

// The exact model sums across any exponent range: c = 2^100, products -2^100 * 1 and
// 2^-100 * 1: exactly 2^-100. sm90 aligns to 2^100 and loses 2^-100 -> +0.
TEST_F(MmaModelTest, ExactSumAcrossWideRange) {
  EXPECT_EQ(rne(p2(100), {-p2(100), p2(-100)}, {1.0f, 1.0f}, DType::kBF16),
            float_bits(p2(-100)));
  EXPECT_EQ(sm90(p2(100), {-p2(100), p2(-100)}, {1.0f, 1.0f}, DType::kBF16), 0x00000000u);
}

// RNE ties: 1 + 2^-24 (half ulp) -> 1.0 (even); 1 + 3*2^-24 -> 1 + 2 ulp (even);
// sm90 truncates the latter to 1 + ulp.
TEST_F(MmaModelTest, RneTiesToEven) {
  EXPECT_EQ(rne(1.0f, {p2(-12)}, {p2(-12)}), 0x3f800000u);
  EXPECT_EQ(rne(1.0f, {3 * p2(-12)}, {p2(-12)}), 0x3f800002u);
  EXPECT_EQ(sm90(1.0f, {3 * p2(-12)}, {p2(-12)}), 0x3f800001u);
  // Sticky bits below the guard: 1 + 2^-24 + 2^-40 -> above half -> 1 + ulp.
  EXPECT_EQ(rne(1.0f, {p2(-12), p2(-20)}, {p2(-12), p2(-20)}), 0x3f800001u);
}

// bf16 products can exceed the f32 range: 2^100 * 2^100 -> inf in both models.
TEST_F(MmaModelTest, Overflow) {
  EXPECT_EQ(sm90(0.0f, {p2(100)}, {p2(100)}, DType::kBF16), float_bits(kInf));
  EXPECT_EQ(rne(0.0f, {p2(100)}, {p2(100)}, DType::kBF16), float_bits(kInf));
  EXPECT_EQ(rne(0.0f, {-p2(100)}, {p2(100)}, DType::kBF16), float_bits(-kInf));
}

}  // namespace
}  // namespace fixbits::dsl::reference
