// GPU tests of dsl::gemm on a real device (label gpu): for every generated family
// (plain, chained_chunks, split_k, gemv) x instruction x input dtype x several knob
// settings x shapes (M = 1, odd K, K = 0, K not a multiple of any span, deep K =
// 65537, row/column-major operands), the output bits equal dsl::reference::gemm
// (memcmp), on fresh random draws with adversarial values (+-L, tiny r, subnormals,
// -0.0, NaN, inf); a row's output does not depend on M (batch invariance); the
// epilogue (alpha/beta, bias, relu) matches too; register-blocked matrix knobs
// (warp_m_tiles x warp_n_tiles) equal the reference and the unblocked kernel; gemv
// with lane counts that are no power of two (cuBLAS's gemvNSP: 20, 24, 26) too.
// Without a device every test prints [SKIP] <reason>. A failing draw prints its seed (replay with FIXBITS_SEED=<n>).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"
#include "tests/dsl/CublasDot.h"
#include "jit/GemmRunner.h"
#include "runtime/Runtime.h"
#include "tests/jit/RandomGemmProblem.h"
#include "tests/jit/RandomInputs.h"
#include "tests/jit/SeededGpuTest.h"
#include "tests/dsl/tile/BlockedGemmConfig.h"

namespace fixbits {
namespace {

using dsl::Fold;
using dsl::GemmConfig;
using dsl::GemmDesc;
using dsl::GemmFamily;
using dsl::Instruction;
using dsl::reference::GemmProblem;
using testing::Mix;

struct Shape {
  int64_t m, n, k;
};

GemmDesc scalar(GemmFamily fam, Instruction ins, DType in, DType out) {
  GemmDesc d;
  d.family = fam;
  d.a_dtype = d.b_dtype = in;
  d.out_dtype = out;
  d.instruction = ins;
  d.instruction_k = 1;
  return d;
}

class GemmGpuTest : public testing::SeededGpuTest {
 protected:

  GemmProblem problem(const GemmDesc& d, Shape s, bool a_row, bool b_row, Mix mix, bool specials) {
    return testing::random_gemm_problem(d, {s.m, s.n, s.k}, a_row, b_row, rng_, mix, specials);
  }

  // Runs `d` under `cfg` on the device; ADD_FAILURE on any error.
  std::vector<uint32_t> run(const GemmDesc& d, const GemmConfig& cfg, const GemmProblem& p) {
    auto runner = jit::GemmRunner::create(device_, d, cfg);
    if (!runner.ok()) {
      ADD_FAILURE() << d << ": " << runner.status();
      return {};
    }
    absl::Status s = runner->upload(p);
    if (s.ok()) s = runner->launch();
    if (!s.ok()) {
      ADD_FAILURE() << d << ": " << s;
      return {};
    }
    auto got = runner->download();
    if (!got.ok()) {
      ADD_FAILURE() << d << ": " << got.status();
      return {};
    }
    return *got;
  }

  // Device bits == reference bits; prints the first mismatch.
  void expect_reference(const GemmDesc& d, const GemmConfig& cfg, const GemmProblem& p) {
    auto want = dsl::reference::gemm(d, p);
    ASSERT_TRUE(want.ok()) << want.status();
    std::vector<uint32_t> got = run(d, cfg, p);
    ASSERT_EQ(got.size(), want->size());
    if (got.empty() || std::memcmp(got.data(), want->data(), got.size() * 4) == 0) return;
    size_t i = 0;
    while (got[i] == (*want)[i]) ++i;
    ADD_FAILURE() << absl::StrFormat(
        "%s\n  knobs warps=%d rows_per_thread=%d block_n=%d warp_m_tiles=%d warp_n_tiles=%d, "
        "m=%d n=%d k=%d a_row=%d b_row=%d, seed %d: element (%d, %d) is 0x%x, the reference "
        "says 0x%x",
        dsl::to_string(d), cfg.warps, cfg.rows_per_thread, cfg.block_n, cfg.warp_m_tiles,
        cfg.warp_n_tiles, p.m, p.n, p.k,
        p.a_row_major, p.b_row_major, seed_, i / p.n, i % p.n, got[i], (*want)[i]);
  }

  // Every knob setting x shape x operand layout, plain and adversarial draws.
  void sweep(const GemmDesc& d, const std::vector<GemmConfig>& cfgs,
             const std::vector<Shape>& shapes) {
    ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
    int layout = 0;
    for (const GemmConfig& cfg : cfgs) {
      for (Shape s : shapes) {
        const bool a_row = (layout & 1) == 0, b_row = (layout & 2) == 0;
        ++layout;
        expect_reference(d, cfg, problem(d, s, a_row, b_row, Mix::kPlain, false));
        expect_reference(d, cfg, problem(d, s, !a_row, b_row, Mix::kAdversarial, true));
        if (HasFailure()) return;  // one report per descriptor is enough
      }
    }
  }
};

const std::vector<GemmConfig> kConfigs = {{1, 1, 1}, {4, 1, 4}, {2, 4, 3}, {8, 2, 8}};
const std::vector<Shape> kShapes = {{1, 1, 1}, {1, 37, 65}, {33, 17, 31}, {130, 9, 129},
                                    {5, 3, 0},  {3, 70, 300}};
const DType kInputs[] = {DType::kF16, DType::kBF16, DType::kF32};

TEST_F(GemmGpuTest, PlainMatchesReferenceForEveryDtypeAndKnob) {
  for (Instruction ins : {Instruction::kScalarFma, Instruction::kScalarMulAdd}) {
    for (DType in : kInputs) {
      for (DType out : {DType::kF32, in}) {
        sweep(scalar(GemmFamily::kPlain, ins, in, out), kConfigs, kShapes);
      }
    }
  }
}

// The matrix path: mma.sync m16n8k16 evaluated by the hardware must equal the sm_90
// MmaModel chain the reference runs, for every turn/short-turn/accumulation choice.
TEST_F(GemmGpuTest, MmaSyncMatchesReference) {
  const std::vector<Shape> shapes = {{1, 1, 1},   {17, 9, 33},  {40, 20, 100},
                                     {5, 3, 0},   {33, 65, 257}, {1, 8, 16}};
  for (DType in : {DType::kF16, DType::kBF16}) {
    for (bool fast : {true, false}) {
      for (dsl::ShortTurn st : {dsl::ShortTurn::kLast, dsl::ShortTurn::kFirst}) {
        for (int64_t step : {0, 32, 64}) {
          GemmDesc d;
          d.a_dtype = d.b_dtype = in;
          d.out_dtype = step == 32 ? DType::kF32 : in;
          d.use_fast_accum = fast;
          d.k_loop_step = {.step = step, .short_turn = st};
          sweep(d, {{1, 1, 1}, {4, 1, 1}}, shapes);
        }
      }
    }
  }
  GemmDesc split;
  split.family = GemmFamily::kSplitK;
  split.use_fast_accum = false;
  for (Fold fold : {Fold::kTreeUp, Fold::kTreeDown}) {
    GemmDesc t = split;
    t.k_cuts = {{.span = 256}, {.span = 48, .fold = fold}};
    sweep(t, {{2, 1, 1}}, {{17, 9, 333}, {3, 8, 48}});
  }
  split.k_loop_step = {.step = 48, .short_turn = dsl::ShortTurn::kFirst};
  split.k_cuts = {{.span = 200}, {.span = 64}};
  split.partial_dtype = DType::kBF16;
  sweep(split, {{2, 1, 1}}, {{17, 9, 333}, {1, 1, 0}});
  GemmDesc deep;
  deep.a_dtype = deep.b_dtype = DType::kBF16;
  deep.out_dtype = DType::kF32;
  deep.k_loop_step = {.step = 64, .short_turn = dsl::ShortTurn::kLast};
  expect_reference(deep, {2, 1, 1}, problem(deep, {18, 9, 65537}, false, true, Mix::kPlain, false));
}

// instruction_k 8 (mma.sync m16n8k8, what cuBLAS's s1688 kernels issue): generated as
// m16n8k16 with the upper eight products masked to +0.0, it must equal the reference's
// 8-product chain, for every turn choice, fast and two-rounding accumulation, split_k,
// and adversarial values (one 16-product instruction would fold other products: the
// shapes have K > 8 so the two differ).
TEST_F(GemmGpuTest, MmaSyncK8MatchesReference) {
  const std::vector<Shape> shapes = {{1, 1, 1}, {17, 9, 33}, {5, 3, 0}, {33, 65, 257}, {1, 8, 24}};
  for (DType in : {DType::kF16, DType::kBF16}) {
    for (bool fast : {true, false}) {
      for (int64_t step : {0, 32}) {
        GemmDesc d;
        d.a_dtype = d.b_dtype = in;
        d.instruction_k = 8;
        d.out_dtype = step == 32 ? DType::kF32 : in;
        d.use_fast_accum = fast;
        d.k_loop_step = {.step = step,
                         .short_turn = step ? dsl::ShortTurn::kFirst : dsl::ShortTurn::kLast};
        sweep(d, {{1, 1, 1}, {4, 1, 1}, testing::blocked(4, 2, 2)}, shapes);
      }
    }
  }
  GemmDesc split;
  split.family = GemmFamily::kSplitK;
  split.instruction_k = 8;
  split.k_cuts = {{.span = 88}};
  sweep(split, {{2, 1, 1}}, {{17, 9, 257}, {3, 8, 48}});
}

// wgmma m64n8k16 (f16/bf16) and m64n8k32 (fp8, A from registers, B through shared
// memory) evaluated by the hardware must equal the reference's sm_90 model, for
// every turn choice and warpgroup count; and at f16/bf16 a wgmma descriptor and its
// mma_sync twin must give the same bytes (the two instructions are one function).
TEST_F(GemmGpuTest, WgmmaMatchesReference) {
  const std::vector<GemmConfig> cfgs = {{4, 1, 1}, {8, 1, 1}, {16, 2, 4}};
  const std::vector<Shape> shapes = {{1, 1, 1}, {17, 9, 33}, {70, 20, 100}, {5, 3, 0},
                                     {65, 65, 257}, {1, 8, 16}};
  struct In { DType a, b; };
  for (In in : {In{DType::kF16, DType::kF16}, In{DType::kBF16, DType::kBF16},
                In{DType::kF8E4M3, DType::kF8E4M3}, In{DType::kF8E5M2, DType::kF8E5M2},
                In{DType::kF8E4M3, DType::kF8E5M2}}) {
    const bool fp8 = dtype_is_fp8(in.a);
    for (bool fast : {true, false}) {
      for (int64_t step : {0, 64, 96}) {
        GemmDesc d;
        d.instruction = Instruction::kWgmma;
        d.instruction_k = fp8 ? 32 : 16;
        d.a_dtype = in.a;
        d.b_dtype = in.b;
        d.out_dtype = step == 64 ? DType::kF32 : (fp8 ? DType::kBF16 : in.a);
        d.use_fast_accum = fast;
        d.k_loop_step = {.step = step, .short_turn = step == 96 ? dsl::ShortTurn::kFirst
                                                               : dsl::ShortTurn::kLast};
        sweep(d, cfgs, shapes);
        if (fp8) continue;
        GemmDesc twin = d;
        twin.instruction = Instruction::kMmaSync;
        const GemmProblem p = problem(d, {33, 16, 200}, true, false, Mix::kAdversarial, true);
        const std::vector<uint32_t> w = run(d, {4, 1, 1}, p), m = run(twin, {2, 1, 1}, p);
        ASSERT_EQ(w.size(), m.size());
        EXPECT_EQ(0, std::memcmp(w.data(), m.data(), w.size() * 4))
            << dsl::to_string(d) << ": wgmma and mma.sync differ";
      }
    }
  }
  GemmDesc split;
  split.family = GemmFamily::kSplitK;
  split.instruction = Instruction::kWgmma;
  split.a_dtype = split.b_dtype = DType::kF8E4M3;
  split.instruction_k = 32;
  split.out_dtype = DType::kF16;
  split.use_fast_accum = false;
  split.k_cuts = {{.span = 256}, {.span = 64, .fold = Fold::kTreeUp}};
  sweep(split, {{4, 1, 1}}, {{17, 9, 333}, {3, 8, 64}});
  GemmDesc deep;
  deep.instruction = Instruction::kWgmma;
  deep.a_dtype = deep.b_dtype = DType::kF8E4M3;
  deep.instruction_k = 32;
  deep.out_dtype = DType::kF32;
  deep.k_loop_step = {.step = 128, .short_turn = dsl::ShortTurn::kLast};
  expect_reference(deep, {4, 1, 1}, problem(deep, {18, 9, 65537}, false, true, Mix::kPlain, false));
}

using testing::blocked;

// Register blocking (warp_m_tiles x warp_n_tiles 16x8 tiles per warp) moves no bit:
// every blocked knob setting equals the reference and the old one-tile-per-warp
// kernel byte for byte, for mma.sync and wgmma (f16, bf16, fp8), fast and non-fast
// accumulation, short turns, split_k, and on shapes that leave partial tiles.
TEST_F(GemmGpuTest, RegisterBlockedMatrixKnobsMatchReferenceAndUnblocked) {
  const std::vector<Shape> shapes = {{1, 1, 1},     {17, 9, 33}, {5, 3, 0},
                                     {130, 70, 100}, {257, 129, 300}, {1, 200, 64}};
  struct Case {
    Instruction ins;
    DType a, b;
  };
  for (Case c : {Case{Instruction::kMmaSync, DType::kF16, DType::kF16},
                 Case{Instruction::kMmaSync, DType::kBF16, DType::kBF16},
                 Case{Instruction::kWgmma, DType::kF16, DType::kF16},
                 Case{Instruction::kWgmma, DType::kBF16, DType::kBF16},
                 Case{Instruction::kWgmma, DType::kF8E4M3, DType::kF8E5M2}}) {
    const bool wg = c.ins == Instruction::kWgmma, fp8 = dtype_is_fp8(c.a);
    const std::vector<GemmConfig> cfgs =
        wg ? std::vector<GemmConfig>{blocked(4, 1, 4), blocked(4, 2, 2), blocked(8, 2, 4),
                                     blocked(4, 1, 8), blocked(4, 2, 8)}
           : std::vector<GemmConfig>{blocked(4, 2, 2), blocked(4, 4, 4), blocked(8, 2, 4),
                                     blocked(2, 4, 8), blocked(4, 1, 8)};
    const GemmConfig unblocked{4, 1, 1};  // one 16x8 tile per warp
    for (bool fast : {true, false}) {
      GemmDesc d;
      d.instruction = c.ins;
      d.instruction_k = fp8 ? 32 : 16;
      d.a_dtype = c.a;
      d.b_dtype = c.b;
      d.out_dtype = fast ? DType::kF32 : (fp8 ? DType::kBF16 : c.a);
      d.use_fast_accum = fast;
      d.k_loop_step = {.step = fast ? 0 : 96,
                       .short_turn = fast ? dsl::ShortTurn::kLast : dsl::ShortTurn::kFirst};
      sweep(d, cfgs, shapes);
      const GemmProblem p = problem(d, {190, 77, 260}, true, false, Mix::kAdversarial, true);
      const std::vector<uint32_t> old = run(d, unblocked, p);
      for (const GemmConfig& cfg : cfgs) {
        const std::vector<uint32_t> got = run(d, cfg, p);
        ASSERT_EQ(got.size(), old.size());
        EXPECT_EQ(0, std::memcmp(got.data(), old.data(), got.size() * 4))
            << dsl::to_string(d) << ": warp_m_tiles " << cfg.warp_m_tiles << " warp_n_tiles "
            << cfg.warp_n_tiles << " differs from the one-tile kernel";
      }
    }
  }
  GemmDesc split;
  split.family = GemmFamily::kSplitK;
  split.use_fast_accum = false;
  split.k_cuts = {{.span = 256}, {.span = 48, .fold = Fold::kTreeUp}};
  split.partial_dtype = DType::kBF16;
  sweep(split, {blocked(4, 2, 4)}, {{17, 9, 333}, {70, 64, 600}});
}

// Products at the bottom of f32's range: every pair of a grid of bf16 values from
// the smallest subnormal up to 1, both signs, as one K = 1 GEMM (output (i, j) is
// mma(+0, a_i * b_j, zero padding)), through mma.sync and wgmma. Products below
// 2^-149 and f32 subnormal products are where a model's underflow sign and flush
// rules show; every output must equal the reference, and each mismatch is printed
// with its inputs.
TEST_F(GemmGpuTest, BottomOfTheRangeProductsMatchReference) {
  std::vector<float> vals;
  for (int e : {-133, -130, -127, -126, -120, -100, -80, -60, -40, -20, -10, -3, 0}) {
    for (float m : {1.0f, 1.5f}) {
      const float v = std::ldexp(m, e);
      if (round_to(DType::kBF16, v) != v) continue;
      vals.push_back(v);
      vals.push_back(-v);
    }
  }
  vals.push_back(0.0f);
  vals.push_back(-0.0f);
  const int64_t n = static_cast<int64_t>(vals.size());
  GemmProblem p;
  p.m = p.n = n;
  p.k = 1;
  for (float v : vals) p.a.push_back(to_bits(DType::kBF16, v));
  p.b = p.a;
  for (Instruction ins : {Instruction::kMmaSync, Instruction::kWgmma}) {
    GemmDesc d;
    d.instruction = ins;
    d.a_dtype = d.b_dtype = DType::kBF16;
    d.out_dtype = DType::kF32;
    ASSERT_TRUE(dsl::validate(d).ok());
    auto want = dsl::reference::gemm(d, p);
    ASSERT_TRUE(want.ok()) << want.status();
    const std::vector<uint32_t> got = run(d, {4, 1, 1}, p);
    ASSERT_EQ(got.size(), want->size());
    int bad = 0;
    for (int64_t i = 0; i < n * n; ++i) {
      if (got[i] == (*want)[i]) continue;
      if (++bad <= 24) {
        std::printf("[bottom] %s a=%a b=%a device=0x%08x reference=0x%08x\n",
                    ins == Instruction::kWgmma ? "wgmma" : "mma.sync",
                    static_cast<double>(vals[i / n]), static_cast<double>(vals[i % n]), got[i],
                    (*want)[i]);
      }
    }
    EXPECT_EQ(bad, 0) << bad << " of " << n * n << " products differ ("
                      << (ins == Instruction::kWgmma ? "wgmma" : "mma.sync") << ")";
  }
}

TEST_F(GemmGpuTest, ChainedChunksMatchReference) {
  for (std::vector<dsl::KCut> cuts :
       {std::vector<dsl::KCut>{{.span = 7}}, {{.span = 256}, {.span = 16}},
        {{.span = 64}, {.span = 64}, {.span = 5}}}) {
    for (Instruction ins : {Instruction::kScalarFma, Instruction::kScalarMulAdd}) {
      GemmDesc d = scalar(GemmFamily::kChainedChunks, ins, DType::kBF16, DType::kF32);
      d.k_cuts = cuts;
      sweep(d, {{1, 1, 1}, {4, 2, 4}}, kShapes);
    }
  }
  // Inner tree folds: part counts 1..13 per chunk (the last chunk short), so every
  // padded size 1..16 is taken at run time.
  for (Fold fold : {Fold::kTreeUp, Fold::kTreeDown}) {
    GemmDesc d = scalar(GemmFamily::kChainedChunks, Instruction::kScalarFma, DType::kF16, DType::kF32);
    d.k_cuts = {{.span = 100}, {.span = 8, .fold = fold}};
    sweep(d, {{1, 1, 1}, {2, 2, 3}}, {{3, 5, 1}, {3, 5, 17}, {7, 9, 100}, {4, 6, 333}, {2, 3, 0}});
    d.k_cuts = {{.span = 60}, {.span = 20, .fold = fold}, {.span = 3, .fold = fold}};
    sweep(d, {{4, 1, 2}}, {{5, 7, 299}});
  }
}

TEST_F(GemmGpuTest, SplitKMatchesReferenceWithEveryPartialAndMergeDtype) {
  const DType kNarrow[] = {DType::kF32, DType::kF16, DType::kBF16};
  for (DType partial : kNarrow) {
    for (DType merge : kNarrow) {
      GemmDesc d = scalar(GemmFamily::kSplitK, Instruction::kScalarFma, DType::kF16, DType::kF16);
      d.k_cuts = {{.span = 100}, {.span = 32}};
      d.partial_dtype = partial;
      d.merge_dtype = merge;
      sweep(d, {{1, 1, 1}, {4, 1, 4}}, kShapes);
    }
  }
  GemmDesc d = scalar(GemmFamily::kSplitK, Instruction::kScalarMulAdd, DType::kF32, DType::kF32);
  d.k_cuts = {{.span = 1}};  // one product per part: the merge is the whole chain
  sweep(d, {{2, 1, 2}}, {{3, 5, 17}, {1, 1, 0}});
}

// A segment split (cuBLAS's segment-K kernel: P segments of whole tiles, the longer
// last; GemmDesc.h): the parts kernel's blockIdx.z takes its segment's range as
// cut_part deals it, an empty segment included (K = 100 in 3 segments of 64), and at
// class 54's K = 19982 in two segments of 64 (156 + 157 tiles).
TEST_F(GemmGpuTest, SegmentSplitMatchesReference) {
  for (Instruction ins : {Instruction::kWgmma, Instruction::kMmaSync}) {
    GemmDesc d;
    d.family = GemmFamily::kSplitK;
    d.instruction = ins;
    d.k_loop_step = {.step = 64, .short_turn = dsl::ShortTurn::kFirst};
    for (int64_t segments : {2, 3, 5}) {
      d.k_cuts = {{.span = 64, .segments = segments}};
      sweep(d, {{4, 1, 1}, {8, 1, 1}}, {{17, 9, 333}, {3, 8, 100}, {65, 65, 1000}, {1, 1, 0}});
    }
    d.use_fast_accum = false;
    d.partial_dtype = DType::kBF16;
    d.k_cuts = {{.span = 128, .segments = 4}};
    sweep(d, {{4, 1, 1}}, {{33, 20, 2049}});
  }
  GemmDesc c54;
  c54.family = GemmFamily::kSplitK;
  c54.instruction = Instruction::kWgmma;
  c54.k_loop_step = {.step = 64, .short_turn = dsl::ShortTurn::kFirst};
  c54.k_cuts = {{.span = 64, .segments = 2}};
  expect_reference(c54, {4, 1, 1}, problem(c54, {64, 40, 19982}, true, false, Mix::kAdversarial, true));
}

// The merge's running sum starts at +0.0 on the device too (the PTX keeps the add of
// +0.0, which no compiler may drop without nsz): every product -2^-48 (f16 inputs
// -2^-24 and +2^-24), every part a tiny negative f32 its f16 partial rounds to -0.0,
// so each output is +0.0; the old chain seeded with part 0 gave -0.0.
TEST_F(GemmGpuTest, SplitKMergeOfNegativeZeroPartsIsPositiveZero) {
  GemmDesc fma = scalar(GemmFamily::kSplitK, Instruction::kScalarFma, DType::kF16, DType::kF16);
  GemmDesc mma = fma;
  mma.instruction = Instruction::kMmaSync;
  mma.instruction_k = 16;
  for (GemmDesc d : {fma, mma}) {
    d.k_cuts = {{.span = 64}};
    d.partial_dtype = DType::kF16;
    ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
    const GemmProblem p = testing::tiny_negative_products({33, 17, 300});
    auto want = dsl::reference::gemm(d, p);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_EQ((*want)[0], 0x0000u);
    const GemmConfig cfg = d.instruction == Instruction::kScalarFma ? GemmConfig{4, 1, 4}
                                                                    : testing::blocked(4, 2, 2);
    expect_reference(d, cfg, p);
  }
}

// The -0.0 seed (cuBLAS's K = 1 kernel, GemmDesc.h "seed"): the device keeps a lone
// -0.0 product exactly where the reference does, K = 1, 2, 5, every input dtype.
TEST_F(GemmGpuTest, NegativeZeroSeedKeepsALoneNegativeZeroProduct) {
  std::mt19937_64 rng(0x5eed);
  for (Instruction ins : {Instruction::kScalarFma, Instruction::kScalarMulAdd}) {
    for (DType t : kInputs) {
      GemmDesc d = scalar(GemmFamily::kPlain, ins, t, t);
      d.neg_zero_seed = true;
      ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
      for (int64_t k : {1, 2, 5}) {
        const GemmProblem p = testing::signed_zero_products(t, {33, 17, k}, rng);
        auto want = dsl::reference::gemm(d, p);
        ASSERT_TRUE(want.ok()) << want.status();
        ASSERT_TRUE(std::signbit(fixbits::to_float(t, (*want)[0]))) << "row 0 must show the seed";
        for (const GemmConfig& cfg : kConfigs) expect_reference(d, cfg, p);
      }
    }
  }
}

TEST_F(GemmGpuTest, GemvMatchesReferenceForEveryLaneLayoutAndFold) {
  struct Lanes {
    int lanes;
    std::vector<int> fold;
  } lane_cases[] = {{32, {16, 8, 4, 2, 1}}, {32, {1, 2, 4, 8, 16}}, {32, {4, 16, 1, 8, 2}},
                    {8, {2, 1, 4}}, {1, {}}, {64, {32, 1, 16, 2, 8, 4}},
                    // cuBLAS's gemvNSP lane counts above N = 8448 (no power of two: the
                    // partners 20..31 / 26..31 are absent, padded with -0.0 slots).
                    {20, {16, 8, 4, 2, 1}}, {26, {4, 16, 1, 8, 2}}};
  for (const Lanes& l : lane_cases) {
    for (dsl::LaneLayout lay : {dsl::LaneLayout::kContiguous, dsl::LaneLayout::kStrided}) {
      for (int tile : {1, 3, 8}) {
        GemmDesc d = scalar(GemmFamily::kGemv, Instruction::kScalarFma, DType::kF16, DType::kF32);
        d.lanes = l.lanes;
        d.lane_fold = l.fold;
        d.lane_layout = lay;
        d.lane_tile = tile;
        sweep(d, {{1, 1, 1}, {4, 1, 1}}, {{1, 1, 1}, {1, 45, 257}, {3, 70, 1000}, {2, 5, 0}});
      }
    }
  }
  GemmDesc d = scalar(GemmFamily::kGemv, Instruction::kScalarMulAdd, DType::kBF16, DType::kBF16);
  d.lanes = 16;
  d.lane_fold = {8, 4, 2, 1};
  sweep(d, {{2, 1, 1}}, {{1, 33, 1001}, {2, 3, 199}});
}

// The recorded gemvNSP tree (20 strided lanes of 4, fold 16..1; 26 lanes likewise) at
// the recorded shape's K and N (M = 1, N = 10618, K = 212, bf16) under the knob range,
// and the -0.0 case: products that underflow to -0.0 in every lane must give -0.0,
// which a +0.0 padding of the absent partners would turn into +0.0.
TEST_F(GemmGpuTest, GemvNonPowerOfTwoLanesAtTheRecordedShape) {
  for (int lanes : {20, 24, 26}) {
    for (dsl::LaneLayout lay : {dsl::LaneLayout::kStrided, dsl::LaneLayout::kContiguous}) {
      GemmDesc d = scalar(GemmFamily::kGemv, Instruction::kScalarFma, DType::kBF16, DType::kF32);
      d.lanes = lanes;
      d.lane_layout = lay;
      d.lane_tile = 4;
      d.lane_fold = {16, 8, 4, 2, 1};
      sweep(d, {{1, 1, 1}, {4, 1, 4}, {32, 1, 1}, {2, 16, 1}},
            {{1, 10618, 212}, {3, 77, 7}, {2, 40, 333}});
      d.out_dtype = DType::kBF16;
      sweep(d, {{4, 1, 4}}, {{1, 10618, 212}});
      GemmProblem p;
      p.m = 2;
      p.n = 65;
      p.k = 8 * lanes;  // two tiles of 4 in every lane
      p.a.assign(static_cast<size_t>(p.m * p.k), to_bits(DType::kBF16, -std::ldexp(1.0f, -100)));
      p.b.assign(static_cast<size_t>(p.k * p.n), to_bits(DType::kBF16, std::ldexp(1.0f, -100)));
      d.out_dtype = DType::kF32;
      auto want = dsl::reference::gemm(d, p);
      ASSERT_TRUE(want.ok()) << want.status();
      ASSERT_EQ((*want)[0], 0x80000000u);
      expect_reference(d, {4, 1, 4}, p);
    }
  }
}

// cuBLAS's split gemv (GemmDesc.h: family gemv with one split cut): the gemv frame on
// gridDim.z parts writing partials, then the split merge, at the shapes of session 13's
// custom 75/93 classes (M = 1, K from 16k to 131k) and with every partial dtype.
TEST_F(GemmGpuTest, GemvSplitMatchesReference) {
  for (DType partial : {DType::kF32, DType::kF16, DType::kBF16}) {
    for (dsl::LaneLayout lay : {dsl::LaneLayout::kStrided, dsl::LaneLayout::kContiguous}) {
      GemmDesc d = scalar(GemmFamily::kGemv, Instruction::kScalarFma, DType::kF16, DType::kF16);
      d.lanes = 32;
      d.lane_layout = lay;
      d.lane_tile = lay == dsl::LaneLayout::kStrided ? 1 : 4;
      d.lane_fold = {16, 8, 4, 2, 1};
      d.k_cuts = {{1024, dsl::Fold::kChain}};
      d.partial_dtype = partial;
      sweep(d, {{1, 1, 1}, {4, 1, 4}, {32, 1, 1}}, {{1, 52, 32767}, {2, 10, 4097}, {1, 3, 1}});
      d.k_cuts = {{4096, dsl::Fold::kChain}};
      sweep(d, {{4, 1, 4}}, {{1, 18, 131072}});
    }
  }
}

// cuBLAS's gemv2T (GemmDesc.h: an empty lane_fold chains the lanes, fast_accum=0 with a
// step makes turns): 16 strided lanes, turns of 512, short turn last and first, unsplit
// at session 11's tree shape (2556 x 1 x 911) and split as classes 41/116 (2047 x 1 x
// 5423, parts of 1356), f16 and bf16.
TEST_F(GemmGpuTest, GemvLaneChainAndTurnsMatchReference) {
  for (DType t : {DType::kF16, DType::kBF16}) {
    for (dsl::ShortTurn st : {dsl::ShortTurn::kLast, dsl::ShortTurn::kFirst}) {
      GemmDesc d = scalar(GemmFamily::kGemv, Instruction::kScalarFma, t, t);
      d.lanes = 16;
      d.lane_layout = dsl::LaneLayout::kStrided;
      d.lane_tile = 1;
      d.lane_fold = {};
      d.use_fast_accum = false;
      d.k_loop_step = {512, st};
      sweep(d, {{1, 1, 1}, {4, 1, 4}, {32, 1, 1}}, {{2556, 1, 911}, {1, 70, 4097}, {3, 5, 1}});
      d.k_cuts = {{1356, dsl::Fold::kChain}};
      d.partial_dtype = t;
      sweep(d, {{4, 1, 4}}, {{2047, 1, 5423}, {7, 3, 1356}});
    }
  }
}

// Family dot (cuBLAS's dot_kernel + reduce_1Block_kernel; GemmDesc.h): the two kernels
// on the device give the reference's bits at the grids cuBLASLt answers (31, 64, 128,
// 496, 528 blocks), tiles of 2 and 1, K from 0 to several passes, f32 outputs (where a
// changed order shows) and the usual f16/bf16 ones.
TEST_F(GemmGpuTest, DotMatchesReferenceAtCublasGrids) {
  for (DType t : {DType::kF16, DType::kBF16}) {
    for (int64_t blocks : {31, 64, 128, 496, 528}) {
      for (int tile : {2, 1}) {
        GemmDesc d = dsl::testing::cublas_dot(t, blocks, tile);
        d.out_dtype = DType::kF32;
        sweep(d, {{1, 1, 1}}, {{1, 1, 0}, {1, 1, 5}, {2, 1, 1001}, {1, 3, 20000}, {1, 1, 300000}});
        d.out_dtype = t;
        sweep(d, {{1, 1, 1}}, {{4, 1, 4097}, {1, 9, 12345}});
      }
    }
  }
}

TEST_F(GemmGpuTest, EpilogueMatchesReference) {
  for (bool ab : {false, true}) {
    for (bool bias : {false, true}) {
      for (dsl::Activation act : {dsl::Activation::kNone, dsl::Activation::kRelu}) {
        GemmDesc d = scalar(GemmFamily::kPlain, Instruction::kScalarFma, DType::kF16, DType::kF16);
        d.alpha_beta = ab;
        d.bias = bias;
        d.activation = act;
        sweep(d, {{4, 1, 4}}, {{33, 17, 31}, {1, 9, 64}});
        GemmDesc s = d;
        s.family = GemmFamily::kSplitK;
        s.k_cuts = {{.span = 16}};
        s.out_dtype = DType::kBF16;
        sweep(s, {{2, 2, 2}}, {{33, 17, 31}});
        GemmDesc g = d;
        g.family = GemmFamily::kGemv;
        g.lanes = 4;
        g.lane_fold = {2, 1};
        sweep(g, {{1, 1, 1}}, {{2, 17, 31}});
      }
    }
  }
}

TEST_F(GemmGpuTest, DeepKMatchesReference) {
  GemmDesc d = scalar(GemmFamily::kPlain, Instruction::kScalarFma, DType::kBF16, DType::kF32);
  expect_reference(d, {2, 1, 2}, problem(d, {3, 5, 65537}, true, false, Mix::kPlain, false));
  GemmDesc s = scalar(GemmFamily::kSplitK, Instruction::kScalarMulAdd, DType::kF16, DType::kF16);
  s.k_cuts = {{.span = 4096}, {.span = 512}};
  s.partial_dtype = DType::kF16;
  expect_reference(s, {1, 1, 4}, problem(s, {2, 7, 65537}, false, true, Mix::kPlain, false));
  GemmDesc g = scalar(GemmFamily::kGemv, Instruction::kScalarFma, DType::kF32, DType::kF32);
  g.lane_fold = {1, 2, 4, 8, 16};
  g.lane_layout = dsl::LaneLayout::kStrided;
  expect_reference(g, {1, 1, 1}, problem(g, {1, 9, 65537}, true, true, Mix::kPlain, false));
}

// Row r's output is the same whether it is computed alone (M = 1) or among M rows,
// and equal across knob settings.
TEST_F(GemmGpuTest, RowOutputDoesNotDependOnBatch) {
  GemmDesc plain = scalar(GemmFamily::kPlain, Instruction::kScalarFma, DType::kF16, DType::kF16);
  GemmDesc split = scalar(GemmFamily::kSplitK, Instruction::kScalarMulAdd, DType::kBF16, DType::kF32);
  split.k_cuts = {{.span = 64}, {.span = 8}};
  GemmDesc gemv = scalar(GemmFamily::kGemv, Instruction::kScalarFma, DType::kF16, DType::kF32);
  gemv.lane_fold = {16, 8, 4, 2, 1};
  GemmDesc mma;  // mma_sync f16, one instruction per turn, short turn last
  mma.k_loop_step = {.step = 32, .short_turn = dsl::ShortTurn::kLast};
  for (const GemmDesc& d : {plain, split, gemv, mma}) {
    const Shape big{300, 19, 333};
    GemmProblem p = problem(d, big, true, true, Mix::kAdversarial, false);
    std::vector<uint32_t> all = run(d, {4, 2, 4}, p);
    ASSERT_EQ(all.size(), static_cast<size_t>(big.m * big.n));
    for (int64_t r : {int64_t{0}, int64_t{1}, int64_t{127}, int64_t{299}}) {
      GemmProblem one = p;
      one.m = 1;
      one.a.assign(p.a.begin() + r * big.k, p.a.begin() + (r + 1) * big.k);
      for (GemmConfig cfg : {GemmConfig{1, 1, 1}, GemmConfig{8, 1, 2}}) {
        std::vector<uint32_t> row = run(d, cfg, one);
        ASSERT_EQ(row.size(), static_cast<size_t>(big.n));
        EXPECT_EQ(std::memcmp(row.data(), all.data() + r * big.n, big.n * 4), 0)
            << d << " row " << r << " seed " << seed_;
      }
    }
  }
}

TEST_F(GemmGpuTest, RunnerRejectsBadProblems) {
  GemmDesc d = scalar(GemmFamily::kPlain, Instruction::kScalarFma, DType::kF16, DType::kF16);
  auto runner = jit::GemmRunner::create(device_, d, {});
  ASSERT_TRUE(runner.ok()) << runner.status();
  GemmProblem p = problem(d, {4, 4, 4}, true, true, Mix::kPlain, false);
  p.a.pop_back();
  absl::Status s = runner->upload(p);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("GemmProblem.a"), std::string::npos) << s;
  EXPECT_FALSE(jit::GemmRunner::create(device_, d, {3, 1, 1}).ok());  // warps 3
  EXPECT_FALSE(jit::GemmRunner::create(nullptr, d, {}).ok());
}

}  // namespace
}  // namespace fixbits
