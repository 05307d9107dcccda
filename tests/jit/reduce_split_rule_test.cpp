// ReduceRunner's split rows on the CPU: suggest_blocks_per_row follows the rule its
// header documents (split only pinned row reductions whose rows are too few to fill
// the GPU, never past the row's strip count or 1024; split pinned column sums whose
// column groups are too few, by powers of two up to strip/Rq), and every kernel of a split
// reduction (and of the unsplit one) passes the verify-before-load hook, so the runner can load it.
#include <gtest/gtest.h>

#include "codegen/Compile.h"
#include "dsl/tile/ReduceProgram.h"
#include "jit/ReduceRunner.h"
#include "runtime/TreeSignatureHook.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::ReduceOp;
using jit::ReduceRunner;

TEST(ReduceSplitRule, SplitsOnlyFewLongPinnedRows) {
  const ReduceDesc d{.op = ReduceOp::kSum, .in_dtype = DType::kBF16, .strip = 4096};
  const ReduceConfig c{.warps = 8, .elems_per_thread = 8};  // block extent 2048 <= 4096
  // 256 x 131072 on 132 SMs: 32 strips a row, target 528 blocks -> ceil(528/256) = 3.
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 256, 131072, 132), 3);
  // One row: as many blocks as strips, up to the target.
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 1, 131072, 132), 32);
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 1, 1000003, 132), 245);  // 4 * 132 = 528 > 245 strips
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 1, 1 << 30, 132), 528);
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 1, 1 << 30, 1000), 1024);  // the knob's limit
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 3, 1000003, 132), 176);
  // Enough rows to fill the GPU: no split.
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 528, 131072, 132), 1);
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 2048, 16384, 132), 1);
  // One strip a row: nothing to split.
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 1, 4096, 132), 1);
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 1, 4097, 132), 2);
  // A block pass wider than the strip cannot be split.
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, {.warps = 32, .elems_per_thread = 8}, 1, 131072, 132), 1);
  // Free order and columns are never split.
  ReduceDesc free = d;
  free.order = dsl::TreeOrder::kFree;
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(free, c, 1, 131072, 132), 1);
  ReduceDesc col = d;
  col.axis = dsl::ReduceAxis::kColumn;
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(col, c, 1, 131072, 132), 1);  // one row: one pass
  // Degenerate sizes.
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 0, 131072, 132), 1);
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 1, 131072, 0), 1);
  // What it suggests always builds.
  for (int64_t rows : {1, 3, 256}) {
    ReduceConfig s = c;
    s.blocks_per_row = ReduceRunner::suggest_blocks_per_row(d, c, rows, 1000003, 132);
    EXPECT_TRUE(dsl::reduce_phases(d, s).ok()) << rows;
  }
}

// Columns: the smallest power of two P whose blocks that load rows reach 4 * SMs,
// capped by strip / Rq and 1024 (the header's rule); 1 when the column groups alone
// fill the GPU, for one pass of rows, and for what has no column split.
TEST(ReduceSplitRule, SplitsColumnGroupsUntilTheyFillTheGpu) {
  const ReduceDesc d{.op = ReduceOp::kSum, .axis = dsl::ReduceAxis::kColumn, .in_dtype = DType::kF32,
                     .strip = 4096};
  const ReduceConfig c{.warps = 8, .elems_per_thread = 8};  // C = 256, Rq = 8: at most 512 parts
  ASSERT_EQ(dsl::column_pass_rows(d, c), 8);
  ASSERT_EQ(dsl::max_column_parts(d, c), 512);
  // 4096 x 4096: 16 groups, one strip; 16 * 32 = 512 < 528 -> 64.
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 4096, 4096, 132), 64);
  // 16384 x 1024: 4 groups, 4 strips; 4 * 128 = 512 < 528 -> 256.
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 16384, 1024, 132), 256);
  // 1024 x 16384 at strip 1024: 64 groups; 64 * 8 = 512 < 528 -> 16.
  ReduceDesc s1024 = d;
  s1024.strip = 1024;
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(s1024, c, 1024, 16384, 132), 16);
  // One short strip (rows 100 of 4096): only parts that start before row 100 load rows;
  // P = 512 gives 16 * ceil(100 * 512 / 4096) = 16 * 13 = 208 < 528, so the cap.
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 100, 4096, 132), 512);
  // Enough column groups already: 528 * 256 columns.
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 4096, 528 * 256, 132), 1);
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 4096, 527 * 256, 132), 2);
  // At most one pass of rows: nothing to split.
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 8, 1000, 132), 1);
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 9, 1000, 132), 512);
  // The cap: strip 64 over Rq 8 -> at most 8 parts.
  ReduceDesc s64 = d;
  s64.strip = 64;
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(s64, c, 1 << 20, 256, 132), 8);
  // Free order, column RMSNorm/softmax: never split.
  ReduceDesc free = d;
  free.order = dsl::TreeOrder::kFree;
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(free, c, 4096, 4096, 132), 1);
  for (ReduceOp fused : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    ReduceDesc f = d;
    f.op = fused;
    EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(f, c, 4096, 4096, 132), 1);
  }
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(d, c, 4096, 4096, 0), 1);
  // What it suggests always builds, for every config and shape here.
  for (ReduceConfig k : {c, ReduceConfig{.warps = 2, .elems_per_thread = 1}, ReduceConfig{.warps = 32, .elems_per_thread = 64},
                         ReduceConfig{.warps = 4, .elems_per_thread = 16}}) {
    for (auto [rows, cols] : {std::pair<int64_t, int64_t>{4096, 4096}, {16384, 1024}, {100, 7}, {1, 1}, {5000, 70000}}) {
      for (const ReduceDesc& desc : {d, s1024, s64}) {
        ReduceConfig s = k;
        s.blocks_per_row = ReduceRunner::suggest_blocks_per_row(desc, k, rows, cols, 132);
        EXPECT_TRUE(dsl::reduce_phases(desc, s).ok()) << rows << " x " << cols << " P " << s.blocks_per_row;
      }
    }
  }
}

TEST(ReduceSplitRule, EveryPhasePassesTheVerifyBeforeLoadHook) {
  runtime::TreeSignatureHook hook;
  int kernels = 0;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16}) {
      const bool fused = op == ReduceOp::kRmsNorm || op == ReduceOp::kSoftmax;
      ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = fused ? in : DType::kF32, .strip = 4096};
     for (int bpr : {1, 3}) {
      auto phases = dsl::reduce_phases(d, {.warps = 8, .elems_per_thread = 8, .blocks_per_row = bpr});
      ASSERT_TRUE(phases.ok()) << phases.status();
      for (const tile::Program& p : *phases) {
        auto k = codegen::compile(p, codegen::Target::kNvptxSm90a);
        ASSERT_TRUE(k.ok()) << p.name << ": " << k.status();
        auto sig = hook.signature(k->text, "sm_90a");
        ASSERT_TRUE(sig.ok()) << p.name << ": " << sig.status();
        EXPECT_FALSE(sig->empty()) << p.name;
        ++kernels;
      }
     }
    }
  }
  EXPECT_EQ(kernels, 2 * ((3 * 2 + 2 + 3) + 5));
  // Split columns (and the unsplit column kernel) too.
  int column_kernels = 0;
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
    for (DType in : {DType::kF32, DType::kBF16}) {
      const ReduceDesc d{.op = op, .axis = dsl::ReduceAxis::kColumn, .in_dtype = in, .out_dtype = DType::kF32,
                         .strip = 4096};
      for (int parts : {1, 2, 64, 512}) {
        auto phases = dsl::reduce_phases(d, {.warps = 8, .elems_per_thread = 8, .blocks_per_row = parts});
        ASSERT_TRUE(phases.ok()) << phases.status();
        for (const tile::Program& p : *phases) {
          auto k = codegen::compile(p, codegen::Target::kNvptxSm90a);
          ASSERT_TRUE(k.ok()) << p.name << ": " << k.status();
          auto sig = hook.signature(k->text, "sm_90a");
          ASSERT_TRUE(sig.ok()) << p.name << ": " << sig.status();
          EXPECT_FALSE(sig->empty()) << p.name;
          ++column_kernels;
        }
      }
    }
  }
  EXPECT_EQ(column_kernels, 3 * 2 * (1 + 2 * 3));
}

}  // namespace
}  // namespace fixbits
