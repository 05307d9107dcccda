// Tests of GemmDesc validate / to_string / parse_gemm_desc / hash.
// Contract checked: every rule of validate fires with a message naming its field;
// the text form is the documented literal and round-trips; parse rejects garbage
// (truncations, random bytes, huge numbers, duplicates) with a Status, never a
// crash; the hash is pinned to literal values.
#include "dsl/GemmDesc.h"

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace fixbits::dsl {
namespace {

GemmDesc plain_f16() { return GemmDesc{}; }

GemmDesc split_bf16() {
  GemmDesc d;
  d.family = GemmFamily::kSplitK;
  d.a_dtype = d.b_dtype = DType::kBF16;
  d.out_dtype = DType::kBF16;
  d.use_fast_accum = false;
  d.k_loop_step = {64, ShortTurn::kFirst};
  d.k_cuts = {{192, Fold::kChain}, {64, Fold::kTreeDown}};
  d.partial_dtype = DType::kBF16;
  d.merge_dtype = DType::kF32;
  return d;
}

GemmDesc chunks_f32() {
  GemmDesc d;
  d.family = GemmFamily::kChainedChunks;
  d.a_dtype = d.b_dtype = d.out_dtype = DType::kF32;
  d.instruction = Instruction::kScalarFma;
  d.instruction_k = 1;
  d.k_loop_step = {0, ShortTurn::kLast};
  d.k_cuts = {{128, Fold::kTreeUp}, {32, Fold::kChain}};
  return d;
}

GemmDesc gemv_f16() {
  GemmDesc d;
  d.family = GemmFamily::kGemv;
  d.instruction = Instruction::kScalarMulAdd;
  d.instruction_k = 1;
  d.k_loop_step = {0, ShortTurn::kLast};
  d.lane_layout = LaneLayout::kStrided;
  d.lanes = 16;
  d.lane_tile = 4;
  d.lane_fold = {8, 4, 2, 1};
  d.alpha_beta = true;
  d.bias = true;
  d.activation = Activation::kRelu;
  return d;
}

GemmDesc wgmma_fp8() {
  GemmDesc d;
  d.a_dtype = DType::kF8E4M3;
  d.b_dtype = DType::kF8E5M2;
  d.instruction = Instruction::kWgmma;
  d.instruction_k = 32;
  d.k_loop_step = {128, ShortTurn::kLast};
  return d;
}

std::vector<GemmDesc> valid_descs() {
  return {plain_f16(), split_bf16(), chunks_f32(), gemv_f16(), wgmma_fp8()};
}

TEST(GemmDescTest, ValidDescriptorsValidate) {
  for (const GemmDesc& d : valid_descs()) EXPECT_TRUE(validate(d).ok()) << validate(d);
  GemmDesc tf32 = plain_f16();
  tf32.a_dtype = tf32.b_dtype = DType::kTF32;
  tf32.instruction_k = 8;
  tf32.out_dtype = DType::kF32;
  EXPECT_TRUE(validate(tf32).ok()) << validate(tf32);
  GemmDesc lanes1 = gemv_f16();
  lanes1.lanes = 1;
  lanes1.lane_fold = {};
  EXPECT_TRUE(validate(lanes1).ok()) << validate(lanes1);
  // mma.sync m16n8k8 (CUTLASS's s1688 kernels): 8 products for f16 and bf16 inputs.
  for (DType t : {DType::kF16, DType::kBF16}) {
    GemmDesc k8 = plain_f16();
    k8.a_dtype = k8.b_dtype = k8.out_dtype = t;
    k8.instruction_k = 8;
    EXPECT_TRUE(validate(k8).ok()) << validate(k8);
    absl::StatusOr<GemmDesc> back = parse_gemm_desc(to_string(k8));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, k8);
  }
}

struct BadCase {
  const char* what;
  std::function<void(GemmDesc&)> mutate;
  const char* must_contain;
};

TEST(GemmDescTest, EveryRuleNamesItsField) {
  const std::vector<BadCase> cases = {
      {"acc f16", [](GemmDesc& d) { d.acc_dtype = DType::kF16; }, "GemmDesc.acc_dtype"},
      {"out tf32", [](GemmDesc& d) { d.out_dtype = DType::kTF32; }, "GemmDesc.out_dtype"},
      {"ik 8 for f16 wgmma",
       [](GemmDesc& d) {
         d.instruction = Instruction::kWgmma;
         d.instruction_k = 8;
       },
       "GemmDesc.instruction_k is 8 but wgmma with f16 inputs folds 16 products per "
       "instruction"},
      {"ik 4 for f16 mma_sync",
       [](GemmDesc& d) { d.instruction_k = 4; },
       "GemmDesc.instruction_k is 4 but mma_sync with f16 inputs folds 16 products per "
       "instruction (or 8: m16n8k8)"},
      {"ik 16 for fp8",
       [](GemmDesc& d) {
         d.a_dtype = d.b_dtype = DType::kF8E4M3;
       },
       "folds 32 products"},
      {"ik for tf32",
       [](GemmDesc& d) { d.a_dtype = d.b_dtype = DType::kTF32; },
       "folds 8 products"},
      {"mma f32 inputs",
       [](GemmDesc& d) { d.a_dtype = d.b_dtype = DType::kF32; },
       "GemmDesc.a_dtype is f32"},
      {"mixed f16/bf16",
       [](GemmDesc& d) { d.b_dtype = DType::kBF16; },
       "GemmDesc.b_dtype is bf16"},
      {"scalar ik 16",
       [](GemmDesc& d) { d.instruction = Instruction::kScalarFma; },
       "GemmDesc.instruction_k is 16 but scalar_fma"},
      {"step not multiple",
       [](GemmDesc& d) { d.k_loop_step.step = 24; },
       "GemmDesc.k_loop_step.step is 24"},
      {"step negative",
       [](GemmDesc& d) { d.k_loop_step.step = -16; },
       "GemmDesc.k_loop_step.step is -16"},
      {"plain with cuts",
       [](GemmDesc& d) { d.k_cuts = {{64, Fold::kChain}}; },
       "GemmDesc.k_cuts has 1 levels but family plain"},
      {"split no cuts",
       [](GemmDesc& d) { d.family = GemmFamily::kSplitK; },
       "GemmDesc.k_cuts is empty but family split_k"},
      {"split tree outermost",
       [](GemmDesc& d) {
         d.family = GemmFamily::kSplitK;
         d.k_cuts = {{64, Fold::kTreeUp}};
       },
       "GemmDesc.k_cuts[0].fold is tree_up"},
      {"span zero",
       [](GemmDesc& d) {
         d.family = GemmFamily::kSplitK;
         d.k_cuts = {{0, Fold::kChain}};
       },
       "GemmDesc.k_cuts[0].span is 0"},
      {"inner span longer",
       [](GemmDesc& d) {
         d.family = GemmFamily::kSplitK;
         d.k_cuts = {{64, Fold::kChain}, {128, Fold::kChain}};
       },
       "GemmDesc.k_cuts[1].span is 128"},
      {"chunks on mma",
       [](GemmDesc& d) {
         d.family = GemmFamily::kChainedChunks;
         d.k_cuts = {{64, Fold::kChain}};
       },
       "GemmDesc.instruction is mma_sync but family chained_chunks"},
      {"gemv on mma",
       [](GemmDesc& d) {
         d.family = GemmFamily::kGemv;
         d.lane_fold = {1, 2, 4, 8, 16};
       },
       "GemmDesc.instruction is mma_sync but each lane of family gemv"},
      {"partial f8",
       [](GemmDesc& d) {
         d.family = GemmFamily::kSplitK;
         d.k_cuts = {{64, Fold::kChain}};
         d.partial_dtype = DType::kF8E4M3;
       },
       "GemmDesc.partial_dtype is f8e4m3"},
      {"merge on plain",
       [](GemmDesc& d) { d.merge_dtype = DType::kF16; },
       "GemmDesc.merge_dtype is f16 but only a split (family split_k, or gemv with a cut)"},
      {"lanes 48", [](GemmDesc& d) { d.lanes = 48; }, "GemmDesc.lanes is 48"},
      {"lanes 128", [](GemmDesc& d) { d.lanes = 128; }, "GemmDesc.lanes is 128"},
      {"lane_tile 0", [](GemmDesc& d) { d.lane_tile = 0; }, "GemmDesc.lane_tile is 0"},
      {"fold on plain",
       [](GemmDesc& d) { d.lane_fold = {1}; },
       "GemmDesc.lane_fold has 1 rounds"},
      {"bad enum", [](GemmDesc& d) { d.family = static_cast<GemmFamily>(9); },
       "GemmDesc.family holds 9"},
      {"bad dtype", [](GemmDesc& d) { d.a_dtype = static_cast<DType>(77); },
       "GemmDesc.a_dtype holds 77"},
      {"bad fold enum",
       [](GemmDesc& d) {
         d.family = GemmFamily::kSplitK;
         d.k_cuts = {{64, Fold::kChain}, {32, static_cast<Fold>(5)}};
       },
       "GemmDesc.k_cuts[1].fold holds 5"},
      {"bad activation", [](GemmDesc& d) { d.activation = static_cast<Activation>(3); },
       "GemmDesc.activation holds 3"},
  };
  for (const BadCase& c : cases) {
    GemmDesc d = plain_f16();
    c.mutate(d);
    absl::Status s = validate(d);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.what;
    EXPECT_NE(s.message().find(c.must_contain), std::string::npos)
        << c.what << ": " << s.message();
    // Printing an invalid descriptor never fails, and parsing it back is rejected.
    EXPECT_FALSE(parse_gemm_desc(to_string(d)).ok()) << c.what;
  }
}

TEST(GemmDescTest, LaneFoldRules) {
  struct FoldCase {
    std::vector<int> fold;
    const char* must_contain;
  };
  const std::vector<FoldCase> cases = {
      {{8, 4, 2}, "exactly once"},
      {{8, 4, 2, 1, 1}, "lane_fold[4] is 1, which an earlier round already used"},
      {{8, 4, 2, 3}, "lane_fold[3] is 3"},
      {{16, 4, 2, 1}, "lane_fold[0] is 16"},
      {{8, 4, 2, 0}, "lane_fold[3] is 0"},
      {{8, 4, -2, 1}, "lane_fold[2] is -2"},
  };
  for (const FoldCase& c : cases) {
    GemmDesc d = gemv_f16();
    d.lane_fold = c.fold;
    absl::Status s = validate(d);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.message().find(c.must_contain), std::string::npos) << s.message();
  }
  GemmDesc up = gemv_f16();
  up.lane_fold = {1, 2, 4, 8};
  EXPECT_TRUE(validate(up).ok());
  up.lane_fold = {2, 8, 1, 4};  // any order of the four offsets is a valid fold
  EXPECT_TRUE(validate(up).ok());
}

// Family gemv's lane count need not be a power of two (cuBLAS's gemvNSP: 20, 24 or 26
// lanes above N = 8448); its fold then covers every power of two below the count
// rounded up. Every other family keeps the power-of-two rule.
TEST(GemmDescTest, GemvLaneCountsNeedNotBePowersOfTwo) {
  EXPECT_EQ(lane_slots(1), 1);
  EXPECT_EQ(lane_slots(3), 4);
  EXPECT_EQ(lane_slots(20), 32);
  EXPECT_EQ(lane_slots(32), 32);
  EXPECT_EQ(lane_slots(33), 64);
  EXPECT_EQ(lane_slots(64), 64);
  struct Good {
    int lanes;
    std::vector<int> fold;
  } goods[] = {{20, {16, 8, 4, 2, 1}}, {24, {1, 2, 4, 8, 16}}, {26, {4, 16, 1, 8, 2}},
               {3, {2, 1}},            {5, {1, 4, 2}},          {33, {32, 16, 8, 4, 2, 1}},
               {63, {1, 2, 4, 8, 16, 32}}, {1, {}}};
  for (const Good& g : goods) {
    GemmDesc d = gemv_f16();
    d.lanes = g.lanes;
    d.lane_fold = g.fold;
    EXPECT_TRUE(validate(d).ok()) << g.lanes << ": " << validate(d);
    absl::StatusOr<GemmDesc> back = parse_gemm_desc(to_string(d));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, d);
  }
  struct Bad {
    int lanes;
    std::vector<int> fold;
    GemmFamily family;
    const char* must_contain;
  } bads[] = {
      {20, {8, 4, 2, 1}, GemmFamily::kGemv,
       "GemmDesc.lane_fold is [8,4,2,1] but must use every power of two below 32 (lanes 20"},
      {20, {32, 16, 8, 4, 2, 1}, GemmFamily::kGemv,
       "GemmDesc.lane_fold[0] is 32 but every offset must be a power of two below 32"},
      {3, {1}, GemmFamily::kGemv, "GemmDesc.lane_fold is [1]"},
      {0, {}, GemmFamily::kGemv, "GemmDesc.lanes is 0 but family gemv needs 1 to 64 lanes"},
      {65, {}, GemmFamily::kGemv, "GemmDesc.lanes is 65 but family gemv needs 1 to 64 lanes"},
      {-3, {}, GemmFamily::kGemv, "GemmDesc.lanes is -3"},
      {20, {}, GemmFamily::kPlain, "GemmDesc.lanes is 20 but must be a power of two in [1, 64]"},
      {96, {64, 32, 16, 8, 4, 2, 1}, GemmFamily::kDot,
       "GemmDesc.lanes is 96 but must be a power of two in [1, 1024]"},
  };
  for (const Bad& c : bads) {
    GemmDesc d = gemv_f16();
    d.lanes = c.lanes;
    d.lane_fold = c.fold;
    if (c.family != GemmFamily::kGemv) {
      d.family = c.family;
      if (c.family == GemmFamily::kDot) d.blocks = 1;
    }
    absl::Status s = validate(d);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << c.lanes;
    EXPECT_NE(s.message().find(c.must_contain), std::string::npos) << s.message();
  }
}

// cuBLAS's split gemv: family gemv takes one cut, the split (chain), and then a
// partial and merge dtype; two cuts, a tree split, or partials without a split are
// refused naming the field. The text form round-trips.
TEST(GemmDescTest, GemvTakesOneSplitCut) {
  GemmDesc d = gemv_f16();
  d.k_cuts = {{512, Fold::kChain}};
  d.partial_dtype = DType::kBF16;
  d.merge_dtype = DType::kF16;
  ASSERT_TRUE(validate(d).ok()) << validate(d);
  EXPECT_TRUE(has_split(d));
  absl::StatusOr<GemmDesc> back = parse_gemm_desc(to_string(d));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, d);
  GemmDesc tree = d;
  tree.k_cuts[0].fold = Fold::kTreeUp;
  EXPECT_NE(validate(tree).message().find("GemmDesc.k_cuts[0].fold is tree_up"), std::string::npos)
      << validate(tree);
  GemmDesc two = d;
  two.k_cuts.push_back({64, Fold::kChain});
  EXPECT_NE(validate(two).message().find("GemmDesc.k_cuts has 2 levels but family gemv"),
            std::string::npos)
      << validate(two);
  GemmDesc unsplit = gemv_f16();
  EXPECT_FALSE(has_split(unsplit));
  unsplit.partial_dtype = DType::kF16;
  EXPECT_NE(validate(unsplit).message().find("GemmDesc.partial_dtype is f16"), std::string::npos)
      << validate(unsplit);
}

// A segment split (cuBLAS's segment-K kernel, docs/cublas.md session 35): cut_part
// deals whole tiles, floor(T / P) a segment and the remainder to the last ones; the
// text "<span>/seg<P>" round-trips and every other cut's text is unchanged; segments
// are refused outside split_k's one level, and a count of 1 or over the limit.
TEST(GemmDescTest, SegmentSplit) {
  const KCut c{64, Fold::kChain, 2};
  EXPECT_EQ(cut_parts(c, 19982), 2);
  EXPECT_EQ(cut_part(c, 0, 0, 19982), std::make_pair(int64_t{0}, int64_t{9984}));
  EXPECT_EQ(cut_part(c, 1, 0, 19982), std::make_pair(int64_t{9984}, int64_t{19982}));
  // 6 tiles (the last short) in 4 segments: 1, 1, 2, 2 tiles, from k0 = 10.
  const KCut four{64, Fold::kChain, 4};
  const std::vector<std::pair<int64_t, int64_t>> want = {
      {10, 74}, {74, 138}, {138, 266}, {266, 343}};
  for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(cut_part(four, j, 10, 343), want[j]) << j;
  // Fewer tiles than segments: the first ones are empty; no part of an empty range.
  const KCut three{64, Fold::kChain, 3};
  EXPECT_EQ(cut_part(three, 0, 0, 100), std::make_pair(int64_t{0}, int64_t{0}));
  EXPECT_EQ(cut_part(three, 1, 0, 100), std::make_pair(int64_t{0}, int64_t{64}));
  EXPECT_EQ(cut_part(three, 2, 0, 100), std::make_pair(int64_t{64}, int64_t{100}));
  EXPECT_EQ(cut_parts(three, 0), 0);
  // The equal split: parts of the span, the last short.
  EXPECT_EQ(cut_parts(KCut{64}, 200), 4);
  EXPECT_EQ(cut_part(KCut{64}, 3, 0, 200), std::make_pair(int64_t{192}, int64_t{200}));
  // Every segment partition tiles its range in order.
  for (int64_t len : {1, 63, 64, 65, 1000, 19982}) {
    for (int64_t p = 2; p <= 9; ++p) {
      const KCut cut{32, Fold::kChain, p};
      int64_t at = 5;
      for (int64_t j = 0; j < p; ++j) {
        const auto [e0, e1] = cut_part(cut, j, 5, 5 + len);
        EXPECT_EQ(e0, at) << len << " " << p << " " << j;
        EXPECT_GE(e1, e0);
        EXPECT_TRUE((e1 - e0) % 32 == 0 || e1 == 5 + len) << "whole tiles but the last";
        at = e1;
      }
      EXPECT_EQ(at, 5 + len);
    }
  }

  GemmDesc d;
  d.family = GemmFamily::kSplitK;
  d.instruction = Instruction::kWgmma;
  d.k_loop_step = {64, ShortTurn::kFirst};
  d.k_cuts = {c};
  ASSERT_TRUE(validate(d).ok()) << validate(d);
  const std::string text = to_string(d);
  EXPECT_NE(text.find("cuts=[64/seg2:chain]"), std::string::npos) << text;
  absl::StatusOr<GemmDesc> back = parse_gemm_desc(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, d);
  GemmDesc equal = d;
  equal.k_cuts = {{64, Fold::kChain}};
  EXPECT_NE(to_string(equal).find("cuts=[64:chain]"), std::string::npos);
  EXPECT_NE(hash(d), hash(equal));

  auto refused = [](const GemmDesc& x, const char* must) {
    const absl::Status st = validate(x);
    EXPECT_NE(st.message().find(must), std::string::npos) << st;
  };
  GemmDesc one = d;
  one.k_cuts[0].segments = 1;
  refused(one, "GemmDesc.k_cuts[0].segments is 1");
  GemmDesc many = d;
  many.k_cuts[0].segments = 5000;
  refused(many, "GemmDesc.k_cuts[0].segments is 5000");
  GemmDesc inner = d;
  inner.k_cuts = {{4096, Fold::kChain}, {64, Fold::kChain, 2}};
  refused(inner, "GemmDesc.k_cuts[1].segments is 2");
  GemmDesc nested = d;
  nested.k_cuts.push_back({16, Fold::kChain});
  refused(nested, "GemmDesc.k_cuts[0].segments is 2 on a split_k descriptor with 2 cut levels");
  GemmDesc chunks = chunks_f32();
  chunks.k_cuts = {{128, Fold::kChain, 2}};
  refused(chunks, "GemmDesc.k_cuts[0].segments is 2 on a chained_chunks descriptor");

  auto rejected_text = [&](const std::string& cuts, const char* must) {
    std::string t = text;
    t.replace(t.find("64/seg2"), 7, cuts);
    absl::StatusOr<GemmDesc> x = parse_gemm_desc(t);
    ASSERT_FALSE(x.ok()) << t;
    EXPECT_NE(x.status().message().find(must), std::string::npos) << x.status();
  };
  rejected_text("64/2", "followed by seg<P>");
  rejected_text("64/segx", "a segment count");
  rejected_text("64/seg", "a segment count");
  rejected_text("64/seg1", "GemmDesc.k_cuts[0].segments is 1");
}

// The -0.0 seed (cuBLAS's K = 1 kernel): printed last as "seed=-0" only when set, so
// every other descriptor's text and hash stay; valid on plain scalar leaves only.
TEST(GemmDescTest, NegativeZeroSeed) {
  GemmDesc d;
  d.instruction = Instruction::kScalarFma;
  d.instruction_k = 1;
  EXPECT_EQ(to_string(d).find("seed"), std::string::npos) << to_string(d);
  d.neg_zero_seed = true;
  ASSERT_TRUE(validate(d).ok()) << validate(d);
  const std::string text = to_string(d);
  EXPECT_NE(text.find(" act=none seed=-0}"), std::string::npos) << text;
  absl::StatusOr<GemmDesc> back = parse_gemm_desc(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, d);
  EXPECT_NE(hash(*back), hash(GemmDesc{.instruction = Instruction::kScalarFma, .instruction_k = 1}));
  std::string plus = text;
  plus.replace(plus.find("seed=-0"), 7, "seed=+0");
  absl::StatusOr<GemmDesc> p = parse_gemm_desc(plus);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_FALSE(p->neg_zero_seed);
  std::string bad = text;
  bad.replace(bad.find("seed=-0"), 7, "seed=0");
  EXPECT_NE(parse_gemm_desc(bad).status().message().find("\"seed\""), std::string::npos)
      << parse_gemm_desc(bad).status();
  GemmDesc mma;  // mma_sync leaf
  mma.neg_zero_seed = true;
  EXPECT_NE(validate(mma).message().find("GemmDesc.neg_zero_seed"), std::string::npos)
      << validate(mma);
  GemmDesc cut = d;
  cut.family = GemmFamily::kSplitK;
  cut.k_cuts = {{64, Fold::kChain}};
  EXPECT_NE(validate(cut).message().find("GemmDesc.neg_zero_seed"), std::string::npos)
      << validate(cut);
  GemmDesc gemv = gemv_f16();
  gemv.neg_zero_seed = true;
  EXPECT_NE(validate(gemv).message().find("GemmDesc.neg_zero_seed"), std::string::npos)
      << validate(gemv);
}

// gemv2T (GemmDesc.h): an empty lane_fold chains the lanes; turns need fast_accum=0
// with a positive step, and fast accumulation keeps step 0.
TEST(GemmDescTest, GemvLaneChainAndTurns) {
  GemmDesc d = gemv_f16();
  d.lanes = 16;
  d.lane_fold.clear();
  ASSERT_TRUE(validate(d).ok()) << validate(d);
  d.use_fast_accum = false;
  d.k_loop_step = {512, ShortTurn::kLast};
  ASSERT_TRUE(validate(d).ok()) << validate(d);
  absl::StatusOr<GemmDesc> back = parse_gemm_desc(to_string(d));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, d);
  GemmDesc no_step = d;
  no_step.k_loop_step.step = 0;
  EXPECT_NE(validate(no_step).message().find("GemmDesc.k_loop_step.step is 0 with use_fast_accum 0"),
            std::string::npos)
      << validate(no_step);
  GemmDesc fast_step = d;
  fast_step.use_fast_accum = true;
  EXPECT_NE(validate(fast_step).message().find("GemmDesc.k_loop_step.step is 512"),
            std::string::npos)
      << validate(fast_step);
}

// The contiguous deal: the header's example, and for many ranges the lanes' spans
// tile [k0, k1) in lane order, each a whole number of tiles except where the range ends.
TEST(GemmDescTest, GemvContiguousSpansTileTheRange) {
  GemmDesc d;
  d.family = GemmFamily::kGemv;
  d.lanes = 4;
  d.lane_tile = 2;
  EXPECT_EQ(gemv_tiles(d, 13), 7);
  EXPECT_EQ(gemv_contiguous_span(d, 1, 0, 13), std::make_pair(int64_t{4}, int64_t{8}));
  EXPECT_EQ(gemv_contiguous_span(d, 3, 0, 13), std::make_pair(int64_t{12}, int64_t{13}));
  for (int lanes : {1, 3, 16, 20, 32}) {
    for (int tile : {1, 2, 8, 33}) {
      d.lanes = lanes;
      d.lane_tile = tile;
      for (int64_t k0 : {int64_t{0}, int64_t{5}}) {
        for (int64_t len = 1; len < 700; len += 37) {
          int64_t at = k0;
          for (int l = 0; l < lanes; ++l) {
            const auto [e0, e1] = gemv_contiguous_span(d, l, k0, k0 + len);
            ASSERT_EQ(e0, at) << lanes << " lanes, tile " << tile << ", len " << len << ", lane " << l;
            ASSERT_LE(e0, e1);
            if (e1 < k0 + len) ASSERT_EQ((e1 - e0) % tile, 0);
            at = e1;
          }
          EXPECT_EQ(at, k0 + len) << lanes << " lanes, tile " << tile << ", len " << len;
        }
      }
    }
  }
}

TEST(GemmDescTest, CanonicalTextIsTheDocumentedLiteral) {
  EXPECT_EQ(to_string(plain_f16()),
            "gemm{family=plain a=f16 b=f16 acc=f32 out=f16 instr=mma_sync ik=16 "
            "fast_accum=1 k_loop=0/last cuts=[] partial=f32 merge=f32 "
            "lane_layout=contiguous lanes=32 lane_tile=8 lane_fold=[] alpha_beta=0 bias=0 "
            "act=none}");
  EXPECT_EQ(to_string(split_bf16()),
            "gemm{family=split_k a=bf16 b=bf16 acc=f32 out=bf16 instr=mma_sync ik=16 "
            "fast_accum=0 k_loop=64/first cuts=[192:chain,64:tree_down] partial=bf16 "
            "merge=f32 lane_layout=contiguous lanes=32 lane_tile=8 lane_fold=[] "
            "alpha_beta=0 bias=0 act=none}");
  EXPECT_EQ(to_string(gemv_f16()),
            "gemm{family=gemv a=f16 b=f16 acc=f32 out=f16 instr=scalar_mul_add ik=1 "
            "fast_accum=1 k_loop=0/last cuts=[] partial=f32 merge=f32 lane_layout=strided "
            "lanes=16 lane_tile=4 lane_fold=[8,4,2,1] alpha_beta=1 bias=1 act=relu}");
  GemmDesc garbage = plain_f16();
  garbage.instruction = static_cast<Instruction>(200);
  garbage.out_dtype = static_cast<DType>(99);
  EXPECT_NE(to_string(garbage).find("instr=?200"), std::string::npos);
  EXPECT_NE(to_string(garbage).find("out=?99"), std::string::npos);
}

TEST(GemmDescTest, RoundTrips) {
  for (const GemmDesc& d : valid_descs()) {
    absl::StatusOr<GemmDesc> back = parse_gemm_desc(to_string(d));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, d);
    EXPECT_EQ(hash(*back), hash(d));
  }
  // Field order and extra whitespace are free; the value is what counts.
  absl::StatusOr<GemmDesc> shuffled = parse_gemm_desc(
      "  gemm{act=none  bias=0 alpha_beta=0 lane_fold=[] lane_tile=8 lanes=32\t"
      "lane_layout=contiguous merge=f32 partial=f32 cuts=[] k_loop=0/last fast_accum=1 "
      "ik=16 instr=mma_sync out=f16 acc=f32 b=f16 a=f16 family=plain}\n");
  ASSERT_TRUE(shuffled.ok()) << shuffled.status();
  EXPECT_EQ(*shuffled, plain_f16());
}

void expect_rejected(const std::string& text, const char* must_contain) {
  absl::StatusOr<GemmDesc> d = parse_gemm_desc(text);
  ASSERT_FALSE(d.ok()) << text;
  EXPECT_EQ(d.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(d.status().message().find(must_contain), std::string::npos)
      << d.status().message();
}

TEST(GemmDescTest, ParseNamesTheBadField) {
  const std::string good = to_string(split_bf16());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    t.replace(at, from.size(), to);
    return t;
  };
  expect_rejected(with("ik=16", "ik=99999999999999999999999"), "field \"ik\" at byte");
  expect_rejected(with("ik=16", "ik=-"), "field \"ik\"");
  expect_rejected(with("ik=16", "ik=16 ik=16"), "names the field \"ik\" twice");
  expect_rejected(with("ik=16 ", ""), "lacks the field \"ik\"");
  expect_rejected(with("ik=16", "ikk=16"), "unknown field \"ikk\"");
  expect_rejected(with("ik=16", "ik16"), "is not key=value");
  expect_rejected(with("family=split_k", "family=split"), "field \"family\" at byte 12");
  expect_rejected(with("a=bf16", "a=bf17"), "field \"a\"");
  expect_rejected(with("fast_accum=0", "fast_accum=2"), "field \"fast_accum\"");
  expect_rejected(with("k_loop=64/first", "k_loop=64"), "field \"k_loop\"");
  expect_rejected(with("k_loop=64/first", "k_loop=64/middle"), "the short turn");
  expect_rejected(with("cuts=[192:chain,64:tree_down]", "cuts=[192:chain,]"),
                  "empty list item");
  expect_rejected(with("cuts=[192:chain,64:tree_down]", "cuts=[192:chain,64]"),
                  "lacks the separator ':'");
  expect_rejected(with("cuts=[192:chain,64:tree_down]", "cuts=192:chain"),
                  "bracketed list");
  expect_rejected(with("cuts=[192:chain,64:tree_down]", "cuts=[9223372036854775808:chain]"),
                  "a span");
  expect_rejected(with("lane_fold=[]", "lane_fold=[1,x]"), "an offset");
  expect_rejected(with("gemm{", "gemn{"), "must start with \"gemm{\"");
  // Parses but describes no valid tree: validate's message comes back.
  expect_rejected(with("ik=16", "ik=4"), "GemmDesc.instruction_k is 4");
}

TEST(GemmDescTest, ParseSurvivesGarbage) {
  const std::string good = to_string(gemv_f16());
  // Every proper prefix is rejected.
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(parse_gemm_desc(good.substr(0, n)).ok()) << n;
  }
  // Random bytes, random single-byte corruptions: never a crash; a corruption that
  // still parses must print back to itself (so it named a valid descriptor).
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 2000; ++i) {
    std::string junk(rng() % 200, '\0');
    for (char& c : junk) c = static_cast<char>(rng());
    EXPECT_FALSE(parse_gemm_desc(junk).ok());
    std::string t = good;
    t[rng() % t.size()] = static_cast<char>(rng() % 2 ? rng() : "0123456789,[]:= "[rng() % 16]);
    absl::StatusOr<GemmDesc> d = parse_gemm_desc(t);
    if (d.ok()) {
      EXPECT_TRUE(validate(*d).ok());
      EXPECT_EQ(parse_gemm_desc(to_string(*d)).value(), *d);
    }
  }
}

// FNV-1a 64 of the canonical text; the literals were checked independently
// (python: h=0xcbf29ce484222325; for c in s: h=((h^c)*0x100000001b3)%2**64).
TEST(GemmDescTest, HashIsPinned) {
  EXPECT_EQ(hash(plain_f16()), 0xdefcaff0fd7965beull);
  EXPECT_EQ(hash(split_bf16()), 0x4c5c2bfb2d5a7e81ull);
  EXPECT_EQ(hash(gemv_f16()), 0x9f91d1e255075957ull);
  EXPECT_NE(hash(plain_f16()), hash(wgmma_fp8()));
}

}  // namespace
}  // namespace fixbits::dsl

namespace fixbits::dsl {
namespace {

TEST(GemmDescFamily, NamesRoundTripAndUnknownNamesAreRefused) {
  for (GemmFamily f : {GemmFamily::kPlain, GemmFamily::kSplitK, GemmFamily::kChainedChunks,
                       GemmFamily::kGemv}) {
    absl::StatusOr<GemmFamily> back = parse_family(family_name(f));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, f);
  }
  EXPECT_EQ(family_name(GemmFamily::kSplitK), "split_k");
  EXPECT_EQ(family_name(static_cast<GemmFamily>(9)), "?9");
  absl::StatusOr<GemmFamily> bad = parse_family("splitk");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "'splitk' is not a GemmDesc family (plain, split_k, chained_chunks, gemv, dot).");
}

}  // namespace
}  // namespace fixbits::dsl
