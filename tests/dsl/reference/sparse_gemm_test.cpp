// sparse_gemm_test: reference::gemm_sparse_element gives exactly reference::gemm's bits
// (memcmp of the output pattern) over random descriptors of every family it evaluates
// itself (segment splits included), random K, the probe's fill and other fills (nonzero, -0.0, subnormal), and
// entries drawn from adversarial values (±L, r, subnormals, ±0, NaN, inf); and every
// error path.
#include "dsl/reference/Reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_format.h"

namespace fixbits::dsl::reference {
namespace {

struct Case {
  GemmDesc desc;
  int64_t k = 0;
  uint32_t a_fill = 0, b_fill = 0;
  std::vector<SparseEntry> entries;
};

class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}

  int64_t below(int64_t n) { return static_cast<int64_t>(rng_() % static_cast<uint64_t>(n)); }
  bool coin() { return rng_() & 1; }

  // Values that stress each rounding: the probe's L and r, subnormals, zeros of both
  // signs, NaN, inf, and ordinary values of both signs.
  float value(DType t) {
    switch (below(12)) {
      case 0: return 1024.0f;
      case 1: return -1024.0f;
      case 2: return std::ldexp(1.0f, -15);
      case 3: return std::ldexp(1.0f, dtype_is_fp8(t) ? -9 : -20);  // subnormal in f16/fp8
      case 4: return 0.0f;
      case 5: return -0.0f;
      case 6: return below(8) == 0 ? std::numeric_limits<float>::quiet_NaN() : 3.0f;
      case 7: return below(8) == 0 ? std::numeric_limits<float>::infinity() : -5.0f;
      default: {
        const float m = 1.0f + static_cast<float>(below(1 << 10)) / 1024.0f;
        return std::ldexp(coin() ? m : -m, static_cast<int>(below(16)) - 8);
      }
    }
  }
  uint32_t bits(DType t) { return to_bits(t, value(t), Saturation::kSatFinite); }

  GemmDesc desc() {
    for (;;) {
      GemmDesc d;
      const DType ins[] = {DType::kF16, DType::kBF16, DType::kF8E4M3};
      d.a_dtype = d.b_dtype = ins[below(3)];
      const DType outs[] = {DType::kF32, DType::kF16, DType::kBF16};
      d.out_dtype = outs[below(3)];
      const GemmFamily fams[] = {GemmFamily::kPlain, GemmFamily::kSplitK,
                                 GemmFamily::kChainedChunks, GemmFamily::kGemv};
      d.family = fams[below(4)];
      const bool scalar = d.family == GemmFamily::kChainedChunks ||
                          d.family == GemmFamily::kGemv || below(4) == 0;
      if (scalar) {
        d.instruction = coin() ? Instruction::kScalarFma : Instruction::kScalarMulAdd;
        d.instruction_k = 1;
      } else {
        d.instruction = coin() ? Instruction::kMmaSync : Instruction::kWgmma;
        d.instruction_k = matrix_instruction_k(d.a_dtype);
        if (d.a_dtype != DType::kF8E4M3 && d.instruction == Instruction::kMmaSync && coin()) {
          d.instruction_k = 8;
        }
        d.use_fast_accum = coin();
        d.k_loop_step = {d.instruction_k * below(5), coin() ? ShortTurn::kLast : ShortTurn::kFirst};
      }
      if (d.family == GemmFamily::kSplitK || d.family == GemmFamily::kChainedChunks) {
        int64_t span = 1 + below(120);
        const int levels = 1 + static_cast<int>(below(3));
        for (int i = 0; i < levels; ++i) {
          const Fold folds[] = {Fold::kChain, Fold::kTreeUp, Fold::kTreeDown};
          const Fold f = (i == 0 && d.family == GemmFamily::kSplitK) ? Fold::kChain : folds[below(3)];
          d.k_cuts.push_back({span, f});
          span = 1 + below(span);
        }
      }
      if (d.family == GemmFamily::kSplitK && below(3) == 0) {  // a segment split
        d.k_cuts = {{1 + below(64), Fold::kChain, 2 + below(7)}};
      }
      if (d.family == GemmFamily::kSplitK) {
        d.partial_dtype = outs[below(3)];
        d.merge_dtype = outs[below(3)];
      }
      if (d.family == GemmFamily::kGemv) {
        d.lanes = 1 + static_cast<int>(below(64));
        d.lane_layout = coin() ? LaneLayout::kContiguous : LaneLayout::kStrided;
        d.lane_tile = 1 + static_cast<int>(below(6));
        std::vector<int> fold;
        for (int off = 1; off < lane_slots(d.lanes); off *= 2) fold.push_back(off);
        std::shuffle(fold.begin(), fold.end(), rng_);
        d.lane_fold = fold;
        if (below(3) == 0) d.lane_fold.clear();  // lanes chained (gemv2T)
        if (coin()) {  // turns of a step (gemv2T: 512)
          d.use_fast_accum = false;
          d.k_loop_step = {1 + below(90), coin() ? ShortTurn::kLast : ShortTurn::kFirst};
        }
        if (coin()) {  // cuBLAS's split gemv: one split cut
          d.k_cuts = {{1 + below(120), Fold::kChain}};
          d.partial_dtype = outs[below(3)];
          d.merge_dtype = outs[below(3)];
        }
      }
      if (below(5) == 0) d.activation = Activation::kRelu;
      // The -0.0 seed where it is valid (plain, scalar, no cuts): the fill kind with a
      // -0.0 product below shows it.
      if (d.family == GemmFamily::kPlain && d.k_cuts.empty() && d.instruction_k == 1 && coin()) {
        d.neg_zero_seed = true;
      }
      if (validate(d).ok()) return d;
    }
  }

  Case one(int64_t max_k) {
    Case c;
    c.desc = desc();
    c.k = below(max_k + 1);
    const int fill_kind = static_cast<int>(below(4));
    if (fill_kind <= 1) {  // the probe's: a = +0, b = 1
      c.a_fill = to_bits(c.desc.a_dtype, 0.0f);
      c.b_fill = to_bits(c.desc.b_dtype, 1.0f);
    } else if (fill_kind == 2) {  // -0.0 times a positive b: a -0.0 product
      c.a_fill = to_bits(c.desc.a_dtype, -0.0f);
      c.b_fill = to_bits(c.desc.b_dtype, 2.0f);
    } else {  // anything: every step of a fill run changes the value
      c.a_fill = bits(c.desc.a_dtype);
      c.b_fill = bits(c.desc.b_dtype);
    }
    const int64_t n = c.k == 0 ? 0 : below(std::min<int64_t>(c.k, 7) + 1);
    std::vector<int64_t> at;
    while (static_cast<int64_t>(at.size()) < n) {
      const int64_t x = below(c.k);
      if (std::find(at.begin(), at.end(), x) == at.end()) at.push_back(x);
    }
    std::sort(at.begin(), at.end());
    for (int64_t x : at) {
      c.entries.push_back({x, bits(c.desc.a_dtype), below(3) == 0 ? bits(c.desc.b_dtype) : c.b_fill});
    }
    return c;
  }

 private:
  std::mt19937_64 rng_;
};

uint32_t dense(const Case& c) {
  GemmProblem p;
  p.m = p.n = 1;
  p.k = c.k;
  p.a.assign(static_cast<size_t>(c.k), c.a_fill);
  p.b.assign(static_cast<size_t>(c.k), c.b_fill);
  for (const SparseEntry& e : c.entries) {
    p.a[static_cast<size_t>(e.k)] = e.a;
    p.b[static_cast<size_t>(e.k)] = e.b;
  }
  absl::StatusOr<std::vector<uint32_t>> out = gemm(c.desc, p);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0] : 0xdeadbeefu;
}

void expect_same(const Case& c, int i) {
  absl::StatusOr<uint32_t> s = gemm_sparse_element(c.desc, c.k, c.a_fill, c.b_fill, c.entries);
  ASSERT_TRUE(s.ok()) << s.status();
  const uint32_t want = dense(c);
  std::string where;
  for (const SparseEntry& e : c.entries) where += absl::StrFormat(" %d:%x/%x", e.k, e.a, e.b);
  ASSERT_EQ(*s, want) << "case " << i << ": " << to_string(c.desc) << " K=" << c.k
                      << " fill " << std::hex << c.a_fill << "/" << c.b_fill << " entries"
                      << where;
}

TEST(GemmSparseElement, EqualsTheDenseReferenceOnRandomDescriptorsAndEntries) {
  Draw draw(0x5ba75e);
  for (int i = 0; i < 6000; ++i) expect_same(draw.one(300), i);
}

// Long K with the probe's fill: the runs of fill steps that the sparse path skips are
// long here, and every level and turn boundary is crossed many times.
TEST(GemmSparseElement, EqualsTheDenseReferenceAtLongKWithTheProbesFill) {
  Draw draw(0x10a6);
  int done = 0;
  for (int i = 0; done < 300; ++i) {
    Case c = draw.one(6000);
    if (c.k < 1000) continue;
    c.a_fill = to_bits(c.desc.a_dtype, 0.0f);
    c.b_fill = to_bits(c.desc.b_dtype, 1.0f);
    expect_same(c, i);
    ++done;
  }
}

// The probe's own placements: +L, -L and r on a K axis of zeros, at boundaries.
TEST(GemmSparseElement, EqualsTheDenseReferenceOnProbePlacements) {
  GemmDesc d;
  d.family = GemmFamily::kSplitK;
  d.instruction = Instruction::kMmaSync;
  d.instruction_k = 16;
  d.use_fast_accum = false;
  d.k_loop_step = {64, ShortTurn::kFirst};
  d.k_cuts = {{192, Fold::kChain}, {48, Fold::kTreeDown}};
  d.partial_dtype = DType::kF16;
  const uint32_t L = to_bits(DType::kF16, 1024.0f), nL = to_bits(DType::kF16, -1024.0f);
  const uint32_t r_a = to_bits(DType::kF16, std::ldexp(1.0f, -8));
  const uint32_t r_b = to_bits(DType::kF16, std::ldexp(1.0f, -7));
  const uint32_t one = to_bits(DType::kF16, 1.0f), zero = 0;
  const int64_t k = 1000;
  for (int64_t q : {int64_t{0}, int64_t{191}, int64_t{960}}) {
    for (int64_t m = 0; m + 1 < k; ++m) {
      if (m == q || m + 1 == q) continue;
      std::vector<SparseEntry> e = {{q, r_a, r_b}, {m, L, one}, {m + 1, nL, one}};
      std::sort(e.begin(), e.end(), [](const SparseEntry& x, const SparseEntry& y) { return x.k < y.k; });
      expect_same(Case{d, k, zero, one, e}, static_cast<int>(m));
    }
  }
}

TEST(GemmSparseElement, BadEntriesAndPatternsAreInvalidArgumentNamingThem) {
  GemmDesc d;
  d.instruction = Instruction::kScalarFma;
  d.instruction_k = 1;
  std::vector<SparseEntry> unsorted = {{5, 0x3c00, 0x3c00}, {2, 0x3c00, 0x3c00}};
  absl::StatusOr<uint32_t> s = gemm_sparse_element(d, 10, 0, 0x3c00, unsorted);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("entries[1].k"), std::string::npos) << s.status();
  std::vector<SparseEntry> out_of_range = {{10, 0x3c00, 0x3c00}};
  s = gemm_sparse_element(d, 10, 0, 0x3c00, out_of_range);
  EXPECT_NE(s.status().message().find("entries[0].k is 10"), std::string::npos) << s.status();
  std::vector<SparseEntry> wide = {{1, 0x13c00, 0x3c00}};
  s = gemm_sparse_element(d, 10, 0, 0x3c00, wide);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("gemm_sparse_element.a"), std::string::npos) << s.status();
  s = gemm_sparse_element(d, -1, 0, 0x3c00, {});
  EXPECT_NE(s.status().message().find("k is -1"), std::string::npos) << s.status();
  GemmDesc bad = d;
  bad.instruction_k = 4;
  s = gemm_sparse_element(bad, 10, 0, 0x3c00, {});
  EXPECT_NE(s.status().message().find("GemmDesc.instruction_k"), std::string::npos) << s.status();
}

}  // namespace
}  // namespace fixbits::dsl::reference
