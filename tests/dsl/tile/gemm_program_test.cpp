// dsl::gemm: every supported family builds a program that validates, with the
// documented parameter list; the knobs change the block shape but not the tree ops
// (fma vs mul+add, the lane fold order); invalid descriptors and knobs come back as a
// Status naming the field; launch shapes cover every output exactly once; register
// blocking multiplies the matrix instructions per k-group, never the tree.
#include "dsl/tile/GemmProgram.h"
#include "tests/dsl/tile/BlockedGemmConfig.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace fixbits::dsl {
namespace {

GemmDesc scalar(Instruction ins, GemmFamily fam = GemmFamily::kPlain) {
  GemmDesc d;
  d.family = fam;
  d.a_dtype = d.b_dtype = DType::kF16;
  d.out_dtype = DType::kF32;
  d.instruction = ins;
  d.instruction_k = 1;
  return d;
}

std::vector<std::string> param_names(const tile::Program& p) {
  std::vector<std::string> out;
  for (const tile::Param& q : p.params) out.push_back(q.name);
  return out;
}

int count_ops(const std::vector<tile::Op>& ops, tile::OpKind kind,
              std::vector<int64_t>* imms = nullptr) {
  int n = 0;
  for (const tile::Op& op : ops) {
    if (op.kind == kind) {
      ++n;
      if (imms) imms->push_back(op.imm);
    }
    n += count_ops(op.body, kind, imms);
  }
  return n;
}

int count_binary(const std::vector<tile::Op>& ops, tile::BinaryOp bin, tile::Elem elem,
                 const tile::Program& p) {
  int n = 0;
  for (const tile::Op& op : ops) {
    if (op.kind == tile::OpKind::kBinary && op.bin == bin && p.values[op.results[0]].elem == elem) ++n;
    n += count_binary(op.body, bin, elem, p);
  }
  return n;
}

const std::vector<std::string> kMainParams = {"a", "b", "out", "c", "bias", "m", "n",
                                              "k", "a_sm", "a_sk", "b_sk", "b_sn", "alpha",
                                              "beta"};

TEST(GemmProgram, PlainFamiliesBuildValidProgramsWithTheDocumentedParams) {
  for (Instruction ins : {Instruction::kScalarFma, Instruction::kScalarMulAdd}) {
    for (GemmConfig cfg : {GemmConfig{1, 1, 1}, GemmConfig{4, 2, 4}, GemmConfig{32, 1, 2}}) {
      GemmDesc d = scalar(ins);
      ASSERT_TRUE(validate(d).ok()) << validate(d);
      absl::StatusOr<GemmPrograms> p = gemm(d, cfg);
      ASSERT_TRUE(p.ok()) << p.status();
      EXPECT_TRUE(tile::validate(p->main).ok());
      EXPECT_FALSE(p->merge.has_value());
      EXPECT_EQ(param_names(p->main), kMainParams);
      EXPECT_EQ(p->main.num_warps, cfg.warps);
      const int fmas = count_ops(p->main.body, tile::OpKind::kFma);
      // One leaf step per unrolled column; no other fma without alpha_beta.
      if (ins == Instruction::kScalarFma) {
        EXPECT_EQ(fmas, cfg.block_n);
      } else {
        EXPECT_EQ(fmas, 0);
        EXPECT_EQ(count_binary(p->main.body, tile::BinaryOp::kMul, tile::Elem::kF32, p->main),
                  cfg.block_n);
      }
    }
  }
}

// The matrix path: one mma_sync per group, in a loop per turn; fast accumulation
// chains the instruction into acc, otherwise a turn's partial is added once.
TEST(GemmProgram, MmaSyncBuildsOneInstructionPerGroup) {
  for (bool fast : {true, false}) {
    for (dsl::ShortTurn st : {dsl::ShortTurn::kLast, dsl::ShortTurn::kFirst}) {
      GemmDesc d;  // mma_sync f16 ik 16
      d.use_fast_accum = fast;
      d.k_loop_step = {.step = 64, .short_turn = st};
      ASSERT_TRUE(validate(d).ok()) << validate(d);
      absl::StatusOr<GemmPrograms> p = gemm(d, {4, 1, 1});
      ASSERT_TRUE(p.ok()) << p.status();
      EXPECT_TRUE(tile::validate(p->main).ok());
      // One mma per turn loop: two loops (short first + the rest) when the short turn
      // runs first.
      EXPECT_EQ(count_ops(p->main.body, tile::OpKind::kMmaSync),
                st == dsl::ShortTurn::kFirst ? 2 : 1);
      // Without fast accumulation each turn adds its partial into acc: f32 adds.
      EXPECT_EQ(count_binary(p->main.body, tile::BinaryOp::kAdd, tile::Elem::kF32, p->main) > 0,
                !fast);
    }
  }
}

TEST(GemmProgram, WgmmaBuildsOneInstructionPerGroupForHalfAndFp8) {
  struct In { DType a, b; int ik; };
  for (In in : {In{DType::kF16, DType::kF16, 16}, In{DType::kBF16, DType::kBF16, 16},
                In{DType::kF8E4M3, DType::kF8E5M2, 32}}) {
    GemmDesc d;
    d.instruction = Instruction::kWgmma;
    d.a_dtype = in.a;
    d.b_dtype = in.b;
    d.instruction_k = in.ik;
    d.out_dtype = DType::kF32;
    ASSERT_TRUE(validate(d).ok()) << validate(d);
    for (GemmConfig cfg : {GemmConfig{4, 1, 1}, GemmConfig{8, 2, 3}}) {
      absl::StatusOr<GemmPrograms> p = gemm(d, cfg);
      ASSERT_TRUE(p.ok()) << p.status();
      ASSERT_TRUE(tile::validate(p->main).ok()) << tile::validate(p->main);
      EXPECT_EQ(count_ops(p->main.body, tile::OpKind::kWgmma), 1);
      EXPECT_EQ(count_ops(p->main.body, tile::OpKind::kMmaSync), 0);
      EXPECT_EQ(p->main.num_warps, cfg.warps);
    }
    // Every row of a 64-row warpgroup tile is covered: the grid is the mma one.
    absl::StatusOr<GemmLaunchShape> s = gemm_launch_shape(d, {4, 1, 1}, 65, 9, 33);
    ASSERT_TRUE(s.ok()) << s.status();
    EXPECT_EQ(s->main_grid, (std::array<int64_t, 3>{2, 2, 1}));
  }
}

TEST(GemmProgram, SameInputsGiveTheSameProgram) {
  GemmDesc d = scalar(Instruction::kScalarFma, GemmFamily::kChainedChunks);
  d.k_cuts = {{.span = 64, .fold = Fold::kChain}};
  absl::StatusOr<GemmPrograms> p1 = gemm(d, {2, 2, 3});
  absl::StatusOr<GemmPrograms> p2 = gemm(d, {2, 2, 3});
  ASSERT_TRUE(p1.ok() && p2.ok());
  EXPECT_EQ(tile::to_string(p1->main), tile::to_string(p2->main));
  EXPECT_EQ(tile::hash(p1->main), tile::hash(p2->main));
  d.k_cuts[0].span = 65;
  absl::StatusOr<GemmPrograms> p3 = gemm(d, {2, 2, 3});
  ASSERT_TRUE(p3.ok());
  EXPECT_NE(p1->main.name, p3->main.name);  // the descriptor's hash names the kernel
  EXPECT_NE(tile::to_string(p1->main), tile::to_string(p3->main));
}

TEST(GemmProgram, SplitKIsTwoProgramsAndTheMergeRoundsToMergeDtype) {
  GemmDesc d = scalar(Instruction::kScalarMulAdd, GemmFamily::kSplitK);
  d.k_cuts = {{.span = 100, .fold = Fold::kChain}, {.span = 10, .fold = Fold::kChain}};
  d.partial_dtype = DType::kF16;
  d.merge_dtype = DType::kBF16;
  ASSERT_TRUE(validate(d).ok()) << validate(d);
  absl::StatusOr<GemmPrograms> p = gemm(d, {1, 1, 2});
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_TRUE(p->merge.has_value());
  EXPECT_EQ(param_names(p->main), (std::vector<std::string>{"a", "b", "ws", "m", "n", "k", "a_sm",
                                                            "a_sk", "b_sk", "b_sn"}));
  EXPECT_EQ(param_names(*p->merge), (std::vector<std::string>{"ws", "out", "c", "bias", "m", "n",
                                                              "parts", "alpha", "beta"}));
  EXPECT_EQ(p->main.params[2].type.pointee, DType::kF16);
  EXPECT_TRUE(tile::validate(*p->merge).ok());
  // The merge's loop rounds its running sum: a cast to bf16 per column.
  std::string text = tile::to_string(*p->merge);
  EXPECT_NE(text.find("cast_bf16"), std::string::npos) << text;
  EXPECT_EQ(text.find("fma"), std::string::npos);
}

TEST(GemmProgram, GemvFoldsLanesInDescriptorOrder) {
  GemmDesc d = scalar(Instruction::kScalarFma, GemmFamily::kGemv);
  d.lanes = 16;
  d.lane_tile = 3;
  d.lane_layout = LaneLayout::kStrided;
  d.lane_fold = {8, 1, 4, 2};
  ASSERT_TRUE(validate(d).ok()) << validate(d);
  absl::StatusOr<GemmPrograms> p = gemm(d, {2, 1, 1});
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<int64_t> offsets;
  EXPECT_EQ(count_ops(p->main.body, tile::OpKind::kXorPermute, &offsets), 4);
  EXPECT_EQ(offsets, (std::vector<int64_t>{8, 1, 4, 2}));
  EXPECT_EQ(gemv_outputs_per_block(d, {2, 1, 1}), 4);  // 64 threads / 16 lanes
}

// A lane count that is no power of two (cuBLAS's gemvNSP: 20, 24, 26) runs on
// lane_slots(lanes) slots per output, the absent ones starting from -0.0 (bits
// 0x80000000 in the program text); a power-of-two count has no -0.0 start, so its
// program is what it was. Every legal knob setting (warps 1..32, rows 1..16) builds
// and covers N with its grid.
TEST(GemmProgram, GemvPadsAbsentLanesWithNegativeZeroSlots) {
  GemmDesc d = scalar(Instruction::kScalarFma, GemmFamily::kGemv);
  d.lanes = 20;
  d.lane_tile = 4;
  d.lane_layout = LaneLayout::kStrided;
  d.lane_fold = {16, 8, 4, 2, 1};
  ASSERT_TRUE(validate(d).ok()) << validate(d);
  absl::StatusOr<GemmPrograms> p = gemm(d, {2, 1, 1});
  ASSERT_TRUE(p.ok()) << p.status();
  std::vector<int64_t> offsets;
  EXPECT_EQ(count_ops(p->main.body, tile::OpKind::kXorPermute, &offsets), 5);
  EXPECT_EQ(offsets, (std::vector<int64_t>{16, 8, 4, 2, 1}));
  EXPECT_EQ(gemv_outputs_per_block(d, {2, 1, 1}), 2);  // 64 threads / 32 slots
  EXPECT_NE(tile::to_string(p->main).find("[0x80000000]"), std::string::npos);
  absl::StatusOr<GemmLaunchShape> s = gemm_launch_shape(d, {4, 1, 1}, 1, 10618, 212);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->main_grid, (std::array<int64_t, 3>{2655, 1, 1}));  // 4 columns a block

  GemmDesc pow2 = d;
  pow2.lanes = 32;
  p = gemm(pow2, {2, 1, 1});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(tile::to_string(p->main).find("[0x80000000]"), std::string::npos);

  for (int lanes : {1, 3, 5, 20, 24, 26, 33, 63, 64}) {
    GemmDesc g = d;
    g.lanes = lanes;
    g.lane_fold.clear();
    for (int off = 1; off < lane_slots(lanes); off *= 2) g.lane_fold.push_back(off);
    ASSERT_TRUE(validate(g).ok()) << validate(g);
    for (int warps = 1; warps <= 32; warps *= 2) {
      for (int rows = 1; rows <= 16; rows *= 2) {
        const GemmConfig cfg{warps, rows, 1};
        ASSERT_TRUE(gemm(g, cfg).ok()) << g << " warps " << warps << " rows " << rows;
        const int64_t per_block = gemv_outputs_per_block(g, cfg);
        EXPECT_EQ(per_block * lane_slots(lanes),
                  std::max<int64_t>(int64_t{32} * warps * rows, int64_t{lane_slots(lanes)} * warps));
        s = gemm_launch_shape(g, cfg, 2, 1001, 77);
        ASSERT_TRUE(s.ok()) << s.status();
        EXPECT_GE(s->main_grid[0] * per_block, 1001);
      }
    }
  }
}

TEST(GemmProgram, BadKnobsNameTheField) {
  GemmDesc d = scalar(Instruction::kScalarFma);
  struct Case {
    GemmConfig cfg;
    const char* field;
  } cases[] = {{{3, 1, 1}, "GemmConfig.warps 3"},
               {{64, 1, 1}, "GemmConfig.warps 64"},
               {{4, 3, 1}, "GemmConfig.rows_per_thread 3"},
               {{4, 1, 0}, "GemmConfig.block_n 0"},
               {{4, 1, 33}, "GemmConfig.block_n 33"},
               {{4, 4, 32}, "GemmConfig.rows_per_thread 4 times block_n 32"}};
  for (const Case& c : cases) {
    absl::StatusOr<GemmPrograms> p = gemm(d, c.cfg);
    ASSERT_FALSE(p.ok()) << c.field;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(p.status().message().find(c.field), std::string::npos) << p.status();
  }
}

TEST(GemmProgram, BadOrUnsupportedDescriptorsNameTheFieldAndWideGemvBuilds) {
  GemmDesc bad_ik = scalar(Instruction::kScalarFma);
  bad_ik.instruction_k = 16;
  absl::StatusOr<GemmPrograms> p = gemm(bad_ik);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("GemmDesc.instruction_k"), std::string::npos) << p.status();

  GemmDesc wg;  // wgmma f16, ik 16: runs per warpgroup, so warps must be 4k
  wg.instruction = Instruction::kWgmma;
  ASSERT_TRUE(validate(wg).ok()) << validate(wg);
  p = gemm(wg, {2, 1, 1});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(p.status().message().find("GemmConfig.warps 2"), std::string::npos) << p.status();
  EXPECT_TRUE(gemm(wg, {4, 1, 1}).ok());

  GemmDesc mma_fp8;  // mma.sync with fp8 does not follow the measured model
  mma_fp8.a_dtype = mma_fp8.b_dtype = DType::kF8E4M3;
  mma_fp8.instruction_k = 32;
  ASSERT_TRUE(validate(mma_fp8).ok()) << validate(mma_fp8);
  p = gemm(mma_fp8, {4, 1, 1});
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(p.status().message().find("use instruction wgmma for fp8"), std::string::npos)
      << p.status();
  GemmDesc mixed = wg;  // f16 x bf16 is not a wgmma
  mixed.b_dtype = DType::kBF16;
  p = gemm(mixed, {4, 1, 1});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("GemmDesc.b_dtype is bf16"), std::string::npos)
      << p.status();

  GemmDesc tf32;
  tf32.a_dtype = tf32.b_dtype = DType::kTF32;
  tf32.instruction_k = 8;
  tf32.k_loop_step.step = 0;
  ASSERT_TRUE(validate(tf32).ok()) << validate(tf32);
  p = gemm(tf32);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("GemmDesc.a_dtype is tf32"), std::string::npos)
      << p.status();

  GemmDesc tree = scalar(Instruction::kScalarFma, GemmFamily::kChainedChunks);
  tree.k_cuts = {{.span = 64, .fold = Fold::kChain}, {.span = 8, .fold = Fold::kTreeUp}};
  ASSERT_TRUE(validate(tree).ok()) << validate(tree);
  p = gemm(tree);  // 8 parts per chunk: built
  ASSERT_TRUE(p.ok()) << p.status();
  tree.k_cuts[1].span = 1;  // 64 parts: the limit, still built
  EXPECT_TRUE(gemm(tree).ok());
  tree.k_cuts[0].span = 65;  // 65 parts
  p = gemm(tree);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("GemmDesc.k_cuts[1].fold is tree_up over up to 65 parts"),
            std::string::npos)
      << p.status();
  tree.k_cuts = {{.span = 64, .fold = Fold::kTreeDown}};
  p = gemm(tree);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("GemmDesc.k_cuts[0].fold is tree_down"), std::string::npos)
      << p.status();

  GemmDesc fp8 = scalar(Instruction::kScalarFma);
  fp8.out_dtype = DType::kF8E4M3;
  ASSERT_TRUE(validate(fp8).ok()) << validate(fp8);
  p = gemm(fp8);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("GemmDesc.out_dtype is f8e4m3"), std::string::npos)
      << p.status();

  GemmDesc wide = scalar(Instruction::kScalarFma, GemmFamily::kGemv);
  wide.lanes = 64;
  wide.lane_fold = {1, 2, 4, 8, 16, 32};
  ASSERT_TRUE(validate(wide).ok()) << validate(wide);
  p = gemm(wide, {2, 1, 1});  // 64 lanes: two per thread, one group per warp
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(gemv_outputs_per_block(wide, {2, 1, 1}), 2);
}

using testing::blocked;

// Register blocking: the knobs are checked by name; a blocked warp issues one
// mma_sync per 16x8 tile (wgmma: one wide instruction per row tile) in the group
// loop; the grid covers the wider block tile; the kernel name carries the knobs.
TEST(GemmProgram, RegisterBlockingKnobsAreCheckedAndShapeTheBlock) {
  struct Case {
    GemmConfig cfg;
    const char* field;
  } cases[] = {{blocked(4, 0, 1), "GemmConfig.warp_m_tiles 0"},
               {blocked(4, 9, 1), "GemmConfig.warp_m_tiles 9"},
               {blocked(4, 1, 0), "GemmConfig.warp_n_tiles 0"},
               {blocked(4, 1, 17), "GemmConfig.warp_n_tiles 17"},
               {blocked(4, 4, 16), "GemmConfig.warp_m_tiles 4 times warp_n_tiles 16"}};
  GemmDesc mma;  // mma_sync f16
  for (const Case& c : cases) {
    absl::StatusOr<GemmPrograms> p = gemm(mma, c.cfg);
    ASSERT_FALSE(p.ok()) << c.field;
    EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(p.status().message().find(c.field), std::string::npos) << p.status();
  }
  absl::StatusOr<GemmPrograms> p = gemm(mma, blocked(4, 2, 4));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(count_ops(p->main.body, tile::OpKind::kMmaSync), 8);
  EXPECT_NE(p->main.name.find("_wm2_wn4_"), std::string::npos) << p->main.name;
  p = gemm(mma, {});  // the default is one tile per warp, named as before
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->main.name.find("_wm"), std::string::npos) << p->main.name;
  absl::StatusOr<GemmLaunchShape> s = gemm_launch_shape(mma, blocked(4, 2, 4), 129, 33, 16);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->main_grid, (std::array<int64_t, 3>{2, 2, 1}));  // ceil(33/32), ceil(129/128)

  GemmDesc wg;
  wg.instruction = Instruction::kWgmma;
  p = gemm(wg, blocked(8, 2, 4));
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(count_ops(p->main.body, tile::OpKind::kWgmma), 2);  // two m64n32 per k-group
  EXPECT_TRUE(tile::validate(p->main).ok()) << tile::validate(p->main);
  p = gemm(wg, blocked(16, 1, 16));  // 16 warps x 4 KiB of B slots > 48 KiB
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("GemmConfig.warp_n_tiles 16 with warps 16"),
            std::string::npos)
      << p.status();
}

TEST(GemmProgram, LaunchShapesCoverEveryOutput) {
  GemmDesc d = scalar(Instruction::kScalarFma);
  for (GemmConfig cfg : {GemmConfig{1, 1, 1}, GemmConfig{4, 2, 5}}) {
    for (auto [m, n] : {std::pair<int64_t, int64_t>{1, 1}, {1, 1000}, {257, 3}, {4096, 4097}}) {
      absl::StatusOr<GemmLaunchShape> s = gemm_launch_shape(d, cfg, m, n, 33);
      ASSERT_TRUE(s.ok()) << s.status();
      EXPECT_GE(s->main_grid[0] * cfg.block_n, n);
      EXPECT_LT((s->main_grid[0] - 1) * cfg.block_n, n);
      EXPECT_GE(s->main_grid[1] * block_m(cfg), m);
      EXPECT_LT((s->main_grid[1] - 1) * block_m(cfg), m);
      EXPECT_EQ(s->main_grid[2], 1);
    }
  }
  GemmDesc sk = scalar(Instruction::kScalarFma, GemmFamily::kSplitK);
  sk.k_cuts = {{.span = 100, .fold = Fold::kChain}};
  absl::StatusOr<GemmLaunchShape> s = gemm_launch_shape(sk, {}, 5, 7, 301);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->parts, 4);
  EXPECT_EQ(s->main_grid[2], 4);
  EXPECT_EQ(s->workspace_elems, 4 * 5 * 7);
  EXPECT_EQ(s->merge_grid[2], 1);
  s = gemm_launch_shape(sk, {}, 5, 7, 0);  // empty K: no parts, the merge still writes +0.0
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->main_grid[2], 0);
  EXPECT_EQ(s->merge_grid[0], 2);  // ceil(7 / block_n 4)
  GemmDesc gv = scalar(Instruction::kScalarFma, GemmFamily::kGemv);
  gv.lanes = 8;
  gv.lane_fold = {1, 2, 4};
  s = gemm_launch_shape(gv, {4, 1, 1}, 3, 100, 9);  // 128 threads / 8 lanes = 16 columns
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->main_grid[0], 7);
  EXPECT_EQ(s->main_grid[1], 3);
  GemmDesc mma;  // mma_sync: each warp a 16x8 tile, so BLOCK_M = 16 * warps, BLOCK_N = 8
  s = gemm_launch_shape(mma, {4, 2, 5}, 100, 20, 64);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->main_grid, (std::array<int64_t, 3>{3, 2, 1}));
  GemmDesc mma_split = mma;
  mma_split.family = GemmFamily::kSplitK;
  mma_split.k_cuts = {{.span = 32, .fold = Fold::kChain}};
  s = gemm_launch_shape(mma_split, {4, 2, 5}, 100, 20, 64);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->main_grid, (std::array<int64_t, 3>{3, 2, 2}));
  EXPECT_EQ(s->merge_grid, (std::array<int64_t, 3>{4, 1, 1}));  // 20/5 columns, 100/256 rows
  s = gemm_launch_shape(d, {}, -1, 4, 4);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("m=-1"), std::string::npos);
  s = gemm_launch_shape(d, {1, 1, 1}, 70000 * 32, 4, 4);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("65535"), std::string::npos);
}

}  // namespace
}  // namespace fixbits::dsl
