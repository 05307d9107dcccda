// Tests of the probe: the ±L/r instrument, the pair walk on hand-checked cases, the
// level matcher on the reference's K = 576 example, the lane-fold experiments, and
// recover_gemm_desc against the CPU reference (reference::gemm with a fixed
// GemmDesc) as the black box, for a few dozen descriptors. Where a field is provably
// unobservable the case says why, and the test compares the bits of the recovered
// and the true descriptor's reference outputs on fresh random inputs instead.
#include "dsl/probe/Probe.h"

#include <cmath>
#include <cstring>
#include <algorithm>
#include <random>
#include <set>
#include <string>

#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"
#include "tests/dsl/CublasDot.h"

namespace fixbits::dsl::probe {
namespace {

GemmBlackBox box_of(const GemmDesc& d) {
  return [d](const reference::GemmProblem& p) { return reference::gemm(d, p); };
}

TEST(ProbeValuesTest, DocumentedConstants) {
  ProbeValues h = probe_values(DType::kF16, DType::kF16);
  EXPECT_EQ(h.L, 1024.0f);
  EXPECT_EQ(h.r, std::ldexp(1.0f, -15));
  EXPECT_EQ(h.L_a, 0x7400u);  // f16 2^14
  EXPECT_EQ(h.L_b, 0x2c00u);  // f16 2^-4
  EXPECT_EQ(h.r_a, 0x1000u);  // f16 2^-11
  EXPECT_EQ(h.r_b, 0x2c00u);  // f16 2^-4
  EXPECT_EQ(h.fill_b, 0x2c00u);  // every b is the fill: a placement lives in A alone
  ProbeValues b = probe_values(DType::kBF16, DType::kBF16);
  EXPECT_EQ(b.L_a, 0x4680u);  // bf16 2^14
  EXPECT_EQ(b.r_b, b.fill_b);
  EXPECT_EQ(b.r, std::ldexp(1.0f, -15));
  ProbeValues e = probe_values(DType::kF8E4M3, DType::kF8E5M2);
  EXPECT_EQ(e.L, 256.0f);
  EXPECT_EQ(e.r, std::ldexp(1.0f, -18));
  EXPECT_EQ(e.L_a, 0x78u);  // e4m3 256: exponent 15 (bias 7), fraction 0
  EXPECT_EQ(e.r_b, 0x18u);  // e5m2 2^-9: exponent field 6 (bias 15), fraction 0
  // r is lost in an f32 add with L and survives alone.
  for (const ProbeValues& v : {h, b, e}) {
    EXPECT_EQ(v.L + v.r, v.L);
    EXPECT_EQ((v.L + v.r) - v.L, 0.0f);
  }
}

TEST(ProbeValuesTest, Classify) {
  const float r = std::ldexp(1.0f, -15);
  EXPECT_EQ(classify(DType::kF16, r, 0x0000), Outcome::kZero);
  EXPECT_EQ(classify(DType::kF16, r, 0x8000), Outcome::kZero);  // -0.0
  EXPECT_EQ(classify(DType::kF16, r, 0x0200), Outcome::kR);     // 2^-15, f16 subnormal
  EXPECT_EQ(classify(DType::kF16, r, 0x6400), Outcome::kOther);  // 1024
  EXPECT_EQ(classify(DType::kF16, r, 0x7e00), Outcome::kOther);  // NaN
  EXPECT_EQ(classify(DType::kF32, r, 0x38000000), Outcome::kR);
  EXPECT_EQ(classify(DType::kF32, r, 0x80000000), Outcome::kZero);
}

// Hand-derived walk: f16 mma_sync, ik = 16, fast accumulation, K = 48. The pair
// loses r exactly where it straddles an instruction boundary after r joined the
// accumulator (m = 15, 31); elsewhere it is summed exactly with r or cancels
// inside its own instruction.
TEST(PairWalkTest, PlainFastAccumBoundaries) {
  GemmDesc d;  // f16 mma_sync ik 16 fast accum
  Instrument inst(box_of(d), DType::kF16, DType::kF16, DType::kF16);
  absl::StatusOr<std::vector<Outcome>> walk = inst.pair_walk(48);
  ASSERT_TRUE(walk.ok()) << walk.status();
  for (int64_t m = 1; m + 1 < 48; ++m) {
    const Outcome want = (m == 15 || m == 31) ? Outcome::kZero : Outcome::kR;
    EXPECT_EQ((*walk)[m], want) << "m=" << m;
  }
  EXPECT_EQ(inst.calls(), 46);
}

// The reference's split-K example: K = 576, three parts of 192. The split's
// boundaries show as 0 at m = 191 and 383; inside r's part every instruction
// boundary shows too (r is in the accumulator there).
TEST(PairWalkTest, SplitKSpanWalkAndLevelMatch) {
  GemmDesc d;
  d.family = GemmFamily::kSplitK;
  d.k_cuts = {{192, Fold::kChain}};
  Instrument inst(box_of(d), DType::kF16, DType::kF16, DType::kF16);
  absl::StatusOr<std::vector<Outcome>> walk = inst.pair_walk(576);
  ASSERT_TRUE(walk.ok()) << walk.status();
  std::set<int64_t> zeros;
  for (int64_t m = 1; m + 1 < 576; ++m) {
    if ((*walk)[m] == Outcome::kZero) zeros.insert(m);
    EXPECT_NE((*walk)[m], Outcome::kOther) << m;
  }
  std::set<int64_t> want = {383};
  for (int64_t m = 15; m < 192; m += 16) want.insert(m);
  EXPECT_EQ(zeros, want);
  const LevelMatch outer = match_level(*walk, 576, true, inst.values(), DType::kF16);
  EXPECT_EQ(outer.span, 192);
  ASSERT_EQ(outer.folds.size(), 1u);
  EXPECT_EQ(outer.folds[0], Fold::kChain);
  // Inside [0, 192) the instruction boundaries look like a chained level of 16:
  // the walk alone cannot tell them apart; the random draws do (below).
  const LevelMatch inner = match_level(*walk, 192, false, inst.values(), DType::kF16);
  EXPECT_EQ(inner.span, 16);
  const auto nests =
      candidate_nests(*walk, 576, GemmFamily::kSplitK, 3, inst.values(), DType::kF16);
  ASSERT_GE(nests.size(), 2u);
  EXPECT_EQ(nests[0], (std::vector<KCut>{{192, Fold::kChain}}));
}

// Lanes 8, fold [2, 1, 4]: pairwise experiments give the order back.
TEST(LaneFoldTest, RecoversRoundOrder) {
  GemmDesc d;
  d.family = GemmFamily::kGemv;
  d.a_dtype = d.b_dtype = d.out_dtype = DType::kF32;
  d.instruction = Instruction::kScalarFma;
  d.instruction_k = 1;
  d.lanes = 8;
  d.lane_tile = 2;
  d.lane_layout = LaneLayout::kStrided;
  d.lane_fold = {2, 1, 4};
  Instrument inst(box_of(d), DType::kF32, DType::kF32, DType::kF32);
  std::vector<int64_t> first = {0, 2, 4, 6, 8, 10, 12, 14};
  absl::StatusOr<std::vector<int>> fold = recover_lane_fold(inst, 32, 8, first);
  ASSERT_TRUE(fold.ok()) << fold.status();
  EXPECT_EQ(*fold, (std::vector<int>{2, 1, 4}));
  EXPECT_EQ(inst.calls(), 3);
  // Lane 4 empty: offset 4 is unobservable and goes last.
  first[4] = -1;
  fold = recover_lane_fold(inst, 32, 8, first);
  ASSERT_TRUE(fold.ok()) << fold.status();
  EXPECT_EQ(*fold, (std::vector<int>{2, 1, 4}));
}

// The strided experiment (reference §4 ii) by hand: strided, 4 lanes, tiles of 2,
// K = 24: lane 0 holds {0,1, 8,9, 16,17}. +L at 0, -L at 17, r walks: r is lost
// exactly at lane 0's other elements, a pattern of period 8.
TEST(StridedExperimentTest, ReadsLaneZeroMembership) {
  GemmDesc d;
  d.family = GemmFamily::kGemv;
  d.a_dtype = d.b_dtype = d.out_dtype = DType::kF32;
  d.instruction = Instruction::kScalarFma;
  d.instruction_k = 1;
  d.lanes = 4;
  d.lane_tile = 2;
  d.lane_layout = LaneLayout::kStrided;
  d.lane_fold = {1, 2};
  Instrument inst(box_of(d), DType::kF32, DType::kF32, DType::kF32);
  const std::set<int64_t> lane0 = {1, 8, 9, 16};
  for (int64_t m = 1; m < 24; ++m) {
    if (m == 17) continue;
    absl::StatusOr<Outcome> o = inst.run(Placement{24, {{0, '+'}, {17, '-'}, {m, 'r'}}}, "t");
    ASSERT_TRUE(o.ok()) << o.status();
    EXPECT_EQ(*o, lane0.count(m) ? Outcome::kZero : Outcome::kR) << "m=" << m;
  }
  // Under a contiguous guess (-L at 5, the end of lane 0's run of 6) the pair
  // splits across lanes 0 and 2 and the pattern is no longer periodic.
  int zeros = 0;
  for (int64_t m = 1; m < 24; ++m) {
    if (m == 5) continue;
    absl::StatusOr<Outcome> o = inst.run(Placement{24, {{0, '+'}, {5, '-'}, {m, 'r'}}}, "t");
    ASSERT_TRUE(o.ok());
    zeros += *o == Outcome::kZero;
  }
  EXPECT_GT(zeros, 4);
}

struct Case {
  std::string name;
  GemmDesc desc;
  int64_t k;
  // True when every field is observable at this K: the recovered descriptor must
  // equal `desc`. False: `why` says which field is not, and bits are compared.
  bool exact;
  std::string why;
};

GemmDesc mma(DType in, DType out, bool fast, int64_t step, ShortTurn st) {
  GemmDesc d;
  d.a_dtype = d.b_dtype = in;
  d.out_dtype = out;
  d.instruction_k = in == DType::kTF32 ? 8 : (dtype_is_fp8(in) ? 32 : 16);
  d.use_fast_accum = fast;
  d.k_loop_step = {step, st};
  return d;
}

GemmDesc scalar(DType in, DType out, Instruction i) {
  GemmDesc d;
  d.a_dtype = d.b_dtype = in;
  d.out_dtype = out;
  d.instruction = i;
  d.instruction_k = 1;
  d.k_loop_step = {0, ShortTurn::kLast};
  return d;
}

GemmDesc split(GemmDesc d, std::vector<KCut> cuts, DType partial, DType merge) {
  d.family = GemmFamily::kSplitK;
  d.k_cuts = std::move(cuts);
  d.partial_dtype = partial;
  d.merge_dtype = merge;
  return d;
}

GemmDesc chunks(GemmDesc d, std::vector<KCut> cuts) {
  d.family = GemmFamily::kChainedChunks;
  d.k_cuts = std::move(cuts);
  return d;
}

GemmDesc gemv(DType in, Instruction i, LaneLayout layout, int lanes, int tile,
              std::vector<int> fold) {
  GemmDesc d = scalar(in, in == DType::kF32 ? DType::kF32 : DType::kF16, i);
  d.family = GemmFamily::kGemv;
  d.lane_layout = layout;
  d.lanes = lanes;
  d.lane_tile = tile;
  d.lane_fold = std::move(fold);
  return d;
}

std::vector<Case> cases() {
  using enum ShortTurn;
  const DType f16 = DType::kF16, bf16 = DType::kBF16, f32 = DType::kF32;
  const Instruction fma = Instruction::kScalarFma, mul_add = Instruction::kScalarMulAdd;
  const LaneLayout contiguous = LaneLayout::kContiguous, strided = LaneLayout::kStrided;
  std::vector<Case> c = {
      {"plain_fast", mma(f16, f16, true, 0, kLast), 100, true, ""},
      {"plain_fast_short_first_32", mma(f16, f16, true, 32, kFirst), 120, true, ""},
      // At K = 100 this descriptor equals step 0/first: 100 % 32 == 100 % 16, so the
      // same short turn of 4 leads and every instruction starts at 4 + 16j.
      {"plain_fast_short_first_32_k100", mma(f16, f16, true, 32, kFirst), 100, false,
       "with fast accumulation only K % step decides the groups, and 100 % 32 == 100 % 16"},
      {"plain_two_roundings_64_last", mma(f16, f16, false, 64, kLast), 200, true, ""},
      {"plain_two_roundings_32_first", mma(f16, f16, false, 32, kFirst), 100, true, ""},
      {"plain_two_roundings_ik", mma(f16, f16, false, 0, kLast), 96, true, ""},
      {"plain_bf16_short_first", mma(bf16, bf16, true, 0, kFirst), 100, true, ""},
      {"plain_bf16_out_f32_128_first", mma(bf16, f32, false, 128, kFirst), 300, true, ""},
      {"plain_fp8_64_last", mma(DType::kF8E4M3, f16, false, 64, kLast), 200, true, ""},
      {"plain_tf32_fast", mma(DType::kTF32, f32, true, 0, kLast), 50, true, ""},
      {"plain_scalar_fma_f32", scalar(f32, f32, fma), 50, true, ""},
      {"plain_scalar_mul_add_f32", scalar(f32, f32, mul_add), 50, true, ""},
      {"plain_scalar_mul_add_f16", scalar(f16, f16, mul_add), 64, false,
       "f16 products are exact in f32, so fma and mul+add give the same bits"},
      {"plain_fast_step_64_last", mma(f16, f16, true, 64, kLast), 200, false,
       "fast accumulation with the short turn last starts every instruction at a "
       "multiple of 16 whatever the step"},
      {"split_192", split(mma(f16, f16, true, 0, kLast), {{192, Fold::kChain}}, f32, f32),
       576, true, ""},
      {"split_192_partial_f16",
       split(mma(f16, f16, true, 0, kLast), {{192, Fold::kChain}}, f16, f32), 576, true, ""},
      {"split_192_bf16_both_non_dividing",
       split(mma(bf16, bf16, true, 0, kLast), {{192, Fold::kChain}}, bf16, bf16), 500, true,
       ""},
      {"split_two_level_tree_down",
       split(mma(f16, f16, false, 32, kLast), {{192, Fold::kChain}, {64, Fold::kTreeDown}},
             f32, f32),
       576, true, ""},
      {"split_two_level_chain",
       split(mma(f16, f16, true, 0, kFirst), {{256, Fold::kChain}, {64, Fold::kChain}}, f32,
             f32),
       650, false,
       "an inner chain level of 64 over a fast-accumulating leaf is the same tree as "
       "two roundings per turn of 64 without the level; the probe reports the latter"},
      {"split_scalar_fma_f32", split(scalar(f32, f32, fma), {{48, Fold::kChain}}, f32, f32),
       150, true, ""},
      {"split_partial_f16_merge_f16",
       split(mma(f16, f16, false, 64, kFirst), {{96, Fold::kChain}}, f16, f16), 400, true,
       ""},
      {"chunks_tree_up_chain",
       chunks(scalar(f32, f32, fma), {{128, Fold::kTreeUp}, {32, Fold::kChain}}), 520, true,
       ""},
      {"chunks_chain_f32", chunks(scalar(f32, f32, mul_add), {{64, Fold::kChain}}), 256, true,
       ""},
      {"chunks_tree_down_tree_up",
       chunks(scalar(f32, f32, fma), {{100, Fold::kTreeDown}, {25, Fold::kTreeUp}}), 400,
       true, ""},
      {"gemv_contiguous_32x8_up",
       gemv(f32, fma, contiguous, 32, 8, {1, 2, 4, 8, 16}), 256, false,
       "at K = 256 each lane's run is one tile of 8, the equal run of 256 / 32: the probe "
       "reports the equal-runs form, lane_tile = 1, which carries to every K"},
      // Equal runs of ceil(K / lanes) (cuBLAS's id 13 GEMV classes): one descriptor at
      // every K, K = 128 and 129 (runs of 32 and 33) alike.
      {"gemv_contiguous_4_equal_runs_k128", gemv(f16, fma, contiguous, 4, 1, {2, 1}), 128, true, ""},
      {"gemv_contiguous_4_equal_runs_k129", gemv(f16, fma, contiguous, 4, 1, {2, 1}), 129, true, ""},
      {"gemv_strided_32x4_down",
       gemv(f32, fma, strided, 32, 4, {16, 8, 4, 2, 1}), 512, true, ""},
      {"gemv_strided_8x2_mixed", gemv(f32, mul_add, strided, 8, 2, {2, 1, 4}), 100, true, ""},
      {"gemv_strided_16x2_mixed_f16", gemv(f16, fma, strided, 16, 2, {4, 1, 8, 2}), 64, true,
       ""},
      {"gemv_contiguous_16x4", gemv(f32, fma, contiguous, 16, 4, {8, 4, 2, 1}), 256, false,
       "contiguous lanes see only the run a lane gets (16 here), not the tile that "
       "makes it up; the probe reports the equal-runs form, lane_tile = 1"},
      {"gemv_strided_64x1", gemv(f32, fma, strided, 64, 1, {32, 16, 8, 4, 2, 1}), 200, true,
       ""},
      {"gemv_contiguous_non_dividing_4x3",
       gemv(f32, fma, contiguous, 4, 3, {1, 2}), 30, false,
       "the run of 9 elements per lane is visible, its tiles of 3 are not"},
  };
  GemmDesc wg = mma(f16, f16, false, 64, kFirst);
  wg.instruction = Instruction::kWgmma;
  c.push_back({"plain_wgmma_64_first", wg, 300, true, ""});
  GemmDesc e5 = mma(DType::kF8E4M3, f32, true, 64, kFirst);
  e5.b_dtype = DType::kF8E5M2;
  c.push_back({"split_fp8_mixed_fast_first",
               split(e5, {{256, Fold::kChain}}, f32, f32), 700, true, ""});
  e5.out_dtype = bf16;
  // An fp8 instruction loses r whenever it holds an L (13-bit alignment), so only
  // the trailing walk (r after the pair) shows where the short turn of the last
  // part falls; bf16 partials hide it from random draws.
  c.push_back({"split_fp8_mixed_fast_first_bf16",
               split(e5, {{256, Fold::kChain}}, bf16, f32), 700, true, ""});
  c.push_back({"split_three_levels",
               split(mma(f16, f16, true, 0, kLast),
                     {{384, Fold::kChain}, {128, Fold::kTreeDown}, {32, Fold::kTreeUp}}, f32,
                     f32),
               1000, true, ""});
  c.push_back({"split_three_levels_inner_chain",
               split(mma(f16, f16, true, 0, kLast),
                     {{384, Fold::kChain}, {128, Fold::kTreeDown}, {32, Fold::kChain}}, f32,
                     f32),
               1000, false,
               "a chained level of 32 over fast accumulation is the same tree as turns of "
               "32 with two roundings; the probe reports the two-level form"});
  c.push_back({"split_three_levels_collapsible",
               split(mma(f16, f16, false, 32, kLast),
                     {{384, Fold::kChain}, {128, Fold::kTreeUp}, {64, Fold::kChain}}, f32, f32),
               1000, false,
               "turns of 32 summed in chains of 2, then of 2, then a tree_up over 3 is the "
               "same tree as a tree_up over parts of 32 with fast accumulation"});
  c.push_back({"split_span_beyond_k",
               split(mma(f16, f16, true, 0, kLast), {{1024, Fold::kChain}}, f16, f32), 576,
               false, "a split span >= K leaves one part; the probe reports span K"});
  c.push_back({"gemv_bf16_contiguous_8_down",
               gemv(bf16, fma, contiguous, 8, 12, {4, 2, 1}), 96, false,
               "each lane's run is one tile of 12, the equal run of 96 / 8: the probe reports "
               "the equal-runs form, lane_tile = 1"});
  c.push_back({"gemv_one_lane", gemv(f32, mul_add, contiguous, 1, 7, {}), 40, false,
               "one lane folds everything in order; its tile is invisible"});
  return c;
}

// Fresh random inputs (a different generator from the probe's), M = 3, N = 2.
reference::GemmProblem fresh_problem(const GemmDesc& d, int64_t k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto value = [&](DType t) {
    const float x = std::ldexp(1.0f + static_cast<float>(rng() % 1024) / 1024.0f,
                               static_cast<int>(rng() % 9) - 4) *
                    ((rng() & 1) ? -1.0f : 1.0f);
    return to_bits(t, x, Saturation::kSatFinite);
  };
  reference::GemmProblem p;
  p.m = 3;
  p.n = 2;
  p.k = k;
  for (int64_t i = 0; i < p.m * k; ++i) p.a.push_back(value(d.a_dtype));
  for (int64_t i = 0; i < k * p.n; ++i) p.b.push_back(value(d.b_dtype));
  return p;
}

class RecoverTest : public ::testing::TestWithParam<Case> {};

TEST_P(RecoverTest, RecoversTheDescriptor) {
  const Case& c = GetParam();
  ASSERT_TRUE(validate(c.desc).ok()) << validate(c.desc);
  ProbeOptions o;
  o.a_dtype = c.desc.a_dtype;
  o.b_dtype = c.desc.b_dtype;
  o.out_dtype = c.desc.out_dtype;
  o.family = c.desc.family;
  if (c.desc.instruction == Instruction::kWgmma) o.matrix_instruction = Instruction::kWgmma;
  o.k = c.k;
  absl::StatusOr<GemmDesc> got = recover_gemm_desc(box_of(c.desc), o);
  ASSERT_TRUE(got.ok()) << got.status();
  if (c.exact) {
    EXPECT_EQ(*got, c.desc);
  } else {
    EXPECT_NE(*got, c.desc) << "marked unobservable but recovered exactly: " << c.why;
  }
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const reference::GemmProblem p = fresh_problem(c.desc, c.k, seed * 7919);
    absl::StatusOr<std::vector<uint32_t>> want = reference::gemm(c.desc, p);
    absl::StatusOr<std::vector<uint32_t>> have = reference::gemm(*got, p);
    ASSERT_TRUE(want.ok() && have.ok());
    ASSERT_EQ(want->size(), have->size());
    EXPECT_EQ(std::memcmp(want->data(), have->data(), want->size() * sizeof(uint32_t)), 0)
        << "recovered " << *got;
  }
}

INSTANTIATE_TEST_SUITE_P(Descriptors, RecoverTest, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

// Property sweep: random valid descriptors of every family. Exactness is not
// asked (random ones are often equivalent to a simpler form); the recovered
// descriptor must give the true one's bits on fresh inputs.
TEST(RecoverSweepTest, RandomDescriptorsGiveTheSameBits) {
  std::mt19937_64 rng(2024);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  int probed = 0;
  for (int trial = 0; trial < 60; ++trial) {
    GemmDesc d;
    const int64_t k = 40 + pick(400);
    const int family = trial % 4;
    const DType ins[] = {DType::kF16, DType::kBF16, DType::kF8E4M3, DType::kF32};
    const DType in = ins[pick(4)];
    d.a_dtype = d.b_dtype = in;
    d.out_dtype = in == DType::kF32 ? DType::kF32 : (pick(2) ? DType::kF16 : DType::kF32);
    const bool scalar_only = family >= 2 || in == DType::kF32;
    if (scalar_only || pick(4) == 0) {
      d.instruction = pick(2) ? Instruction::kScalarFma : Instruction::kScalarMulAdd;
      d.instruction_k = 1;
      d.k_loop_step = {0, ShortTurn::kLast};
    } else {
      d.instruction_k = dtype_is_fp8(in) ? 32 : 16;
      d.use_fast_accum = pick(2);
      d.k_loop_step = {d.instruction_k * pick(5), pick(2) ? ShortTurn::kFirst : ShortTurn::kLast};
    }
    const Fold folds[] = {Fold::kChain, Fold::kTreeUp, Fold::kTreeDown};
    if (family == 1 || family == 2) {
      d.family = family == 1 ? GemmFamily::kSplitK : GemmFamily::kChainedChunks;
      int64_t span = k / 4 + pick(static_cast<int>(k / 4));
      d.k_cuts.push_back({span, family == 1 ? Fold::kChain : folds[pick(3)]});
      if (pick(2) && span / 3 >= 2) d.k_cuts.push_back({2 + pick(static_cast<int>(span / 3)), folds[pick(3)]});
      if (family == 1) {
        const DType parts[] = {DType::kF32, DType::kF16, DType::kBF16};
        d.partial_dtype = parts[pick(3)];
        d.merge_dtype = parts[pick(3)];
      }
    } else if (family == 3) {
      d.family = GemmFamily::kGemv;
      d.lanes = 1 << pick(6);
      d.lane_tile = 1 + pick(6);
      d.lane_layout = pick(2) ? LaneLayout::kStrided : LaneLayout::kContiguous;
      d.lane_fold.clear();
      for (int off = 1; off < d.lanes; off *= 2) d.lane_fold.push_back(off);
      std::shuffle(d.lane_fold.begin(), d.lane_fold.end(), rng);
    }
    ASSERT_TRUE(validate(d).ok()) << validate(d) << " " << d;
    ProbeOptions o;
    o.a_dtype = d.a_dtype;
    o.b_dtype = d.b_dtype;
    o.out_dtype = d.out_dtype;
    o.family = d.family;
    o.k = k;
    absl::StatusOr<GemmDesc> got = recover_gemm_desc(box_of(d), o);
    ASSERT_TRUE(got.ok()) << got.status() << "\n  true " << d << " k=" << k;
    ++probed;
    for (uint64_t seed = 11; seed <= 13; ++seed) {
      const reference::GemmProblem p = fresh_problem(d, k, seed);
      absl::StatusOr<std::vector<uint32_t>> want = reference::gemm(d, p);
      absl::StatusOr<std::vector<uint32_t>> have = reference::gemm(*got, p);
      ASSERT_TRUE(want.ok() && have.ok());
      EXPECT_EQ(*want, *have) << "true " << d << "\n  got  " << *got << " k=" << k;
    }
  }
  EXPECT_EQ(probed, 60);
}

// mma.sync m16n8k8 (instruction_k 8, the s1688 kernels cuBLAS launches on sm_90):
// with ProbeOptions.instruction_k = 8 the probe recovers the descriptor exactly;
// with the dtype's 16 it finds none (so the scan must search both), on fresh inputs
// the recovered descriptor gives the true one's bits.
// 32 strided lanes of one element folded 16, 8, 4, 2, 1 (cuBLAS's gemvx kernels, the
// H200's id 13 custom 75/93 classes) at large K: the draws and the pair walks let 2, 4
// or 8 lanes through (session 11's run 6 gave the bf16 class 2 lanes); the r walks
// with -L at 2, 4, ... 64 elements do not. The recovered descriptor is the kernel's.
TEST(RecoverTest, GemvLaneCountAtLargeK) {
  for (DType t : {DType::kBF16, DType::kF16}) {
    GemmDesc d;
    d.family = GemmFamily::kGemv;
    d.a_dtype = d.b_dtype = d.out_dtype = t;
    d.instruction = Instruction::kScalarFma;
    d.instruction_k = 1;
    d.lanes = 32;
    d.lane_tile = 1;
    d.lane_layout = LaneLayout::kStrided;
    d.lane_fold = {16, 8, 4, 2, 1};
    for (int64_t k : {341, 1601, 2000, 4096}) {
      ProbeOptions o;
      o.a_dtype = o.b_dtype = o.out_dtype = t;
      o.family = GemmFamily::kGemv;
      o.k = k;
      absl::StatusOr<GemmDesc> got = recover_gemm_desc(box_of(d), o);
      ASSERT_TRUE(got.ok()) << got.status();
      EXPECT_EQ(*got, d) << dtype_name(t) << " K = " << k;
    }
  }
}

// cuBLAS's gemvNSP above N = 8448 (the H200 record: M = 1, N = 10618, K = 212, bf16):
// 20 strided lanes of 4 folded 16, 8, 4, 2, 1 with lanes 20..31 absent. The default
// search (powers of two) cannot hold it; with ProbeOptions.gemv_lanes = {20} (the
// kernel's blockDim.y from the launch record) the probe recovers it exactly, and 24
// and 26 lanes likewise. A bad hint is InvalidArgument naming the field.
TEST(RecoverTest, GemvLaneCountFromTheLaunchRecord) {
  for (int lanes : {20, 24, 26}) {
    GemmDesc d;
    d.family = GemmFamily::kGemv;
    d.a_dtype = d.b_dtype = d.out_dtype = DType::kBF16;
    d.instruction = Instruction::kScalarFma;
    d.instruction_k = 1;
    d.lanes = lanes;
    d.lane_tile = 4;
    d.lane_layout = LaneLayout::kStrided;
    d.lane_fold = {16, 8, 4, 2, 1};
    ASSERT_TRUE(validate(d).ok()) << validate(d);
    ProbeOptions o;
    o.a_dtype = o.b_dtype = o.out_dtype = DType::kBF16;
    o.family = GemmFamily::kGemv;
    o.k = 212;
    o.gemv_lanes = {lanes};
    absl::StatusOr<GemmDesc> got = recover_gemm_desc(box_of(d), o);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, d) << lanes;
    if (lanes != 20) continue;
    // Without the hint no power-of-two count reproduces the 20 lanes.
    o.gemv_lanes.clear();
    EXPECT_EQ(recover_gemm_desc(box_of(d), o).status().code(), absl::StatusCode::kNotFound);
    o.gemv_lanes = {20, 65};
    absl::Status s = recover_gemm_desc(box_of(d), o).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find("ProbeOptions.gemv_lanes[1] is 65"), std::string::npos) << s;
  }
}

TEST(RecoverTest, InstructionK8) {
  struct K8Case {
    GemmFamily family;
    DType in;
    bool fast;
    KLoopStep step;
    std::vector<KCut> cuts;
    int64_t k;
  };
  const std::vector<K8Case> cases = {
      {GemmFamily::kPlain, DType::kF16, true, {0, ShortTurn::kLast}, {}, 257},
      {GemmFamily::kPlain, DType::kBF16, true, {32, ShortTurn::kFirst}, {}, 259},
      {GemmFamily::kPlain, DType::kF16, false, {64, ShortTurn::kLast}, {}, 201},
      {GemmFamily::kSplitK, DType::kF16, true, {0, ShortTurn::kLast}, {{96, Fold::kChain}}, 281},
      {GemmFamily::kSplitK, DType::kBF16, true, {32, ShortTurn::kFirst}, {{88, Fold::kChain}}, 257},
  };
  for (const K8Case& c : cases) {
    GemmDesc d;
    d.family = c.family;
    d.a_dtype = d.b_dtype = d.out_dtype = c.in;
    d.instruction = Instruction::kMmaSync;
    d.instruction_k = 8;
    d.use_fast_accum = c.fast;
    d.k_loop_step = c.step;
    d.k_cuts = c.cuts;
    ASSERT_TRUE(validate(d).ok()) << validate(d);
    ProbeOptions o;
    o.a_dtype = o.b_dtype = o.out_dtype = c.in;
    o.family = c.family;
    o.k = c.k;
    absl::StatusOr<GemmDesc> as16 = recover_gemm_desc(box_of(d), o);
    EXPECT_TRUE(absl::IsNotFound(as16.status())) << d << " recovered with ik 16 as " << *as16;
    o.instruction_k = 8;
    absl::StatusOr<GemmDesc> got = recover_gemm_desc(box_of(d), o);
    ASSERT_TRUE(got.ok()) << got.status() << "\n  true " << d;
    EXPECT_EQ(got->instruction_k, 8);
    for (uint64_t seed = 21; seed <= 24; ++seed) {
      const reference::GemmProblem p = fresh_problem(d, c.k, seed);
      absl::StatusOr<std::vector<uint32_t>> want = reference::gemm(d, p);
      absl::StatusOr<std::vector<uint32_t>> have = reference::gemm(*got, p);
      ASSERT_TRUE(want.ok() && have.ok());
      EXPECT_EQ(*want, *have) << "true " << d << "\n  got  " << *got;
    }
  }
  // instruction_k 8 is mma.sync's, for f16/bf16 only.
  ProbeOptions bad;
  bad.k = 64;
  bad.instruction_k = 8;
  bad.matrix_instruction = Instruction::kWgmma;
  absl::Status st = recover_gemm_desc(box_of(GemmDesc{}), bad).status();
  EXPECT_NE(st.message().find("ProbeOptions.instruction_k is 8"), std::string::npos) << st;
  bad.matrix_instruction = Instruction::kMmaSync;
  bad.a_dtype = bad.b_dtype = DType::kF8E4M3;
  st = recover_gemm_desc(box_of(GemmDesc{}), bad).status();
  EXPECT_NE(st.message().find("ProbeOptions.instruction_k is 8"), std::string::npos) << st;
}

// cuBLAS's segment-K kernel (docs/cublas.md, session 35): the split cuts K into P
// segments of whole tiles, the longer last, which no equal span says. The walk shows
// the boundaries, segment_cuts offers the segment split, and the search recovers it
// (tile 64 where the walk cannot tell tiles apart), leaf and dtypes included; an equal
// split at the same K still comes back as its span.
TEST(RecoverSegmentTest, SegmentSplitOfWholeTilesTheLongerLast) {
  struct SegCase {
    KCut cut;
    int64_t k;
    bool fast;
    KLoopStep step;
    DType partial;
  };
  const std::vector<SegCase> cases = {
      // 16 tiles (the last of 40) in 3: 5, 5, 6 tiles, boundaries 320 and 640.
      {{64, Fold::kChain, 3}, 1000, true, {64, ShortTurn::kFirst}, DType::kF32},
      // 9 tiles of 128 in 2: 4 + 5, boundary 512.
      {{128, Fold::kChain, 2}, 1100, false, {64, ShortTurn::kLast}, DType::kF16},
      // 13 tiles of 64 in 4: 3, 3, 3, 4.
      {{64, Fold::kChain, 4}, 801, true, {0, ShortTurn::kLast}, DType::kF32},
  };
  for (const SegCase& c : cases) {
    GemmDesc d = split(mma(DType::kF16, DType::kF16, c.fast, c.step.step, c.step.short_turn),
                       {c.cut}, c.partial, DType::kF32);
    ASSERT_TRUE(validate(d).ok()) << validate(d);
    Instrument inst(box_of(d), DType::kF16, DType::kF16, DType::kF16);
    absl::StatusOr<std::vector<Outcome>> walk = inst.pair_walk(c.k);
    ASSERT_TRUE(walk.ok()) << walk.status();
    // No equal span says it (a span may match the first boundaries: 640 of 320, 640).
    const LevelMatch outer = match_level(*walk, c.k, true, inst.values(), DType::kF16);
    EXPECT_NE(outer.span, cut_part(c.cut, 1, 0, c.k).first) << d;
    const std::vector<KCut> segs = segment_cuts(*walk, c.k, inst.values(), DType::kF16);
    ASSERT_FALSE(segs.empty()) << d;
    for (const KCut& s : segs) {  // each cut the walk allows makes the true partition
      for (int64_t j = 0; j < c.cut.segments; ++j) {
        EXPECT_EQ(cut_part(s, j, 0, c.k), cut_part(c.cut, j, 0, c.k)) << s.span << "/" << s.segments;
      }
    }
    ProbeOptions o;
    o.family = GemmFamily::kSplitK;
    o.k = c.k;
    o.split_dtypes = {{c.partial, DType::kF32}};
    absl::StatusOr<GemmDesc> got = recover_gemm_desc(box_of(d), o);
    ASSERT_TRUE(got.ok()) << got.status() << "\n  true " << d;
    ASSERT_EQ(got->k_cuts.size(), 1u) << *got;
    EXPECT_GT(got->k_cuts[0].segments, 0) << *got;
    if (c.cut.span == 64) EXPECT_EQ(got->k_cuts[0], c.cut) << *got;
    for (uint64_t seed = 31; seed <= 34; ++seed) {
      const reference::GemmProblem p = fresh_problem(d, c.k, seed);
      absl::StatusOr<std::vector<uint32_t>> want = reference::gemm(d, p);
      absl::StatusOr<std::vector<uint32_t>> have = reference::gemm(*got, p);
      ASSERT_TRUE(want.ok() && have.ok());
      EXPECT_EQ(*want, *have) << "true " << d << "\n  got  " << *got;
    }
  }
  // The same K and boundaries in equal parts: the span, not segments.
  GemmDesc equal = split(mma(DType::kF16, DType::kF16, true, 0, ShortTurn::kLast),
                         {{320, Fold::kChain}}, DType::kF32, DType::kF32);
  ProbeOptions o;
  o.family = GemmFamily::kSplitK;
  o.k = 900;
  o.split_dtypes = {{DType::kF32, DType::kF32}};
  absl::StatusOr<GemmDesc> got = recover_gemm_desc(box_of(equal), o);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->k_cuts, equal.k_cuts) << *got;
}

// cuBLAS's split gemv (session 14): with gemv_split the gemv search also tries one
// split cut from the walk, and recovers the span, the partial and merge dtypes and the
// lane map of part 0; without it, it finds no unsplit gemv that reproduces the box.
TEST(RecoverGemvSplitTest, SpanDtypesAndLaneMapOfASplitGemv) {
  struct Case {
    int lanes;
    LaneLayout layout;
    int tile;
    std::vector<int> fold;
    int64_t span, k;
    DType partial;
  } cases[] = {{32, LaneLayout::kStrided, 1, {16, 8, 4, 2, 1}, 512, 3000, DType::kF32},
               {16, LaneLayout::kContiguous, 4, {8, 4, 2, 1}, 1024, 5000, DType::kF16},
               {32, LaneLayout::kStrided, 1, {1, 2, 4, 8, 16}, 2048, 33000, DType::kBF16}};
  for (const Case& c : cases) {
    GemmDesc truth;
    truth.family = GemmFamily::kGemv;
    truth.instruction = Instruction::kScalarFma;
    truth.instruction_k = 1;
    truth.k_loop_step = {};
    truth.lanes = c.lanes;
    truth.lane_layout = c.layout;
    truth.lane_tile = c.tile;
    truth.lane_fold = c.fold;
    truth.k_cuts = {{c.span, Fold::kChain}};
    truth.partial_dtype = c.partial;
    ASSERT_TRUE(validate(truth).ok()) << validate(truth);
    Instrument inst(box_of(truth), DType::kF16, DType::kF16, DType::kF16, BatchLimits{64, 64});
    inst.use_sparse_box(reference_sparse_box(truth));
    ProbeOptions o;
    o.family = GemmFamily::kGemv;
    o.k = c.k;
    o.gemv_split = true;
    absl::StatusOr<GemmDesc> got = recover_gemm_desc(inst, o);
    ASSERT_TRUE(got.ok()) << to_string(truth) << ": " << got.status();
    ASSERT_EQ(got->k_cuts.size(), 1u) << to_string(*got);
    EXPECT_EQ(got->k_cuts[0].span, c.span) << to_string(*got);
    std::string why;
    absl::StatusOr<bool> same = reproduces(*got, truth, ProbeOptions{.family = GemmFamily::kGemv, .k = c.k, .seed = 77}, &why);
    ASSERT_TRUE(same.ok()) << same.status();
    EXPECT_TRUE(*same) << to_string(*got) << " vs " << to_string(truth) << ": " << why;
    o.gemv_split = false;
    EXPECT_EQ(recover_gemm_desc(inst, o).status().code(), absl::StatusCode::kNotFound);
  }
}

// cuBLAS's gemv2T (session 11's tree at 2556 x 1 x 911: 16 strided lanes chained in
// index order, turns of 512): recovered unsplit at K = 911 and 2000 and split at K =
// 5423 (parts of 1356, as class 41's answer), and the answer reproduces the truth on
// fresh draws. Without the chain and turn candidates no gemv descriptor is found.
TEST(RecoverGemvTest, LaneChainAndTurnsOfGemv2T) {
  struct Case {
    int64_t k, span;
  } cases[] = {{911, 0}, {2000, 0}, {5423, 1356}};
  for (const Case& c : cases) {
    GemmDesc truth;
    truth.family = GemmFamily::kGemv;
    truth.instruction = Instruction::kScalarFma;
    truth.instruction_k = 1;
    truth.use_fast_accum = false;
    truth.k_loop_step = {512, ShortTurn::kLast};
    truth.lanes = 16;
    truth.lane_layout = LaneLayout::kStrided;
    truth.lane_tile = 1;
    truth.lane_fold = {};
    if (c.span > 0) {
      truth.k_cuts = {{c.span, Fold::kChain}};
      truth.partial_dtype = DType::kF16;
    }
    ASSERT_TRUE(validate(truth).ok()) << validate(truth);
    Instrument inst(box_of(truth), DType::kF16, DType::kF16, DType::kF16, BatchLimits{64, 1});
    inst.use_sparse_box(reference_sparse_box(truth));
    ProbeOptions o;
    o.family = GemmFamily::kGemv;
    o.k = c.k;
    o.gemv_split = c.span > 0;
    absl::StatusOr<GemmDesc> got = recover_gemm_desc(inst, o);
    ASSERT_TRUE(got.ok()) << "K=" << c.k << ": " << got.status();
    EXPECT_TRUE(got->lane_fold.empty()) << to_string(*got);
    EXPECT_EQ(got->lanes, 16) << to_string(*got);
    if (c.k > 512) {
      EXPECT_FALSE(got->use_fast_accum) << to_string(*got);
      EXPECT_EQ(got->k_loop_step.step, 512) << to_string(*got);
    }
    ProbeOptions fresh = o;
    fresh.seed = 0x9e3779b9;
    fresh.random_draws = 12;
    std::string why;
    absl::StatusOr<bool> same = reproduces(*got, truth, fresh, &why);
    ASSERT_TRUE(same.ok()) << same.status();
    EXPECT_TRUE(*same) << to_string(*got) << " vs " << to_string(truth) << ": " << why;
  }
}

// K = 1 and 2 leave no room for a walk: the random draws alone judge, and the answer
// reproduces the box on fresh draws (at K = 1 every family rounds one exact product).
TEST(RecoverShortKTest, KOneAndTwoAreJudgedByTheDrawsAlone) {
  GemmDesc split;
  split.family = GemmFamily::kSplitK;
  split.k_cuts = {{1, Fold::kChain}};
  split.partial_dtype = DType::kF16;
  for (int64_t k : {1, 2}) {
    for (const GemmDesc& truth : {GemmDesc{}, split}) {
      ProbeOptions o;
      o.family = truth.family;
      o.k = k;
      absl::StatusOr<GemmDesc> got = recover_gemm_desc(box_of(truth), o);
      ASSERT_TRUE(got.ok()) << "K=" << k << ": " << got.status();
      ProbeOptions fresh = o;
      fresh.seed = 0xf7e54;
      fresh.random_draws = 40;
      std::string why;
      absl::StatusOr<bool> same = reproduces(*got, truth, fresh, &why);
      ASSERT_TRUE(same.ok()) << same.status();
      EXPECT_TRUE(*same) << "K=" << k << " " << to_string(*got) << ": " << why;
    }
  }
}

// cuBLAS's K = 1 kernel (session 14, device run 1) keeps a lone -0.0 product where a
// tree seeded with +0.0 gives +0.0: the probe's signed-zero draw at K < 3 shows it, and
// the search answers with a plain scalar leaf seeded with -0.0 (GemmDesc.neg_zero_seed),
// which reproduces the box on fresh draws and on all -0.0 products. Without the seed
// variant the probe refused the kernel ("rejected by random draw 6").
TEST(RecoverShortKTest, AKernelThatKeepsANegativeZeroProductGetsTheNegativeSeed) {
  GemmBlackBox keeps_sign = [](const reference::GemmProblem& p) -> absl::StatusOr<std::vector<uint32_t>> {
    absl::StatusOr<std::vector<uint32_t>> out = reference::gemm(GemmDesc{}, p);
    if (!out.ok()) return out;
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        bool all_negative_zero = true;
        for (int64_t k = 0; k < p.k; ++k) {
          const float x = to_float(DType::kF16, p.a[i * p.k + k]) * to_float(DType::kF16, p.b[k * p.n + j]);
          all_negative_zero &= x == 0.0f && std::signbit(x);
        }
        if (all_negative_zero) (*out)[i * p.n + j] = 0x8000;
      }
    }
    return out;
  };
  for (int64_t k : {1, 2}) {
    ProbeOptions o;
    o.k = k;
    absl::StatusOr<GemmDesc> got = recover_gemm_desc(keeps_sign, o);
    ASSERT_TRUE(got.ok()) << "K=" << k << ": " << got.status();
    EXPECT_TRUE(got->neg_zero_seed) << to_string(*got);
    EXPECT_EQ(got->family, GemmFamily::kPlain);
    EXPECT_NE(to_string(*got).find(" seed=-0}"), std::string::npos) << to_string(*got);
    // Fresh draws of every sign of zero: +-0 inputs times +-values, all -0.0 included.
    std::mt19937 rng(k * 7919);
    const uint32_t zeros[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x4200};
    for (int draw = 0; draw < 20; ++draw) {
      reference::GemmProblem p;
      p.m = p.n = 8;
      p.k = k;
      for (int64_t i = 0; i < p.m * p.k; ++i) p.a.push_back(zeros[rng() % 5]);
      for (int64_t i = 0; i < p.k * p.n; ++i) p.b.push_back(draw % 2 ? zeros[rng() % 5] : 0x3c00);
      if (draw == 0) std::fill(p.a.begin(), p.a.end(), 0x8000);  // every product -0.0
      absl::StatusOr<std::vector<uint32_t>> want = keeps_sign(p);
      absl::StatusOr<std::vector<uint32_t>> mine = reference::gemm(*got, p);
      ASSERT_TRUE(want.ok() && mine.ok());
      EXPECT_EQ(*mine, *want) << "K=" << k << " draw " << draw;
    }
  }
  // A box that does not keep the sign still gets the +0.0 seed.
  ProbeOptions o;
  o.k = 1;
  absl::StatusOr<GemmDesc> plain = recover_gemm_desc(box_of(GemmDesc{}), o);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(plain->neg_zero_seed) << to_string(*plain);
}

TEST(RecoverErrorsTest, BadOptionsAndBadBoxes) {
  GemmDesc d;
  ProbeOptions o;
  o.k = 0;
  absl::Status k0 = recover_gemm_desc(box_of(d), o).status();
  EXPECT_EQ(k0.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(k0.message().find("ProbeOptions.k is 0"), std::string::npos) << k0;
  o.k = 64;
  o.out_dtype = DType::kF8E4M3;
  absl::Status s = recover_gemm_desc(box_of(d), o).status();
  EXPECT_NE(s.message().find("ProbeOptions.out_dtype is f8e4m3"), std::string::npos) << s;
  o.out_dtype = DType::kF16;
  EXPECT_FALSE(recover_gemm_desc(GemmBlackBox{}, o).ok());
  // A box that returns the wrong number of values.
  GemmBlackBox wrong_size = [](const reference::GemmProblem&) {
    return absl::StatusOr<std::vector<uint32_t>>(std::vector<uint32_t>{0, 0});
  };
  s = recover_gemm_desc(wrong_size, o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("pair walk m=1"), std::string::npos) << s;
  // A box whose errors pass through, naming the experiment.
  GemmBlackBox failing = [](const reference::GemmProblem&) {
    return absl::StatusOr<std::vector<uint32_t>>(absl::UnavailableError("device lost"));
  };
  s = recover_gemm_desc(failing, o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(s.message().find("device lost"), std::string::npos) << s;
  // A box that follows no descriptor: it adds 1 ulp to every nonzero answer.
  GemmBlackBox off_by_one = [d](const reference::GemmProblem& p) {
    absl::StatusOr<std::vector<uint32_t>> out = reference::gemm(d, p);
    if (out.ok()) {
      for (uint32_t& x : *out) x = (x & 0x7fff) ? x + 1 : x;
    }
    return out;
  };
  ProbeOptions bad_enum = o;
  bad_enum.a_dtype = static_cast<DType>(42);
  s = recover_gemm_desc(box_of(d), bad_enum).status();
  EXPECT_NE(s.message().find("ProbeOptions.a_dtype holds 42"), std::string::npos) << s;
  bad_enum = o;
  bad_enum.family = static_cast<GemmFamily>(9);
  s = recover_gemm_desc(box_of(d), bad_enum).status();
  EXPECT_NE(s.message().find("ProbeOptions.family holds 9"), std::string::npos) << s;
  bad_enum = o;
  bad_enum.max_levels = 9;
  EXPECT_FALSE(recover_gemm_desc(box_of(d), bad_enum).ok());
  // The wrong family from profiling: a split-K box probed as plain matches nothing.
  GemmDesc split_box = d;
  split_box.family = GemmFamily::kSplitK;
  split_box.k_cuts = {{32, Fold::kChain}};
  split_box.partial_dtype = DType::kF16;
  s = recover_gemm_desc(box_of(split_box), o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  s = recover_gemm_desc(off_by_one, o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_NE(s.message().find("no plain descriptor reproduces"), std::string::npos) << s;
}

}  // namespace
}  // namespace fixbits::dsl::probe

namespace fixbits::dsl::probe {
namespace {

// Family dot (cuBLAS's dot_kernel + reduce_1Block_kernel): given the grid (cuBLASLt's
// split count), the search recovers the thread count, the tile and the block rounds,
// at one block and at hundreds, K below and above one pass of the grid; without the
// grid it is refused naming ProbeOptions.blocks; a split-K truth is no dot.
TEST(RecoverDotTest, ThreadsTileAndRoundsAtTheGivenGrid) {
  for (auto [blocks, tile, k, dtype] :
       {std::tuple<int64_t, int, int64_t, DType>{31, 2, 1000, DType::kF16},
        {1, 2, 300, DType::kBF16}, {64, 1, 600, DType::kF16}, {3, 2, 2000, DType::kF16}}) {
    const GemmDesc truth = testing::cublas_dot(dtype, blocks, tile);
    ProbeOptions o;
    o.a_dtype = o.b_dtype = o.out_dtype = dtype;
    o.family = GemmFamily::kDot;
    o.k = k;
    o.blocks = blocks;
    absl::StatusOr<GemmDesc> got = recover_gemm_desc(box_of(truth), o);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, truth);
  }
  ProbeOptions o;
  o.family = GemmFamily::kDot;
  o.k = 100;
  absl::Status s = recover_gemm_desc(box_of(GemmDesc{}), o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("ProbeOptions.blocks"), std::string::npos) << s;
  GemmDesc split;
  split.family = GemmFamily::kSplitK;
  split.k_cuts = {{96, Fold::kChain}};
  o.blocks = 3;
  o.k = 288;
  s = recover_gemm_desc(box_of(split), o).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_NE(s.message().find("no dot descriptor"), std::string::npos) << s;
}

}  // namespace
}  // namespace fixbits::dsl::probe
