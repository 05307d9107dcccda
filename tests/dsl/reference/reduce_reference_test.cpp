// reduce_reference_test: reference::reduce, pinned and free orders on crafted rows
// whose bits are worked out by hand, max/min NaN rules, RMSNorm and softmax on rows
// where the result is exact, and every error path.
//
// Notation: u = 2^-23 = ulp(1) in f32, r = 2^-25 = u/4. 1 + r rounds to 1, 1 + 2r
// is a tie and rounds to 1 (even), 1 + 4r = 1 + u is exact.
#include "dsl/reference/Reference.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dsl/reference/ExpF32.h"

namespace fixbits::dsl::reference {
namespace {

const float r = std::ldexp(1.0f, -25);
constexpr float kInf = std::numeric_limits<float>::infinity();

std::vector<uint32_t> bits_of(DType t, const std::vector<float>& v) {
  std::vector<uint32_t> out;
  for (float x : v) out.push_back(to_bits(t, x));
  return out;
}

ReduceDesc desc(ReduceOp op, TreeOrder order = TreeOrder::kPinned, int64_t strip = 1024) {
  ReduceDesc d;
  d.op = op;
  d.order = order;
  d.strip = strip;
  return d;
}

// Reduces one f32 row; returns the single output's bits.
uint32_t row(const ReduceDesc& d, const std::vector<float>& x, const FreeLayout& f = {}) {
  ReduceProblem p;
  p.rows = 1;
  p.cols = static_cast<int64_t>(x.size());
  p.x = bits_of(d.in_dtype, x);
  absl::StatusOr<std::vector<uint32_t>> out = reduce(d, p, f);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || out->size() != 1) return 0xdeadbeefu;
  return (*out)[0];
}

const std::vector<float> kCrafted{1.0f, r, r, r, r, r, r, r};

// Pinned, strip 8: (1+r)=1, (r+r)=2r, 2r, 2r; then 1+2r = 1 (tie), 4r; then 1+4r =
// 1 + u = 0x3f800001. Strip 2: strips 1, 2r, 2r, 2r chained: 1 + 2r = 1 each time -> 1.0.
// Strip 1 is the sequential chain -> 1.0.
TEST(ReduceReference, PinnedTreeOverLogicalIndex) {
  EXPECT_EQ(row(desc(ReduceOp::kSum, TreeOrder::kPinned, 8), kCrafted), 0x3f800001u);
  EXPECT_EQ(row(desc(ReduceOp::kSum, TreeOrder::kPinned, 1024), kCrafted), 0x3f800001u);
  EXPECT_EQ(row(desc(ReduceOp::kSum, TreeOrder::kPinned, 2), kCrafted), 0x3f800000u);
  EXPECT_EQ(row(desc(ReduceOp::kSum, TreeOrder::kPinned, 1), kCrafted), 0x3f800000u);
}

// The pinned order ignores the free layout argument entirely.
TEST(ReduceReference, PinnedIgnoresLayout) {
  for (FreeLayout f : {FreeLayout{8, 1, 1}, FreeLayout{1, 8, 1}, FreeLayout{1, 1, 8},
                       FreeLayout{2, 2, 2}, FreeLayout{4, 32, 4}}) {
    EXPECT_EQ(row(desc(ReduceOp::kSum, TreeOrder::kPinned, 8), kCrafted, f), 0x3f800001u);
  }
}

// Free order on the crafted row:
//   E=8 L=1 W=1: one thread folds 1 + r + ... sequentially: every r lost -> 1.0.
//   E=1 L=8 W=1: lanes hold one element each; butterfly down d=4: v0 = 1 + r = 1,
//     v1..3 = 2r; d=2: v0 = 1 + 2r = 1, v1 = 4r; d=1: v0 = 1 + 4r = 1 + u.
//   E=1 L=1 W=8: warps folded sequentially -> 1.0.
//   E=2 L=2 W=2: warp 0: threads (1 + r = 1) and (2r), butterfly 1 + 2r = 1;
//     warp 1: 2r and 2r -> 4r; across warps 1 + 4r = 1 + u.
TEST(ReduceReference, FreeOrderDependsOnLayout) {
  const ReduceDesc d = desc(ReduceOp::kSum, TreeOrder::kFree);
  EXPECT_EQ(row(d, kCrafted, {8, 1, 1}), 0x3f800000u);
  EXPECT_EQ(row(d, kCrafted, {1, 8, 1}), 0x3f800001u);
  EXPECT_EQ(row(d, kCrafted, {1, 1, 8}), 0x3f800000u);
  EXPECT_EQ(row(d, kCrafted, {2, 2, 2}), 0x3f800001u);
}

// A thread folds across chunks: E=1 L=2 W=1 on [1, r, r, r, r, r, r, r]: chunk = 2,
// lane 0 holds x0, x2, x4, x6 = 1 + r + r + r -> 1.0; lane 1 holds x1, x3, x5, x7
// = 4r; butterfly: 1 + 4r = 1 + u. And E=4 L=2 W=1: lane 0 = x0..3 = 1, lane 1 =
// x4..7 = 4r -> 1 + u. E=2 L=4: lane0 = 1+r = 1, lanes 1..3 = 2r; d=2: v0 = 1 + 2r
// = 1, v1 = 4r; d=1: 1 + 4r = 1 + u. E=4 L=1 W=2: warps 1 and 4r -> 1 + u.
// E=3 L=1 W=1 (a length that does not divide the row) is sequential -> 1.0.
TEST(ReduceReference, FreeOrderChunks) {
  const ReduceDesc d = desc(ReduceOp::kSum, TreeOrder::kFree);
  EXPECT_EQ(row(d, kCrafted, {1, 2, 1}), 0x3f800001u);
  EXPECT_EQ(row(d, kCrafted, {4, 2, 1}), 0x3f800001u);
  EXPECT_EQ(row(d, kCrafted, {2, 4, 1}), 0x3f800001u);
  EXPECT_EQ(row(d, kCrafted, {4, 1, 2}), 0x3f800001u);
  EXPECT_EQ(row(d, kCrafted, {3, 1, 1}), 0x3f800000u);
  // [r, r, r, r, 1, r, r, r] with E=1 L=1 W=... sequential: 4r + 1 = 1 + u, then
  // three r lost -> 1 + u; pinned strip 8: (2r)(2r)(1)(2r) -> 4r, 1 -> 1 + 4r = 1+u.
  const std::vector<float> moved{r, r, r, r, 1.0f, r, r, r};
  EXPECT_EQ(row(d, moved, {8, 1, 1}), 0x3f800001u);
}

// Identity padding: a row shorter than the strip pads with -0.0, so a row of -0.0
// sums to -0.0; an empty line gives the identity.
TEST(ReduceReference, PaddingWithIdentity) {
  EXPECT_EQ(row(desc(ReduceOp::kSum), {-0.0f}), 0x80000000u);
  EXPECT_EQ(row(desc(ReduceOp::kSum), {-0.0f, -0.0f, -0.0f}), 0x80000000u);
  EXPECT_EQ(row(desc(ReduceOp::kSum), {-0.0f, 0.0f, -0.0f}), 0x00000000u);
  // Five elements in a strip of 8: (1 + r) = 1, (r + r) = 2r, (r + pad) = r;
  // 1 + 2r = 1, r; 1 + r = 1.
  EXPECT_EQ(row(desc(ReduceOp::kSum, TreeOrder::kPinned, 8), {1.0f, r, r, r, r}),
            0x3f800000u);
  ReduceProblem empty;
  empty.rows = 2;
  empty.cols = 0;
  absl::StatusOr<std::vector<uint32_t>> out = reduce(desc(ReduceOp::kSum), empty);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, (std::vector<uint32_t>{0x80000000u, 0x80000000u}));
  out = reduce(desc(ReduceOp::kMax), empty);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, (std::vector<uint32_t>{0xff800000u, 0xff800000u}));
}

TEST(ReduceReference, MaxMinWithNanAndZeros) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (TreeOrder o : {TreeOrder::kPinned, TreeOrder::kFree}) {
    EXPECT_EQ(row(desc(ReduceOp::kMax, o), {1.0f, 5.0f, -3.0f, 2.0f, 4.0f}),
              float_bits(5.0f));
    EXPECT_EQ(row(desc(ReduceOp::kMin, o), {1.0f, 5.0f, -3.0f, 2.0f, 4.0f}),
              float_bits(-3.0f));
    EXPECT_EQ(row(desc(ReduceOp::kMax, o), {1.0f, nan, 3.0f}), 0x7fffffffu);
    EXPECT_EQ(row(desc(ReduceOp::kMin, o), {nan, 1.0f}), 0x7fffffffu);
    EXPECT_EQ(row(desc(ReduceOp::kMax, o), {-0.0f, 0.0f}), 0x00000000u);
    EXPECT_EQ(row(desc(ReduceOp::kMax, o), {0.0f, -0.0f}), 0x00000000u);
    EXPECT_EQ(row(desc(ReduceOp::kMin, o), {0.0f, -0.0f}), 0x80000000u);
    EXPECT_EQ(row(desc(ReduceOp::kMax, o), {-kInf}), 0xff800000u);
    EXPECT_EQ(row(desc(ReduceOp::kMin, o), {kInf, kInf}), 0x7f800000u);
    EXPECT_EQ(row(desc(ReduceOp::kSum, o), {kInf, -kInf}), 0x7fffffffu);
  }
}

// Column axis: x = [[1, 2], [3, 4], [5, 6]] -> column sums [9, 12]. A column with
// the crafted values reduces like the row did: pinned strip 8 -> 1 + u.
TEST(ReduceReference, ColumnAxis) {
  ReduceDesc d = desc(ReduceOp::kSum);
  d.axis = ReduceAxis::kColumn;
  ReduceProblem p;
  p.rows = 3;
  p.cols = 2;
  p.x = bits_of(DType::kF32, {1, 2, 3, 4, 5, 6});
  absl::StatusOr<std::vector<uint32_t>> out = reduce(d, p);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, bits_of(DType::kF32, {9, 12}));

  d.strip = 8;
  p.rows = 8;
  p.cols = 2;
  p.x.clear();
  for (float v : kCrafted) {
    p.x.push_back(float_bits(v));
    p.x.push_back(float_bits(2 * v));
  }
  out = reduce(d, p);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, (std::vector<uint32_t>{0x3f800001u, 0x40000001u}));
}

// f16 in and out: [2048, 1, 1] pinned: (2048 + 1) + 1 = 2050 in f32, f16 -> 2050
// (quantum 2 at 2048: 0x6801). Rounding each add to f16 would give 2048.
TEST(ReduceReference, HalfInputsAccumulateInF32) {
  ReduceDesc d = desc(ReduceOp::kSum);
  d.in_dtype = DType::kF16;
  d.out_dtype = DType::kF16;
  EXPECT_EQ(row(d, {2048.0f, 1.0f, 1.0f}), 0x6801u);
  // Output rounding: [2048, 1] = 2049 in f32 -> f16 tie -> 2048 (0x6800).
  EXPECT_EQ(row(d, {2048.0f, 1.0f}), 0x6800u);
}

// RMSNorm on rows where every op is exact:
//   x = [1, 1, 1, 1], w = [1, 2, 3, 4], eps = 0: ms = 1, r = 1, y = w.
//   eps = 3: ms + eps = 4, sqrt = 2, r = 0.5: y = [0.5, 1, 1.5, 2].
//   x = [3, -4] (ms = 12.5), w = [1, 1], eps = 3.5: 16 -> r = 0.25: y = [0.75, -1].
TEST(ReduceReference, RmsNormExactRows) {
  ReduceDesc d = desc(ReduceOp::kRmsNorm);
  ReduceProblem p;
  p.rows = 1;
  p.cols = 4;
  p.x = bits_of(DType::kF32, {1, 1, 1, 1});
  p.w = bits_of(DType::kF32, {1, 2, 3, 4});
  p.eps = 0.0f;
  absl::StatusOr<std::vector<uint32_t>> out = reduce(d, p);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, bits_of(DType::kF32, {1, 2, 3, 4}));
  p.eps = 3.0f;
  out = reduce(d, p);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, bits_of(DType::kF32, {0.5f, 1.0f, 1.5f, 2.0f}));
  p.cols = 2;
  p.x = bits_of(DType::kF32, {3, -4});
  p.w = bits_of(DType::kF32, {1, 1});
  p.eps = 3.5f;
  out = reduce(d, p);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, bits_of(DType::kF32, {0.75f, -1.0f}));
}

// RMSNorm against a double computation on an inexact row: within 4 ulp, and the
// column axis with the transposed data gives the same bits as the row axis.
TEST(ReduceReference, RmsNormNearDoubleAndColumnMatchesRow) {
  std::vector<float> x, w;
  for (int i = 0; i < 37; ++i) {
    x.push_back(std::sin(0.37f * i) * 3.0f);
    w.push_back(1.0f + 0.01f * i);
  }
  ReduceDesc d = desc(ReduceOp::kRmsNorm, TreeOrder::kPinned, 8);
  ReduceProblem p;
  p.rows = 1;
  p.cols = 37;
  p.x = bits_of(DType::kF32, x);
  p.w = bits_of(DType::kF32, w);
  absl::StatusOr<std::vector<uint32_t>> out = reduce(d, p);
  ASSERT_TRUE(out.ok()) << out.status();
  double ss = 0;
  for (float v : x) ss += double(v) * v;
  const double rr = 1.0 / std::sqrt(ss / 37 + 1e-6);
  for (int i = 0; i < 37; ++i) {
    const double want = x[i] * rr * w[i];
    const int e = want == 0.0 ? -126 : std::ilogb(want);  // x[0] = 0 gives want = 0
    EXPECT_NEAR(bits_float((*out)[i]), want, 4 * std::ldexp(1.0, e - 23));
  }
  ReduceDesc dc = d;
  dc.axis = ReduceAxis::kColumn;
  ReduceProblem pc = p;
  pc.rows = 37;
  pc.cols = 1;
  absl::StatusOr<std::vector<uint32_t>> col = reduce(dc, pc);
  ASSERT_TRUE(col.ok()) << col.status();
  EXPECT_EQ(*col, *out);
}

// Softmax on exact rows: equal entries -> 1/n; x = [-inf, 0] -> [0, 1];
// x = [1000, 1000] -> [0.5, 0.5] (max subtracted first, no overflow).
TEST(ReduceReference, SoftmaxExactRows) {
  ReduceDesc d = desc(ReduceOp::kSoftmax);
  ReduceProblem p;
  p.rows = 3;
  p.cols = 4;
  p.x = bits_of(DType::kF32, {0, 0, 0, 0, -kInf, 0, -kInf, -kInf, 1000, 1000, -kInf, -kInf});
  absl::StatusOr<std::vector<uint32_t>> out = reduce(d, p);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, bits_of(DType::kF32, {0.25f, 0.25f, 0.25f, 0.25f, 0, 1, 0, 0, 0.5f, 0.5f,
                                        0, 0}));
}

// Softmax on an inexact row, checked step by step: y_i = e_i / s with e_i =
// fixbits_exp(x_i - m) and s the pinned sum of four e_i; strip 4 gives
// s = (e0 + e1) + (e2 + e3). Also near the double softmax.
TEST(ReduceReference, SoftmaxFollowsTheWrittenSequence) {
  const std::vector<float> x{0.5f, -1.25f, 2.0f, 0.125f};
  ReduceDesc d = desc(ReduceOp::kSoftmax, TreeOrder::kPinned, 4);
  ReduceProblem p;
  p.rows = 1;
  p.cols = 4;
  p.x = bits_of(DType::kF32, x);
  absl::StatusOr<std::vector<uint32_t>> out = reduce(d, p);
  ASSERT_TRUE(out.ok()) << out.status();
  float e[4];
  for (int i = 0; i < 4; ++i) e[i] = fixbits_exp(x[i] - 2.0f);
  const float s01 = e[0] + e[1];
  const float s23 = e[2] + e[3];
  const float s = s01 + s23;
  double ds = 0;
  for (float v : x) ds += std::exp(double(v) - 2.0);
  for (int i = 0; i < 4; ++i) {
    const float yi = e[i] / s;
    EXPECT_EQ((*out)[i], float_bits(yi)) << i;
    EXPECT_NEAR(yi, std::exp(double(x[i]) - 2.0) / ds, 1e-6);
  }
}

// Small integers make every order exact: each layout and strip must visit every
// element exactly once and give the exact sum, max and min.
TEST(ReduceReference, EveryElementCombinedExactlyOnce) {
  uint32_t seed = 777;
  auto next = [&]() { seed = seed * 1664525u + 1013904223u; return seed >> 8; };
  for (int64_t n : {1, 2, 3, 31, 32, 33, 100, 1000, 3000}) {
    std::vector<float> x(n);
    for (float& v : x) v = static_cast<float>(static_cast<int>(next() % 201) - 100);
    float sum = 0, mx = -kInf, mn = kInf;
    for (float v : x) {
      sum += v;
      mx = std::max(mx, v);
      mn = std::min(mn, v);
    }
    for (int64_t strip : {1, 2, 8, 1024, 65536}) {
      EXPECT_EQ(row(desc(ReduceOp::kSum, TreeOrder::kPinned, strip), x), float_bits(sum + 0.0f))
          << n << " " << strip;
      EXPECT_EQ(row(desc(ReduceOp::kMax, TreeOrder::kPinned, strip), x), float_bits(mx));
      EXPECT_EQ(row(desc(ReduceOp::kMin, TreeOrder::kPinned, strip), x), float_bits(mn));
    }
    for (FreeLayout f : {FreeLayout{1, 1, 1}, FreeLayout{4, 32, 4}, FreeLayout{3, 8, 3},
                         FreeLayout{8, 64, 1}, FreeLayout{1, 2, 32}}) {
      EXPECT_EQ(row(desc(ReduceOp::kSum, TreeOrder::kFree), x, f), float_bits(sum + 0.0f))
          << n << " E=" << f.elems_per_thread << " L=" << f.lanes << " W=" << f.warps;
      EXPECT_EQ(row(desc(ReduceOp::kMax, TreeOrder::kFree), x, f), float_bits(mx));
      EXPECT_EQ(row(desc(ReduceOp::kMin, TreeOrder::kFree), x, f), float_bits(mn));
    }
  }
}

void expect_error(const ReduceDesc& d, const ReduceProblem& p, const std::string& needle,
                  const FreeLayout& f = {}) {
  absl::StatusOr<std::vector<uint32_t>> out = reduce(d, p, f);
  ASSERT_FALSE(out.ok()) << "expected an error mentioning " << needle;
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find(needle), std::string_view::npos)
      << out.status().message();
}

TEST(ReduceReference, ErrorsNameTheBadField) {
  ReduceProblem p;
  p.rows = 2;
  p.cols = 3;
  p.x = std::vector<uint32_t>(5, 0);
  expect_error(desc(ReduceOp::kSum), p, "ReduceProblem.x has 5 elements; rows*cols = 6.");
  p.x.resize(6, 0);
  EXPECT_TRUE(reduce(desc(ReduceOp::kSum), p).ok());
  expect_error(desc(ReduceOp::kSum, TreeOrder::kPinned, 3), p, "ReduceDesc.strip");
  expect_error(desc(ReduceOp::kRmsNorm), p, "ReduceProblem.w has 0 elements");
  expect_error(desc(ReduceOp::kSum, TreeOrder::kFree), p, "FreeLayout.lanes", {4, 3, 1});
  expect_error(desc(ReduceOp::kSum, TreeOrder::kFree), p, "FreeLayout.elems_per_thread",
               {0, 32, 1});
  expect_error(desc(ReduceOp::kSum, TreeOrder::kFree), p, "FreeLayout.warps", {1, 32, 0});
  // A bad free layout is ignored by the pinned order.
  EXPECT_TRUE(reduce(desc(ReduceOp::kSum), p, {0, 3, 0}).ok());
  ReduceDesc half = desc(ReduceOp::kSum);
  half.in_dtype = DType::kF16;
  p.x[4] = 0x10000;
  expect_error(half, p, "ReduceProblem.x[4] is 0x10000");
  ReduceProblem neg;
  neg.rows = -1;
  expect_error(desc(ReduceOp::kSum), neg, "negative extent");
  ReduceProblem huge;
  huge.rows = int64_t{1} << 40;
  huge.cols = int64_t{1} << 40;
  expect_error(desc(ReduceOp::kSum), huge, "more than 2^32 elements");
  absl::Status bad_layout = validate_free_layout({1, 128, 1});
  EXPECT_EQ(bad_layout.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(validate_free_layout({4, 32, 4}).ok());
}

}  // namespace
}  // namespace fixbits::dsl::reference
