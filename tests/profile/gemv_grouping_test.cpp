// profile/GemvGrouping: the canonical grouping of a gemv leaf. Its one promise the scan
// relies on is checked against the CPU reference: two descriptors with equal lists give
// equal bits, on random f16 inputs spread over a wide range of exponents and signs (so
// any other grouping shows in the f32 result), over layouts, lane counts, tiles, turns
// and lengths. The worked examples of the header are checked as written.
#include "profile/GemvGrouping.h"

#include <cmath>
#include <random>

#include "dsl/FloatFormat.h"
#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"

namespace fixbits::profile {
namespace {

dsl::GemmDesc gemv(dsl::LaneLayout layout, int lanes, int tile, int64_t step,
                   dsl::ShortTurn st = dsl::ShortTurn::kLast, std::vector<int> fold = {}) {
  dsl::GemmDesc d;
  d.family = dsl::GemmFamily::kGemv;
  d.instruction = dsl::Instruction::kScalarFma;
  d.instruction_k = 1;
  d.use_fast_accum = step == 0;
  d.k_loop_step = {step, st};
  d.lane_layout = layout;
  d.lanes = lanes;
  d.lane_tile = tile;
  d.lane_fold = std::move(fold);
  return d;
}

constexpr int64_t O = kGroupOpen, C = kGroupClose;

TEST(GemvGrouping, TheHeaderExamples) {
  const dsl::GemmDesc strided8 = gemv(dsl::LaneLayout::kStrided, 4, 1, 8);
  EXPECT_EQ(gemv_grouping(strided8, 10),
            (std::vector<int64_t>{0, 4, 8, O, 1, 5, 9, C, O, 2, 6, C, O, 3, 7, C}));
  EXPECT_EQ(gemv_grouping(gemv(dsl::LaneLayout::kStrided, 4, 1, 0), 10),
            gemv_grouping(strided8, 10));
  EXPECT_EQ(gemv_grouping(gemv(dsl::LaneLayout::kStrided, 4, 1, 4), 10),
            gemv_grouping(strided8, 10));
  EXPECT_TRUE(gemv_groupings_differ(gemv(dsl::LaneLayout::kContiguous, 4, 1, 0), strided8, 10));
  // gemv2T against the canonical form its short probes return.
  const dsl::GemmDesc gemv2t = gemv(dsl::LaneLayout::kStrided, 16, 1, 512);
  const dsl::GemmDesc short_form = gemv(dsl::LaneLayout::kContiguous, 16, 1, 16);
  for (int64_t len : {1, 17, 181, 257, 512, 513, 528}) {
    EXPECT_FALSE(gemv_groupings_differ(gemv2t, short_form, len)) << len;
  }
  for (int64_t len : {529, 748, 2048}) EXPECT_TRUE(gemv_groupings_differ(gemv2t, short_form, len)) << len;
}

TEST(GemvGrouping, WhatItCannotVouchForDiffers) {
  const dsl::GemmDesc a = gemv(dsl::LaneLayout::kStrided, 16, 1, 0);
  dsl::GemmDesc plain;  // not a gemv
  EXPECT_TRUE(gemv_grouping(plain, 64).empty());
  EXPECT_TRUE(gemv_groupings_differ(a, plain, 64));
  dsl::GemmDesc muladd = a;
  muladd.instruction = dsl::Instruction::kScalarMulAdd;
  EXPECT_TRUE(gemv_groupings_differ(a, muladd, 64));
  // f32 products round: a one-product turn is no longer the chain's fma.
  dsl::GemmDesc f32 = a, f32_turns = gemv(dsl::LaneLayout::kStrided, 16, 1, 16);
  f32.a_dtype = f32.b_dtype = f32_turns.a_dtype = f32_turns.b_dtype = DType::kF32;
  EXPECT_FALSE(gemv_groupings_differ(a, gemv(dsl::LaneLayout::kStrided, 16, 1, 16), 64));
  EXPECT_TRUE(gemv_groupings_differ(f32, f32_turns, 64));
  EXPECT_FALSE(gemv_groupings_differ(f32, f32, 64));
  // Folded lanes keep their places: two folds, or one fold over other lane counts, differ.
  const dsl::GemmDesc fold16 = gemv(dsl::LaneLayout::kStrided, 16, 1, 0, {}, {8, 4, 2, 1});
  EXPECT_TRUE(gemv_groupings_differ(fold16, gemv(dsl::LaneLayout::kStrided, 16, 1, 0, {}, {1, 2, 4, 8}), 64));
  EXPECT_FALSE(gemv_groupings_differ(fold16, gemv(dsl::LaneLayout::kStrided, 16, 1, 64, {}, {8, 4, 2, 1}), 64));
}

// Random f16 inputs whose products span 2^-24..2^24 with random signs: a sum grouped
// otherwise rounds otherwise.
dsl::reference::GemmProblem spread_problem(int64_t k, std::mt19937_64& rng) {
  dsl::reference::GemmProblem p;
  p.m = p.n = 1;
  p.k = k;
  for (int64_t i = 0; i < k; ++i) {
    auto value = [&] {
      const float mant = 1.0f + static_cast<float>(rng() % 1024) / 1024.0f;
      return (rng() & 1 ? -1.0f : 1.0f) * std::ldexp(mant, static_cast<int>(rng() % 25) - 12);
    };
    p.a.push_back(to_bits(DType::kF16, value()));
    p.b.push_back(to_bits(DType::kF16, value()));
  }
  return p;
}

TEST(GemvGrouping, EqualListsGiveEqualBitsOnTheReference) {
  std::mt19937_64 rng(0x6e37);
  std::vector<dsl::GemmDesc> forms;
  for (int lanes : {1, 4, 16, 20}) {
    for (int tile : {1, 3}) {
      for (dsl::LaneLayout layout : {dsl::LaneLayout::kContiguous, dsl::LaneLayout::kStrided}) {
        for (int64_t step : {0, 16, 32, 64, 128, 512}) {
          for (dsl::ShortTurn st : {dsl::ShortTurn::kLast, dsl::ShortTurn::kFirst}) {
            if (step == 0 && st == dsl::ShortTurn::kFirst) continue;
            dsl::GemmDesc d = gemv(layout, lanes, tile, step, st);
            d.out_dtype = DType::kF32;  // every rounding of the sum shows
            if (dsl::validate(d).ok()) forms.push_back(d);
          }
        }
      }
    }
  }
  ASSERT_GT(forms.size(), 100u);
  int64_t equal_pairs = 0, differing_pairs = 0, bits_differ = 0;
  for (int64_t len : {1, 5, 16, 33, 100, 257, 530, 700}) {
    std::vector<dsl::reference::GemmProblem> draws;
    for (int i = 0; i < 3; ++i) draws.push_back(spread_problem(len, rng));
    std::vector<std::vector<uint32_t>> bits(forms.size());
    std::vector<std::vector<int64_t>> lists(forms.size());
    for (size_t f = 0; f < forms.size(); ++f) {
      lists[f] = gemv_grouping(forms[f], len);
      for (const auto& p : draws) bits[f].push_back((*dsl::reference::gemm(forms[f], p))[0]);
    }
    for (size_t a = 0; a < forms.size(); ++a) {
      for (size_t b = a + 1; b < forms.size(); ++b) {
        if (forms[a].lanes != forms[b].lanes && forms[a].lane_tile != forms[b].lane_tile) continue;
        if (lists[a] == lists[b]) {
          ++equal_pairs;
          ASSERT_EQ(bits[a], bits[b]) << "len " << len << ": " << forms[a] << " vs " << forms[b];
        } else {
          ++differing_pairs;
          bits_differ += bits[a] != bits[b];
        }
      }
    }
  }
  // Both kinds occur, and unequal lists mostly give unequal bits (the lists are no
  // coarser than the sums they stand for).
  EXPECT_GT(equal_pairs, 1000);
  EXPECT_GT(differing_pairs, 1000);
  EXPECT_GT(bits_differ, differing_pairs * 9 / 10) << bits_differ << " of " << differing_pairs;
}

}  // namespace
}  // namespace fixbits::profile
