// dsl::gemm's matrix programs (mma_sync, wgmma) executed on the CPU by the program
// interpreter (tests/codegen/ProgramInterpreter.h, which runs each matrix op as the
// PTX ISA defines it on the fragments, with the sm_90 MmaModel) give exactly the
// bits of dsl::reference::gemm (memcmp) for every knob setting — the old one 16x8
// tile per warp and the register-blocked warp_m_tiles x warp_n_tiles ones — over
// shapes M = 1, odd N, odd K, K = 0 and K not a multiple of instruction_k, inputs
// f16 / bf16 (mma_sync and wgmma) and e4m3 / e5m2 (wgmma), fast and non-fast
// accumulation, short turns first and last, instruction_k 16 and 8 (mma_sync), split_k with tree folds and narrow
// partials, segment splits (an empty segment included), the dot family's two programs, and the epilogue (alpha/beta, bias, relu). This is the CPU proof that the register blocking
// moves no bit; the GPU tests (tests/jit/gemm_gpu_test.cpp) check the hardware.
// Family gemv, every lane count the descriptor allows (1..64, powers of two or not:
// cuBLAS's gemvNSP uses 20, 24 and 26 lanes, whose absent partners the program pads
// with -0.0 slots), both layouts, K below lanes * lane_tile and K not a multiple of
// the tile, under warp and row knobs from one warp to 32 and rows 1 to 16.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "absl/strings/str_format.h"
#include "dsl/reference/Reference.h"
#include "dsl/tile/GemmProgram.h"
#include "tests/codegen/ProgramInterpreter.h"
#include "tests/jit/RandomGemmProblem.h"
#include "tests/jit/RandomInputs.h"
#include "tests/dsl/tile/BlockedGemmConfig.h"
#include "tests/dsl/CublasDot.h"
#include "tests/dsl/GemvTwentyLanes.h"

namespace fixbits {
namespace {

using dsl::GemmConfig;
using dsl::GemmDesc;
using dsl::GemmFamily;
using dsl::Instruction;
using dsl::reference::GemmProblem;
using testing::Buffers;
using testing::HostBuffer;
using testing::Mix;

struct Shape {
  int64_t m, n, k;
};

using testing::blocked;

// Runs every block of the grid of `d` under `cfg` through the interpreter; the
// output starts as all-ones bits, so an element no block writes is a mismatch.
absl::StatusOr<std::vector<uint32_t>> interpret(const GemmDesc& d, const GemmConfig& cfg,
                                                const GemmProblem& p) {
  absl::StatusOr<dsl::GemmPrograms> progs = dsl::gemm(d, cfg);
  if (!progs.ok()) return progs.status();
  absl::StatusOr<dsl::GemmLaunchShape> ls = dsl::gemm_launch_shape(d, cfg, p.m, p.n, p.k);
  if (!ls.ok()) return ls.status();
  const uint32_t ones = d.out_dtype == DType::kF32 ? 0xffffffffu : 0xffffu;
  Buffers mem;
  mem["a"] = HostBuffer{d.a_dtype, p.a};
  mem["b"] = HostBuffer{d.b_dtype, p.b};
  mem["out"] = HostBuffer{d.out_dtype, std::vector<uint32_t>(static_cast<size_t>(p.m * p.n), ones)};
  mem["c"] = HostBuffer{d.out_dtype, d.alpha_beta ? p.c : std::vector<uint32_t>{0}};
  mem["bias"] = HostBuffer{DType::kF32, d.bias ? p.bias : std::vector<uint32_t>{0}};
  mem["ws"] = HostBuffer{d.partial_dtype,
                         std::vector<uint32_t>(static_cast<size_t>(std::max<int64_t>(ls->workspace_elems, 1)), 0)};
  std::map<std::string, int64_t> ints = {
      {"m", p.m}, {"n", p.n}, {"k", p.k},
      {"a_sm", p.a_row_major ? p.k : 1}, {"a_sk", p.a_row_major ? 1 : p.m},
      {"b_sk", p.b_row_major ? p.n : 1}, {"b_sn", p.b_row_major ? 1 : p.k},
      {"parts", ls->parts}};
  std::map<std::string, float> floats = {{"alpha", d.alpha_beta ? p.alpha : 1.0f},
                                         {"beta", d.alpha_beta ? p.beta : 0.0f}};
  auto grid = [&](const tile::Program& prog, std::array<int64_t, 3> g) -> absl::Status {
    for (int64_t z = 0; z < g[2]; ++z) {
      for (int64_t y = 0; y < g[1]; ++y) {
        for (int64_t x = 0; x < g[0]; ++x) {
          absl::Status s = testing::run_block(prog, {x, y, z}, ints, floats, mem, 32);
          if (!s.ok()) return s;
        }
      }
    }
    return absl::OkStatus();
  };
  if (absl::Status s = grid(progs->main, ls->main_grid); !s.ok()) return s;
  if (progs->merge) {
    if (absl::Status s = grid(*progs->merge, ls->merge_grid); !s.ok()) return s;
  }
  return mem["out"].bits;
}

class GemmInterp : public ::testing::Test {
 protected:
  GemmProblem problem(const GemmDesc& d, Shape s, bool a_row, bool b_row, Mix mix, bool specials) {
    return testing::random_gemm_problem(d, {s.m, s.n, s.k}, a_row, b_row, rng_, mix, specials);
  }

  // Interpreter bits == reference bits for `cfg`; reports the first mismatch.
  void expect_reference(const GemmDesc& d, const GemmConfig& cfg, const GemmProblem& p) {
    ++runs_;
    auto want = dsl::reference::gemm(d, p);
    ASSERT_TRUE(want.ok()) << want.status();
    auto got = interpret(d, cfg, p);
    ASSERT_TRUE(got.ok()) << dsl::to_string(d) << ": " << got.status();
    ASSERT_EQ(got->size(), want->size());
    if (got->empty() || std::memcmp(got->data(), want->data(), got->size() * 4) == 0) return;
    size_t i = 0;
    while ((*got)[i] == (*want)[i]) ++i;
    ADD_FAILURE() << absl::StrFormat(
        "%s\n  knobs warps=%d warp_m_tiles=%d warp_n_tiles=%d, m=%d n=%d k=%d a_row=%d "
        "b_row=%d: element (%d, %d) is 0x%x, the reference says 0x%x",
        dsl::to_string(d), cfg.warps, cfg.warp_m_tiles, cfg.warp_n_tiles, p.m, p.n, p.k,
        p.a_row_major, p.b_row_major, i / p.n, i % p.n, (*got)[i], (*want)[i]);
  }

  // Each descriptor runs with its own output dtype and with f32 outputs: rounding to
  // f16/bf16 hides most of the low bits where two summation orders differ (session 10:
  // the dot sweep passed with its block fold reversed until it wrote f32).
  void sweep(const GemmDesc& d, const std::vector<GemmConfig>& cfgs,
             const std::vector<Shape>& shapes) {
    sweep_one(d, cfgs, shapes);
    if (d.out_dtype == DType::kF32 || HasFailure()) return;
    GemmDesc wide = d;
    wide.out_dtype = DType::kF32;
    if (dsl::validate(wide).ok()) sweep_one(wide, cfgs, shapes);
  }

  void sweep_one(const GemmDesc& d, const std::vector<GemmConfig>& cfgs,
                 const std::vector<Shape>& shapes) {
    ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
    int layout = 0;
    for (const GemmConfig& cfg : cfgs) {
      for (Shape s : shapes) {
        const bool a_row = (layout & 1) == 0, b_row = (layout & 2) == 0;
        ++layout;
        expect_reference(d, cfg, problem(d, s, a_row, b_row, Mix::kPlain, false));
        expect_reference(d, cfg, problem(d, s, !a_row, b_row, Mix::kAdversarial, true));
        if (HasFailure()) return;  // one report per descriptor
      }
    }
  }

  std::mt19937_64 rng_{20261202};
  int runs_ = 0;
};

// Shapes: M = 1, odd N, odd K, K = 0, K not a multiple of 16/32, several blocks in
// both grid directions for the wider tiles.
const std::vector<Shape> kShapes = {{1, 1, 1},   {1, 37, 65}, {17, 9, 33},
                                    {5, 3, 0},   {40, 20, 100}, {70, 41, 47}};

TEST_F(GemmInterp, MmaSyncEveryKnobMatchesReference) {
  const std::vector<GemmConfig> cfgs = {blocked(1, 1, 1), blocked(4, 1, 1), blocked(1, 2, 2),
                                        blocked(2, 1, 4), blocked(4, 4, 1), blocked(2, 2, 3),
                                        blocked(1, 4, 8)};
  // instruction_k 8: m16n8k8, generated as m16n8k16 with the upper half masked to zero.
  for (int ik : {16, 8}) {
    for (DType in : {DType::kF16, DType::kBF16}) {
      for (bool fast : {true, false}) {
        for (dsl::ShortTurn st : {dsl::ShortTurn::kLast, dsl::ShortTurn::kFirst}) {
          for (int64_t step : {0, 32}) {
            if (step == 0 && st == dsl::ShortTurn::kFirst) continue;  // no short turn at step 0
            GemmDesc d;
            d.a_dtype = d.b_dtype = in;
            d.instruction_k = ik;
            d.out_dtype = step == 32 ? DType::kF32 : in;
            d.use_fast_accum = fast;
            d.k_loop_step = {.step = step, .short_turn = st};
            sweep(d, cfgs, kShapes);
          }
        }
      }
    }
  }
  EXPECT_GE(runs_, 600);
}

TEST_F(GemmInterp, WgmmaEveryKnobMatchesReference) {
  const std::vector<GemmConfig> cfgs = {blocked(4, 1, 1), blocked(8, 1, 1), blocked(4, 2, 2),
                                        blocked(8, 1, 4), blocked(4, 2, 1), blocked(4, 1, 3)};
  const std::vector<Shape> shapes = {{1, 1, 1}, {17, 9, 33}, {5, 3, 0}, {70, 20, 100},
                                     {130, 27, 70}};
  struct In {
    DType a, b;
  };
  for (In in : {In{DType::kF16, DType::kF16}, In{DType::kBF16, DType::kBF16},
                In{DType::kF8E4M3, DType::kF8E4M3}, In{DType::kF8E5M2, DType::kF8E5M2},
                In{DType::kF8E4M3, DType::kF8E5M2}}) {
    const bool fp8 = dtype_is_fp8(in.a);
    for (bool fast : {true, false}) {
      for (int64_t step : {0, 96}) {
        GemmDesc d;
        d.instruction = Instruction::kWgmma;
        d.instruction_k = fp8 ? 32 : 16;
        d.a_dtype = in.a;
        d.b_dtype = in.b;
        d.out_dtype = step == 0 ? DType::kF32 : (fp8 ? DType::kBF16 : in.a);
        d.use_fast_accum = fast;
        d.k_loop_step = {.step = step,
                         .short_turn = step == 96 ? dsl::ShortTurn::kFirst : dsl::ShortTurn::kLast};
        sweep(d, cfgs, shapes);
      }
    }
  }
  EXPECT_GE(runs_, 600);
}

TEST_F(GemmInterp, SplitKAndEpilogueWithBlockingMatchReference) {
  for (Instruction ins : {Instruction::kMmaSync, Instruction::kWgmma}) {
    const bool wg = ins == Instruction::kWgmma;
    const std::vector<GemmConfig> cfgs = {blocked(wg ? 4 : 2, 1, 1), blocked(4, 2, 2),
                                          blocked(4, 1, 4)};
    GemmDesc split;
    split.instruction = ins;
    split.family = GemmFamily::kSplitK;
    split.use_fast_accum = false;
    for (dsl::Fold fold : {dsl::Fold::kTreeUp, dsl::Fold::kTreeDown}) {
      GemmDesc t = split;
      t.k_cuts = {{.span = 256}, {.span = 48, .fold = fold}};
      sweep(t, cfgs, {{17, 9, 333}, {3, 8, 48}});
    }
    split.k_loop_step = {.step = 48, .short_turn = dsl::ShortTurn::kFirst};
    split.k_cuts = {{.span = 200}, {.span = 64}};
    split.partial_dtype = DType::kBF16;
    sweep(split, cfgs, {{17, 9, 333}, {1, 1, 0}});

    GemmDesc epi;  // plain, with every epilogue step
    epi.instruction = ins;
    epi.a_dtype = epi.b_dtype = DType::kBF16;
    epi.out_dtype = DType::kBF16;
    epi.alpha_beta = true;
    epi.bias = true;
    epi.activation = dsl::Activation::kRelu;
    sweep(epi, cfgs, {{33, 19, 150}, {1, 5, 7}});
  }
}

// A segment split (cuBLAS's segment-K kernel: segments of whole tiles, the longer
// last): the parts kernel's z-th block takes segment z's range, as cut_part deals it,
// and the merge adds the segments in order. K = 333 (6 tiles of 64, the last short)
// in 4 segments is 1, 1, 2, 2 tiles; K = 100 (2 tiles) in 3 segments leaves segment 0
// empty (+0.0); K = 0 has no part; a short turn first, narrow partials.
TEST_F(GemmInterp, SegmentSplitMatchesReference) {
  for (Instruction ins : {Instruction::kMmaSync, Instruction::kWgmma}) {
    const bool wg = ins == Instruction::kWgmma;
    const std::vector<GemmConfig> cfgs = {blocked(wg ? 4 : 2, 1, 1), blocked(4, 2, 2)};
    GemmDesc d;
    d.instruction = ins;
    d.family = GemmFamily::kSplitK;
    d.k_loop_step = {.step = 64, .short_turn = dsl::ShortTurn::kFirst};
    for (int64_t segments : {2, 3, 4}) {
      d.k_cuts = {{.span = 64, .segments = segments}};
      ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
      sweep(d, cfgs, {{17, 9, 333}, {3, 8, 100}, {1, 1, 0}});
    }
    d.use_fast_accum = false;
    d.partial_dtype = DType::kBF16;
    d.k_cuts = {{.span = 32, .segments = 5}};
    sweep(d, cfgs, {{17, 9, 333}, {2, 3, 31}});
  }
}

// The merge kernel seeds its running sum with +0.0: every product -2^-48 (f16 inputs
// -2^-24 and 2^-24), every part a tiny negative f32 that its f16 partial rounds to
// -0.0, so the output is +0.0 (0x0000) in the reference and in the programs.
TEST_F(GemmInterp, SplitKMergeOfNegativeZeroPartsIsPositiveZero) {
  for (Instruction ins : {Instruction::kMmaSync, Instruction::kWgmma}) {
    GemmDesc d;
    d.instruction = ins;
    d.family = GemmFamily::kSplitK;
    d.k_cuts = {{.span = 64}};
    d.partial_dtype = DType::kF16;
    d.out_dtype = DType::kF16;
    ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
    const GemmProblem p = testing::tiny_negative_products({17, 9, 200});
    auto want = dsl::reference::gemm(d, p);
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_EQ((*want)[0], 0x0000u);
    for (const GemmConfig& cfg : {blocked(4, 1, 1), blocked(4, 2, 2)}) expect_reference(d, cfg, p);
  }
}

// The -0.0 seed (cuBLAS's K = 1 kernel): a plain scalar kernel seeded with -0.0 gives
// the reference's bits, a lone -0.0 product kept, for K = 1, 2, 5 and every input dtype.
TEST_F(GemmInterp, NegativeZeroSeedKeepsALoneNegativeZeroProduct) {
  std::mt19937_64 rng(0x5eed);
  for (Instruction ins : {Instruction::kScalarFma, Instruction::kScalarMulAdd}) {
    for (DType t : {DType::kF16, DType::kBF16, DType::kF32}) {
      GemmDesc d;
      d.instruction = ins;
      d.instruction_k = 1;
      d.a_dtype = d.b_dtype = d.out_dtype = t;
      d.neg_zero_seed = true;
      ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
      for (int64_t k : {1, 2, 5}) {
        const GemmProblem p = testing::signed_zero_products(t, {9, 7, k}, rng);
        auto want = dsl::reference::gemm(d, p);
        ASSERT_TRUE(want.ok()) << want.status();
        ASSERT_TRUE(std::signbit(fixbits::to_float(t, (*want)[0]))) << "row 0 must show the seed";
        for (const GemmConfig& cfg : {GemmConfig{1, 1, 1}, GemmConfig{4, 1, 4}, GemmConfig{2, 4, 3}}) {
          expect_reference(d, cfg, p);
        }
      }
    }
  }
}

// Family dot (cuBLAS's dot_kernel + reduce_1Block_kernel): the two programs on the
// interpreter give the reference's bits for 1, 3 and 31 blocks, tiles of 2 and 1, K from
// 0 to many passes of the grid (3 blocks: 768 elements a pass at tile 2), vector and
// matrix shapes, both layouts, adversarial inputs and the whole epilogue.
TEST_F(GemmInterp, DotBlocksAndMergeMatchReference) {
  const std::vector<GemmConfig> cfgs = {GemmConfig{}};
  for (DType t : {DType::kF16, DType::kBF16}) {
    for (int64_t blocks : {1, 3, 31}) {
      for (int tile : {2, 1}) {
        // f32 outputs keep the low bits where two summation orders differ; an f16
        // output rounds most of them away (a reversed block fold passed with it).
        GemmDesc d = dsl::testing::cublas_dot(t, blocks, tile);
        d.out_dtype = DType::kF32;
        sweep(d, cfgs,
              {{1, 1, 0}, {1, 1, 5}, {2, 1, 1001}, {1, 3, 300}, {1, 1, 9000}, {3, 2, 64}});
        if (HasFailure()) return;
      }
    }
    sweep(dsl::testing::cublas_dot(t, 31, 2), cfgs, {{2, 1, 1001}});
  }
  GemmDesc epi = dsl::testing::cublas_dot(DType::kF16, 3, 2);
  epi.alpha_beta = true;
  epi.bias = true;
  epi.activation = dsl::Activation::kRelu;
  sweep(epi, cfgs, {{4, 3, 777}, {1, 1, 1}});
}

// Family gemv on the interpreter. The knobs span the legal range the autotuner draws
// from (warps 1..32, rows 1..16: tiles of 32 to 16384 elements, one to many lane
// groups per warp); N = 45 and 70 leave a partial block of columns.
GemmDesc gemv(int lanes, dsl::LaneLayout layout, int tile, std::vector<int> fold,
              Instruction ins = Instruction::kScalarFma, DType in = DType::kF16,
              DType out = DType::kF32) {
  GemmDesc d;
  d.family = GemmFamily::kGemv;
  d.instruction = ins;
  d.instruction_k = 1;
  d.a_dtype = d.b_dtype = in;
  d.out_dtype = out;
  d.lanes = lanes;
  d.lane_layout = layout;
  d.lane_tile = tile;
  d.lane_fold = std::move(fold);
  return d;
}

const std::vector<GemmConfig> kGemvConfigs = {{1, 1, 1}, {4, 1, 4}, {2, 4, 3},
                                              {1, 16, 1}, {32, 1, 1}, {8, 2, 8}};

TEST_F(GemmInterp, GemvAnyLaneCountMatchesReference) {
  struct Lanes {
    int lanes;
    std::vector<int> fold;
  } lane_cases[] = {{20, {16, 8, 4, 2, 1}}, {24, {1, 2, 4, 8, 16}}, {26, {4, 16, 1, 8, 2}},
                    {3, {2, 1}},            {5, {1, 4, 2}},          {1, {}},
                    {33, {32, 1, 16, 2, 8, 4}}, {64, {32, 1, 16, 2, 8, 4}},
                    {32, {16, 8, 4, 2, 1}}};
  // K = 0, 1 and 7 leave most lanes without a tile; 81, 212, 333 are no multiple of 4.
  const std::vector<Shape> shapes = {{1, 1, 1}, {2, 45, 7}, {1, 70, 212}, {2, 5, 0},
                                     {3, 9, 333}, {1, 33, 81}};
  for (const Lanes& l : lane_cases) {
    for (dsl::LaneLayout lay : {dsl::LaneLayout::kContiguous, dsl::LaneLayout::kStrided}) {
      for (int tile : {1, 4}) {
        sweep(gemv(l.lanes, lay, tile, l.fold), kGemvConfigs, shapes);
        if (HasFailure()) return;
      }
    }
  }
  EXPECT_GE(runs_, 400);
}

// cuBLAS's gemv2T (GemmDesc.h): lanes chained in index order (an empty lane_fold) and
// turns (fast_accum = 0, a step): 16 lanes strided as the H200's kernel (turns of 512,
// and short ones of 37 and 100 so that shapes cross many), other counts, both layouts,
// short turn first and last, unsplit and split.
TEST_F(GemmInterp, GemvLaneChainAndTurnsMatchReference) {
  const std::vector<Shape> shapes = {{1, 70, 212}, {2, 45, 333}, {1, 1, 1}, {3, 9, 0},
                                     {1, 33, 1500}, {2, 5, 911}};
  for (int lanes : {16, 5, 1, 32}) {
    for (dsl::LaneLayout lay : {dsl::LaneLayout::kStrided, dsl::LaneLayout::kContiguous}) {
      for (int64_t step : {int64_t{0}, int64_t{512}, int64_t{37}, int64_t{100}}) {
        for (dsl::ShortTurn st : {dsl::ShortTurn::kLast, dsl::ShortTurn::kFirst}) {
          if (step == 0 && st == dsl::ShortTurn::kFirst) continue;
          GemmDesc d = gemv(lanes, lay, 1, {});
          d.use_fast_accum = step == 0;
          d.k_loop_step = {step, st};
          sweep(d, {{1, 1, 1}, {2, 4, 3}, {8, 2, 8}}, shapes);
          if (step == 100 && lanes == 16) {
            d.k_cuts = {{300, dsl::Fold::kChain}};  // a split gemv2T
            d.partial_dtype = DType::kF16;
            sweep(d, {{1, 1, 1}, {2, 4, 3}}, shapes);
          }
          if (HasFailure()) return;
        }
      }
    }
  }
  EXPECT_GE(runs_, 300);
}

// cuBLAS's split gemv (one split cut: the gemv kernel on gridDim.z parts, then the
// split-K merge): parts of 64, 100 and 1000 (one part and a short last one), partials
// and merges at f32, f16 and bf16, both layouts, lane counts 32, 16 and 20.
TEST_F(GemmInterp, GemvSplitPartsAndMergeMatchReference) {
  const std::vector<Shape> shapes = {{1, 70, 212}, {2, 45, 333}, {1, 1, 1}, {3, 9, 0},
                                     {1, 33, 1500}};
  struct Case {
    int lanes;
    dsl::LaneLayout layout;
    int tile;
    std::vector<int> fold;
  } cases[] = {{32, dsl::LaneLayout::kStrided, 1, {16, 8, 4, 2, 1}},
               {16, dsl::LaneLayout::kContiguous, 4, {8, 4, 2, 1}},
               {20, dsl::LaneLayout::kStrided, 4, {16, 8, 4, 2, 1}}};
  for (const Case& c : cases) {
    for (int64_t span : {64, 100, 1000}) {
      for (DType partial : {DType::kF32, DType::kF16, DType::kBF16}) {
        GemmDesc d = gemv(c.lanes, c.layout, c.tile, c.fold, Instruction::kScalarFma,
                          DType::kF16, DType::kF16);
        d.k_cuts = {{.span = span}};
        d.partial_dtype = partial;
        d.merge_dtype = partial == DType::kBF16 ? DType::kBF16 : DType::kF32;
        ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
        sweep(d, kGemvConfigs, shapes);
        if (HasFailure()) return;
      }
    }
  }
  GemmDesc epi = gemv(32, dsl::LaneLayout::kStrided, 1, {16, 8, 4, 2, 1}, Instruction::kScalarMulAdd,
                      DType::kBF16, DType::kBF16);
  epi.k_cuts = {{.span = 128}};
  epi.alpha_beta = true;
  epi.bias = true;
  epi.activation = dsl::Activation::kRelu;
  sweep(epi, kGemvConfigs, {{2, 45, 333}, {1, 3, 700}});
  EXPECT_GE(runs_, 700);
}

// The recorded gemvNSP descriptor (20 strided lanes of 4, fold 16..1) with the other
// leaf, input and output dtypes, a wide knob (32 warps), and the epilogue.
TEST_F(GemmInterp, GemvTwentyLanesEveryDtypeAndEpilogue) {
  const std::vector<int> fold = {16, 8, 4, 2, 1};
  for (Instruction ins : {Instruction::kScalarFma, Instruction::kScalarMulAdd}) {
    for (DType in : {DType::kF16, DType::kBF16, DType::kF32}) {
      sweep(gemv(20, dsl::LaneLayout::kStrided, 4, fold, ins, in, in), {{2, 1, 1}, {32, 1, 1}},
            {{1, 70, 212}, {2, 3, 79}});
      if (HasFailure()) return;
    }
  }
  GemmDesc epi = gemv(26, dsl::LaneLayout::kContiguous, 3, {16, 8, 4, 2, 1}, Instruction::kScalarFma,
                      DType::kBF16, DType::kBF16);
  epi.alpha_beta = true;
  epi.bias = true;
  epi.activation = dsl::Activation::kRelu;
  sweep(epi, {{4, 1, 4}}, {{2, 17, 100}, {1, 5, 3}});
}

// Products that underflow to -0.0: bf16 a = -2^-100, b = 2^-100 (fma from +0.0 keeps
// the sign of the rounded-away -2^-200), so a lane that holds a tile is -0.0 and one
// that holds none is +0.0. With K = 212 every one of the 20 lanes holds a tile and the
// output is -0.0; the program's absent slots must be -0.0 for that: with +0.0 slots
// lanes 4..15 turn +0.0 in round 16 and the output is +0.0, so this test FAILS if the
// program pads absent partners with +0.0 (checked by hand: so padded, it fails at
// element (0, 0), 0x0 against 0x80000000). K = 8: lanes 2..19 hold +0.0, output +0.0.
TEST_F(GemmInterp, GemvAbsentLanesAreNegativeZeroSlots) {
  for (int lanes : {20, 24, 26, 3}) {
    std::vector<int> fold;
    for (int off = dsl::lane_slots(lanes) / 2; off >= 1; off /= 2) fold.push_back(off);
    for (dsl::LaneLayout lay : {dsl::LaneLayout::kStrided, dsl::LaneLayout::kContiguous}) {
      const GemmDesc d = gemv(lanes, lay, 4, fold, Instruction::kScalarFma, DType::kBF16);
      for (int64_t k : {int64_t{8} * lanes, int64_t{8}}) {
        GemmProblem p;
        p.m = 2;
        p.n = 37;
        p.k = k;
        p.a.assign(static_cast<size_t>(p.m * k), to_bits(DType::kBF16, -std::ldexp(1.0f, -100)));
        p.b.assign(static_cast<size_t>(k * p.n), to_bits(DType::kBF16, std::ldexp(1.0f, -100)));
        auto want = dsl::reference::gemm(d, p);
        ASSERT_TRUE(want.ok()) << want.status();
        // Every lane holds a tile when K = 8 * lanes (tiles of 4: two per lane).
        EXPECT_EQ((*want)[0], k == 8 ? 0x00000000u : 0x80000000u) << d;
        for (const GemmConfig& cfg : kGemvConfigs) expect_reference(d, cfg, p);
      }
    }
  }
}

// The hand-worked 20-lane tree of tests/dsl/reference/gemm_reference_test.cpp
// (GemvTwentyLaneTreeByHand) through the program: f16 a with L = 1024, r = 2^-15 at
// elements 0, 64, 32, 48, 128, 208 (lanes 0, 16, 8, 12, 12, 12), b = 1: 4r = 2^-13.
TEST_F(GemmInterp, GemvTwentyLaneTreeByHand) {
  const GemmDesc d = gemv(20, dsl::LaneLayout::kStrided, 4, {16, 8, 4, 2, 1});
  const float r = std::ldexp(1.0f, -15);
  GemmProblem p;
  p.m = 1;
  p.n = 3;
  p.k = dsl::testing::kTwentyLaneK;
  for (float x : dsl::testing::twenty_lane_row()) p.a.push_back(to_bits(DType::kF16, x));
  p.b.assign(static_cast<size_t>(p.k * p.n), to_bits(DType::kF16, 1.0f));
  for (const GemmConfig& cfg : kGemvConfigs) {
    auto got = interpret(d, cfg, p);
    ASSERT_TRUE(got.ok()) << got.status();
    for (uint32_t bits : *got) EXPECT_EQ(bits, float_bits(4 * r));
  }
}

}  // namespace
}  // namespace fixbits
