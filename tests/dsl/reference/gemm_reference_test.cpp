// gemm_reference_test: reference::gemm on small hand-worked cases, one per decision
// of the GemmDesc semantics, and every error path.
//
// Notation: L = 1024, r = 2^-15 (both exact in f16); in f32 ulp(L) = 2^-13, so
// L + r and L + 2r (a tie, L is even) round to L while L + 3r rounds to L + ulp;
// just below L the ulp is 2^-14, so -L + r (a tie) rounds to -L.
#include "dsl/reference/Reference.h"
#include "tests/dsl/GemvTwentyLanes.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace fixbits::dsl::reference {
namespace {

constexpr float L = 1024.0f;
const float r = std::ldexp(1.0f, -15);
float p2(int e) { return std::ldexp(1.0f, e); }

std::vector<uint32_t> bits_of(DType t, const std::vector<float>& v) {
  std::vector<uint32_t> out;
  for (float x : v) out.push_back(to_bits(t, x));
  return out;
}

GemmDesc scalar_desc(Instruction i = Instruction::kScalarFma) {
  GemmDesc d;
  d.instruction = i;
  d.instruction_k = 1;
  d.out_dtype = DType::kF32;
  return d;
}

GemmDesc mma_desc(int64_t step = 0, ShortTurn st = ShortTurn::kLast, bool fast = true) {
  GemmDesc d;
  d.instruction = Instruction::kMmaSync;
  d.instruction_k = 16;
  d.use_fast_accum = fast;
  d.k_loop_step = {step, st};
  d.out_dtype = DType::kF32;
  return d;
}

// One dot product a . b (m = n = 1) in the descriptor's input dtype; b defaults to
// all ones. Returns the output bits.
uint32_t dot(const GemmDesc& d, const std::vector<float>& a, std::vector<float> b = {},
             const MmaModel* model = nullptr) {
  if (b.empty()) b.assign(a.size(), 1.0f);
  GemmProblem p;
  p.m = 1;
  p.n = 1;
  p.k = static_cast<int64_t>(a.size());
  p.a = bits_of(d.a_dtype, a);
  p.b = bits_of(d.b_dtype, b);
  absl::StatusOr<std::vector<uint32_t>> out = gemm(d, p, model);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || out->size() != 1) return 0xdeadbeefu;
  return (*out)[0];
}

// fma chain in index order. [r, r, r, L, -L]: r, 2r, 3r, L + 3r -> L + ulp, then
// -L -> 2^-13. [L, r, r, r, -L]: every r is lost against L -> +0.
TEST(GemmReference, ScalarFmaFoldsInIndexOrder) {
  EXPECT_EQ(dot(scalar_desc(), {r, r, r, L, -L}), float_bits(p2(-13)));
  EXPECT_EQ(dot(scalar_desc(), {L, r, r, r, -L}), 0x00000000u);
}

// The seed (f32 outputs): a lone -0.0 product stays -0.0 from a -0.0 seed and becomes +0.0 from the
// usual +0.0 one; (-0.0, +0.0) products give +0.0 either way; a nonzero sum is the same.
TEST(GemmReference, NegativeZeroSeedKeepsALoneNegativeZeroProduct) {
  for (Instruction ins : {Instruction::kScalarFma, Instruction::kScalarMulAdd}) {
    GemmDesc pos = scalar_desc(ins);
    GemmDesc neg = pos;
    neg.neg_zero_seed = true;
    ASSERT_TRUE(validate(neg).ok()) << validate(neg);
    EXPECT_EQ(dot(pos, {-0.0f}, {1.0f}), 0x00000000u);
    EXPECT_EQ(dot(neg, {-0.0f}, {1.0f}), 0x80000000u);
    EXPECT_EQ(dot(neg, {-0.0f, 0.0f}, {1.0f, 2.0f}), 0x00000000u);
    EXPECT_EQ(dot(neg, {-0.0f, -0.0f}, {1.0f, 2.0f}), 0x80000000u);
    EXPECT_EQ(dot(neg, {-0.0f, 0.0f}, {1.0f, -2.0f}), 0x80000000u);
    EXPECT_EQ(dot(neg, {r, L, -L}, {1.0f, 1.0f, 1.0f}), dot(pos, {r, L, -L}, {1.0f, 1.0f, 1.0f}));
  }
}

// f32 inputs, a = [-1, 1+2^-12], b = [1+2^-11, 1+2^-12]. The second product is
// 1 + 2^-11 + 2^-24 exactly. fma: -(1+2^-11) + that = 2^-24 (0x33800000).
// mul+add: the product rounds first (2^-24 is a tie, 1+2^-11 is even) and the sum
// is +0.
TEST(GemmReference, ScalarMulAddRoundsTheProduct) {
  GemmDesc fma = scalar_desc(Instruction::kScalarFma);
  fma.a_dtype = fma.b_dtype = DType::kF32;
  GemmDesc mul_add = fma;
  mul_add.instruction = Instruction::kScalarMulAdd;
  const std::vector<float> a{-1.0f, 1.0f + p2(-12)}, b{1.0f + p2(-11), 1.0f + p2(-12)};
  EXPECT_EQ(dot(fma, a, b), 0x33800000u);
  EXPECT_EQ(dot(mul_add, a, b), 0x00000000u);
}

// f16 mma, ik = 16, step 16, K = 17, a = [L, r x 16], sm90 model.
// Short turn last: turns [0,16) [16,17). mma(0, L + 15r): quantum 2^-15, exact sum
//   L + 3.75 ulp, truncated -> L + 3 ulp; mma(L + 3ulp, r) -> L + 3.25 ulp -> L + 3 ulp.
// Short turn first: turns [0,1) [1,17). mma(0, L) = L; mma(L, 16r) = L + 4 ulp.
// The exact-RNE model gives L + 4 ulp both ways (3.75 -> 4, 4.25 -> 4).
TEST(GemmReference, ShortTurnFirstVersusLast) {
  std::vector<float> a(17, r);
  a[0] = L;
  EXPECT_EQ(dot(mma_desc(16, ShortTurn::kLast), a), 0x44800003u);
  EXPECT_EQ(dot(mma_desc(16, ShortTurn::kFirst), a), 0x44800004u);
  std::unique_ptr<MmaModel> exact = make_exact_rne_mma_model();
  EXPECT_EQ(dot(mma_desc(16, ShortTurn::kLast), a, {}, exact.get()), 0x44800004u);
  EXPECT_EQ(dot(mma_desc(16, ShortTurn::kFirst), a, {}, exact.get()), 0x44800004u);
  // wgmma shares the model, so the same descriptor with kWgmma gives the same bits.
  GemmDesc wg = mma_desc(16, ShortTurn::kLast);
  wg.instruction = Instruction::kWgmma;
  EXPECT_EQ(dot(wg, a), 0x44800003u);
}

// K = 32, products: 1*1 at k = 0 and (3*2^-13)*(2^-12) = 3*2^-25 = 0.75 ulp(1) at
// k = 16, zeros elsewhere.
//   fast accum: acc = mma(mma(0, g0), g1) = trunc(1 + 0.75 ulp) = 1.0.
//   not fast, step 16: acc = (0 + mma(0,g0)) + mma(0,g1) = 1 (+) 3*2^-25 -> RNE 1 + ulp.
//   not fast, step 32: one turn, t = mma(mma(0,g0),g1) = 1.0, acc = 1.0.
TEST(GemmReference, FastAccumVersusTwoRoundings) {
  std::vector<float> a(32, 0.0f), b(32, 1.0f);
  a[0] = 1.0f;
  a[16] = 3 * p2(-13);
  b[16] = p2(-12);
  EXPECT_EQ(dot(mma_desc(16, ShortTurn::kLast, true), a, b), 0x3f800000u);
  EXPECT_EQ(dot(mma_desc(16, ShortTurn::kLast, false), a, b), 0x3f800001u);
  EXPECT_EQ(dot(mma_desc(32, ShortTurn::kLast, false), a, b), 0x3f800000u);
  EXPECT_EQ(dot(mma_desc(0, ShortTurn::kLast, false), a, b), 0x3f800001u);  // 0 = ik
}

// fp8 (e4m3) mma, ik = 32: products 1*1 and 2^-7*2^-7 = 2^-14 share one group; the
// fp8 quantum is 2^-13, so 2^-14 is dropped -> 1.0. With f16 inputs it stays:
// 1 + 2^-14 = 0x3f800200.
TEST(GemmReference, Fp8MmaKeepsThirteenBits) {
  GemmDesc d = mma_desc();
  d.a_dtype = d.b_dtype = DType::kF8E4M3;
  d.instruction_k = 32;
  EXPECT_EQ(dot(d, {1.0f, p2(-7)}, {1.0f, p2(-7)}), 0x3f800000u);
  EXPECT_EQ(dot(mma_desc(), {1.0f, p2(-7)}, {1.0f, p2(-7)}), 0x3f800200u);
}

GemmDesc split_desc(DType partial, DType merge) {
  GemmDesc d = scalar_desc();
  d.family = GemmFamily::kSplitK;
  d.k_cuts = {{2, Fold::kChain}};
  d.partial_dtype = partial;
  d.merge_dtype = merge;
  return d;
}

// Split of span 2 over K = 4. a = [1, 2^-11, 0, 0]: part 0 = 1 + 2^-11, part 1 = 0.
// partial f32 keeps 1 + 2^-11 (0x3f801000); partial f16 rounds the tie to 1.0.
// a = [1, 0, 2^-11, 0]: parts 1 and 2^-11; merge f32 -> 1 + 2^-11; merge f16 -> 1.0.
TEST(GemmReference, SplitKPartialAndMergeDtypes) {
  const std::vector<float> first{1.0f, p2(-11), 0.0f, 0.0f};
  EXPECT_EQ(dot(split_desc(DType::kF32, DType::kF32), first), 0x3f801000u);
  EXPECT_EQ(dot(split_desc(DType::kF16, DType::kF32), first), 0x3f800000u);
  const std::vector<float> second{1.0f, 0.0f, p2(-11), 0.0f};
  EXPECT_EQ(dot(split_desc(DType::kF32, DType::kF32), second), 0x3f801000u);
  EXPECT_EQ(dot(split_desc(DType::kF32, DType::kF16), second), 0x3f800000u);
  // The split merges in part order: a = [L, r, -L, r] with span 1 parts:
  // ((L + r) + -L) + r = r.
  GemmDesc one = split_desc(DType::kF32, DType::kF32);
  one.k_cuts = {{1, Fold::kChain}};
  EXPECT_EQ(dot(one, {L, r, -L, r}), float_bits(r));
}

// The merge's running sum starts at +0.0 (cuBLAS's splitKreduce, docs/cublas.md):
// a = -2^-15, b = 2^-15 at k = 0 and 2 gives parts of -2^-30 each, -0.0 once
// rounded to a f16 partial; +0.0 + -0.0 + -0.0 = +0.0. With f32 partials the parts
// survive and merge to -2^-29.
TEST(GemmReference, SplitKMergeStartsFromPositiveZero) {
  const std::vector<float> a{-p2(-15), 0.0f, -p2(-15), 0.0f}, b{p2(-15), 0.0f, p2(-15), 0.0f};
  EXPECT_EQ(dot(split_desc(DType::kF16, DType::kF32), a, b), 0x00000000u);
  EXPECT_EQ(dot(split_desc(DType::kF32, DType::kF32), a, b), float_bits(-p2(-29)));
}

GemmDesc chunks_desc(std::vector<KCut> cuts) {
  GemmDesc d = scalar_desc();
  d.family = GemmFamily::kChainedChunks;
  d.k_cuts = std::move(cuts);
  return d;
}

// Parts of one element, a = [L, r, -L, r]:
//   chain:     ((L + r) + -L) + r = (L + -L) + r = r
//   tree up:   (L + r) + (-L + r) = L + -L = +0
//   tree down: (L + -L) + (r + r) = 2r
// Three parts [L, r, -L] pad with -0.0 to four:
//   up: (L + r) + (-L + -0) = +0;  down: (L + -L) + (r + -0) = r;  chain: +0.
TEST(GemmReference, CutFolds) {
  const std::vector<float> four{L, r, -L, r};
  EXPECT_EQ(dot(chunks_desc({{1, Fold::kChain}}), four), float_bits(r));
  EXPECT_EQ(dot(chunks_desc({{1, Fold::kTreeUp}}), four), 0x00000000u);
  EXPECT_EQ(dot(chunks_desc({{1, Fold::kTreeDown}}), four), float_bits(2 * r));
  const std::vector<float> three{L, r, -L};
  EXPECT_EQ(dot(chunks_desc({{1, Fold::kTreeUp}}), three), 0x00000000u);
  EXPECT_EQ(dot(chunks_desc({{1, Fold::kTreeDown}}), three), float_bits(r));
  EXPECT_EQ(dot(chunks_desc({{1, Fold::kChain}}), three), 0x00000000u);
}

// Two levels: outer span 4 chained, inner span 2 chained, a = [r, r, r, L, -L, r, r, r]:
//   outer part 0: inner (r + r) = 2r, (r + L) = L -> 2r + L = L (tie, even);
//   outer part 1: (-L + r) = -L, (r + r) = 2r -> -L + 2r = -L + 2^-14 exactly;
//   chain: L + (-L + 2^-14) = 2^-14.
// One level of span 8 (a plain fma chain) gives r, 2r, 3r, L + 3r = L + ulp, then
// -L -> 2^-13, + 3r -> 2^-13 + 3*2^-15 = 7*2^-15.
TEST(GemmReference, NestedCuts) {
  const std::vector<float> a{r, r, r, L, -L, r, r, r};
  EXPECT_EQ(dot(chunks_desc({{4, Fold::kChain}, {2, Fold::kChain}}), a), float_bits(p2(-14)));
  EXPECT_EQ(dot(chunks_desc({{8, Fold::kChain}}), a), float_bits(7 * r));
}

GemmDesc gemv_desc(LaneLayout layout, int lanes, int tile, std::vector<int> fold) {
  GemmDesc d = scalar_desc();
  d.family = GemmFamily::kGemv;
  d.lane_layout = layout;
  d.lanes = lanes;
  d.lane_tile = tile;
  d.lane_fold = std::move(fold);
  return d;
}

// lanes 2, tile 1, a = [L, -L, r, r]:
//   contiguous: lane 0 = L - L = 0, lane 1 = 2r; fold -> 2r.
//   strided:    lane 0 = L + r = L, lane 1 = -L + r = -L; fold -> 0.
// lanes 4, tile 1, one element per lane, v = [L, -L, r, r]:
//   fold [1, 2]: (L + -L) + (r + r) = 2r;  fold [2, 1]: (L + r) + (-L + r) = 0.
TEST(GemmReference, GemvLayoutAndFoldOrder) {
  const std::vector<float> a{L, -L, r, r};
  EXPECT_EQ(dot(gemv_desc(LaneLayout::kContiguous, 2, 1, {1}), a), float_bits(2 * r));
  EXPECT_EQ(dot(gemv_desc(LaneLayout::kStrided, 2, 1, {1}), a), 0x00000000u);
  EXPECT_EQ(dot(gemv_desc(LaneLayout::kContiguous, 4, 1, {1, 2}), a), float_bits(2 * r));
  EXPECT_EQ(dot(gemv_desc(LaneLayout::kContiguous, 4, 1, {2, 1}), a), 0x00000000u);
}

// cuBLAS's gemv2T (GemmDesc.h): lanes chained in order, and turns.
// lanes 4, tile 1, one element per lane, v = [L, r, -L, r]:
//   chain: ((L + r) + -L) + r = r;  fold [1, 2]: (L + r) + (-L + r) = 0;
//   fold [2, 1]: (L + -L) + (r + r) = 2r.
// lanes 1, turns of 2, a = [L, r, -L, r]: (0 + (L + r)) + (-L + r) = L - L = 0; without
//   turns ((L + r) - L) + r = r. K = 5, a = [r, L, r, -L, r]: short turn first: turns
//   [0,1) [1,3) [3,5) = r, L, -L: ((0 + r) + L) - L = 0; short last: [0,2) [2,4) [4,5)
//   = L, -L, r: ((0 + L) - L) + r = r.
TEST(GemmReference, GemvLaneChainAndTurns) {
  const std::vector<float> v{L, r, -L, r};
  EXPECT_EQ(dot(gemv_desc(LaneLayout::kStrided, 4, 1, {}), v), float_bits(r));
  EXPECT_EQ(dot(gemv_desc(LaneLayout::kStrided, 4, 1, {1, 2}), v), 0x00000000u);
  EXPECT_EQ(dot(gemv_desc(LaneLayout::kStrided, 4, 1, {2, 1}), v), float_bits(2 * r));
  GemmDesc turns = gemv_desc(LaneLayout::kContiguous, 1, 1, {});
  EXPECT_EQ(dot(turns, v), float_bits(r));
  turns.use_fast_accum = false;
  turns.k_loop_step = {2, ShortTurn::kLast};
  ASSERT_TRUE(validate(turns).ok()) << validate(turns);
  EXPECT_EQ(dot(turns, v), 0x00000000u);
  const std::vector<float> five{r, L, r, -L, r};
  EXPECT_EQ(dot(turns, five), float_bits(r));
  turns.k_loop_step.short_turn = ShortTurn::kFirst;
  EXPECT_EQ(dot(turns, five), 0x00000000u);
}

// lanes 4, tile 2, K = 10 -> 5 tiles, a = [r, r, r, L, -L, 0, 0, 0, r, r].
// contiguous: ceil(5/4) = 2 tiles per lane: lane0 = e0..3 = 3r + L = L + ulp,
//   lane1 = e4..7 = -L, lane2 = e8..9 = 2r, lane3 = nothing = 0.
//   fold [1,2]: (L + ulp - L) + (2r + 0) = 2^-13 + 2^-14 = 3*2^-14.
// strided: tile t to lane t % 4: lane0 = tiles 0, 4 = 4r, lane1 = tile 1 = r + L = L,
//   lane2 = -L, lane3 = 0. fold [1,2]: (4r + L) + (-L + 0) = (L + ulp) - L = 2^-13.
TEST(GemmReference, GemvTilesDealtWholeAndCeil) {
  const std::vector<float> a{r, r, r, L, -L, 0.0f, 0.0f, 0.0f, r, r};
  EXPECT_EQ(dot(gemv_desc(LaneLayout::kContiguous, 4, 2, {1, 2}), a), float_bits(3 * p2(-14)));
  EXPECT_EQ(dot(gemv_desc(LaneLayout::kStrided, 4, 2, {1, 2}), a), float_bits(p2(-13)));
}

// The H200's gemvNSP tree (M = 1, N = 10618, K = 212, bf16; 20 lanes, strided tiles
// of 4, fold 16, 8, 4, 2, 1 over 32 slots, lanes 20..31 absent), worked by hand.
// Tile t = elements [4t, 4t+4) goes to lane t % 20: element 0 -> lane 0, 32 -> lane 8,
// 64 -> lane 16, and lane 12 holds tiles 12, 32, 52 (elements 48, 128, 208).
// a (b = 1): [0] = L, [64] = -L, [32] = 3r, [48] = L, [128] = -L, [208] = r, else 0.
//   lane 0 = L, lane 16 = -L, lane 8 = 3r, lane 12 = (L + -L) + r = r, others +0.
//   d=16: lane 0 = L + -L = 0 (lanes 4..15 have no partner 20..31: kept);
//   d=8:  lane 0 = 0 + 3r = 3r, lane 4 = lane 4 + lane 12 = r;
//   d=4:  lane 0 = 3r + r = 4r; d=2, d=1 add zeros: 4r = 2^-13.
// Folding 8 before 16 gives (L + 3r) + -L = 2^-13 in lane 0, then 2^-13 + r = 5r;
// lane 12 folded out of order (L, r, -L) gives 0 and the result 3r.
TEST(GemmReference, GemvTwentyLaneTreeByHand) {
  const std::vector<float> a = dsl::testing::twenty_lane_row();
  EXPECT_EQ(dot(gemv_desc(LaneLayout::kStrided, 20, 4, {16, 8, 4, 2, 1}), a),
            float_bits(4 * r));
  EXPECT_EQ(dot(gemv_desc(LaneLayout::kStrided, 20, 4, {8, 16, 4, 2, 1}), a),
            float_bits(5 * r));
}

// 3 lanes, contiguous tiles of 2, K = 10: 5 tiles, runs of ceil(5/3) = 2 tiles, so
// lane 0 = e0..3, lane 1 = e4..7, lane 2 = e8..9. a = [L,0,0,0, -L,0,0,0, r, r]:
// v = [L, -L, 2r]. Fold [1, 2]: d=1 lane 0 = L + -L = 0 (lane 2's partner 3 is
// absent: kept), d=2: 0 + 2r = 2r. Fold [2, 1]: d=2 lane 0 = L + 2r = L (a tie, L
// even; lane 1 kept), d=1: L + -L = 0.
TEST(GemmReference, GemvThreeContiguousLanes) {
  const std::vector<float> a{L, 0, 0, 0, -L, 0, 0, 0, r, r};
  EXPECT_EQ(dot(gemv_desc(LaneLayout::kContiguous, 3, 2, {1, 2}), a), float_bits(2 * r));
  EXPECT_EQ(dot(gemv_desc(LaneLayout::kContiguous, 3, 2, {2, 1}), a), 0x00000000u);
}

// An absent partner is skipped, not added as +0.0. f32 inputs a = -2^-100, b = 2^-100:
// every product -2^-200 underflows, so each lane's fma chain from +0.0 is -0.0
// (round-to-nearest keeps the sign of a negative result that rounds to zero).
// K = 212 (20 lanes, strided tiles of 4: every lane holds a tile): every lane is
// -0.0 and so is the result, 0x80000000. A +0.0 partner in round 16 would turn
// lanes 4..15 into +0.0 and the result into +0.0: this test FAILS for +0.0 padding.
// K = 8 (lanes 0 and 1 hold a tile; lanes 2..19 fold nothing and hold +0.0):
// -0.0 + +0.0 = +0.0. Products that are exactly -0.0 (a = -0.0) leave every lane at
// its +0.0 start: +0.0, for 20 lanes as for 32.
TEST(GemmReference, GemvAbsentPartnerKeepsNegativeZero) {
  GemmDesc d = gemv_desc(LaneLayout::kStrided, 20, 4, {16, 8, 4, 2, 1});
  d.a_dtype = d.b_dtype = DType::kF32;
  const float tiny = p2(-100);
  EXPECT_EQ(dot(d, std::vector<float>(212, -tiny), std::vector<float>(212, tiny)), 0x80000000u);
  EXPECT_EQ(dot(d, std::vector<float>(8, -tiny), std::vector<float>(8, tiny)), 0x00000000u);
  EXPECT_EQ(dot(d, std::vector<float>(212, -0.0f)), 0x00000000u);
  for (int lanes : {3, 24, 26}) {
    GemmDesc c = gemv_desc(LaneLayout::kContiguous, lanes, 1, {});
    c.a_dtype = c.b_dtype = DType::kF32;
    for (int off = 1; off < lane_slots(lanes); off *= 2) c.lane_fold.push_back(off);
    const size_t k = 3 * static_cast<size_t>(lanes);  // three elements in every lane
    EXPECT_EQ(dot(c, std::vector<float>(k, -tiny), std::vector<float>(k, tiny)), 0x80000000u)
        << lanes;
  }
}

// Epilogue, K = 1, a = 3, b = 1 -> acc = 3.
//   alpha 0.5, beta 2, c = 1.5: e = fma(2, 1.5, 0.5 * 3) = 4.5; bias -5 -> -0.5
//   -> f16 0xb800; relu -> +0.
TEST(GemmReference, EpilogueAlphaBetaBiasRelu) {
  GemmDesc d = scalar_desc();
  d.out_dtype = DType::kF16;
  d.alpha_beta = true;
  d.bias = true;
  GemmProblem p;
  p.m = p.n = p.k = 1;
  p.a = {to_bits(DType::kF16, 3.0f)};
  p.b = {to_bits(DType::kF16, 1.0f)};
  p.c = {to_bits(DType::kF16, 1.5f)};
  p.bias = {float_bits(-5.0f)};
  p.alpha = 0.5f;
  p.beta = 2.0f;
  absl::StatusOr<std::vector<uint32_t>> out = gemm(d, p);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], 0xb800u);
  d.activation = Activation::kRelu;
  out = gemm(d, p);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], 0x0000u);
}

// beta * c is fused, alpha * acc is not. acc = 1 + 2^-10 (a f16), c = 1 + 2^-10.
//  alpha = -1, beta = 1 + 2^-14: e = fma(beta, c, -acc) = 2^-14 + 2^-24 exactly
//   (f16 0x0401); unfused it would be 2^-14 (0x0400).
//  alpha = 1 + 2^-14, beta = -1: alpha * acc = 1 + 2^-10 + 2^-14 + 2^-24 rounds
//   (tie, even) to 1 + 2^-10 + 2^-14, minus c -> 2^-14 (0x38800000).
TEST(GemmReference, EpilogueFusesBetaTimesC) {
  GemmDesc d = scalar_desc();
  d.alpha_beta = true;
  d.out_dtype = DType::kF16;
  GemmProblem p;
  p.m = p.n = p.k = 1;
  p.a = {to_bits(DType::kF16, 1.0f + p2(-10))};
  p.b = {to_bits(DType::kF16, 1.0f)};
  p.c = {to_bits(DType::kF16, 1.0f + p2(-10))};
  // In f16, 2^-14 is the smallest normal (0x0400) and its quantum is 2^-24, so
  // 2^-14 + 2^-24 is exactly 0x0401.
  p.alpha = -1.0f;
  p.beta = 1.0f + p2(-14);
  absl::StatusOr<std::vector<uint32_t>> out = gemm(d, p);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], 0x0401u);
  p.alpha = 1.0f + p2(-14);
  p.beta = -1.0f;
  out = gemm(d, p);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ((*out)[0], 0x0400u);
}

// 2x2 times 2x3 with small integers in every storage order:
// [[1,2],[3,4]] * [[1,2,3],[4,5,6]] = [[9,12,15],[19,26,33]].
TEST(GemmReference, StorageOrders) {
  const std::vector<float> a_row{1, 2, 3, 4}, a_col{1, 3, 2, 4};
  const std::vector<float> b_row{1, 2, 3, 4, 5, 6}, b_col{1, 4, 2, 5, 3, 6};
  const std::vector<float> want{9, 12, 15, 19, 26, 33};
  for (bool ar : {true, false}) {
    for (bool br : {true, false}) {
      for (GemmDesc d : {scalar_desc(), mma_desc()}) {
        GemmProblem p;
        p.m = 2;
        p.n = 3;
        p.k = 2;
        p.a_row_major = ar;
        p.b_row_major = br;
        p.a = bits_of(DType::kF16, ar ? a_row : a_col);
        p.b = bits_of(DType::kF16, br ? b_row : b_col);
        d.out_dtype = DType::kF16;
        absl::StatusOr<std::vector<uint32_t>> out = gemm(d, p);
        ASSERT_TRUE(out.ok()) << out.status();
        EXPECT_EQ(*out, bits_of(DType::kF16, want)) << "a_row_major=" << ar
                                                    << " b_row_major=" << br;
      }
    }
  }
}

TEST(GemmReference, NanInputsGiveCanonicalNan) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(dot(scalar_desc(), {1.0f, nan}), 0x7fffffffu);
  EXPECT_EQ(dot(mma_desc(), {1.0f, nan}), 0x7fffffffu);
  GemmDesc d = mma_desc();
  d.out_dtype = DType::kF16;
  EXPECT_EQ(dot(d, {1.0f, nan}), 0x7fffu);  // the NaN cvt.rn.f16.f32 writes
  // inf * 0 inside an instruction is NaN; inf alone stays inf.
  EXPECT_EQ(dot(mma_desc(), {std::numeric_limits<float>::infinity(), 1.0f}, {0.0f, 1.0f}),
            0x7fffffffu);
  EXPECT_EQ(dot(mma_desc(), {std::numeric_limits<float>::infinity(), 1.0f}),
            0x7f800000u);
}

// K = 0: the empty sum is +0.0.
TEST(GemmReference, EmptyK) {
  for (GemmDesc d : {scalar_desc(), mma_desc(), split_desc(DType::kF16, DType::kF16)}) {
    GemmProblem p;
    p.m = 2;
    p.n = 1;
    p.k = 0;
    absl::StatusOr<std::vector<uint32_t>> out = gemm(d, p);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(*out, (std::vector<uint32_t>{0u, 0u}));
  }
}

// With small integers every partial sum is exact, so every tree must give the exact
// dot product: this checks that each family visits every k exactly once (a dropped
// or doubled element would change the integer), over many shapes and descriptors.
TEST(GemmReference, EveryElementFoldedExactlyOnce) {
  uint32_t seed = 12345;
  auto next = [&]() { seed = seed * 1664525u + 1013904223u; return seed >> 8; };
  std::vector<GemmDesc> descs;
  for (ShortTurn st : {ShortTurn::kLast, ShortTurn::kFirst}) {
    for (bool fast : {true, false}) {
      for (int64_t step : {0, 16, 48}) descs.push_back(mma_desc(step, st, fast));
    }
  }
  for (Fold f : {Fold::kChain, Fold::kTreeUp, Fold::kTreeDown}) {
    descs.push_back(chunks_desc({{7, Fold::kChain}, {3, f}}));
    descs.push_back(chunks_desc({{5, f}}));
    GemmDesc s = split_desc(DType::kF32, DType::kF32);
    s.k_cuts = {{13, Fold::kChain}, {4, f}};
    descs.push_back(s);
    GemmDesc sm = mma_desc(32, ShortTurn::kFirst, false);
    sm.family = GemmFamily::kSplitK;
    sm.k_cuts = {{40, Fold::kChain}, {20, f}};
    descs.push_back(sm);
  }
  for (LaneLayout l : {LaneLayout::kContiguous, LaneLayout::kStrided}) {
    descs.push_back(gemv_desc(l, 8, 3, {4, 2, 1}));
    descs.push_back(gemv_desc(l, 4, 1, {1, 2}));
    descs.push_back(gemv_desc(l, 32, 8, {16, 8, 4, 2, 1}));
    descs.push_back(gemv_desc(l, 20, 4, {16, 8, 4, 2, 1}));
    descs.push_back(gemv_desc(l, 3, 2, {2, 1}));
    descs.push_back(gemv_desc(l, 26, 1, {1, 16, 2, 8, 4}));
  }
  descs.push_back(scalar_desc(Instruction::kScalarMulAdd));
  for (const GemmDesc& d : descs) {
    for (int64_t k : {1, 2, 15, 16, 17, 33, 64, 100}) {
      GemmProblem p;
      p.m = 2;
      p.n = 3;
      p.k = k;
      std::vector<float> a(p.m * k), b(k * p.n);
      for (float& x : a) x = static_cast<float>(static_cast<int>(next() % 9) - 4);
      for (float& x : b) x = static_cast<float>(static_cast<int>(next() % 9) - 4);
      p.a = bits_of(d.a_dtype, a);
      p.b = bits_of(d.b_dtype, b);
      absl::StatusOr<std::vector<uint32_t>> out = gemm(d, p);
      ASSERT_TRUE(out.ok()) << out.status() << " " << d;
      for (int64_t i = 0; i < p.m; ++i) {
        for (int64_t j = 0; j < p.n; ++j) {
          float want = 0;
          for (int64_t kk = 0; kk < k; ++kk) want += a[i * k + kk] * b[kk * p.n + j];
          EXPECT_EQ((*out)[i * p.n + j], float_bits(want + 0.0f)) << d << " k=" << k;
        }
      }
    }
  }
}

void expect_error(const GemmDesc& d, const GemmProblem& p, const std::string& needle) {
  absl::StatusOr<std::vector<uint32_t>> out = gemm(d, p);
  ASSERT_FALSE(out.ok()) << "expected an error mentioning " << needle;
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find(needle), std::string_view::npos)
      << out.status().message();
}

TEST(GemmReference, ErrorsNameTheBadField) {
  GemmProblem p;
  p.m = 2;
  p.n = 1;
  p.k = 3;
  p.a = std::vector<uint32_t>(5, 0x3c00);
  p.b = std::vector<uint32_t>(3, 0x3c00);
  expect_error(mma_desc(), p, "GemmProblem.a has 5 elements; m*k = 6.");
  p.a.resize(6, 0x3c00);
  p.b.resize(4, 0x3c00);
  expect_error(mma_desc(), p, "GemmProblem.b has 4 elements; k*n = 3.");
  p.b.resize(3);
  p.a[2] = 0x13c00;
  expect_error(mma_desc(), p, "GemmProblem.a[2] is 0x13c00");
  p.a[2] = 0x3c00;
  GemmDesc ab = mma_desc();
  ab.alpha_beta = true;
  expect_error(ab, p, "GemmProblem.c has 0 elements; m*n = 2.");
  GemmDesc bias = mma_desc();
  bias.bias = true;
  expect_error(bias, p, "GemmProblem.bias has 0 elements; n = 1.");
  GemmDesc bad_ik = mma_desc();
  bad_ik.instruction_k = 4;
  expect_error(bad_ik, p, "GemmDesc.instruction_k");
  GemmProblem neg = p;
  neg.m = -1;
  expect_error(mma_desc(), neg, "negative extent");
  GemmProblem huge;
  huge.m = int64_t{1} << 40;
  huge.n = int64_t{1} << 40;
  expect_error(mma_desc(), huge, "more than 2^32 elements");
  // The valid problem passes.
  EXPECT_TRUE(gemm(mma_desc(), p).ok());
}

}  // namespace
}  // namespace fixbits::dsl::reference
