// Whole strips (ReduceConfig.whole_strips), on the CPU: the one-block kernels for rows of
// whole passes (every op, kept passes past the row's end included) and the cluster kernel for rows
// whose length is a multiple of the strip, its per-element masks replaced by one flag a
// kept strip (j < n) and none on the strips of its loop, run by the test interpreter a
// cluster at a time, gives exactly the CPU reference's bits -- memcmp -- for P = 2, 3,
// 4, 8, every kept-strip count K (registers and shared memory), rows of 1, 2, 16 and 32
// strips (so kept strips past the row's end, a rest loop, and folds of whole and partial
// groups of 16), and rows with NaN, inf, -0.0 and subnormals. Its masks are what the row
// length needs: the same kernel on a row of whole strips plus one element reads past
// the row (the interpreter refuses it) or leaves the last element unwritten. Also: the
// knob's error names the field, the name ends in _ws, the tile program has no
// per-element select where the masked one has one, and the PTX of the bench's kernels
// (cluster and one block a row) has no selp.f32 and no per-element compare in its trees.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "absl/strings/str_format.h"
#include "codegen/Compile.h"
#include "dsl/reference/Reference.h"
#include "dsl/tile/ReduceProgram.h"
#include "tests/codegen/ProgramInterpreter.h"
#include "tests/codegen/ReduceInputs.h"
#include "tests/codegen/ReducePhases.h"
#include "tests/codegen/TextCount.h"

namespace fixbits {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::ReduceOp;
using testing::count_of;

using testing::run_clusters;

std::string where(const ReduceDesc& d, const ReduceConfig& c, int64_t cols, int specials) {
  return absl::StrFormat("%s warps=%d ept=%d P=%d keep=%d shared=%d cols=%d specials=%d", dsl::to_string(d),
                         c.warps, c.elems_per_thread, c.blocks_per_row, c.keep_passes, c.keep_in_shared,
                         cols, specials);
}

TEST(ReduceWholeStrips, BitIdenticalToReferenceOnRowsOfWholeStrips) {
  int cases = 0;
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
      const ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .strip = 64};
      const ReduceConfig c{.warps = 1, .elems_per_thread = 2};  // 64 = one pass a strip
      for (int p : {2, 3, 4, 8}) {
        // 1 strip (P-1 blocks hold only strips past the end), 2, 16 (one whole group of
        // the fold), 32 strips (two groups; kept K*P below it: a rest loop).
        for (int64_t strips : {1, 2, 16, 32}) {
          const int64_t cols = strips * d.strip;
          for (int specials = 0; specials < 2; ++specials) {
            const uint32_t seed = static_cast<uint32_t>(cols * 17 + p * 5 + specials);
            const dsl::reference::ReduceProblem prob = testing::fused_row_problem(d, 2, cols, seed, specials);
            auto ref = dsl::reference::reduce(d, prob);
            ASSERT_TRUE(ref.ok()) << ref.status();
            for (int keep : {0, 1, 2, 4}) {
              for (bool shared : {false, true}) {
                if (shared && keep == 0) continue;
                ReduceConfig k = c;
                k.blocks_per_row = p;
                k.cluster_rows = true;
                k.whole_strips = true;
                k.keep_passes = keep;
                k.keep_in_shared = shared;
                auto got = testing::run_cluster_config(d, k, prob);
                ASSERT_TRUE(got.ok()) << where(d, k, cols, specials) << ": " << got.status();
                ASSERT_EQ(got->size(), ref->size());
                ASSERT_EQ(std::memcmp(got->data(), ref->data(), ref->size() * 4), 0)
                    << where(d, k, cols, specials);
                ++cases;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 2 * 3 * 4 * 4 * 2 * 7);
}

// One block a row (blocks_per_row 1): rows of 1, 2 and 5 whole passes, with the pass the
// strip (Q = S = 64 > the block's 32) or the block (Q = 128 > S = 64), keeping 0, 1, 2
// and 4 passes (so kept passes past the row's end, whose leaves are the loaded pad, not
// the identity) in registers and in shared memory; RMSNorm, softmax, sum, max and min;
// memcmp-equal to the reference, also on rows with NaN, inf, -0.0 and subnormals.
TEST(ReduceWholeStrips, OneBlockBitIdenticalOnRowsOfWholePasses) {
  int cases = 0, kept_past_end = 0;
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax, ReduceOp::kSum, ReduceOp::kMax, ReduceOp::kMin}) {
    const bool two_pass = op == ReduceOp::kRmsNorm || op == ReduceOp::kSoftmax;
    for (DType in : {DType::kF32, DType::kBF16, DType::kF16}) {
      const ReduceDesc d{.op = op, .in_dtype = in, .out_dtype = in, .strip = 64};
      for (ReduceConfig c : {ReduceConfig{.warps = 1, .elems_per_thread = 1},    // Q = S = 64
                             ReduceConfig{.warps = 2, .elems_per_thread = 2}}) {  // Q = B = 128
        c.whole_strips = true;
        const int64_t q = dsl::pass_extent(d, c);
        for (int64_t passes : {1, 2, 5}) {
          const int64_t cols = passes * q;
          for (int specials = 0; specials < 2; ++specials) {
            const uint32_t seed = static_cast<uint32_t>(cols * 13 + static_cast<int>(op) * 3 + specials);
            const dsl::reference::ReduceProblem prob = testing::fused_row_problem(d, 3, cols, seed, specials);
            auto ref = dsl::reference::reduce(d, prob);
            ASSERT_TRUE(ref.ok()) << ref.status();
            for (int keep : {0, 1, 2, 4}) {
              for (bool shared : {false, true}) {
                if ((!two_pass && keep > 0) || (shared && keep == 0)) continue;
                ReduceConfig k = c;
                k.keep_passes = keep;
                k.keep_in_shared = shared;
                auto got = testing::run_reduce_phases(d, k, prob);
                ASSERT_TRUE(got.ok()) << where(d, k, cols, specials) << ": " << got.status();
                ASSERT_EQ(got->size(), ref->size());
                ASSERT_EQ(std::memcmp(got->data(), ref->data(), ref->size() * 4), 0)
                    << where(d, k, cols, specials);
                ++cases;
                kept_past_end += keep > passes;
              }
            }
          }
        }
      }
    }
  }
  // Two-pass ops: 7 keep/shared settings; sum/max/min: keep 0 only.
  EXPECT_EQ(cases, (2 * 7 + 3 * 1) * 3 * 2 * 3 * 2);
  EXPECT_GT(kept_past_end, 0);
}

// The masks it drops are the ones a row of whole strips does not need: one more element
// and the kernel either reads past the row or does not write the last element; the
// masked kernel is right there.
TEST(ReduceWholeStrips, ARowWithAPartialStripNeedsTheMasks) {
  const ReduceDesc d{.op = ReduceOp::kRmsNorm, .in_dtype = DType::kF32, .out_dtype = DType::kF32, .strip = 64};
  for (int keep : {0, 2}) {
    ReduceConfig k{.warps = 1, .elems_per_thread = 2, .blocks_per_row = 2, .keep_passes = keep, .cluster_rows = true};
    const dsl::reference::ReduceProblem prob = testing::fused_row_problem(d, 1, 4 * 64 + 1, 9u, 0);
    auto ref = dsl::reference::reduce(d, prob);
    ASSERT_TRUE(ref.ok());
    auto masked = dsl::reduce_phases(d, k);
    ASSERT_TRUE(masked.ok());
    auto right = run_clusters(masked->front(), d, prob, 32);
    ASSERT_TRUE(right.ok()) << right.status();
    EXPECT_EQ(*right, *ref);
    k.whole_strips = true;
    auto whole = dsl::reduce_phases(d, k);
    ASSERT_TRUE(whole.ok());
    auto wrong = run_clusters(whole->front(), d, prob, 32);
    if (wrong.ok()) {
      EXPECT_NE(*wrong, *ref) << "keep " << keep << ": a partial strip went unnoticed";
    } else {
      EXPECT_NE(std::string(wrong.status().message()).find("outside a buffer"), std::string::npos) << wrong.status();
    }
  }
}

TEST(ReduceWholeStrips, KnobAppliesToPinnedRowsAndNamesTheKernel) {
  const ReduceDesc rms{.op = ReduceOp::kRmsNorm, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16,
                       .strip = 4096};
  ReduceConfig c{.warps = 16, .elems_per_thread = 4, .blocks_per_row = 4, .whole_strips = true};
  auto no_cluster = dsl::reduce_phases(rms, c);
  ASSERT_FALSE(no_cluster.ok());
  EXPECT_NE(std::string(no_cluster.status().message()).find("ReduceConfig.whole_strips applies to pinned rows"),
            std::string::npos) << no_cluster.status();
  EXPECT_NE(std::string(no_cluster.status().message()).find("blocks_per_row 4 without cluster_rows"),
            std::string::npos) << no_cluster.status();
  // One block a row takes it (pinned rows); the free order and columns do not.
  EXPECT_TRUE(dsl::reduce(rms, {.whole_strips = true}).ok());
  ReduceDesc free = rms;
  free.order = dsl::TreeOrder::kFree;
  auto one = dsl::reduce(free, {.whole_strips = true});
  ASSERT_FALSE(one.ok());
  EXPECT_NE(std::string(one.status().message()).find("ReduceConfig.whole_strips applies to pinned rows"),
            std::string::npos) << one.status();
  ReduceDesc col = rms;
  col.axis = dsl::ReduceAxis::kColumn;
  EXPECT_FALSE(dsl::reduce(col, {.whole_strips = true}).ok());
  c.cluster_rows = true;
  c.keep_passes = 8;
  auto progs = dsl::reduce_phases(rms, c);
  ASSERT_TRUE(progs.ok()) << progs.status();
  EXPECT_TRUE(progs->front().name.ends_with("_k8_p4_cluster_ws")) << progs->front().name;
  // The tile program: the masked kernel selects each square against the pad (its 8
  // kept strips and its rest loop's strip, 9 selects); the whole one squares only. The
  // 16 selects both keep are the fold's last, partial group of 16 strip results.
  c.whole_strips = false;
  auto masked = dsl::reduce_phases(rms, c);
  ASSERT_TRUE(masked.ok());
  const std::string whole_text = tile::to_string(progs->front());
  const std::string masked_text = tile::to_string(masked->front());
  EXPECT_EQ(count_of(masked_text, " select "), 16 + 9);
  EXPECT_EQ(count_of(whole_text, " select "), 16);
}

// The bench's kernel (RMSNorm bf16, strip 4096, 16 warps x 4, P 4, 8 strips in shared
// memory): the strip trees square and add with no select and no per-element compare.
TEST(ReduceWholeStrips, PtxTreesHaveNoPerElementMask) {
  const ReduceDesc d{.op = ReduceOp::kRmsNorm, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .strip = 4096};
  ReduceConfig c{.warps = 16, .elems_per_thread = 4, .blocks_per_row = 4, .keep_passes = 8,
                 .cluster_rows = true, .keep_in_shared = true, .whole_strips = true};
  auto whole = dsl::reduce_phases(d, c);
  ASSERT_TRUE(whole.ok()) << whole.status();
  c.whole_strips = false;
  auto masked = dsl::reduce_phases(d, c);
  ASSERT_TRUE(masked.ok());
  auto kw = codegen::compile(whole->front(), codegen::Target::kNvptxSm90a);
  auto km = codegen::compile(masked->front(), codegen::Target::kNvptxSm90a);
  ASSERT_TRUE(kw.ok()) << kw.status();
  ASSERT_TRUE(km.ok()) << km.status();
  // The masked kernel pads each of a thread's 8 values of a strip with a selp.f32, in
  // its 8 kept strips and its rest loop's strip; the whole one has none of those 72
  // (the selp.f32 both keep: the fold's partial group and the loop's buffer choice).
  EXPECT_EQ(count_of(km->text, "selp.f32") - count_of(kw->text, "selp.f32"), 9 * 8);
  // Nor a compare a value (setp.lt.s32 index < cols): a handful of loop bounds remain.
  EXPECT_GE(count_of(km->text, "setp.lt.s32"), 9 * 8);
  EXPECT_LT(count_of(kw->text, "setp.lt.s32"), 8);
  EXPECT_LT(kw->text.size(), km->text.size());
  // One block a row (the 2048 x 16384 bench kernel: 16 x 4, 4 passes in shared memory):
  // the same 8 selp.f32 a pass gone from its 4 kept passes and its loop's pass.
  ReduceConfig one{.warps = 16, .elems_per_thread = 4, .keep_passes = 4, .keep_in_shared = true,
                   .min_blocks_per_sm = 3};
  auto om = dsl::reduce(d, one);
  one.whole_strips = true;
  auto ow = dsl::reduce(d, one);
  ASSERT_TRUE(om.ok() && ow.ok());
  auto pm = codegen::compile(*om, codegen::Target::kNvptxSm90a);
  auto pw = codegen::compile(*ow, codegen::Target::kNvptxSm90a);
  ASSERT_TRUE(pm.ok() && pw.ok());
  EXPECT_EQ(count_of(pm->text, "selp.f32") - count_of(pw->text, "selp.f32"), 5 * 8);
  EXPECT_LT(count_of(pw->text, "setp.lt.s32"), count_of(pm->text, "setp.lt.s32") / 4);
}

}  // namespace
}  // namespace fixbits
