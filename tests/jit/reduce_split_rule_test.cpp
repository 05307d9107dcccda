// ReduceRunner's split rows on the CPU: suggest_blocks_per_row follows the rule its
// header documents (split only pinned row reductions whose rows are too few to fill
// the GPU, never past the row's strip count or 1024), and every kernel of a split
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
  EXPECT_EQ(ReduceRunner::suggest_blocks_per_row(col, c, 1, 131072, 132), 1);
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
}

}  // namespace
}  // namespace fixbits
