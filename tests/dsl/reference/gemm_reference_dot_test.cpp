// Family dot (dsl/GemmDesc.h) against cuBLAS itself: the reference's summation trees,
// read with dsl/probe/SumTree exactly as fixbits-cublas-probe --tree read cuBLAS's
// dot_kernel + reduce_1Block_kernel on the H200, equal the 20 trees recorded there
// (tests/dsl/reference/data/dot_trees.txt: 1 to 528 blocks, tiles 2 and 1, K from 3 to
// 500,000, windows and leaves far apart, f16 and bf16). The descriptor is the one the
// table gives each shape: 128 threads, rounds 64 down to 1, `blocks` = the recorded
// split count, the tile the file names. Also: the text form round-trips, and bad dot
// fields name themselves.
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "dsl/GemmDesc.h"
#include "dsl/probe/SumTree.h"
#include "dsl/reference/Reference.h"
#include "gtest/gtest.h"
#include "tests/dsl/CublasDot.h"

namespace fixbits::dsl {
namespace {

namespace fs = std::filesystem;

GemmDesc dot(DType t, int64_t blocks, int tile) { return testing::cublas_dot(t, blocks, tile); }

struct Recorded {
  std::string line;
  int64_t k = 0;
  DType dtype = DType::kF16;
  int64_t blocks = 0;
  int tile = 0;
  std::vector<int64_t> leaves;
  std::string tree;
};

std::vector<Recorded> recorded_trees() {
  std::ifstream in(fs::path(__FILE__).parent_path() / "data" / "dot_trees.txt");
  std::vector<Recorded> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = absl::StrSplit(line, absl::MaxSplits(' ', 5));
    Recorded r;
    r.line = line.substr(0, 60);
    std::vector<std::string> mnk = absl::StrSplit(f.at(0), 'x');
    EXPECT_TRUE(absl::SimpleAtoi(mnk.at(2), &r.k)) << line;
    r.dtype = *parse_dtype(f.at(1));
    EXPECT_TRUE(absl::SimpleAtoi(f.at(2), &r.blocks)) << line;
    EXPECT_TRUE(absl::SimpleAtoi(f.at(3), &r.tile)) << line;
    for (absl::string_view w : absl::StrSplit(f.at(4), '+')) {
      std::vector<std::string> fl = absl::StrSplit(w, ':');
      int64_t first = 0, length = 0;
      EXPECT_TRUE(absl::SimpleAtoi(fl.at(0), &first) && absl::SimpleAtoi(fl.at(1), &length)) << line;
      for (int64_t i = 0; i < length; ++i) r.leaves.push_back(first + i);
    }
    r.tree = f.at(5);
    out.push_back(std::move(r));
  }
  return out;
}

TEST(GemmReferenceDot, TreesEqualThoseCublasComputedOnTheH200) {
  const std::vector<Recorded> trees = recorded_trees();
  ASSERT_EQ(trees.size(), 20u) << "tests/dsl/reference/data/dot_trees.txt";
  for (const Recorded& r : trees) {
    const GemmDesc d = dot(r.dtype, r.blocks, r.tile);
    const probe::GemmBlackBox box = [&](const reference::GemmProblem& p) {
      return reference::gemm(d, p);
    };
    absl::StatusOr<probe::SumTree> t =
        probe::recover_sum_tree(box, r.dtype, r.dtype, r.dtype, {.k = r.k, .leaves = r.leaves});
    ASSERT_TRUE(t.ok()) << r.line << ": " << t.status();
    EXPECT_EQ(probe::to_string(*t), r.tree) << r.line;
  }
}

TEST(GemmReferenceDot, AnotherBlockCountOrTileGivesAnotherTree) {
  // The test above can fail: the recorded 2x1x10000 tree (31 blocks) is not what 16
  // blocks, or tiles of 1, compute.
  for (const Recorded& r : recorded_trees()) {
    if (r.k != 10000 || r.leaves.size() != 31) continue;
    for (const GemmDesc& d : {dot(r.dtype, 16, 2), dot(r.dtype, 31, 1)}) {
      const probe::GemmBlackBox box = [&](const reference::GemmProblem& p) {
        return reference::gemm(d, p);
      };
      absl::StatusOr<probe::SumTree> t =
          probe::recover_sum_tree(box, r.dtype, r.dtype, r.dtype, {.k = r.k, .leaves = r.leaves});
      ASSERT_TRUE(t.ok()) << t.status();
      EXPECT_NE(probe::to_string(*t), r.tree) << to_string(d);
    }
    return;
  }
  FAIL() << "the 31-block tree is missing from dot_trees.txt";
}

TEST(GemmReferenceDot, TextRoundTripsAndBadFieldsAreNamed) {
  const GemmDesc d = dot(DType::kBF16, 496, 2);
  const std::string text = to_string(d);
  EXPECT_NE(text.find(" blocks=496}"), std::string::npos) << text;
  absl::StatusOr<GemmDesc> back = parse_gemm_desc(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, d);
  // Other families print no blocks, and their text parses without it.
  GemmDesc plain;
  EXPECT_EQ(to_string(plain).find("blocks"), std::string::npos);
  ASSERT_TRUE(parse_gemm_desc(to_string(plain)).ok());
  auto field_of = [](GemmDesc bad) { return std::string(validate(bad).message()); };
  GemmDesc b = d;
  b.blocks = 0;
  EXPECT_NE(field_of(b).find("GemmDesc.blocks"), std::string::npos) << field_of(b);
  b = d;
  b.lane_layout = LaneLayout::kContiguous;
  EXPECT_NE(field_of(b).find("GemmDesc.lane_layout"), std::string::npos) << field_of(b);
  b = d;
  b.k_cuts = {{64, Fold::kChain}};
  EXPECT_NE(field_of(b).find("GemmDesc.k_cuts"), std::string::npos) << field_of(b);
  b = d;
  b.lane_fold = {64, 32};
  EXPECT_NE(field_of(b).find("GemmDesc.lane_fold"), std::string::npos) << field_of(b);
  b = plain;
  b.blocks = 3;
  EXPECT_NE(field_of(b).find("GemmDesc.blocks"), std::string::npos) << field_of(b);
  EXPECT_FALSE(parse_gemm_desc(text.substr(0, text.size() - 1) + " blocks=7}").ok());  // twice
}

}  // namespace
}  // namespace fixbits::dsl
