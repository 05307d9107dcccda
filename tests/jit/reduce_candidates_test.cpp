// jit::reduce_candidates (CPU): the bench's search space as a library function. On the
// bench's shapes the list holds the configurations that won on the device (performance.md:
// RMSNorm 256 x 131072's cluster P 6 keeping 6 strips in shared memory with whole strips,
// softmax 8192 x 4096's 16 x 4 keeping 1 pass with whole strips; softmax 2048 x 16384 also
// as clusters of 2 and 4 blocks), every candidate passes
// dsl::validate, none repeats, the same inputs give the same list, and each option does
// what its comment says: no cluster sizes -> no cluster candidates, whole_strips and
// divide_by_reciprocal off -> none of those, lanes 64 -> gfx942 candidates only (no
// clusters, no divide_by_reciprocal), free order -> none of the pinned-only knobs.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "jit/ReduceCandidates.h"

namespace fixbits::jit {
namespace {

using dsl::ReduceConfig;
using dsl::ReduceDesc;
using dsl::ReduceOp;

ReduceDesc bf16(ReduceOp op, dsl::TreeOrder order = dsl::TreeOrder::kPinned) {
  return ReduceDesc{.op = op, .in_dtype = DType::kBF16, .out_dtype = DType::kBF16, .order = order, .strip = 4096};
}

std::string key(const ReduceConfig& c) {
  return absl::StrFormat("w%d e%d l%d bpr%d keep%d sh%d mb%d cl%d rpl%d alt%d ws%d rd%d se%d rb%d", c.warps,
                         c.elems_per_thread, c.lanes, c.blocks_per_row, c.keep_passes, c.keep_in_shared,
                         c.min_blocks_per_sm, c.cluster_rows, c.rows_per_launch, c.alternate_row_order,
                         c.whole_strips, c.divide_by_reciprocal, c.stage_exp, c.rows_per_block);
}

bool has(const std::vector<ReduceConfig>& cs, const ReduceConfig& want) {
  return std::any_of(cs.begin(), cs.end(), [&](const ReduceConfig& c) { return key(c) == key(want); });
}

// Every candidate is a valid config and none repeats.
void expect_sound(const std::vector<ReduceConfig>& cs) {
  std::set<std::string> seen;
  for (const ReduceConfig& c : cs) {
    EXPECT_TRUE(dsl::validate(c).ok()) << key(c) << ": " << dsl::validate(c);
    EXPECT_TRUE(seen.insert(key(c)).second) << "repeated: " << key(c);
  }
}

TEST(ReduceCandidates, HoldTheDeviceWinnersOfTheBenchRows) {
  const auto rms = reduce_candidates(bf16(ReduceOp::kRmsNorm), 256, 131072);
  expect_sound(rms);
  EXPECT_TRUE(has(rms, {.warps = 16, .elems_per_thread = 4, .blocks_per_row = 6, .keep_passes = 6,
                        .cluster_rows = true, .keep_in_shared = true, .whole_strips = true}));
  const auto sm = reduce_candidates(bf16(ReduceOp::kSoftmax), 8192, 4096);
  expect_sound(sm);
  EXPECT_TRUE(has(sm, {.warps = 16, .elems_per_thread = 4, .keep_passes = 1, .whole_strips = true}));
  EXPECT_TRUE(has(sm, {.warps = 16, .elems_per_thread = 4, .keep_passes = 1, .whole_strips = true,
                       .divide_by_reciprocal = true}));
  // Session 30's winner (H100, 63.3 us): capped to 48 registers by the default reg_cap.
  EXPECT_TRUE(has(sm, {.warps = 8, .elems_per_thread = 8, .keep_passes = 1, .min_blocks_per_sm = 5,
                       .whole_strips = true, .divide_by_reciprocal = true}));
  // Softmax: every candidate once with the knob and once without.
  const auto with = std::count_if(sm.begin(), sm.end(), [](const ReduceConfig& c) { return c.divide_by_reciprocal; });
  EXPECT_EQ(2 * with, static_cast<long>(sm.size()));
  EXPECT_EQ(reduce_candidates(bf16(ReduceOp::kSoftmax), 8192, 4096).size(), sm.size());  // the same list
  for (size_t i = 0; i < sm.size(); ++i) {
    EXPECT_EQ(key(reduce_candidates(bf16(ReduceOp::kSoftmax), 8192, 4096)[i]), key(sm[i]));
    if (i > 3) break;
  }
  // A long row that the rows alone would not split (2048 rows fill the SMs) is also a
  // cluster of 2 or 4 blocks, each keeping its share; a one-strip row is not.
  const auto longer = reduce_candidates(bf16(ReduceOp::kSoftmax), 2048, 16384);
  expect_sound(longer);
  EXPECT_TRUE(has(longer, {.warps = 16, .elems_per_thread = 4, .blocks_per_row = 2, .keep_passes = 2,
                           .cluster_rows = true, .whole_strips = true}));
  EXPECT_TRUE(has(longer, {.warps = 16, .elems_per_thread = 4, .blocks_per_row = 4, .keep_passes = 1,
                           .cluster_rows = true, .whole_strips = true, .divide_by_reciprocal = true}));
  EXPECT_TRUE(std::none_of(longer.begin(), longer.end(), [](const ReduceConfig& c) {
    return c.cluster_rows && (c.blocks_per_row > 4 || c.blocks_per_row < 2);
  }));
  EXPECT_TRUE(std::none_of(longer.begin(), longer.end(), [](const ReduceConfig& c) {
    return !c.cluster_rows && c.blocks_per_row > 1;  // no split without a cluster here
  }));
  EXPECT_TRUE(std::none_of(sm.begin(), sm.end(), [](const ReduceConfig& c) { return c.cluster_rows; }));
  // RMSNorm divides no tile.
  EXPECT_TRUE(std::none_of(rms.begin(), rms.end(), [](const ReduceConfig& c) { return c.divide_by_reciprocal; }));
}

// Softmax's kept e_i in shared memory: one-block rows and cluster rows with their kept
// passes in shared memory, the whole row or share where the bytes allow; never RMSNorm.
TEST(ReduceCandidates, SoftmaxStagesItsExpsWhereItKeepsPassesInShared) {
  const auto sm = reduce_candidates(bf16(ReduceOp::kSoftmax), 2048, 16384);
  expect_sound(sm);
  // 8 x 8 (Q = 4096): the row's 4 passes, 4 x 4096 x (2 + 4) = 96 KiB; 2 blocks an SM fit.
  EXPECT_TRUE(has(sm, {.warps = 8, .elems_per_thread = 8, .keep_passes = 4, .keep_in_shared = true,
                       .stage_exp = true}));
  EXPECT_TRUE(has(sm, {.warps = 8, .elems_per_thread = 8, .keep_passes = 4, .keep_in_shared = true,
                       .min_blocks_per_sm = 2, .whole_strips = true, .divide_by_reciprocal = true,
                       .stage_exp = true}));
  int staged = 0;
  for (const ReduceConfig& c : sm) {
    if (!c.stage_exp) continue;
    ++staged;
    EXPECT_TRUE(c.keep_in_shared && c.keep_passes > 0 && (c.blocks_per_row == 1 || c.cluster_rows)) << key(c);
  }
  EXPECT_GT(staged, 0);
  // 256 x 131072 (32 strips of 4096): the cluster of 8's share is 4 passes, x and e_i
  // 4 x 4096 x 6 = 96 KiB.
  EXPECT_TRUE(has(reduce_candidates(bf16(ReduceOp::kSoftmax), 256, 131072),
                  {.warps = 8, .elems_per_thread = 8, .blocks_per_row = 8, .keep_passes = 4, .cluster_rows = true,
                   .keep_in_shared = true, .stage_exp = true}));
  for (const ReduceConfig& c : reduce_candidates(bf16(ReduceOp::kRmsNorm), 2048, 16384)) {
    EXPECT_FALSE(c.stage_exp) << key(c);
  }
}

TEST(ReduceCandidates, OptionsTurnTheirCandidatesOff) {
  CandidateOptions o;
  o.cluster_parts.clear();
  o.whole_strips = false;
  o.divide_by_reciprocal = false;
  for (ReduceOp op : {ReduceOp::kRmsNorm, ReduceOp::kSoftmax}) {
    const auto cs = reduce_candidates(bf16(op), 256, 131072, o);
    expect_sound(cs);
    EXPECT_FALSE(cs.empty());
    for (const ReduceConfig& c : cs) {
      EXPECT_FALSE(c.cluster_rows || c.whole_strips || c.divide_by_reciprocal) << key(c);
    }
  }
  // Fewer SMs: the suggested split follows them (256 rows fill 64 SMs' 4 * 64 blocks: no split).
  o.multiprocessors = 64;
  const auto few = reduce_candidates(bf16(ReduceOp::kRmsNorm), 256, 131072, o);
  o.multiprocessors = 132;
  const auto many = reduce_candidates(bf16(ReduceOp::kRmsNorm), 256, 131072, o);
  auto splits = [](const std::vector<ReduceConfig>& cs) {
    return std::count_if(cs.begin(), cs.end(), [](const ReduceConfig& c) { return c.blocks_per_row > 1; });
  };
  EXPECT_LT(splits(few), splits(many));
  // The register cap adds min_blocks_per_sm candidates of register-kept rows only.
  o.reg_cap = 48;
  const auto capped = reduce_candidates(bf16(ReduceOp::kSoftmax), 8192, 4096, o);
  EXPECT_TRUE(has(capped, {.warps = 8, .elems_per_thread = 8, .keep_passes = 1, .min_blocks_per_sm = 5}));
  o.reg_cap = 0;
  EXPECT_GT(capped.size(), reduce_candidates(bf16(ReduceOp::kSoftmax), 8192, 4096, o).size());
}

// With rows_per_block {2, 4}, a whole row kept in registers also takes 2 and 4 rows a
// block where the rows give every SM a block; a row kept in part, in shared memory, or too
// few rows: never. By default none (they won no softmax row on the H100, session 40).
TEST(ReduceCandidates, WholeKeptRowsAlsoTakeSeveralRowsABlock) {
  CandidateOptions on;
  on.rows_per_block = {2, 4};
  const auto sm = reduce_candidates(bf16(ReduceOp::kSoftmax), 8192, 4096, on);
  expect_sound(sm);
  // Strip 4096: one pass is the row.
  for (int r : {2, 4}) {
    EXPECT_TRUE(has(sm, {.warps = 16, .elems_per_thread = 4, .keep_passes = 1, .whole_strips = true,
                         .divide_by_reciprocal = true, .rows_per_block = r})) << r;
    EXPECT_TRUE(has(sm, {.warps = 8, .elems_per_thread = 8, .keep_passes = 1, .min_blocks_per_sm = 5,
                         .rows_per_block = r})) << r;
  }
  // And staged: the next row a double buffer in shared memory, 16 x 4 also asking for its
  // 4 blocks an SM.
  for (int r : {2, 4}) {
    EXPECT_TRUE(has(sm, {.warps = 16, .elems_per_thread = 4, .keep_passes = 1, .keep_in_shared = true,
                         .min_blocks_per_sm = 4, .whole_strips = true, .divide_by_reciprocal = true,
                         .rows_per_block = r})) << r;
    EXPECT_TRUE(has(sm, {.warps = 8, .elems_per_thread = 8, .keep_passes = 1, .keep_in_shared = true,
                         .rows_per_block = r})) << r;
  }
  for (const ReduceConfig& c : sm) {
    if (c.rows_per_block == 1) continue;
    EXPECT_TRUE(c.keep_passes > 0 && !c.stage_exp && c.blocks_per_row == 1) << key(c);
    EXPECT_GE(int64_t{c.keep_passes} * dsl::pass_extent(bf16(ReduceOp::kSoftmax), c), 4096) << key(c);
  }
  // 16384 columns, 4 passes: kept 1 or 2 (part of the row) one row a block only.
  const auto longer = reduce_candidates(bf16(ReduceOp::kSoftmax), 2048, 16384, on);
  EXPECT_TRUE(has(longer, {.warps = 16, .elems_per_thread = 4, .keep_passes = 4, .rows_per_block = 2}));
  EXPECT_TRUE(has(longer, {.warps = 16, .elems_per_thread = 4, .keep_passes = 2}));
  EXPECT_FALSE(has(longer, {.warps = 16, .elems_per_thread = 4, .keep_passes = 2, .rows_per_block = 2}));
  EXPECT_TRUE(has(longer, {.warps = 16, .elems_per_thread = 4, .keep_passes = 4, .keep_in_shared = true,
                           .rows_per_block = 2}));
  const auto rms = reduce_candidates(bf16(ReduceOp::kRmsNorm), 8192, 4096, on);
  EXPECT_TRUE(has(rms, {.warps = 16, .elems_per_thread = 4, .keep_passes = 1, .whole_strips = true,
                        .rows_per_block = 4}));
  // 400 rows: 2 a block still gives 132 SMs a block each, 4 does not.
  const auto few = reduce_candidates(bf16(ReduceOp::kSoftmax), 400, 4096, on);
  auto count_r = [](const std::vector<ReduceConfig>& cs, int r) {
    return std::count_if(cs.begin(), cs.end(), [&](const ReduceConfig& c) { return c.rows_per_block == r; });
  };
  EXPECT_GT(count_r(few, 2), 0);
  EXPECT_EQ(count_r(few, 4), 0);
  const auto off = reduce_candidates(bf16(ReduceOp::kSoftmax), 8192, 4096);
  EXPECT_EQ(count_r(off, 2) + count_r(off, 4), 0);
  EXPECT_EQ(off.size() + static_cast<size_t>(count_r(sm, 2) + count_r(sm, 4)), sm.size());
}

TEST(ReduceCandidates, Gfx942HasNoClustersAndNoReciprocalDivision) {
  const auto cs = reduce_candidates(bf16(ReduceOp::kSoftmax), 256, 131072, {.lanes = 64});
  expect_sound(cs);
  ASSERT_FALSE(cs.empty());
  for (const ReduceConfig& c : cs) {
    EXPECT_EQ(c.lanes, 64) << key(c);
    EXPECT_FALSE(c.cluster_rows || c.divide_by_reciprocal) << key(c);
  }
}

TEST(ReduceCandidates, FreeOrderHasNoPinnedOnlyKnobs) {
  const auto cs = reduce_candidates(bf16(ReduceOp::kSoftmax, dsl::TreeOrder::kFree), 256, 131072);
  expect_sound(cs);
  ASSERT_FALSE(cs.empty());
  for (const ReduceConfig& c : cs) {
    EXPECT_FALSE(c.blocks_per_row > 1 || c.keep_in_shared || c.cluster_rows || c.whole_strips) << key(c);
  }
}

}  // namespace
}  // namespace fixbits::jit
