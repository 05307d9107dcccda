// codegen::compile on dsl::gemm programs: every family compiles to PTX for every
// knob setting; the leaf instruction shows in the text (fma.rn.f32 for scalar_fma,
// separate mul.rn.f32 + add.rn.f32 and no fma for scalar_mul_add); gemv's lane fold
// is shfl.sync.bfly with the descriptor's offsets in the descriptor's order; split_k
// is two kernels whose merge rounds to merge_dtype; the tile ops the GEMM added
// (fma, xor_permute, integer div) lower as documented; register blocking gives
// WM*WN mma.sync or WM wgmma m64n(8*WN) per k-group.
#include <gtest/gtest.h>

#include <array>
#include <regex>

#include "absl/strings/str_format.h"
#include "codegen/Compile.h"
#include "dsl/tile/GemmProgram.h"
#include "tests/codegen/TextCount.h"
#include "tests/dsl/tile/BlockedGemmConfig.h"

namespace fixbits::codegen {
namespace {

using dsl::Fold;
using dsl::GemmConfig;
using dsl::GemmDesc;
using dsl::GemmFamily;
using dsl::Instruction;

int count(const std::string& s, const std::string& what) { return testing::count_of(s, what); }

std::vector<int> bfly_offsets(const std::string& ptx) {
  std::vector<int> out;
  std::regex re(R"(shfl\.sync\.bfly\.b32\s+%r\d+(?:\|%p\d+)?,\s*%r\d+,\s*(\d+),\s*31,\s*-1;)");
  for (std::sregex_iterator it(ptx.begin(), ptx.end(), re), end; it != end; ++it) {
    out.push_back(std::stoi((*it)[1]));
  }
  return out;
}

GemmDesc scalar(Instruction ins, DType in = DType::kF16, DType out = DType::kF16) {
  GemmDesc d;
  d.family = GemmFamily::kPlain;
  d.a_dtype = d.b_dtype = in;
  d.out_dtype = out;
  d.instruction = ins;
  d.instruction_k = 1;
  d.use_fast_accum = true;
  return d;
}

std::vector<CompiledKernel> must_compile(const GemmDesc& d, const GemmConfig& cfg) {
  absl::StatusOr<dsl::GemmPrograms> p = dsl::gemm(d, cfg);
  EXPECT_TRUE(p.ok()) << d << ": " << p.status();
  if (!p.ok()) return {};
  std::vector<CompiledKernel> out;
  absl::StatusOr<CompiledKernel> k = compile(p->main, Target::kNvptxSm90a);
  EXPECT_TRUE(k.ok()) << d << ": " << k.status();
  if (k.ok()) out.push_back(*k);
  if (p->merge) {
    absl::StatusOr<CompiledKernel> m = compile(*p->merge, Target::kNvptxSm90a);
    EXPECT_TRUE(m.ok()) << d << ": " << m.status();
    if (m.ok()) out.push_back(*m);
  }
  return out;
}

TEST(GemmCompile, ScalarFmaChainIsFusedAndMulAddIsNot) {
  // The validity of these descriptors is the descriptor owner's; skip what it rejects.
  GemmDesc fma = scalar(Instruction::kScalarFma);
  ASSERT_TRUE(dsl::validate(fma).ok()) << dsl::validate(fma);
  for (GemmConfig cfg : {GemmConfig{1, 1, 1}, GemmConfig{4, 2, 4}, GemmConfig{8, 1, 8}}) {
    std::vector<CompiledKernel> k = must_compile(fma, cfg);
    ASSERT_EQ(k.size(), 1u);
    SCOPED_TRACE(k[0].entry);
    EXPECT_GE(count(k[0].text, "fma.rn.f32"), cfg.rows_per_thread * cfg.block_n);
    EXPECT_EQ(count(k[0].text, "mul.rn.f32"), 0);  // no epilogue, so nothing but the chain
    EXPECT_EQ(k[0].block_threads, 32 * cfg.warps);
    ASSERT_EQ(k[0].params.size(), 14u);
    EXPECT_EQ(k[0].params[0].name, "a");
    EXPECT_EQ(k[0].params[13].name, "beta");
  }
  GemmDesc muladd = scalar(Instruction::kScalarMulAdd);
  ASSERT_TRUE(dsl::validate(muladd).ok()) << dsl::validate(muladd);
  for (GemmConfig cfg : {GemmConfig{1, 1, 1}, GemmConfig{4, 2, 4}}) {
    std::vector<CompiledKernel> k = must_compile(muladd, cfg);
    ASSERT_EQ(k.size(), 1u);
    EXPECT_EQ(count(k[0].text, "fma.rn"), 0);
    EXPECT_EQ(count(k[0].text, "mad.rn.f32") + count(k[0].text, "mad.f32"), 0);
    EXPECT_GE(count(k[0].text, "mul.rn.f32"), cfg.rows_per_thread * cfg.block_n);
    EXPECT_GE(count(k[0].text, "add.rn.f32"), cfg.rows_per_thread * cfg.block_n);
    EXPECT_EQ(count(k[0].text, "add.f32"), 0);
  }
}

TEST(GemmCompile, EpilogueUsesOneFmaForBetaAndRoundsOutput) {
  GemmDesc d = scalar(Instruction::kScalarMulAdd, DType::kBF16, DType::kBF16);
  d.alpha_beta = true;
  d.bias = true;
  d.activation = dsl::Activation::kRelu;
  ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
  std::vector<CompiledKernel> k = must_compile(d, {4, 1, 2});
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(count(k[0].text, "fma.rn.f32"), 2);  // fma(beta, c, alpha*acc) per column
  EXPECT_GE(count(k[0].text, "cvt.rn.bf16.f32"), 2);
}

TEST(GemmCompile, GemvLaneFoldFollowsDescriptorOrder) {
  for (std::vector<int> fold : {std::vector<int>{16, 8, 4, 2, 1}, {1, 2, 4, 8, 16},
                                {4, 16, 1, 8, 2}}) {
    for (dsl::LaneLayout lay : {dsl::LaneLayout::kContiguous, dsl::LaneLayout::kStrided}) {
      GemmDesc d = scalar(Instruction::kScalarFma, DType::kF32, DType::kF32);
      d.family = GemmFamily::kGemv;
      d.lanes = 32;
      d.lane_tile = 4;
      d.lane_layout = lay;
      d.lane_fold = fold;
      ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
      std::vector<CompiledKernel> k = must_compile(d, {2, 1, 1});
      ASSERT_EQ(k.size(), 1u);
      EXPECT_EQ(bfly_offsets(k[0].text), fold) << d;
      EXPECT_GE(count(k[0].text, "fma.rn.f32"), 1);
    }
  }
  // 64 lanes over 2 warps: two lanes per thread, so offset 1 is a register swap and
  // the others are shuffles by half the offset, in the descriptor's order.
  {
    GemmDesc d = scalar(Instruction::kScalarFma, DType::kF32, DType::kF32);
    d.family = GemmFamily::kGemv;
    d.lanes = 64;
    d.lane_fold = {32, 1, 16, 2, 8, 4};
    ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
    std::vector<CompiledKernel> k = must_compile(d, {2, 1, 1});
    ASSERT_EQ(k.size(), 1u);
    // Two registers per thread: each shuffle round moves both.
    EXPECT_EQ(bfly_offsets(k[0].text), (std::vector<int>{16, 16, 8, 8, 1, 1, 4, 4, 2, 2}));
  }
  // 8 lanes: the offsets stay within a lane group of 8 (4 outputs per warp).
  GemmDesc d = scalar(Instruction::kScalarMulAdd, DType::kF16, DType::kF32);
  d.family = GemmFamily::kGemv;
  d.lanes = 8;
  d.lane_tile = 2;
  d.lane_fold = {2, 1, 4};
  ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
  std::vector<CompiledKernel> k = must_compile(d, {1, 1, 1});
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(bfly_offsets(k[0].text), (std::vector<int>{2, 1, 4}));
  EXPECT_EQ(count(k[0].text, "fma.rn"), 0);
}

// cuBLAS's gemvNSP lane counts (no power of two): 20, 24 and 26 lanes fold on 32
// slots, so the fold is the descriptor's five shuffles in its order for every warp
// count; with two rows per thread (two slots per thread) offset 1 is a register swap
// and the others shuffle both registers by half the offset. 3 lanes fold on 4 slots.
TEST(GemmCompile, GemvNonPowerOfTwoLanesFoldOnPaddedSlots) {
  struct Knob {
    GemmConfig cfg;
    std::vector<int> shuffles;
  } knobs[] = {{{1, 1, 1}, {16, 8, 4, 2, 1}},
               {{32, 1, 1}, {16, 8, 4, 2, 1}},
               {{4, 2, 1}, {8, 8, 4, 4, 2, 2, 1, 1}}};
  for (int lanes : {20, 24, 26}) {
    for (dsl::LaneLayout lay : {dsl::LaneLayout::kContiguous, dsl::LaneLayout::kStrided}) {
      for (const Knob& knob : knobs) {
        const GemmConfig& cfg = knob.cfg;
        GemmDesc d = scalar(Instruction::kScalarFma, DType::kBF16, DType::kF32);
        d.family = GemmFamily::kGemv;
        d.lanes = lanes;
        d.lane_tile = 4;
        d.lane_layout = lay;
        d.lane_fold = {16, 8, 4, 2, 1};
        ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
        std::vector<CompiledKernel> k = must_compile(d, cfg);
        ASSERT_EQ(k.size(), 1u);
        EXPECT_EQ(bfly_offsets(k[0].text), knob.shuffles) << d;
      }
    }
  }
  GemmDesc d = scalar(Instruction::kScalarMulAdd, DType::kF16, DType::kF32);
  d.family = GemmFamily::kGemv;
  d.lanes = 3;
  d.lane_tile = 2;
  d.lane_fold = {2, 1};
  std::vector<CompiledKernel> k = must_compile(d, {1, 1, 1});
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(bfly_offsets(k[0].text), (std::vector<int>{2, 1}));
}

TEST(GemmCompile, SplitKIsTwoKernelsAndMergeRoundsToMergeDtype) {
  GemmDesc d = scalar(Instruction::kScalarFma, DType::kF16, DType::kF32);
  d.family = GemmFamily::kSplitK;
  d.k_cuts = {{.span = 96, .fold = Fold::kChain}, {.span = 32, .fold = Fold::kChain}};
  d.partial_dtype = DType::kBF16;
  d.merge_dtype = DType::kF16;
  ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
  std::vector<CompiledKernel> k = must_compile(d, {2, 1, 2});
  ASSERT_EQ(k.size(), 2u);
  EXPECT_NE(k[0].entry, k[1].entry);
  EXPECT_GE(count(k[0].text, "fma.rn.f32"), 2);
  EXPECT_GE(count(k[0].text, "cvt.rn.bf16.f32"), 2);  // partials written at bf16
  EXPECT_EQ(count(k[1].text, "fma.rn"), 0);            // the merge only adds
  EXPECT_GE(count(k[1].text, "cvt.rn.f16.f32"), 2);    // running sum held at f16
  EXPECT_EQ(k[0].params.size(), 10u);
  EXPECT_EQ(k[1].params.size(), 9u);
}

TEST(GemmCompile, ChainedChunksCompilesForEveryKnob) {
  GemmDesc d = scalar(Instruction::kScalarFma, DType::kBF16, DType::kF32);
  d.family = GemmFamily::kChainedChunks;
  d.k_cuts = {{.span = 256, .fold = Fold::kChain}, {.span = 16, .fold = Fold::kChain}};
  ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
  for (GemmConfig cfg : {GemmConfig{1, 1, 1}, GemmConfig{2, 4, 3}, GemmConfig{32, 1, 2}}) {
    std::vector<CompiledKernel> k = must_compile(d, cfg);
    ASSERT_EQ(k.size(), 1u);
    EXPECT_GE(count(k[0].text, "fma.rn.f32"), cfg.rows_per_thread * cfg.block_n);
  }
  // Inner tree folds compile too; a 13-part level pads to 16 slots and the trees of
  // every padded size 2..16 are built. The optimizer folds x + -0.0 (the padding,
  // exact) and shares common subtrees, so at least the 12 adds of the 13 real parts'
  // largest tree remain (up: the smaller trees are its subtrees).
  for (Fold fold : {Fold::kTreeUp, Fold::kTreeDown}) {
    d.k_cuts = {{.span = 100, .fold = Fold::kChain}, {.span = 8, .fold = fold}};
    ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
    std::vector<CompiledKernel> k = must_compile(d, {1, 1, 1});
    ASSERT_EQ(k.size(), 1u);
    EXPECT_GE(count(k[0].text, "add.rn.f32"), 12 + 1);  // + the outer chain's add
  }
}

TEST(GemmCompile, MmaSyncEmitsTheMatrixInstruction) {
  for (DType in : {DType::kF16, DType::kBF16}) {
    for (bool fast : {true, false}) {
      for (dsl::ShortTurn st : {dsl::ShortTurn::kLast, dsl::ShortTurn::kFirst}) {
        GemmDesc d;
        d.a_dtype = d.b_dtype = in;
        d.out_dtype = DType::kF32;
        d.use_fast_accum = fast;
        d.k_loop_step = {.step = 32, .short_turn = st};
        ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
        for (GemmConfig cfg : {GemmConfig{1, 1, 1}, GemmConfig{4, 1, 1}}) {
          std::vector<CompiledKernel> k = must_compile(d, cfg);
          ASSERT_EQ(k.size(), 1u);
          const std::string want = in == DType::kF16
                                       ? "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"
                                       : "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32";
          // One instruction per turn loop (the short-first turn has its own loop);
          // the optimizer must neither duplicate nor drop it.
          EXPECT_EQ(count(k[0].text, want), st == dsl::ShortTurn::kFirst ? 2 : 1) << d;
          EXPECT_EQ(count(k[0].text, "fma.rn"), 0);
          EXPECT_EQ(count(k[0].text, "add.rn.f32") > 0, !fast) << d;
        }
      }
    }
  }
  GemmDesc split;
  split.family = GemmFamily::kSplitK;
  split.k_cuts = {{.span = 256, .fold = Fold::kChain}};
  split.partial_dtype = DType::kBF16;
  ASSERT_TRUE(dsl::validate(split).ok()) << dsl::validate(split);
  std::vector<CompiledKernel> k = must_compile(split, {2, 1, 2});
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(count(k[0].text, "mma.sync.aligned.m16n8k16"), 1);
  EXPECT_EQ(count(k[1].text, "mma.sync"), 0);
}

// wgmma: one m64n8k16 (f16/bf16) or m64n8k32 (fp8) per turn loop, A from four
// .b32 registers, B through a 128-byte aligned shared slot made visible to the async
// proxy before the instruction, the group waited for, and barriers on both sides.
TEST(GemmCompile, WgmmaEmitsTheWarpgroupInstruction) {
  struct In { DType a, b; int ik; const char* want; };
  for (In in : {In{DType::kF16, DType::kF16, 16, "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16"},
                In{DType::kBF16, DType::kBF16, 16, "wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16"},
                In{DType::kF8E4M3, DType::kF8E4M3, 32, "wgmma.mma_async.sync.aligned.m64n8k32.f32.e4m3.e4m3"},
                In{DType::kF8E5M2, DType::kF8E4M3, 32, "wgmma.mma_async.sync.aligned.m64n8k32.f32.e5m2.e4m3"}}) {
    GemmDesc d;
    d.instruction = Instruction::kWgmma;
    d.a_dtype = in.a;
    d.b_dtype = in.b;
    d.instruction_k = in.ik;
    d.out_dtype = DType::kBF16;
    d.k_loop_step = {.step = 2 * in.ik, .short_turn = dsl::ShortTurn::kLast};
    ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
    for (GemmConfig cfg : {GemmConfig{4, 1, 1}, GemmConfig{8, 1, 1}}) {
      std::vector<CompiledKernel> k = must_compile(d, cfg);
      ASSERT_EQ(k.size(), 1u);
      const std::string& t = k[0].text;
      EXPECT_EQ(count(t, in.want), 1) << d;
      EXPECT_EQ(count(t, "mma.sync"), 0) << d;
      EXPECT_EQ(count(t, "fence.proxy.async.shared::cta"), 1) << d;
      EXPECT_EQ(count(t, "wgmma.fence.sync.aligned"), 1) << d;
      EXPECT_EQ(count(t, "wgmma.commit_group.sync.aligned"), 1) << d;
      EXPECT_EQ(count(t, "wgmma.wait_group.sync.aligned 0"), 1) << d;
      EXPECT_GE(count(t, "bar.sync 0"), 2) << d;
      EXPECT_NE(t.find(absl::StrFormat(".shared .align 128 .b8 wgmma_b_smem_0[%d]", 256 * cfg.warps)),
                std::string::npos)
          << t;
      EXPECT_GT(count(t, "st.shared"), 0) << d;
    }
  }
}

using testing::blocked;

// Register blocking: a warp's WM x WN tiles are WM*WN mma.sync per k-group (A and B
// fragments loaded once each), and wgmma becomes WM m64n(8*WN) instructions per
// k-group, each with 4*WN accumulator registers, sharing one slot array of
// 256*WN bytes per warp.
TEST(GemmCompile, RegisterBlockingEmitsWiderInstructions) {
  GemmDesc mma;  // mma_sync f16, fast, step = ik
  ASSERT_TRUE(dsl::validate(mma).ok()) << dsl::validate(mma);
  for (auto [w, wm, wn] : {std::array{4, 2, 2}, std::array{2, 4, 8}, std::array{8, 1, 4}}) {
    std::vector<CompiledKernel> k = must_compile(mma, blocked(w, wm, wn));
    ASSERT_EQ(k.size(), 1u);
    EXPECT_EQ(count(k[0].text, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), wm * wn);
    EXPECT_EQ(k[0].block_threads, 32 * w);
  }
  struct In {
    DType a;
    int ik;
    const char* ty;
  };
  for (In in : {In{DType::kF16, 16, "f32.f16.f16"}, In{DType::kF8E4M3, 32, "f32.e4m3.e4m3"}}) {
    GemmDesc d;
    d.instruction = Instruction::kWgmma;
    d.instruction_k = in.ik;
    d.a_dtype = d.b_dtype = in.a;
    d.out_dtype = DType::kBF16;
    ASSERT_TRUE(dsl::validate(d).ok()) << dsl::validate(d);
    for (auto [w, wm, wn] : {std::array{4, 2, 8}, std::array{8, 1, 4}, std::array{4, 1, 16}}) {
      std::vector<CompiledKernel> k = must_compile(d, blocked(w, wm, wn));
      ASSERT_EQ(k.size(), 1u);
      const std::string& t = k[0].text;
      const std::string ins =
          absl::StrFormat("wgmma.mma_async.sync.aligned.m64n%dk%d.%s", 8 * wn, in.ik, in.ty);
      EXPECT_EQ(count(t, ins), wm) << ins;
      EXPECT_EQ(count(t, "wgmma.mma_async"), wm);
      // The d list has 4*WN registers: N/2 f32 per thread for m64nN.
      std::regex d_list(absl::StrFormat(R"(m64n%dk%d\.[a-z0-9.]+ \{((?:%%r\d+, ){%d}%%r\d+)\})",
                                        8 * wn, in.ik, 4 * wn - 1));
      EXPECT_TRUE(std::regex_search(t, d_list)) << ins;
      EXPECT_NE(t.find(absl::StrFormat(".shared .align 128 .b8 wgmma_b_smem_0[%d]", 256 * wn * w)),
                std::string::npos);
      EXPECT_EQ(count(t, ".shared .align 128 .b8 wgmma_b_smem_"), 1);
    }
  }
  // Slots past 48 KiB are refused by name.
  GemmDesc d;
  d.instruction = Instruction::kWgmma;
  absl::StatusOr<dsl::GemmPrograms> p = dsl::gemm(d, blocked(16, 1, 16));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("GemmConfig.warp_n_tiles 16 with warps 16"), std::string::npos)
      << p.status();
}

// The tile ops added for the GEMM, on their own.
TEST(GemmCompile, XorPermuteAndIntegerDivLower) {
  tile::Builder b("xor_div");
  b.set_num_warps(1);
  tile::Value x = b.param("x", tile::Type::ptr(DType::kF32));
  tile::Value y = b.param("y", tile::Type::ptr(DType::kF32));
  tile::Value q = b.param("q", tile::Type::scalar(tile::Elem::kI32));
  tile::Value i = b.arange(64);                                  // 2 per thread
  tile::Value v = b.load(x, i);
  tile::Value w = b.add(b.xor_permute(v, 1), b.xor_permute(v, 8));  // register swap, shfl 4
  tile::Value d = b.cast(b.div(i, q), tile::Elem::kF32);
  b.store(y, i, b.fma(w, d, v));
  absl::StatusOr<tile::Program> p = b.finish();
  ASSERT_TRUE(p.ok()) << p.status();
  absl::StatusOr<CompiledKernel> k = compile(*p, Target::kNvptxSm90a);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(bfly_offsets(k->text), (std::vector<int>{4, 4}));
  EXPECT_EQ(count(k->text, "fma.rn.f32"), 2);
  EXPECT_GE(count(k->text, "div.s32"), 1);
  // A permute across warps is refused with a message naming the op.
  tile::Builder c("xor_far");
  c.set_num_warps(2);
  tile::Value cx = c.param("x", tile::Type::ptr(DType::kF32));
  tile::Value ci = c.arange(64);
  c.store(cx, ci, c.xor_permute(c.load(cx, ci), 32));
  absl::StatusOr<tile::Program> cp = c.finish();
  ASSERT_TRUE(cp.ok()) << cp.status();
  absl::StatusOr<CompiledKernel> ck = compile(*cp, Target::kNvptxSm90a);
  ASSERT_FALSE(ck.ok());
  EXPECT_NE(ck.status().message().find("xor_permute #"), std::string::npos) << ck.status();
}

}  // namespace
}  // namespace fixbits::codegen
