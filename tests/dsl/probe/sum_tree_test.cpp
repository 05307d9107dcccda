// Tests of SumTree (dsl/probe/SumTree.h): against the CPU reference of descriptors
// whose trees are known by hand, the recovery prints exactly those trees, on the whole
// K axis and on a window; a box that does not compute a tree of f32 roundings and bad
// options are refused with the field or leaf named.
#include "dsl/probe/SumTree.h"

#include <string>

#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"

namespace fixbits::dsl::probe {
namespace {

GemmBlackBox reference_box(const GemmDesc& d) {
  return [d](const reference::GemmProblem& p) { return reference::gemm(d, p); };
}

GemmDesc scalar(GemmFamily f) {
  GemmDesc d;
  d.family = f;
  d.instruction = Instruction::kScalarFma;
  d.instruction_k = 1;
  return d;
}

absl::StatusOr<std::string> tree_of(const GemmDesc& d, SumTreeOptions o) {
  absl::StatusOr<SumTree> t = recover_sum_tree(reference_box(d), d.a_dtype, d.b_dtype, d.out_dtype, o);
  if (!t.ok()) return t.status();
  return to_string(*t);
}

TEST(SumTree, ChainedSplitParts) {
  GemmDesc d = scalar(GemmFamily::kSplitK);
  d.k_cuts = {{3, Fold::kChain}};
  EXPECT_EQ(*tree_of(d, {.k = 7, .first = 0, .length = 7}),
            "((((0 1) 2) ((3 4) 5)) 6)");
  // The window 2..5: the first part shows only leaf 2.
  EXPECT_EQ(*tree_of(d, {.k = 7, .first = 2, .length = 4}), "(2 ((3 4) 5))");
  // Leaves far apart: one of each part, and two of the first.
  EXPECT_EQ(*tree_of(d, {.k = 7, .leaves = {0, 2, 4, 6}}), "(((0 2) 4) 6)");
}

TEST(SumTree, StridedLanesAndTheirButterfly) {
  GemmDesc d = scalar(GemmFamily::kGemv);
  d.lane_layout = LaneLayout::kStrided;
  d.lanes = 4;
  d.lane_tile = 1;
  d.lane_fold = {1, 2};
  EXPECT_EQ(*tree_of(d, {.k = 8, .first = 0, .length = 8}), "(((0 4) (1 5)) ((2 6) (3 7)))");
  d.lane_fold = {2, 1};
  EXPECT_EQ(*tree_of(d, {.k = 8, .first = 0, .length = 8}), "(((0 4) (2 6)) ((1 5) (3 7)))");
}

TEST(SumTree, BatchesRowsAndStopsAtTheRowBudget) {
  GemmDesc d = scalar(GemmFamily::kPlain);
  absl::StatusOr<SumTree> t = recover_sum_tree(reference_box(d), DType::kF16, DType::kF16,
                                               DType::kF16, {.k = 40, .first = 0, .length = 40,
                                                             .rows_per_call = 16});
  ASSERT_TRUE(t.ok()) << t.status();
  // A chain from leaf 0: pivot 0 splits off one leaf per level, 39 rows in 3 calls.
  EXPECT_EQ(t->rows, 39);
  EXPECT_EQ(t->calls, 3);
  EXPECT_EQ(to_string(*t).substr(0, 16), "((((((((((((((((");
  // A balanced tree of 64 leaves needs more than 100 rows.
  GemmDesc g = scalar(GemmFamily::kGemv);
  g.lane_layout = LaneLayout::kStrided;
  g.lanes = 8;
  g.lane_tile = 1;
  g.lane_fold = {1, 2, 4};
  absl::StatusOr<SumTree> cut = recover_sum_tree(reference_box(g), DType::kF16, DType::kF16,
                                                 DType::kF16, {.k = 64, .first = 0, .length = 64,
                                                               .max_rows = 100});
  EXPECT_EQ(cut.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(cut.status().message().find("max_rows"), std::string::npos);
}

TEST(SumTree, RefusesWhatIsNotATreeOfRoundings) {
  // A box that sums every product exactly (one rounding at the end): the ones
  // survive every L, so the counts cannot nest.
  GemmBlackBox exact = [](const reference::GemmProblem& p) -> absl::StatusOr<std::vector<uint32_t>> {
    std::vector<uint32_t> out;
    for (int64_t i = 0; i < p.m; ++i) {
      double s = 0;
      for (int64_t k = 0; k < p.k; ++k) {
        s += static_cast<double>(to_float(DType::kF16, p.a[static_cast<size_t>(i * p.k + k)])) *
             to_float(DType::kF16, p.b[static_cast<size_t>(k)]);
      }
      out.push_back(to_bits(DType::kF16, static_cast<float>(s)));
    }
    return out;
  };
  absl::StatusOr<SumTree> t =
      recover_sum_tree(exact, DType::kF16, DType::kF16, DType::kF16, {.k = 8, .first = 0, .length = 8});
  EXPECT_EQ(t.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(t.status().message().find("pivot 0"), std::string::npos) << t.status();
}

TEST(SumTree, NamesTheBadOption) {
  GemmDesc d = scalar(GemmFamily::kPlain);
  auto code_and = [&](SumTreeOptions o, DType out, const char* field) {
    absl::Status s = recover_sum_tree(reference_box(d), DType::kF16, DType::kF16, out, o).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(s.message().find(field), std::string::npos) << s;
  };
  code_and({.k = 4096, .first = 0, .length = 4096}, DType::kF16, "SumTreeOptions.length");
  code_and({.k = 300, .first = 0, .length = 300}, DType::kBF16, "SumTreeOptions.length");
  code_and({.k = 8, .first = 4, .length = 8}, DType::kF16, "SumTreeOptions.first");
  code_and({.k = 8, .leaves = {0, 3, 3}}, DType::kF16, "SumTreeOptions.leaves");
  code_and({.k = 8, .leaves = {0, 8}}, DType::kF16, "SumTreeOptions.leaves");
  std::vector<int64_t> many(300);
  for (int i = 0; i < 300; ++i) many[static_cast<size_t>(i)] = i;
  code_and({.k = 400, .leaves = many}, DType::kBF16, "SumTreeOptions.leaves");
  code_and({.k = 8, .first = 0, .length = 8}, DType::kF8E4M3, "output dtype");
  absl::Status s = recover_sum_tree(reference_box(d), DType::kF8E4M3, DType::kF8E4M3, DType::kF16,
                                    {.k = 8, .first = 0, .length = 8}).status();
  EXPECT_NE(s.message().find("input dtype"), std::string::npos) << s;
}

}  // namespace
}  // namespace fixbits::dsl::probe
