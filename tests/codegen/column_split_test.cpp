// Split columns (ReduceConfig.blocks_per_row = P > 1 on a pinned column sum/max/min),
// on the CPU: the partials and fold kernels of dsl::reduce_phases, run block by block
// by the test interpreter (codegen's op semantics; reduces through simulate_plan, as
// LowerReduce emits them), give exactly reference::reduce's bits -- and so the
// unsplit coalesced kernel's -- for every power-of-two P up to strip/Rq, on
// adversarial columns (NaN, inf, -0.0, subnormals, cancelling +-L), for rows below,
// at and past the strip and not multiples of Rq, one row, and column counts that are
// not multiples of C. The workspace starts as NaN, so a part result the fold reads
// but the partials never wrote shows up in the bits. Also: the inputs do tell trees
// apart (a chain over the parts differs from the reference), the knob's errors name
// ReduceConfig.blocks_per_row, and the phases' names, grids and parameters.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "codegen/Compile.h"
#include "dsl/reference/Reference.h"
#include "dsl/tile/ReduceProgram.h"
#include "tests/codegen/ProgramInterpreter.h"
#include "tests/codegen/ReducePhases.h"
#include "tests/jit/RandomInputs.h"

namespace fixbits {
namespace {

using dsl::ReduceAxis;
using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::ReduceOp;

// Every kernel of reduce_phases(d, cfg) on the interpreter, on the grids
// dsl::grid_blocks gives; returns y's bits.
absl::StatusOr<std::vector<uint32_t>> run_phases(const ReduceDesc& d, const ReduceConfig& cfg,
                                                 const dsl::reference::ReduceProblem& p) {
  absl::StatusOr<std::vector<tile::Program>> phases = dsl::reduce_phases(d, cfg);
  if (!phases.ok()) return phases.status();
  testing::Buffers mem;
  mem["x"] = {d.in_dtype, p.x};
  mem["y"] = {d.out_dtype, std::vector<uint32_t>(static_cast<size_t>(p.cols), 0xdeadu)};
  if (cfg.blocks_per_row > 1) {
    const int64_t ws = dsl::split_workspace_floats(d, cfg.blocks_per_row, p.rows, p.cols);
    mem["ws"] = {DType::kF32, std::vector<uint32_t>(static_cast<size_t>(ws), 0xffffffffu)};  // NaN
  }
  for (const tile::Program& prog : *phases) {
    absl::StatusOr<int64_t> blocks = dsl::grid_blocks(prog.grid, p.rows, p.cols, cfg.blocks_per_row);
    if (!blocks.ok()) return blocks.status();
    for (int64_t b = 0; b < *blocks; ++b) {
      absl::Status s = testing::run_block(prog, b, {{"rows", p.rows}, {"cols", p.cols}}, {}, mem, cfg.lanes);
      if (!s.ok()) return s;
    }
  }
  return mem["y"].bits;
}

std::string where(const ReduceDesc& d, const ReduceConfig& c, int64_t rows, int64_t cols) {
  return absl::StrFormat("%s warps=%d ept=%d lanes=%d blocks_per_row=%d rows=%d cols=%d", dsl::to_string(d),
                         c.warps, c.elems_per_thread, c.lanes, c.blocks_per_row, rows, cols);
}

// The powers of two P in [2, max_column_parts] this test runs: all of them up to 8,
// then 32 and the largest.
std::vector<int> parts_to_try(const ReduceDesc& d, const ReduceConfig& c) {
  const int64_t most = dsl::max_column_parts(d, c);
  std::vector<int> ps;
  for (int64_t p = 2; p <= most; p *= 2) {
    if (p <= 8 || p == 32 || p == most) ps.push_back(static_cast<int>(p));
  }
  return ps;
}

TEST(ColumnSplit, BitIdenticalToReferenceAndUnsplitForEveryParts) {
  int cases = 0;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
    for (DType in : {DType::kF32, DType::kF16, DType::kBF16}) {
      for (int64_t strip : {int64_t{16}, int64_t{128}}) {
        const ReduceDesc d{.op = op, .axis = ReduceAxis::kColumn, .in_dtype = in,
                           .out_dtype = op == ReduceOp::kSum ? DType::kF32 : in, .strip = strip};
        for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
                 {1, 37}, {7, 33}, {strip - 1, 65}, {strip, 32}, {strip + 3, 40}, {3 * strip - 5, 70}}) {
          dsl::reference::ReduceProblem p{.rows = rows, .cols = cols, .x = {}, .w = {}};
          std::mt19937_64 rng(static_cast<uint64_t>(rows * 131 + cols * 7 + strip + static_cast<int>(op)));
          p.x = testing::random_bits(in, static_cast<size_t>(rows * cols), rng, testing::Mix::kAdversarial,
                                     /*specials=*/(rows + cols) % 3 != 0);
          auto ref = dsl::reference::reduce(d, p);
          ASSERT_TRUE(ref.ok()) << ref.status();
          for (ReduceConfig c : {ReduceConfig{.warps = 1, .elems_per_thread = 4},      // C 32, Rq 4
                                 ReduceConfig{.warps = 2, .elems_per_thread = 1},      // C 64, Rq 1
                                 ReduceConfig{.warps = 1, .elems_per_thread = 8, .lanes = 64}}) {
            auto unsplit = run_phases(d, c, p);
            ASSERT_TRUE(unsplit.ok()) << where(d, c, rows, cols) << ": " << unsplit.status();
            ASSERT_EQ(*unsplit, *ref) << where(d, c, rows, cols);
            for (int parts : parts_to_try(d, c)) {
              c.blocks_per_row = parts;
              auto got = run_phases(d, c, p);
              ASSERT_TRUE(got.ok()) << where(d, c, rows, cols) << ": " << got.status();
              ASSERT_EQ(*got, *ref) << where(d, c, rows, cols);
              ASSERT_EQ(*got, *unsplit) << where(d, c, rows, cols);
              ++cases;
            }
            c.blocks_per_row = 1;
          }
        }
      }
    }
  }
  EXPECT_GT(cases, 3 * 3 * 2 * 6 * 3 * 3);
}

// Wider blocks and deeper trees: 8 warps (C = 256, Rq = 8 at 8 elements a thread),
// strip 1024, rows spanning two strips plus a part, more than one column group;
// P from 2 to 128 (= S/Rq).
TEST(ColumnSplit, WideBlocksAndEveryPartsUpToTheLimit) {
  const ReduceDesc d{.op = ReduceOp::kSum, .axis = ReduceAxis::kColumn, .in_dtype = DType::kBF16,
                     .out_dtype = DType::kF32, .strip = 1024};
  ReduceConfig c{.warps = 8, .elems_per_thread = 8};
  ASSERT_EQ(dsl::column_pass_rows(d, c), 8);
  ASSERT_EQ(dsl::max_column_parts(d, c), 128);
  const int64_t rows = 2 * 1024 + 300, cols = 300;
  dsl::reference::ReduceProblem p{.rows = rows, .cols = cols, .x = {}, .w = {}};
  std::mt19937_64 rng(7);
  p.x = testing::random_bits(d.in_dtype, static_cast<size_t>(rows * cols), rng, testing::Mix::kAdversarial);
  auto ref = dsl::reference::reduce(d, p);
  ASSERT_TRUE(ref.ok());
  for (int parts = 1; parts <= 128; parts *= 2) {
    c.blocks_per_row = parts;
    auto got = run_phases(d, c, p);
    ASSERT_TRUE(got.ok()) << where(d, c, rows, cols) << ": " << got.status();
    ASSERT_EQ(*got, *ref) << where(d, c, rows, cols);
  }
}

// The comparison can fail: on these inputs a different grouping of the same part
// results (a chain instead of the balanced top levels) gives other bits for most
// columns, so the bit-equality above checks the tree, not just the values.
TEST(ColumnSplit, InputsTellTheTreeFromAChainOfParts) {
  const int64_t strip = 64, rows = 64, cols = 64, parts = 8;
  std::mt19937_64 rng(3);
  auto bits = testing::random_bits(DType::kF32, static_cast<size_t>(rows * cols), rng, testing::Mix::kAdversarial);
  const ReduceDesc d{.op = ReduceOp::kSum, .axis = ReduceAxis::kColumn, .strip = strip};
  dsl::reference::ReduceProblem p{.rows = rows, .cols = cols, .x = bits, .w = {}};
  auto ref = dsl::reference::reduce(d, p);
  ASSERT_TRUE(ref.ok());
  int differ = 0;
  for (int64_t c = 0; c < cols; ++c) {
    float chain = -0.0f;
    for (int64_t k = 0; k < parts; ++k) {  // each part's own balanced tree, then a chain
      std::vector<float> v;
      for (int64_t r = k * (rows / parts); r < (k + 1) * (rows / parts); ++r) {
        v.push_back(std::bit_cast<float>(bits[static_cast<size_t>(r * cols + c)]));
      }
      while (v.size() > 1) {
        std::vector<float> next;
        for (size_t i = 0; i < v.size(); i += 2) next.push_back(v[i] + v[i + 1]);
        v = next;
      }
      chain = chain + v[0];
    }
    if (std::bit_cast<uint32_t>(chain) != (*ref)[static_cast<size_t>(c)]) ++differ;
  }
  EXPECT_GT(differ, cols / 4);
}

TEST(ColumnSplit, KnobErrorsNameTheField) {
  const ReduceDesc col{.op = ReduceOp::kSum, .axis = ReduceAxis::kColumn, .strip = 256};
  const auto msg = testing::phases_message;
  // warps 2, ept 4: Rq = 4, at most 256 / 4 = 64 parts.
  EXPECT_EQ(msg(col, {.warps = 2, .elems_per_thread = 4, .blocks_per_row = 64}), "ok");
  EXPECT_EQ(msg(col, {.warps = 2, .elems_per_thread = 4, .blocks_per_row = 3}),
            "ReduceConfig.blocks_per_row 3 is not a power of two; a split column cuts every strip "
            "into blocks_per_row aligned parts, nodes of the strip's balanced tree.");
  EXPECT_EQ(msg(col, {.warps = 2, .elems_per_thread = 4, .blocks_per_row = 128}),
            "ReduceConfig.blocks_per_row 128 exceeds strip / rows per pass (256 / 4 = 64) for a "
            "column reduction: each block's part of a strip must hold whole passes.");
  EXPECT_EQ(msg(col, {.blocks_per_row = 2048}),
            "ReduceConfig.blocks_per_row 2048 is not in [1, 1024] (blocks sharing a row, or a column "
            "group of a pinned column sum/max/min).");
  ReduceDesc free = col;
  free.order = dsl::TreeOrder::kFree;
  EXPECT_NE(msg(free, {.blocks_per_row = 2}).find("ReduceConfig.blocks_per_row 2 needs order=pinned"),
            std::string::npos);
  for (ReduceOp fused : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    ReduceDesc f = col;
    f.op = fused;
    EXPECT_EQ(msg(f, {.blocks_per_row = 2}),
              "ReduceConfig.blocks_per_row 2 splits a pinned column sum, max or min; a column "
              "rms_norm or softmax runs one block per column.");
  }
  auto one = dsl::reduce(col, {.blocks_per_row = 2});
  ASSERT_FALSE(one.ok());
  EXPECT_NE(std::string(one.status().message()).find("dsl::reduce_phases"), std::string::npos);
  // blocks_per_row 1: the unsplit coalesced kernel, unchanged.
  auto phases = dsl::reduce_phases(col, {});
  ASSERT_TRUE(phases.ok());
  ASSERT_EQ(phases->size(), 1u);
  EXPECT_EQ((*phases)[0], *dsl::reduce(col, {}));
}

TEST(ColumnSplit, PhasesHaveTheDocumentedNamesGridsAndParameters) {
  auto sum = dsl::reduce_phases({.op = ReduceOp::kMax, .axis = ReduceAxis::kColumn, .in_dtype = DType::kBF16,
                                 .out_dtype = DType::kBF16, .strip = 4096},
                                {.warps = 8, .elems_per_thread = 8, .blocks_per_row = 64});
  ASSERT_TRUE(sum.ok()) << sum.status();
  std::string s;
  for (const auto& p : *sum) {
    s += p.name + "@" + p.grid + "(";
    for (const auto& prm : p.params) s += prm.name + ",";
    s += ") ";
  }
  EXPECT_EQ(s,
            "fixbits_max_col_bf16_bf16_pinned_s4096_w8_e8_p64_partials@col_blocks/256(x,ws,rows,cols,) "
            "fixbits_max_col_bf16_bf16_pinned_s4096_w8_e8_p64_fold@cols/256(ws,y,rows,cols,) ");
  EXPECT_EQ(*dsl::grid_blocks("col_blocks/256", 4096, 1000, 64), 4 * 64);
  EXPECT_EQ(*dsl::grid_blocks("col_blocks/256", 4096, 1024, 64), 4 * 64);
  EXPECT_EQ(*dsl::grid_blocks("col_blocks/256", 4096, 1025, 64), 5 * 64);
  EXPECT_FALSE(dsl::grid_blocks("col_blocks/x", 1, 1, 1).ok());
  const ReduceDesc d{.op = ReduceOp::kSum, .axis = ReduceAxis::kColumn, .strip = 4096};
  EXPECT_EQ(dsl::split_workspace_floats(d, 64, 4096, 1000), 1 * 64 * 1000);
  EXPECT_EQ(dsl::split_workspace_floats(d, 8, 16384 + 1, 1024), 5 * 8 * 1024);
  // Both phases compile for NVIDIA and AMD; the partials store to the workspace with
  // plain stores (no atomics), the fold needs no shuffle.
  for (auto target : {codegen::Target::kNvptxSm90a, codegen::Target::kAmdgpuGfx942}) {
    const ReduceConfig c{.warps = 4, .elems_per_thread = 4,
                         .lanes = target == codegen::Target::kNvptxSm90a ? 32 : 64, .blocks_per_row = 16};
    auto phases = dsl::reduce_phases(d, c);
    ASSERT_TRUE(phases.ok()) << phases.status();
    for (const auto& p : *phases) {
      auto k = codegen::compile(p, target);
      ASSERT_TRUE(k.ok()) << p.name << ": " << k.status();
      if (target == codegen::Target::kNvptxSm90a) {
        EXPECT_EQ(k->text.find("atom."), std::string::npos) << p.name;
        EXPECT_EQ(k->text.find("shfl"), std::string::npos) << p.name;
      }
    }
  }
}

}  // namespace
}  // namespace fixbits
